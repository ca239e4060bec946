// A field type that cannot hold an ONNX value, and a view type instead of a tensor.
use ort_bind::{Dyn, OnnxBinding, Tensor, TensorRef};

#[derive(OnnxBinding)]
#[onnx(model = "models/add.onnx")]
struct AddIo<'a> {
    x: Vec<f32>,
    y: Tensor<f32, (Dyn,)>,
    sum: TensorRef<'a, f32, (Dyn,)>,
}

fn main() {}
