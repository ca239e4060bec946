// Misspelled and misplaced `onnx` attributes, all reported at once.
use ort_bind::{Dyn, OnnxBinding, Tensor};

#[derive(OnnxBinding)]
#[onnx(modle = "models/add.onnx")]
struct AddIo {
    #[onnx(nmae = "x")]
    x: Tensor<f32, (Dyn,)>,
    #[onnx(model = "models/add.onnx")]
    y: Tensor<f32, (Dyn,)>,
    sum: Tensor<f32, (Dyn,)>,
}

fn main() {}
