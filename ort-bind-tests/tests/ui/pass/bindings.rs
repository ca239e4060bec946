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

// The options `Builder::model_with` takes: `z: [N, 3]` is sized by `batch` too.
mod dynamic {
    ort_bind::bindings!("models/dynamic.onnx", rename_dim("N", "batch"), no_auto_feed_back);
}

fn main() {
    let _: fn(&add::Model, add::Dims) -> ort_bind::Result<add::Binding> = add::Model::bind;
    let _ = offline::Dims { n: 3 };
    let _: fn(&nonzero::Model, nonzero::Dims) -> ort_bind::Result<nonzero::Binding> =
        nonzero::Model::bind;
    assert!(add::MODEL_PATH.ends_with("models/add.onnx"));
    let dims = dynamic::Dims { batch: 2 };
    let _: fn(&mut dynamic::Binding) -> ort_bind::TensorRef<'_, f32, (ort_bind::Dyn, ort_bind::Fix<3>)> =
        |b| b.outputs().z;
    let _ = dims;
}
