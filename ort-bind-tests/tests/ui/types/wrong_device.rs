// `#[onnx(device = Cpu)]` requires every field on the CPU; a field generic over the
// device does not qualify.
use ort_bind::{Cpu, Device, Dyn, OnnxBinding, Tensor};

#[derive(OnnxBinding)]
#[onnx(model = "models/add.onnx", device = Cpu)]
struct AddIo<D: Device> {
    x: Tensor<f32, (Dyn,), D>,
    y: Tensor<f32, (Dyn,)>,
    sum: Tensor<f32, (Dyn,)>,
}

fn main() {}
