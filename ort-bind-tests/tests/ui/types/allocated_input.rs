// Inputs are buffers the caller fills: `AllocatedOutput` is for outputs only.
use ort_bind::{AllocatedOutput, Dyn, OnnxBinding, Tensor};

#[derive(OnnxBinding)]
#[onnx(model = "models/add.onnx")]
struct AddIo {
    x: AllocatedOutput<f32, (Dyn,)>,
    y: Tensor<f32, (Dyn,)>,
    sum: Tensor<f32, (Dyn,)>,
}

fn main() {}
