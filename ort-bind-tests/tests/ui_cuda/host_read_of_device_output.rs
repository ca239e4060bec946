// Reading a device output as a host slice: it has to be copied to the host first.
use ort_bind::{Cuda, Dyn, TensorRef};

fn read(sum: TensorRef<'_, f32, (Dyn,), Cuda<0>>) -> f32 {
    sum.as_slice().iter().sum()
}

fn main() {
    let _ = read;
}
