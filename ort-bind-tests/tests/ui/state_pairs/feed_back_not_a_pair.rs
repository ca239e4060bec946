// `y` [1, 8] cannot become `x` [1, 4]; and `stateM` is no value of the struct.
use ort_bind::{Fix, OnnxBinding, Tensor};

#[derive(OnnxBinding)]
#[onnx(model = "models/state.onnx", feed_back = "y -> x", feed_back = "stateM -> state")]
struct Recurrent {
    x: Tensor<f32, (Fix<1>, Fix<4>)>,
    state: Tensor<f32, (Fix<2>, Fix<1>, Fix<8>)>,
    y: Tensor<f32, (Fix<1>, Fix<8>)>,
}

fn main() {}
