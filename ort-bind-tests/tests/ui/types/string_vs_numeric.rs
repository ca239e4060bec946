// The iris classifier's labels are strings and its features numbers: each field has the
// other kind.
use ort_bind::{Dyn, Fix, MapSequence, OnnxBinding, StringTensor, Tensor};

#[derive(OnnxBinding)]
#[onnx(model = "models/sklearn_iris.onnx")]
struct Iris {
    float_input: StringTensor<(Dyn, Fix<4>)>,
    output_label: Tensor<f32, (Dyn,)>,
    output_probability: MapSequence<String, f32>,
}

fn main() {}
