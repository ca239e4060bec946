//! The names renamed before 1.0 still compile, for one release, as deprecated aliases of
//! the new ones (the compiler's warning names the new name): a crate written against the
//! previous names builds, and each old name is the same type or bound as its new one.
#![allow(deprecated)]

use ort_bind::{
    Binding, Cpu, Device, Dyn, ElementType, NumericType, OnnxBinding, PooledBinding, Tensor,
    ValueOutputSlot,
};

mod add {
    ort_bind::bindings!("tests/fixtures/add.onnx");
}

/// A derived binding, whose model file was `MODEL` before it was `MODEL_FILE`.
#[derive(OnnxBinding)]
#[onnx(model = "tests/fixtures/add.onnx")]
struct AddIo<D: Device = Cpu> {
    x: Tensor<f32, (Dyn,), D>,
    y: Tensor<f32, (Dyn,), D>,
    sum: Tensor<f32, (Dyn,), D>,
}

fn same<T>(value: T) -> T {
    value
}

fn takes_output_slot<S: ort_bind::OutputSlot>() {}
fn takes_value_output_slot<S: ValueOutputSlot>() {
    takes_output_slot::<S>();
}

#[test]
fn old_names_are_the_new_types() -> ort_bind::Result<()> {
    let model = add::Model::load()?;
    let binding: Binding<add::Io<Cpu>> = model.bind(add::Dims { n: 2 })?.into();
    let mut old: ort_bind::Bound<add::Io<Cpu>> = same(binding);
    old.inputs().x.copy_from_slice(&[1.0, 2.0])?;
    old.inputs().y.copy_from_slice(&[3.0, 4.0])?;
    old.run()?;
    assert_eq!(old.outputs().sum.as_slice(), &[4.0, 6.0]);

    let pool = model.pool(1);
    let pooled: add::Pooled = pool.get(&add::Dims { n: 2 })?;
    let _: &PooledBinding<add::Io<Cpu>> = &pooled;
    let _: Option<&ort_bind::Pooled<add::Io<Cpu>>> = Some(&pooled);

    let elem: ort_bind::ElemType = ElementType::String;
    assert_eq!(elem, ElementType::String);
    let numeric: ort_bind::DType = NumericType::F32;
    assert_eq!(numeric, NumericType::F32);
    takes_value_output_slot::<ort_bind::StringOutput>();
    assert_eq!(
        AddIo::<Cpu>::MODEL.find()?,
        AddIo::<Cpu>::MODEL_FILE.find()?
    );

    // `Map::from_pairs` took a name before; called so, it still builds the same map.
    let pairs = || [(1i64, 0.5f32), (2, 0.25)];
    let old = ort_bind::Map::from_pairs("features", pairs())?;
    let new = ort_bind::Map::with_pairs(pairs())?;
    assert_eq!(old.to_btree_map(), new.to_btree_map());
    Ok(())
}
