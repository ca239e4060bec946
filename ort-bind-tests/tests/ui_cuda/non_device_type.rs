// The device parameter must be an ort-bind device; with the `cuda` feature rustc lists the
// CUDA device types among the ones that are (tests/ui/default_features/ has the default
// build's list).
use ort_bind::{Dyn, Tensor};

#[allow(dead_code)]
struct Io {
    x: Tensor<f32, (Dyn,), String>,
}

fn main() {}
