//! The typed values of generated bindings, made from and read back into the data sets'
//! [`DynValue`]s: how the conformance runner puts sequences and optionals in a binding's
//! `inputs()` view, and compares the string tensors, sequences and optionals it reads
//! through the typed views with the expected values.
//!
//! The conversions go through the typed API only (`Sequence::from_arrays`, `iter()`,
//! `Optional::get`, ...), so a case that passes here passed through what generated code
//! gives a user.

use ort_bind::{
    Cpu, DynValue, Float4E2M1x2, Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2, Float8E5M2FNUZ,
    Float8E8M0, HostArray, Int2x4, Int4x2, NumericElement, Optional, Sequence, SequenceElement,
    Shape, StringTensor, Strings, Tensor, TensorRef, UInt2x4, UInt4x2, ValueOutputSlot, bf16, f16,
};

use super::Failure;

/// A typed input value built from a data set's value.
pub(crate) trait FromData: Sized {
    /// The value named `name` holding `value`.
    fn from_data(name: &str, value: &DynValue) -> Result<Self, Failure>;
    /// An empty value, the inner value of an absent optional.
    fn placeholder(name: &str) -> Result<Self, Failure>;
}

/// What a typed output's view reads as, for comparing with the expected value.
pub(crate) trait ToData {
    /// The value, as the data set would hold it.
    fn to_data(&self, name: &str) -> Result<DynValue, Failure>;
}

/// Dims of an empty tensor of shape `S`: its fixed dims, 0 on every other axis.
fn empty_dims<S: Shape>() -> Vec<usize> {
    match S::RANK {
        Some(_) => S::AXES.iter().map(|d| d.unwrap_or(0)).collect(),
        None => vec![0],
    }
}

fn mismatch(name: &str, want: &str, value: &DynValue) -> Failure {
    Failure(format!(
        "input `{name}` is {want}, the data is {}",
        value.describe()
    ))
}

impl<T: NumericElement, S: Shape> FromData for Tensor<T, S, Cpu> {
    fn from_data(name: &str, value: &DynValue) -> Result<Self, Failure> {
        let array = value
            .as_tensor()
            .ok_or_else(|| mismatch(name, T::NAME, value))?;
        let values = array
            .as_slice::<T>()
            .ok_or_else(|| mismatch(name, T::NAME, value))?;
        let mut tensor = Tensor::new(name, array.dims())?;
        tensor.view_mut().copy_from_slice(values)?;
        Ok(tensor)
    }

    fn placeholder(name: &str) -> Result<Self, Failure> {
        Ok(Tensor::new(name, &empty_dims::<S>())?)
    }
}

impl<S: Shape> FromData for StringTensor<S> {
    fn from_data(name: &str, value: &DynValue) -> Result<Self, Failure> {
        let strings = value
            .as_strings()
            .ok_or_else(|| mismatch(name, "a string tensor", value))?;
        Ok(StringTensor::from_strings(name, strings.clone())?)
    }

    fn placeholder(name: &str) -> Result<Self, Failure> {
        Ok(StringTensor::new(name, &empty_dims::<S>())?)
    }
}

/// An element type of sequence inputs: how a sequence of it is built from the data's
/// elements.
pub(crate) trait SequenceData: SequenceElement + Sized {
    /// The input sequence `name` of `items`.
    fn sequence<S: Shape>(name: &str, items: &[DynValue]) -> Result<Sequence<Self, S>, Failure>;
}

/// A sequence of numeric tensors (`T` is named by each impl below: the element types are
/// not one blanket impl because `String` is a sequence element too).
fn numeric_sequence<T: NumericElement, S: Shape>(
    name: &str,
    items: &[DynValue],
) -> Result<Sequence<T, S>, Failure> {
    let arrays = items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            item.as_tensor()
                .and_then(|a| Some((a.dims(), a.as_slice::<T>()?)))
                .ok_or_else(|| mismatch(&format!("{name}[{i}]"), T::NAME, item))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Sequence::from_arrays(name, arrays)?)
}

macro_rules! numeric_sequence_data {
    ($($t:ty),*) => {$(
        impl SequenceData for $t {
            fn sequence<S: Shape>(
                name: &str,
                items: &[DynValue],
            ) -> Result<Sequence<Self, S>, Failure> {
                numeric_sequence(name, items)
            }
        }
    )*};
}

numeric_sequence_data!(
    f32,
    f64,
    f16,
    bf16,
    i8,
    i16,
    i32,
    i64,
    u8,
    u16,
    u32,
    u64,
    bool,
    Float8E4M3FN,
    Float8E4M3FNUZ,
    Float8E5M2,
    Float8E5M2FNUZ,
    Float8E8M0,
    Int4x2,
    UInt4x2,
    Float4E2M1x2,
    Int2x4,
    UInt2x4
);

impl SequenceData for String {
    fn sequence<S: Shape>(name: &str, items: &[DynValue]) -> Result<Sequence<Self, S>, Failure> {
        let strings = items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                item.as_strings()
                    .ok_or_else(|| mismatch(&format!("{name}[{i}]"), "a string tensor", item))
            })
            .collect::<Result<Vec<&Strings>, _>>()?;
        Ok(Sequence::from_strings(name, strings)?)
    }
}

impl<T: SequenceData, S: Shape> FromData for Sequence<T, S> {
    fn from_data(name: &str, value: &DynValue) -> Result<Self, Failure> {
        let items = value
            .as_sequence()
            .ok_or_else(|| mismatch(name, "a sequence", value))?;
        T::sequence(name, items)
    }

    fn placeholder(name: &str) -> Result<Self, Failure> {
        Ok(Sequence::new(name))
    }
}

impl<V: FromData> FromData for Optional<V> {
    fn from_data(name: &str, value: &DynValue) -> Result<Self, Failure> {
        Ok(match value {
            DynValue::Optional(None) => Optional::none(V::placeholder(name)?),
            DynValue::Optional(Some(inner)) => Optional::some(V::from_data(name, inner)?),
            // ONNX's test data may store a present optional as the bare value.
            bare => Optional::some(V::from_data(name, bare)?),
        })
    }

    fn placeholder(name: &str) -> Result<Self, Failure> {
        Ok(Optional::none(V::placeholder(name)?))
    }
}

impl<T: NumericElement, S: Shape> ToData for TensorRef<'_, T, S> {
    fn to_data(&self, _name: &str) -> Result<DynValue, Failure> {
        Ok(DynValue::Tensor(HostArray::from_vec(
            self.dims().to_vec(),
            self.as_slice().to_vec(),
        )?))
    }
}

impl ToData for Strings {
    fn to_data(&self, _name: &str) -> Result<DynValue, Failure> {
        Ok(DynValue::Strings(self.clone()))
    }
}

impl<X: ToData + ?Sized> ToData for &X {
    fn to_data(&self, name: &str) -> Result<DynValue, Failure> {
        (**self).to_data(name)
    }
}

impl<T: SequenceElement, S: Shape> ToData for Sequence<T, S>
where
    for<'a> T::View<'a, S>: ToData,
{
    fn to_data(&self, name: &str) -> Result<DynValue, Failure> {
        let items = self
            .iter()
            .enumerate()
            .map(|(i, item)| item.to_data(&format!("{name}[{i}]")))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(DynValue::Sequence(items))
    }
}

/// An optional's value as read: absent or present.
impl<X: ToData> ToData for Option<X> {
    fn to_data(&self, name: &str) -> Result<DynValue, Failure> {
        Ok(DynValue::Optional(match self {
            None => None,
            Some(view) => Some(Box::new(view.to_data(name)?)),
        }))
    }
}

/// An output ONNX Runtime allocates, read with `get()` as every route reads it (an error
/// before a run).
impl<V: ValueOutputSlot> ToData for ort_bind::OutputRef<'_, V>
where
    for<'a> V::View<'a>: ToData,
{
    fn to_data(&self, name: &str) -> Result<DynValue, Failure> {
        self.get()?.to_data(name)
    }
}

impl<V: ValueOutputSlot> ToData for Optional<V>
where
    for<'a> V::View<'a>: ToData,
{
    fn to_data(&self, name: &str) -> Result<DynValue, Failure> {
        Ok(DynValue::Optional(match self.get()? {
            None => None,
            Some(view) => Some(Box::new(view.to_data(name)?)),
        }))
    }
}
