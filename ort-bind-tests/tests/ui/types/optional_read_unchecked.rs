// An optional output reads as `Result<Option<view>>`: the value may be absent, and using
// it as a tensor without handling that does not compile.
use ort_bind::{
    AllocatedOutput, AnyRank, Binding, Dyn, OnnxBinding, Optional, Sequence, Tensor, TensorRef,
};

#[derive(OnnxBinding)]
#[onnx(model = "models/optionals.onnx")]
struct Optionals {
    x: Tensor<f32, (Dyn,)>,
    o: Optional<Tensor<f32, AnyRank>>,
    some: Optional<AllocatedOutput<f32, (Dyn,)>>,
    none: Optional<AllocatedOutput<f32, AnyRank>>,
    some_seq: Optional<Sequence<f32>>,
    has: Tensor<bool, ()>,
}

fn read(bound: &Binding<Optionals>) -> ort_bind::Result<usize> {
    let outputs = bound.outputs();
    let some: TensorRef<'_, f32, (Dyn,)> = outputs.some.get()?;
    Ok(some.dims()[0])
}

fn main() {}
