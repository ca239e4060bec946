// Every mistake of a struct is reported in one build.
use ort_bind::{Dyn, Fix, OnnxBinding, Tensor};

#[derive(OnnxBinding)]
#[onnx(model = "models/dynamic.onnx")]
struct Io {
    x: Tensor<f64, (Dyn, Fix<5>)>,
    yy: Tensor<f32, (Dyn, Fix<3>)>,
    z: Tensor<f32, (Dyn,)>,
}

fn main() {}
