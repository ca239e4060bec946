//! One model through build.rs, one through bindings!, one derive.
use ort_bind::{Binding, Cpu, Device, Dyn, OnnxBinding, Session, SessionOptions, Tensor};

mod add {
    ort_bind::include_bindings!("add");
}
mod dynamic {
    ort_bind::bindings!("models/dynamic.onnx");
}

#[derive(OnnxBinding)]
#[onnx(model = "models/add.onnx")]
struct AddIo<D: Device = Cpu> {
    x: Tensor<f32, (Dyn,), D>,
    y: Tensor<f32, (Dyn,), D>,
    sum: Tensor<f32, (Dyn,), D>,
}

fn main() -> ort_bind::Result<()> {
    let model = add::Model::load()?;
    let mut b = model.bind(add::Dims { n: 3 })?;
    b.inputs().x.copy_from_slice(&[1.0, 2.0, 3.0])?;
    b.inputs().y.fill(10.0);
    b.run()?;
    println!("build.rs: sum = {:?}", b.outputs().sum.as_slice());

    let model = dynamic::Model::load()?;
    let mut b = model.bind(dynamic::Dims { batch: 1 })?;
    b.inputs().x.copy_from_slice(&[0.5, 0.5, 0.5, 0.5])?;
    b.run()?;
    println!("bindings!: y = {:?}", b.outputs().y.as_slice());

    let session = Session::from_file(AddIo::<Cpu>::MODEL_FILE.find()?, &SessionOptions::new())?;
    let mut bound = Binding::new(&session, AddIo::allocate(&Cpu, &AddIoDims { n: 2 })?)?;
    bound.inputs().x.copy_from_slice(&[1.0, 2.0])?;
    bound.inputs().y.fill(0.5);
    bound.run()?;
    println!("derive: sum = {:?}", bound.outputs().sum.as_slice());
    // The data sizes the inputs; the binding follows before the run.
    bound.inputs().x.fill_resized(&[1.0, 2.0, 3.0, 4.0])?;
    bound.inputs().y.fill_resized(&[0.25; 4])?;
    bound.run()?;
    assert_eq!(bound.outputs().sum.as_slice(), [1.25, 2.25, 3.25, 4.25]);
    println!("derive, sized by the data: sum = {:?}", bound.outputs().sum.as_slice());
    Ok(())
}
