// An adapter whose LoRA weight has another fixed size than the model's input fails the
// build, at the adapter's path, naming the parameter and the axis.
mod lora {
    ort_bind::bindings!(
        "models/lora/lora.onnx",
        adapter("wide", "models/lora/wide.onnx_adapter"),
    );
}

fn main() {}
