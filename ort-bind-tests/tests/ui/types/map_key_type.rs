// ZipMap's maps are keyed by the class labels (strings), not by class indices.
use ort_bind::{Dyn, Fix, MapSequence, OnnxBinding, StringOutput, Tensor};

#[derive(OnnxBinding)]
#[onnx(model = "models/sklearn_iris.onnx")]
struct Iris {
    float_input: Tensor<f32, (Dyn, Fix<4>)>,
    output_label: StringOutput<(Dyn,)>,
    output_probability: MapSequence<i64, f32>,
}

fn main() {}
