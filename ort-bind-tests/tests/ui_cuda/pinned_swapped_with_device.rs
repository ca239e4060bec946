// Feeding a pinned host tensor back as a device input by swapping storage: the two live
// on different devices, so their buffers cannot be exchanged.
use ort_bind::{Cuda, CudaPinned, Dyn, Tensor};

fn feed_back(
    state: &mut Tensor<f32, (Dyn,), Cuda<0>>,
    staged: &mut Tensor<f32, (Dyn,), CudaPinned>,
) -> ort_bind::Result<()> {
    state.swap_storage(staged)
}

fn main() {
    let _ = feed_back;
}
