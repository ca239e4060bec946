//! Compile-time checks that `#[derive(OnnxBinding)]` emits next to its syntactic ones.
//!
//! The derive reads field types as written; when a type hides behind an alias or comes
//! from another module it cannot see through it, so it also emits calls such as
//! `binds_input::<FieldType, f32, (Fix<1>, Dyn)>()` inside a `const _: () = { ... };`
//! block. They cost nothing at run time (they are never called) and fail to compile,
//! with the messages below, when the field's real type does not fit the model.
//!
//! A model's shape is written as a shape type: `Fix<N>` for a dimension the model fixes,
//! `Dyn` for a symbolic or unknown one, [`AnyRank`] when the model declares no rank.
//! A field's axis fits a model dimension when the model leaves it symbolic (any axis, so
//! a field may fix a symbolic dimension to a constant), or when the model fixes it to `N`
//! and the axis is `Fix<N>` or `Dyn`.

use crate::device::{Cpu, Device};
use crate::element::Element;
use crate::shape::{AnyRank, Axis, Dyn, Fix, Shape};
use crate::tensor::{AllocatedOutput, Tensor};
use crate::values::{
    Map, MapKey, MapSequence, MapValue, Optional, Sequence, SequenceElement, StringOutput,
    StringTensor,
};

/// Implemented by a shape that fits the model's shape `M` (see the [module docs](self)).
///
/// The impls are `#[diagnostic::do_not_recommend]`: a mismatch is reported as "the shape
/// `(Fix<1>, Fix<4>)` does not fit the model's `(Fix<1>, Fix<3>)`", both shapes side by
/// side, instead of a list of every tuple impl.
#[diagnostic::on_unimplemented(
    message = "the shape `{Self}` does not fit the model's `{M}`",
    label = "this shape does not fit the model's `{M}`",
    note = "write one axis per model dimension: `Fix<N>` where the model fixes the size to N, \
            `Fix<N>` or `Dyn` where it is symbolic (or `AnyRank` to decide the rank at run time)"
)]
pub trait ShapeFits<M> {}

/// Implemented by an axis that fits a model dimension written as `M` (`Fix<N>` or `Dyn`).
#[diagnostic::on_unimplemented(
    message = "the axis `{Self}` contradicts the model, which fixes this dimension: `{M}`",
    label = "the model fixes this axis to a different size",
    note = "use the model's size (`{M}`) or `Dyn`"
)]
pub trait AxisFits<M> {}

impl<const N: usize> AxisFits<Fix<N>> for Fix<N> {}
impl<const N: usize> AxisFits<Fix<N>> for Dyn {}
impl<A: Axis> AxisFits<Dyn> for A {}

#[diagnostic::do_not_recommend]
impl<M: Shape> ShapeFits<M> for AnyRank {}

macro_rules! shape_fits {
    ($(($a:ident, $m:ident)),*) => {
        #[diagnostic::do_not_recommend]
        impl<$($a: AxisFits<$m>, $m,)*> ShapeFits<($($m,)*)> for ($($a,)*) {}
        #[diagnostic::do_not_recommend]
        impl<$($a: Axis,)*> ShapeFits<AnyRank> for ($($a,)*) {}
    };
}

shape_fits!();
shape_fits!((A0, M0));
shape_fits!((A0, M0), (A1, M1));
shape_fits!((A0, M0), (A1, M1), (A2, M2));
shape_fits!((A0, M0), (A1, M1), (A2, M2), (A3, M3));
shape_fits!((A0, M0), (A1, M1), (A2, M2), (A3, M3), (A4, M4));
shape_fits!((A0, M0), (A1, M1), (A2, M2), (A3, M3), (A4, M4), (A5, M5));
shape_fits!(
    (A0, M0),
    (A1, M1),
    (A2, M2),
    (A3, M3),
    (A4, M4),
    (A5, M5),
    (A6, M6)
);
shape_fits!(
    (A0, M0),
    (A1, M1),
    (A2, M2),
    (A3, M3),
    (A4, M4),
    (A5, M5),
    (A6, M6),
    (A7, M7)
);
shape_fits!(
    (A0, M0),
    (A1, M1),
    (A2, M2),
    (A3, M3),
    (A4, M4),
    (A5, M5),
    (A6, M6),
    (A7, M7),
    (A8, M8)
);
shape_fits!(
    (A0, M0),
    (A1, M1),
    (A2, M2),
    (A3, M3),
    (A4, M4),
    (A5, M5),
    (A6, M6),
    (A7, M7),
    (A8, M8),
    (A9, M9)
);
shape_fits!(
    (A0, M0),
    (A1, M1),
    (A2, M2),
    (A3, M3),
    (A4, M4),
    (A5, M5),
    (A6, M6),
    (A7, M7),
    (A8, M8),
    (A9, M9),
    (A10, M10)
);
shape_fits!(
    (A0, M0),
    (A1, M1),
    (A2, M2),
    (A3, M3),
    (A4, M4),
    (A5, M5),
    (A6, M6),
    (A7, M7),
    (A8, M8),
    (A9, M9),
    (A10, M10),
    (A11, M11)
);

/// Implemented by a slot that can bind a model input of element type `E` and shape `M`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot bind this model input, which the model declares as a tensor of \
               `{E}` with shape `{M}`",
    label = "expected `Tensor<{E}, _, _>` with a shape that fits `{M}`",
    note = "bind inputs as `ort_bind::Tensor<{E}, Shape, Device>`"
)]
pub trait BindsInput<E, M> {}

#[diagnostic::do_not_recommend]
impl<T: Element, S: Shape + ShapeFits<M>, D: Device, M> BindsInput<T, M> for Tensor<T, S, D> {}

/// Implemented by a slot that can bind a model output of element type `E` and shape `M`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot bind this model output, which the model declares as a tensor \
               of `{E}` with shape `{M}`",
    label = "expected `Tensor<{E}, _, _>` or `AllocatedOutput<{E}, _, _>` with a shape that \
             fits `{M}`",
    note = "bind outputs as `ort_bind::Tensor<{E}, Shape, Device>` (written in place) or \
            `ort_bind::AllocatedOutput<{E}, Shape, Device>` (allocated by ONNX Runtime)"
)]
pub trait BindsOutput<E, M> {}

#[diagnostic::do_not_recommend]
impl<T: Element, S: Shape + ShapeFits<M>, D: Device, M> BindsOutput<T, M> for Tensor<T, S, D> {}
#[diagnostic::do_not_recommend]
impl<T: Element, S: Shape + ShapeFits<M>, D: Device, M> BindsOutput<T, M>
    for AllocatedOutput<T, S, D>
{
}

/// Implemented by a slot holding elements of type `E`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not hold `{E}` elements, which the model declares for this value",
    label = "expected a tensor of `{E}`"
)]
pub trait HasElement<E> {}

impl<T: Element, S: Shape, D: Device> HasElement<T> for Tensor<T, S, D> {}
impl<T: Element, S: Shape, D: Device> HasElement<T> for AllocatedOutput<T, S, D> {}

/// Implemented by a slot whose shape fits the model's shape `M`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not have a shape that fits the model's `{M}`",
    label = "expected a shape that fits `{M}`"
)]
pub trait HasShape<M> {}

#[diagnostic::do_not_recommend]
impl<T: Element, S: Shape + ShapeFits<M>, D: Device, M> HasShape<M> for Tensor<T, S, D> {}
#[diagnostic::do_not_recommend]
impl<T: Element, S: Shape + ShapeFits<M>, D: Device, M> HasShape<M> for AllocatedOutput<T, S, D> {}

/// Implemented by a slot whose memory lives on device `D`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not live on `{D}`, the device this binding requires",
    label = "expected a tensor on `{D}`",
    note = "the struct's `#[onnx(device = ...)]` attribute names the device every field must use"
)]
pub trait OnDevice<D> {}

impl<T: Element, S: Shape, D: Device> OnDevice<D> for Tensor<T, S, D> {}
impl<T: Element, S: Shape, D: Device> OnDevice<D> for AllocatedOutput<T, S, D> {}

/// Implemented by a field type that can bind a model value that is not a numeric tensor,
/// which the derive writes as the value type that fits the model exactly (`M`):
/// `StringOutput<(Dyn,)>`, `MapSequence<String, f32>`, `Optional<AllocatedOutput<f32,
/// (Dyn,)>>`. A field fits when it is the same kind of value, of the same element, key and
/// value types, with a shape that fits `M`'s (as for tensors).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot bind this model value, which the model declares as `{M}`",
    label = "expected a type that fits `{M}`",
    note = "string tensors bind as `StringTensor<Shape>` (inputs) or `StringOutput<Shape>` \
            (outputs), `sequence(tensor)` as `Sequence<T, Shape>`, `sequence(map(K, V))` as \
            `MapSequence<K, V>`, `map(K, V)` as `Map<K, V>`, `optional(..)` as `Optional<..>` \
            around the type of what it holds"
)]
pub trait BindsValue<M> {}

#[diagnostic::do_not_recommend]
impl<S: Shape + ShapeFits<M>, M: Shape> BindsValue<StringTensor<M>> for StringTensor<S> {}
#[diagnostic::do_not_recommend]
impl<S: Shape + ShapeFits<M>, M: Shape> BindsValue<StringOutput<M>> for StringOutput<S> {}
#[diagnostic::do_not_recommend]
impl<T: SequenceElement, S: Shape + ShapeFits<M>, M: Shape> BindsValue<Sequence<T, M>>
    for Sequence<T, S>
{
}
impl<K: MapKey, V: MapValue> BindsValue<Map<K, V>> for Map<K, V> {}
impl<K: MapKey, V: MapValue> BindsValue<MapSequence<K, V>> for MapSequence<K, V> {}
#[diagnostic::do_not_recommend]
impl<V: BindsValue<W>, W> BindsValue<Optional<W>> for Optional<V> {}
#[diagnostic::do_not_recommend]
impl<T: Element, S: Shape + ShapeFits<M>, M: Shape> BindsValue<Tensor<T, M, Cpu>>
    for Tensor<T, S, Cpu>
{
}
#[diagnostic::do_not_recommend]
impl<T: Element, S: Shape + ShapeFits<M>, M: Shape> BindsValue<AllocatedOutput<T, M, Cpu>>
    for AllocatedOutput<T, S, Cpu>
{
}

/// Fails to compile unless `F` can bind a model value written as `M` (see [`BindsValue`]).
pub const fn binds_value<F: BindsValue<M>, M>() {}

/// Fails to compile unless `F` can bind a model input of `E` elements and shape `M`.
pub const fn binds_input<F: BindsInput<E, M>, E, M>() {}

/// Fails to compile unless `F` can bind a model output of `E` elements and shape `M`.
pub const fn binds_output<F: BindsOutput<E, M>, E, M>() {}

/// Fails to compile unless `F` holds `E` elements.
pub const fn has_element<F: HasElement<E>, E>() {}

/// Fails to compile unless `F`'s shape fits `M`.
pub const fn has_shape<F: HasShape<M>, M>() {}

/// Fails to compile unless `F` lives on device `D`.
pub const fn on_device<F: OnDevice<D>, D>() {}

#[cfg(test)]
mod tests {
    use super::*;

    // These compile only if the impls accept what the module docs promise.
    const _: () = {
        binds_input::<Tensor<f32, (Fix<1>, Dyn), Cpu>, f32, (Fix<1>, Dyn)>();
        binds_input::<Tensor<f32, (Fix<1>, Fix<7>), Cpu>, f32, (Fix<1>, Dyn)>();
        binds_input::<Tensor<f32, (Dyn, Dyn), Cpu>, f32, (Fix<1>, Dyn)>();
        binds_input::<Tensor<f32, AnyRank, Cpu>, f32, (Fix<1>, Dyn)>();
        binds_input::<Tensor<i64, (), Cpu>, i64, ()>();
        binds_input::<Tensor<i64, (Dyn,), Cpu>, i64, AnyRank>();
        binds_output::<AllocatedOutput<i64, (Fix<1>, Dyn), Cpu>, i64, (Fix<1>, Dyn)>();
        has_element::<AllocatedOutput<bool, (Dyn,), Cpu>, bool>();
        has_shape::<Tensor<u8, (Fix<3>,), Cpu>, (Fix<3>,)>();
        on_device::<Tensor<u8, (Fix<3>,), Cpu>, Cpu>();
        binds_value::<StringOutput<(Dyn,)>, StringOutput<(Dyn,)>>();
        binds_value::<StringTensor<(Fix<2>, Fix<1>)>, StringTensor<(Dyn, Fix<1>)>>();
        binds_value::<Sequence<f32, (Dyn,)>, Sequence<f32, AnyRank>>();
        binds_value::<MapSequence<String, f32>, MapSequence<String, f32>>();
        binds_value::<Map<i64, f64>, Map<i64, f64>>();
        binds_value::<
            Optional<AllocatedOutput<f32, (Dyn,), Cpu>>,
            Optional<AllocatedOutput<f32, (Dyn,), Cpu>>,
        >();
    };
}
