// `stateN` [?, ?, ?] pairs with `state` [2, ?, 128] (recurrent state) and takes its shape,
// whose axis 0 the model fixes to 2: `Fix<3>` there contradicts it.
use ort_bind::{AllocatedOutput, Dyn, Fix, OnnxBinding, Tensor};

#[derive(OnnxBinding)]
#[onnx(model = "models/silero_vad.onnx")]
struct Vad {
    input: Tensor<f32, (Fix<1>, Fix<512>)>,
    state: Tensor<f32, (Fix<2>, Fix<1>, Fix<128>)>,
    sr: Tensor<i64, ()>,
    output: AllocatedOutput<f32, (Dyn, Fix<1>)>,
    #[onnx(name = "stateN")]
    next_state: Tensor<f32, (Fix<3>, Fix<1>, Fix<128>)>,
}

fn main() {}
