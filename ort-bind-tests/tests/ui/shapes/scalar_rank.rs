// The model's input is a scalar (rank 0): its shape is `()`.
use ort_bind::{Dyn, OnnxBinding, Tensor};

#[derive(OnnxBinding)]
#[onnx(model = "models/scalar.onnx")]
struct Io {
    x: Tensor<f32, (Dyn,)>,
    y: Tensor<f32, ()>,
}

fn main() {}
