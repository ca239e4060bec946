// A model path with a typo in the directory: the error suggests the file that exists.
use ort_bind::{Dyn, OnnxBinding, Tensor};

#[derive(OnnxBinding)]
#[onnx(model = "modles/add.onnx")]
struct AddIo {
    x: Tensor<f32, (Dyn,)>,
    y: Tensor<f32, (Dyn,)>,
    sum: Tensor<f32, (Dyn,)>,
}

fn main() {}
