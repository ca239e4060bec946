// Device-generic code compiles for every device; host access only where the device is
// host memory (`Cpu`, `CudaPinned`); device tensors take explicit copies.
use ort_bind::{Cpu, Cuda, CudaPinned, Device, Dyn, HostDevice, Tensor, TensorMut, TensorRef};

fn elements<D: Device>(t: &Tensor<f32, (Dyn,), D>) -> usize {
    t.len()
}

fn host_sum<D: HostDevice>(t: TensorRef<'_, f32, (Dyn,), D>) -> f32 {
    t.as_slice().iter().sum()
}

fn upload(
    dst: &mut TensorMut<'_, f32, (Dyn,), Cuda<0>>,
    src: TensorRef<'_, f32, (Dyn,), CudaPinned>,
) -> ort_bind::Result<()> {
    dst.copy_from_pinned(src)
}

fn download(src: TensorRef<'_, f32, (Dyn,), Cuda<0>>) -> ort_bind::Result<Vec<f32>> {
    src.to_vec()
}

fn main() -> ort_bind::Result<()> {
    let cpu = Tensor::<f32, (Dyn,), Cpu>::new("x", &[3])?;
    assert_eq!(elements(&cpu), 3);
    assert_eq!(host_sum(cpu.view()), 0.0);
    let _ = (elements::<Cuda<0>>, elements::<CudaPinned>, host_sum::<CudaPinned>);
    let _ = (upload, download);
    Ok(())
}
