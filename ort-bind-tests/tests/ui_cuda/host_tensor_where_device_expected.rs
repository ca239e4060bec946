// The binding holds device memory of cuda:0; a host tensor is handed in.
use ort_bind::{Cuda, Dyn, Tensor};

fn device_input(x: &Tensor<f32, (Dyn,), Cuda<0>>) -> usize {
    x.len()
}

fn main() -> ort_bind::Result<()> {
    let host = Tensor::<f32, (Dyn,)>::new("x", &[4])?;
    device_input(&host);
    Ok(())
}
