// A declared pair swaps buffers, which needs both fields of one type.
use ort_bind::{Dyn, Fix, OnnxBinding, Tensor};

#[derive(OnnxBinding)]
#[onnx(model = "models/state.onnx", feed_back = "stateN -> state")]
struct Recurrent {
    x: Tensor<f32, (Fix<1>, Fix<4>)>,
    state: Tensor<f32, (Fix<2>, Fix<1>, Fix<8>)>,
    #[onnx(name = "stateN")]
    next_state: Tensor<f32, (Dyn, Dyn, Dyn)>,
}

fn main() {}
