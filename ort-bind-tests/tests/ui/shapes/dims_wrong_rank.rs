// `dims` names every axis of the value: `x` has two.
use ort_bind::{Dyn, Fix, OnnxBinding, Tensor};

#[derive(OnnxBinding)]
#[onnx(model = "models/dynamic.onnx")]
struct Projection {
    #[onnx(dims = "batch")]
    x: Tensor<f32, (Dyn, Fix<4>)>,
    y: Tensor<f32, (Dyn, Fix<3>)>,
}

fn main() {}
