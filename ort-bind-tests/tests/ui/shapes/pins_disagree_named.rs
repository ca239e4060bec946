// Silero VAD leaves `input`'s batch axis and `state`'s axis 1 unnamed; `dims` says both
// are `batch`, and the two types then fix `batch` to 1 and 2.
use ort_bind::{AllocatedOutput, Dyn, Fix, OnnxBinding, Tensor};

#[derive(OnnxBinding)]
#[onnx(model = "models/silero_vad.onnx")]
struct Vad {
    #[onnx(dims = "batch, samples")]
    input: Tensor<f32, (Fix<1>, Dyn)>,
    #[onnx(dims = "2, batch, 128")]
    state: Tensor<f32, (Fix<2>, Fix<2>, Fix<128>)>,
    sr: Tensor<i64, ()>,
    output: AllocatedOutput<f32, (Dyn, Fix<1>)>,
}

fn main() {}
