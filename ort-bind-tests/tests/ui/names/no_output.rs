// ONNX Runtime refuses a run that requests no output.
use ort_bind::{Dyn, OnnxBinding, Tensor};

#[derive(OnnxBinding)]
#[onnx(model = "models/add.onnx")]
struct AddIo {
    x: Tensor<f32, (Dyn,)>,
    y: Tensor<f32, (Dyn,)>,
}

fn main() {}
