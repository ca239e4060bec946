// A binding borrows the adapter set on it: dropping the adapter while it is set is a
// borrow error, not a dangling binding.
mod lora {
    ort_bind::bindings!("models/lora/lora.onnx");
}

fn main() -> ort_bind::Result<()> {
    let model = lora::Model::load()?;
    let mut binding = model.bind(lora::Dims { batch: 1 })?;
    let adapter = ort_bind::Adapter::from_file("models/lora/math.onnx_adapter")?;
    let mut active = binding.set_adapter(&adapter)?;
    drop(adapter);
    active.run()?;
    Ok(())
}
