// `#[onnx(name = "...")]` names a value the model does not have.
use ort_bind::{Dyn, OnnxBinding, Tensor};

#[derive(OnnxBinding)]
#[onnx(model = "models/add.onnx")]
struct AddIo {
    x: Tensor<f32, (Dyn,)>,
    #[onnx(name = "Y")]
    other: Tensor<f32, (Dyn,)>,
    sum: Tensor<f32, (Dyn,)>,
}

fn main() {}
