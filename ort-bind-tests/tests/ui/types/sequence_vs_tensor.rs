// ZipMap's output is a sequence of maps, not a tensor; and not a sequence of tensors.
use ort_bind::{Dyn, Fix, OnnxBinding, Sequence, StringOutput, Tensor};

#[derive(OnnxBinding)]
#[onnx(model = "models/sklearn_iris.onnx")]
struct AsTensor {
    float_input: Tensor<f32, (Dyn, Fix<4>)>,
    output_label: StringOutput<(Dyn,)>,
    output_probability: Tensor<f32, (Dyn, Fix<3>)>,
}

#[derive(OnnxBinding)]
#[onnx(model = "models/sklearn_iris.onnx")]
struct AsSequence {
    float_input: Tensor<f32, (Dyn, Fix<4>)>,
    output_label: StringOutput<(Dyn,)>,
    output_probability: Sequence<f32>,
}

fn main() {}
