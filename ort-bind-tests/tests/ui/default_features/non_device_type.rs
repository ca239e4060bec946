// The device parameter must be an ort-bind device.
use ort_bind::{Dyn, OnnxBinding, Tensor};

#[derive(OnnxBinding)]
#[onnx(model = "models/add.onnx")]
struct AddIo {
    x: Tensor<f32, (Dyn,), String>,
    y: Tensor<f32, (Dyn,)>,
    sum: Tensor<f32, (Dyn,)>,
}

fn main() {}
