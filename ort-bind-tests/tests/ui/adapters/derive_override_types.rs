// `Option<Tensor<..>>` fields bind the model's overridable inputs, checked like inputs:
// the element type, the rank and the fixed sizes; an input without a default cannot be
// an `Option`.
use ort_bind::{Dyn, Fix, OnnxBinding, Tensor};

#[derive(OnnxBinding)]
#[onnx(model = "models/lora/lora.onnx")]
struct Lora {
    x: Option<Tensor<f32, (Dyn, Fix<8>)>>,
    y: Tensor<f32, (Dyn, Fix<4>)>,
    temperature: Option<Tensor<f32, (Dyn,)>>,
    #[onnx(name = "lora_a.0")]
    a0: Option<Tensor<i64, (Fix<8>, Dyn)>>,
    bias: Option<Tensor<f32, (Fix<3>,)>>,
}

fn main() {}
