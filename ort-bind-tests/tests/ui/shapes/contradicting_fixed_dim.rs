// The model fixes the dim to 16; `Fix<8>` contradicts it (`Dyn` or `Fix<16>` would do).
use ort_bind::{Fix, OnnxBinding, Tensor};

#[derive(OnnxBinding)]
#[onnx(model = "models/add16.onnx")]
struct Add16 {
    a: Tensor<f32, (Fix<16>,)>,
    b: Tensor<f32, (Fix<8>,)>,
    out: Tensor<f32, (Fix<16>,)>,
}

fn main() {}
