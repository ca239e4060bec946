// The model declares rank 1 (`[n]`); the field's shape has two axes.
use ort_bind::{Dyn, OnnxBinding, Tensor};

#[derive(OnnxBinding)]
#[onnx(model = "models/add.onnx")]
struct AddIo {
    x: Tensor<f32, (Dyn, Dyn)>,
    y: Tensor<f32, (Dyn,)>,
    sum: Tensor<f32, (Dyn,)>,
}

fn main() {}
