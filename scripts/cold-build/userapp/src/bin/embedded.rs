//! The model embedded in the binary: nothing to deploy beside it.
mod dynamic {
    ort_bind::bindings!("models/dynamic.onnx", embed);
}

fn main() -> ort_bind::Result<()> {
    let model = dynamic::Model::load()?;
    let mut b = model.bind(dynamic::Dims { batch: 1 })?;
    b.inputs().x.copy_from_slice(&[0.5, 0.5, 0.5, 0.5])?;
    b.run()?;
    println!("embedded: y = {:?}", b.outputs().y.as_slice());
    Ok(())
}
