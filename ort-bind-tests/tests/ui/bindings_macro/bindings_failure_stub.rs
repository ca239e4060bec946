// When `bindings!` fails, the module still has its items (with nothing behind them), so
// the one mistake is one error: uses of `Model`, `Dims` and `Binding` do not fail again.
// The path is misspelt: the error suggests the file that exists.
mod add {
    ort_bind::bindings!("models/ad.onnx");
}

fn main() -> ort_bind::Result<()> {
    let model = add::Model::load()?;
    let mut binding = model.bind(add::Dims::default())?;
    binding.run()?;
    let _ = add::MODEL_PATH;
    Ok(())
}
