// Copying between tensors of different devices is not a device-to-device copy on one
// stream: the compiler refuses it (copy through the host, or with cudarc's peer copy).
use ort_bind::{Cuda, Dyn, Tensor};

fn main() -> ort_bind::Result<()> {
    let mut a = Tensor::<f32, (Dyn,), Cuda<0>>::new_in("a", Cuda::<0>::new()?, &[4])?;
    let b = Tensor::<f32, (Dyn,), Cuda<1>>::new_in("b", Cuda::<1>::new()?, &[4])?;
    a.view_mut().copy_from_device(b.view())?;
    Ok(())
}
