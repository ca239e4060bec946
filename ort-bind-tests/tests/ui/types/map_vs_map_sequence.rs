// ZipMap's output is a sequence of maps: a `Map` field says what to write instead; an
// `AllocatedOutput` for the string labels gets its article right ("an").
use ort_bind::{AllocatedOutput, Dyn, Fix, Map, OnnxBinding, StringOutput, Tensor};

#[derive(OnnxBinding)]
#[onnx(model = "models/sklearn_iris.onnx")]
struct AsMap {
    float_input: Tensor<f32, (Dyn, Fix<4>)>,
    output_label: StringOutput<(Dyn,)>,
    output_probability: Map<String, f32>,
}

#[derive(OnnxBinding)]
#[onnx(model = "models/sklearn_iris.onnx")]
struct LabelsAllocated {
    float_input: Tensor<f32, (Dyn, Fix<4>)>,
    output_label: AllocatedOutput<f32, (Dyn,)>,
    output_probability: ort_bind::MapSequence<String, f32>,
}

fn main() {}
