// The model file does not exist (and has no offline cache): one error on the attribute,
// and code using the struct gets no follow-on errors.
use ort_bind::{Binding, Dyn, OnnxBinding, Session, SessionOptions, Tensor};

#[derive(OnnxBinding)]
#[onnx(model = "models/missing.onnx")]
struct AddIo {
    x: Tensor<f32, (Dyn,)>,
    y: Tensor<f32, (Dyn,)>,
    sum: Tensor<f32, (Dyn,)>,
}

fn main() -> ort_bind::Result<()> {
    let session = Session::from_file(AddIo::MODEL_PATH, &SessionOptions::new())?;
    let io = AddIo::allocate(&ort_bind::Cpu, &AddIoDims::default())?;
    let mut bound = Binding::new(&session, io)?;
    bound.inputs().x.fill(1.0);
    bound.run()?;
    let _ = bound.outputs().sum.as_slice();
    Ok(())
}
