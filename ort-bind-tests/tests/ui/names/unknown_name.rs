// A field whose name is not in the model: the error names the closest model value.
use ort_bind::{Dyn, OnnxBinding, Tensor};

#[derive(OnnxBinding)]
#[onnx(model = "models/add.onnx")]
struct AddIo {
    x: Tensor<f32, (Dyn,)>,
    y: Tensor<f32, (Dyn,)>,
    summ: Tensor<f32, (Dyn,)>,
}

fn main() {}
