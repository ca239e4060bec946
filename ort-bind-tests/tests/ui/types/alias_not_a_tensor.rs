// A type alias that hides something other than a tensor.
use ort_bind::{Dyn, OnnxBinding, Tensor};

type Samples = Vec<f32>;

#[derive(OnnxBinding)]
#[onnx(model = "models/add.onnx")]
struct AddIo {
    x: Samples,
    y: Tensor<f32, (Dyn,)>,
    sum: Tensor<f32, (Dyn,)>,
}

fn main() {}
