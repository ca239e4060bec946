// Two fields bind the same model value.
use ort_bind::{Dyn, OnnxBinding, Tensor};

#[derive(OnnxBinding)]
#[onnx(model = "models/add.onnx")]
struct AddIo {
    x: Tensor<f32, (Dyn,)>,
    y: Tensor<f32, (Dyn,)>,
    #[onnx(name = "y")]
    y_again: Tensor<f32, (Dyn,)>,
    sum: Tensor<f32, (Dyn,)>,
}

fn main() {}
