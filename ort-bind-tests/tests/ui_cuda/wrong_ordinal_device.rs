// A tensor typed for cuda:0 allocated on cuda:1: the ordinal is part of the type.
use ort_bind::{Cuda, Dyn, Tensor};

fn main() -> ort_bind::Result<()> {
    let gpu1 = Cuda::<1>::new()?;
    let x = Tensor::<f32, (Dyn,), Cuda<0>>::new_in("x", gpu1, &[4])?;
    drop(x);
    Ok(())
}
