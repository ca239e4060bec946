//! `#[derive(OnnxBinding)]`: real inference through derived bindings.

use ort_bind::{Bound, Cpu, Device, Dyn, OnnxBinding, Session, SessionOptions, Tensor};

#[derive(OnnxBinding)]
#[onnx(model = "tests/fixtures/add.onnx")]
struct AddIo<D: Device = Cpu> {
    x: Tensor<f32, (Dyn,), D>,
    #[onnx(name = "y")]
    other: Tensor<f32, (Dyn,), D>,
    sum: Tensor<f32, (Dyn,), D>,
}

#[test]
fn add_runs() -> ort_bind::Result<()> {
    let session = Session::from_file(AddIo::<Cpu>::MODEL_PATH, &SessionOptions::new())?;
    let io = AddIo::allocate(&Cpu, &AddIoDims { n: 3 })?;
    let mut bound = Bound::new(&session, io)?;
    bound.inputs().x.copy_from_slice(&[1.0, 2.0, 3.0])?;
    bound.inputs().other.fill(10.0);
    bound.run()?;
    assert_eq!(bound.outputs().sum.as_slice(), &[11.0, 12.0, 13.0]);
    Ok(())
}
