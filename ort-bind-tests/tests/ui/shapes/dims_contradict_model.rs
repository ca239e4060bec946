// `dims` cannot rename or resize what the model fixes (`x` is [batch, 4]), nor
// contradict the field's own type.
use ort_bind::{Dyn, Fix, OnnxBinding, Tensor};

#[derive(OnnxBinding)]
#[onnx(model = "models/dynamic.onnx")]
struct Projection {
    #[onnx(dims = "batch, width")]
    x: Tensor<f32, (Dyn, Fix<4>)>,
    #[onnx(dims = "2, 3")]
    y: Tensor<f32, (Fix<1>, Fix<3>)>,
}

fn main() {}
