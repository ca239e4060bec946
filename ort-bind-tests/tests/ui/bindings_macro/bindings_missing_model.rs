// `bindings!` on a model that does not exist: one error on the path.
mod missing {
    ort_bind::bindings!("models/missing.onnx");
}

fn main() {}
