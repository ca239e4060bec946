// The derive needs to know which model to check against.
use ort_bind::{Dyn, OnnxBinding, Tensor};

#[derive(OnnxBinding)]
struct AddIo {
    x: Tensor<f32, (Dyn,)>,
    y: Tensor<f32, (Dyn,)>,
    sum: Tensor<f32, (Dyn,)>,
}

fn main() {}
