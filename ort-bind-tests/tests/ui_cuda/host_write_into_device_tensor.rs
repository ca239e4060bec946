// Filling a device input with host data in place: CUDA memory is not host memory.
// The fix the error points to: an explicit copy (`copy_from_host`).
use ort_bind::{Cuda, Dyn, TensorMut};

fn fill(x: &mut TensorMut<'_, f32, (Dyn,), Cuda<0>>) -> ort_bind::Result<()> {
    x.copy_from_slice(&[1.0, 2.0, 3.0])
}

fn main() {
    let _ = fill;
}
