// A model without a known batch dim has no batcher: calling it is an error that says how
// to name the batch dim (not "no method named `batcher`").
mod add {
    ort_bind::bindings!("models/add.onnx");
}

fn main() -> ort_bind::Result<()> {
    let model = add::Model::load()?;
    let _batcher = model.batcher(ort_bind::BatchOptions::default());
    Ok(())
}
