// Parameters of one adapter that give the model's named dim `rank` two sizes fail the build,
// naming the dim.
mod lora {
    ort_bind::bindings!(
        "models/lora/lora.onnx",
        adapter("mixed", "models/lora/mixed_rank.onnx_adapter"),
    );
}

fn main() {}
