// The committed offline signature cache no longer matches the model file.
use ort_bind::{Fix, OnnxBinding, Tensor};

#[derive(OnnxBinding)]
#[onnx(model = "models/stale.onnx")]
struct Io {
    a: Tensor<f32, (Fix<16>,)>,
    b: Tensor<f32, (Fix<16>,)>,
    out: Tensor<f32, (Fix<16>,)>,
}

fn main() {}
