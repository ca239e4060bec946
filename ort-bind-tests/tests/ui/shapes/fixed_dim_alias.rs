// A contradicting fixed dim hidden behind a type alias is still caught.
use ort_bind::{Fix, OnnxBinding, Tensor};

type Eight = Tensor<f32, (Fix<8>,)>;

#[derive(OnnxBinding)]
#[onnx(model = "models/add16.onnx")]
struct Add16 {
    a: Tensor<f32, (Fix<16>,)>,
    b: Eight,
    out: Tensor<f32, (Fix<16>,)>,
}

fn main() {}
