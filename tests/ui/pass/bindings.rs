// `bindings!` generates the same module build-time codegen writes, from the model file or
// from its offline signature cache.
mod add {
    ort_bind::bindings!("models/add.onnx");
}

mod offline {
    ort_bind::bindings!("models/offline.onnx", crate = "::ort_bind");
}

mod nonzero {
    ort_bind::bindings!("models/nonzero.onnx",);
}

fn main() {
    let _: fn(&add::Model, add::Dims) -> ort_bind::Result<add::Binding> = add::Model::bind;
    let _ = offline::Dims { n: 3 };
    let _: fn(&nonzero::Model, nonzero::Dims) -> ort_bind::Result<nonzero::Binding> =
        nonzero::Model::bind;
    assert!(add::MODEL_PATH.ends_with("models/add.onnx"));
}
