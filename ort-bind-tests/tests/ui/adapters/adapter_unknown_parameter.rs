// An adapter with a parameter the model has no overridable input for fails the build,
// listing the inputs it has.
mod lora {
    ort_bind::bindings!(
        "models/lora/lora.onnx",
        adapter("math", "models/lora/math.onnx_adapter"),
        adapter("extra", "models/lora/unknown.onnx_adapter"),
    );
}

fn main() {}
