// A wrong rank hidden behind a shape alias from another module is still caught.
use ort_bind::{Dyn, OnnxBinding, Tensor};

mod shapes {
    pub type Matrix = (ort_bind::Dyn, ort_bind::Dyn);
}

#[derive(OnnxBinding)]
#[onnx(model = "models/add.onnx")]
struct AddIo {
    x: Tensor<f32, shapes::Matrix>,
    y: Tensor<f32, (Dyn,)>,
    sum: Tensor<f32, (Dyn,)>,
}

fn main() {}
