// Fields are matched to model values by name, so the struct needs named fields.
use ort_bind::{Dyn, OnnxBinding, Tensor};

#[derive(OnnxBinding)]
#[onnx(model = "models/add.onnx")]
struct AddIo(Tensor<f32, (Dyn,)>, Tensor<f32, (Dyn,)>, Tensor<f32, (Dyn,)>);

fn main() {}
