// Before IR version 4 every weight is listed as an input and ONNX Runtime holds them all
// constant: an `Option` field naming one says so.
use ort_bind::{Fix, OnnxBinding, Tensor};

#[derive(OnnxBinding)]
#[onnx(model = "models/ir3_init_as_input.onnx")]
struct Ir3 {
    x: Tensor<f32, (Fix<3>,)>,
    w: Option<Tensor<f32, (Fix<3>,)>>,
    y: Tensor<f32, (Fix<3>,)>,
}

fn main() {}
