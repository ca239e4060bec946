// `#[onnx(output)]` on a field whose name is a model input.
use ort_bind::{Dyn, OnnxBinding, Tensor};

#[derive(OnnxBinding)]
#[onnx(model = "models/add.onnx")]
struct AddIo {
    #[onnx(output)]
    x: Tensor<f32, (Dyn,)>,
    y: Tensor<f32, (Dyn,)>,
    sum: Tensor<f32, (Dyn,)>,
}

fn main() {}
