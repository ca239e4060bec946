// The model file is not an ONNX model: one error on the attribute, no follow-on errors.
use ort_bind::{Binding, Dyn, OnnxBinding, Session, SessionOptions, Tensor};

#[derive(OnnxBinding)]
#[onnx(model = "models/malformed.onnx")]
struct AddIo {
    x: Tensor<f32, (Dyn,)>,
    y: Tensor<f32, (Dyn,)>,
    sum: Tensor<f32, (Dyn,)>,
}

fn main() -> ort_bind::Result<()> {
    let session = Session::from_file(AddIo::MODEL_PATH, &SessionOptions::new())?;
    let mut bound = Binding::new(&session, AddIo::allocate(&ort_bind::Cpu, &AddIoDims::default())?)?;
    bound.inputs().y.fill(1.0);
    bound.run()?;
    let _ = bound.outputs().sum.to_vec();
    Ok(())
}
