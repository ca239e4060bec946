// The module `bindings!` generates is typed: the model's float32 input takes `f32`s.
mod add {
    ort_bind::bindings!("models/add.onnx");
}

fn main() -> ort_bind::Result<()> {
    let model = add::Model::load()?;
    let mut binding = model.bind(add::Dims { n: 2 })?;
    binding.inputs().x.copy_from_slice(&[1.0f64, 2.0])?;
    Ok(())
}
