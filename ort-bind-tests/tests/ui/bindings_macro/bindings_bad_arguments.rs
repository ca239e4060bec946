// `bindings!` takes the model path as a string literal, then optional `crate = "..."`.
mod a {
    ort_bind::bindings!(models / add.onnx);
}
mod b {
    ort_bind::bindings!("models/add.onnx", krate = "::ort_bind");
}

fn main() {}
