// A wrong element type hidden behind a type alias is still caught (by a trait bound).
use ort_bind::{Dyn, OnnxBinding, Tensor};

type Doubles = Tensor<f64, (Dyn,)>;

#[derive(OnnxBinding)]
#[onnx(model = "models/add.onnx")]
struct AddIo {
    x: Doubles,
    y: Tensor<f32, (Dyn,)>,
    sum: Tensor<f32, (Dyn,)>,
}

fn main() {}
