//! Bindings decided at run time, for tools that take any model (such as `ort-bind run`):
//! element types and ranks come from the loaded session instead of generated code.
//!
//! - [`NumericType`]: an element type chosen at run time; [`NumericElement`] links it to the
//!   Rust type.
//!   Every element type ort-bind binds: the 13 wide ones (`float32` .. `bool`) and ONNX's
//!   narrow ones (`float8e4m3fn`, `float8e4m3fnuz`, `float8e5m2`, `float8e5m2fnuz`,
//!   `float8e8m0`, and the packed `int4`, `uint4`, `float4e2m1`, `int2`, `uint2`, held as
//!   [`Int4x2`] etc.: a packed array's values are bytes, its dims count elements, see
//!   [`NumericType::packing`]).
//! - [`HostArray`] / [`HostArrayRef`]: a host array of any element type, owned or borrowed.
//! - [`DynamicBinding`]: binds an input tensor per model input (owned, sized by the data set
//!   into it) and lets ONNX Runtime allocate every output; outputs are read in place.
//!   String tensors, sequences, maps and optionals go in and come out as
//!   [`DynValue`]s ([`DynamicBinding::set_input_value`], [`DynamicBinding::output_value`]).
//!
//! Generated bindings are the typed, allocation-free route; this one checks element types
//! and shapes when data is set, copies input data once into buffers it owns, and is meant
//! for command-line tools and tests.

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::time::Duration;

use ort_sys::ONNXTensorElementDataType as Onnx;

use ort_sys::ONNXType;

use crate::binding::{Binder, Binding};
use crate::device::Cpu;
pub use crate::element::NumericType;
use crate::element::{
    Float4E2M1x2, Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2, Float8E5M2FNUZ, Float8E8M0, Int2x4,
    Int4x2, UInt2x4, UInt4x2, bf16, f16,
};
use crate::error::{Error, Result};
use crate::session::Session;
use crate::shape::AnyRank;
use crate::sys::Value;
use crate::tensor::{AllocatedOutput, Tensor};
use crate::values::any::check_dims;
use crate::values::{DynMap, DynValue, ElementType, Strings, ValueType, expect_kind};

pub use crate::values::host::{HostArray, HostArrayRef, HostData, HostDataRef, NumericElement};

mod io;

pub use io::{DynDims, DynInputsMut, DynamicIo};

/// The binding engine's per-type input tensors and output slots, from the element table.
macro_rules! any_values {
    ($(($variant:ident, $rust:ident, $onnx:ident, $name:literal, $doc:expr, $get:expr);)*) => {
        /// An owned input tensor of the element type chosen at run time.
        enum AnyTensor {
            $($variant(Tensor<$rust, AnyRank, Cpu>),)*
        }

        impl AnyTensor {
            fn new(dtype: NumericType, name: &str, dims: &[usize]) -> Result<Self> {
                Ok(match dtype { $(NumericType::$variant => AnyTensor::$variant(Tensor::new(name, dims)?),)* })
            }

            fn dtype(&self) -> NumericType {
                match self { $(AnyTensor::$variant(_) => NumericType::$variant,)* }
            }

            fn set_dims(&mut self, dims: &[usize]) -> Result<()> {
                match self { $(AnyTensor::$variant(t) => t.set_dims(dims).map(drop),)* }
            }

            fn dims(&self) -> &[usize] {
                match self { $(AnyTensor::$variant(t) => t.dims(),)* }
            }

            fn bind<'io>(&'io self, binder: &mut Binder<'_, 'io>, index: usize) -> Result<()> {
                match self { $(AnyTensor::$variant(t) => binder.input(index, t),)* }
            }

            /// Copies `data` in; the element type must match (checked by the caller).
            fn copy_from(&mut self, data: HostDataRef<'_>) -> Result<()> {
                match (self, data) {
                    $((AnyTensor::$variant(t), HostDataRef::$variant(v)) => t.view_mut().copy_from_slice(v),)*
                    (t, data) => Err(Error::InputType {
                        input: t.name().to_owned(),
                        expected: t.dtype().name().to_owned(),
                        found: data.dtype().name().to_owned(),
                    }),
                }
            }

            fn name(&self) -> &str {
                match self { $(AnyTensor::$variant(t) => t.name(),)* }
            }

            fn value(&self) -> &Value {
                match self { $(AnyTensor::$variant(t) => t.value(),)* }
            }
        }

        /// An output slot ONNX Runtime allocates into, of the element type chosen at run time.
        enum AnyOutput {
            $($variant(AllocatedOutput<$rust, AnyRank, Cpu>),)*
        }

        impl AnyOutput {
            fn new(dtype: NumericType, name: &str) -> Self {
                match dtype { $(NumericType::$variant => AnyOutput::$variant(AllocatedOutput::new_in(name, Cpu)),)* }
            }

            fn accept(&mut self, value: Value) -> Result<()> {
                match self { $(AnyOutput::$variant(o) => o.accept(value),)* }
            }

            fn clear(&mut self) {
                match self { $(AnyOutput::$variant(o) => o.clear(),)* }
            }

            fn bind<'io>(&'io self, binder: &mut Binder<'_, 'io>, index: usize) -> Result<()> {
                match self { $(AnyOutput::$variant(o) => binder.allocated_output(index, o),)* }
            }

            fn get(&self) -> Result<HostArrayRef<'_>> {
                match self {
                    $(AnyOutput::$variant(o) => {
                        let view = o.get()?;
                        Ok(HostArrayRef { dims: view.dims(), data: HostDataRef::$variant(view.as_slice()) })
                    })*
                }
            }
        }
    };
}

crate::element::element_table!(any_values);

impl fmt::Debug for AnyTensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnyTensor")
            .field("name", &self.name())
            .field("dtype", &self.dtype())
            .finish_non_exhaustive()
    }
}

/// A model input or output, as the model declares it (read from the loaded session): its
/// name and [`ValueType`]. What generated code expects of a value is a
/// [`ValueSpec`](crate::ValueSpec) instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueInfo {
    /// ONNX name.
    pub name: String,
    /// Its type: a tensor (element type, dims), a sequence, a map or an optional.
    pub ty: ValueType,
}

impl ValueInfo {
    fn from_declared(role: &'static str, declared: &crate::sys::Declared) -> Result<ValueInfo> {
        let name = declared.name.clone();
        match ValueType::from_declared(&declared.ty) {
            Some(ty) => Ok(ValueInfo { name, ty }),
            None => Err(Error::Unsupported {
                role,
                name,
                kind: declared.ty.to_string(),
            }),
        }
    }

    /// The element type, for a tensor of numeric or bool elements.
    pub fn dtype(&self) -> Option<NumericType> {
        match &self.ty {
            ValueType::Tensor {
                elem: ElementType::Numeric(d),
                ..
            } => Some(*d),
            _ => None,
        }
    }

    /// The declared dims (`None` for a dynamic one), for a tensor. ONNX Runtime reports a
    /// value of unknown rank like a scalar (no dims), so an empty list does not prove rank 0.
    pub fn dims(&self) -> Option<&[Option<usize>]> {
        self.ty.as_tensor().map(|(_, dims)| dims)
    }

    /// Checks that `dims` fits the declared dims (rank and fixed sizes).
    fn check_dims(&self, dims: &[usize]) -> Result<()> {
        check_dims(&self.name, self.dims().unwrap_or(&[]), dims)
    }
}

/// The ONNX Runtime value of an input that is not a numeric tensor, and what it rests on.
struct Built {
    // The input's ONNX name.
    name: String,
    // `None`: an optional input without a value (left unbound).
    root: Option<Part>,
    // Declared before `tensors`: values may view their buffers.
    values: Vec<Value>,
    tensors: Vec<AnyTensor>,
}

#[derive(Clone, Copy)]
enum Part {
    Tensor(usize),
    Value(usize),
}

impl Built {
    fn get(&self, part: Part) -> &Value {
        match part {
            Part::Tensor(i) => self.tensors[i].value(),
            Part::Value(i) => &self.values[i],
        }
    }

    fn push(&mut self, value: Value) -> Part {
        self.values.push(value);
        Part::Value(self.values.len() - 1)
    }

    /// Builds ONNX Runtime values for `value` (`None` for an absent optional), whose
    /// declared type `ty` it has been checked against ([`DynValue::check_type`]); `ty`
    /// gives the element type of an empty sequence, which has no element to tell it.
    fn add(&mut self, name: &str, value: &DynValue, ty: &ValueType) -> Result<Option<Part>> {
        // A value for an optional type may come without the `Optional` wrapper.
        let ty = match (ty, value) {
            (ValueType::Optional(inner), v) if !matches!(v, DynValue::Optional(_)) => &**inner,
            _ => ty,
        };
        Ok(Some(match value {
            DynValue::Tensor(a) => {
                let mut t = AnyTensor::new(a.dtype(), name, a.dims())?;
                t.copy_from(a.view().data())?;
                self.tensors.push(t);
                Part::Tensor(self.tensors.len() - 1)
            }
            DynValue::Strings(s) => {
                let mut scratch = Vec::new();
                let v = crate::values::sequence::string_value(name, s, &mut scratch)?;
                self.push(v)
            }
            DynValue::Sequence(items) if items.is_empty() => {
                let v = crate::values::empty::empty_sequence(empty_sequence_elem(name, ty)?)?;
                self.push(v)
            }
            DynValue::Sequence(items) => {
                let inner = match ty {
                    ValueType::Sequence(inner) => &**inner,
                    other => other,
                };
                let mut parts = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    match self.add(&format!("{name}[{i}]"), item, inner)? {
                        Some(p) => parts.push(p),
                        None => {
                            return Err(Error::Value {
                                value: name.to_owned(),
                                problem: format!("element {i} is an absent optional"),
                            });
                        }
                    }
                }
                let v = Value::compose(
                    parts.iter().map(|&p| self.get(p)),
                    ONNXType::ONNX_TYPE_SEQUENCE,
                )?;
                self.push(v)
            }
            DynValue::Map(m) => {
                let column = |elem: ElementType| ValueType::Tensor {
                    elem,
                    dims: vec![None],
                };
                let keys = self.add(name, m.keys(), &column(m.key_type()))?;
                let values = self.add(name, m.values(), &column(m.value_type()))?;
                let (Some(k), Some(v)) = (keys, values) else {
                    unreachable!("map columns are tensors");
                };
                let v = Value::compose([self.get(k), self.get(v)], ONNXType::ONNX_TYPE_MAP)?;
                self.push(v)
            }
            DynValue::Optional(None) => return Ok(None),
            DynValue::Optional(Some(inner)) => {
                let ty = match ty {
                    ValueType::Optional(t) => &**t,
                    other => other,
                };
                return self.add(name, inner, ty);
            }
        }))
    }
}

/// The element type of an empty sequence input of declared type `ty`: a sequence of tensors
/// ([`empty_sequence`](crate::values::empty::empty_sequence) makes those); an error for other
/// sequences, which ONNX Runtime's C API cannot make empty.
fn empty_sequence_elem(name: &str, ty: &ValueType) -> Result<Onnx> {
    let problem = match ty {
        ValueType::Sequence(inner) => match &**inner {
            ValueType::Tensor {
                elem: ElementType::Numeric(d),
                ..
            } => return Ok(d.onnx()),
            ValueType::Tensor {
                elem: ElementType::String,
                ..
            } => return Ok(Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING),
            ValueType::Map { .. } => crate::values::map::EMPTY_MAP_SEQUENCE.to_owned(),
            other => format!(
                "an empty sequence of {other} cannot be made: ONNX Runtime's C API takes a \
                 sequence's element type from its first element, and ONNX's `SequenceEmpty` \
                 makes sequences of tensors only"
            ),
        },
        other => format!("an empty sequence where the model declares {other}"),
    };
    Err(Error::Value {
        value: name.to_owned(),
        problem,
    })
}

/// Reads a value ONNX Runtime produced, of declared type `ty`.
fn read_value(name: &str, value: Value, ty: &ValueType) -> Result<DynValue> {
    Ok(match ty {
        ValueType::Optional(inner) => {
            if value.has_value()? {
                DynValue::Optional(Some(Box::new(read_value(name, value, inner)?)))
            } else {
                DynValue::Optional(None)
            }
        }
        ValueType::Tensor {
            elem: ElementType::String,
            ..
        } => {
            let mut s = Strings::new();
            s.load(name, &value, &mut Vec::new())?;
            DynValue::Strings(s)
        }
        ValueType::Tensor {
            elem: ElementType::Numeric(d),
            ..
        } => {
            let mut out = AnyOutput::new(*d, name);
            out.accept(value)?;
            DynValue::Tensor(out.get()?.to_owned_array())
        }
        ValueType::Sequence(inner) => {
            expect_kind(name, &value, ONNXType::ONNX_TYPE_SEQUENCE)?;
            let count = value.count()?;
            let mut items = Vec::with_capacity(count);
            for i in 0..count {
                items.push(read_value(
                    &format!("{name}[{i}]"),
                    value.element(i)?,
                    inner,
                )?);
            }
            DynValue::Sequence(items)
        }
        ValueType::Map { key, value: v } => {
            expect_kind(name, &value, ONNXType::ONNX_TYPE_MAP)?;
            let column = |elem: ElementType| ValueType::Tensor {
                elem,
                dims: vec![None],
            };
            let keys = read_value(name, value.element(0)?, &column(*key))?;
            let values = read_value(name, value.element(1)?, &column(*v))?;
            DynValue::Map(DynMap::new(keys, values).map_err(|e| match e {
                Error::Value { problem, .. } => Error::Value {
                    value: name.to_owned(),
                    problem: format!("ONNX Runtime produced a bad map: {problem}"),
                },
                other => other,
            })?)
        }
    })
}

impl crate::values::sealed::Sealed for Built {}

impl crate::values::ValueInputSlot for Built {
    fn name(&self) -> &str {
        &self.name
    }

    fn bound_value(&self) -> Result<Option<&Value>> {
        Ok(self.root.map(|root| self.get(root)))
    }
}

/// A binding whose element types and shapes are read from the session at run time:
/// [`Binding`] over a [`DynamicIo`], so it has the whole serving API of typed bindings
/// through `Deref`: [`Binding::run_async`], [`Binding::run_with_timeout`],
/// [`Binding::run_async_with_timeout`], [`Binding::terminator`], and shape buckets
/// ([`Binding::keep_recent_dims`]; its dims are the input shapes, [`DynDims`]).
///
/// Each input gets a tensor it owns, sized by the array set into it with
/// [`DynamicBinding::set_input`] (capacity is reused when the next array is no larger, and
/// switching back to recently used input shapes reuses their ONNX Runtime binding); every
/// output is allocated by ONNX Runtime during the run and read in place with
/// [`DynamicBinding::output`].
#[derive(Debug)]
pub struct DynamicBinding {
    bound: Binding<DynamicIo>,
}

impl Deref for DynamicBinding {
    type Target = Binding<DynamicIo>;

    fn deref(&self) -> &Binding<DynamicIo> {
        &self.bound
    }
}

impl DerefMut for DynamicBinding {
    fn deref_mut(&mut self) -> &mut Binding<DynamicIo> {
        &mut self.bound
    }
}

impl DynamicBinding {
    /// A binding for `session`; fails with [`Error::Unsupported`] when an input or output has
    /// an element type ort-bind does not bind.
    pub fn new(session: &Session) -> Result<Self> {
        Ok(DynamicBinding {
            bound: Binding::new_unbound(session, DynamicIo::new(session)?)?,
        })
    }

    /// The model's inputs, in model order.
    pub fn input_info(&self) -> impl ExactSizeIterator<Item = &ValueInfo> {
        self.bound.io().input_info()
    }

    /// The model's outputs, in model order.
    pub fn output_info(&self) -> impl ExactSizeIterator<Item = &ValueInfo> {
        self.bound.io().output_info()
    }

    /// The position of the input named `name`.
    pub fn input_index(&self, name: &str) -> Option<usize> {
        self.bound.io().input_index(name)
    }

    /// The position of the output named `name`.
    pub fn output_index(&self, name: &str) -> Option<usize> {
        self.bound.io().output_index(name)
    }

    /// Sets input `index` to any value: a numeric tensor goes to [`DynamicBinding::set_input`];
    /// string tensors, sequences, maps and optionals are checked against the model's type
    /// and copied into values ONNX Runtime owns (an absent optional is left unbound).
    pub fn set_input_value(&mut self, index: usize, value: &DynValue) -> Result<()> {
        let input = self.bound.io().input(index)?;
        if let DynValue::Tensor(a) = value
            && input.info.dtype().is_some()
        {
            return self.set_input(index, a.view());
        }
        value.check_type(&input.info.name, &input.info.ty)?;
        let mut built = Built {
            name: input.info.name.clone(),
            root: None,
            values: Vec::new(),
            tensors: Vec::new(),
        };
        built.root = built.add(&input.info.name, value, &input.info.ty)?;
        self.bound.modify_later(|io| {
            io.put_built(index, built);
            Ok(())
        })
    }

    /// Copies `array` into input `index`, after checking its element type and that its dims
    /// fit the model's declared rank and fixed dims. For inputs of other types, see
    /// [`DynamicBinding::set_input_value`].
    ///
    /// Once every input is set, a change of shape is a change of the binding's dims
    /// ([`Binding::set_dims`]): switching back to recently used input shapes reuses their
    /// binding.
    pub fn set_input(&mut self, index: usize, array: HostArrayRef<'_>) -> Result<()> {
        let io = self.bound.io();
        let input = io.input(index)?;
        let Some(dtype) = input.info.dtype() else {
            return Err(Error::InputType {
                input: input.info.name.clone(),
                expected: input.info.ty.to_string(),
                found: format!(
                    "{} tensor (use `set_input_value`)",
                    crate::values::with_article(&array.dtype().to_string())
                ),
            });
        };
        if array.dtype() != dtype {
            return Err(Error::InputType {
                input: input.info.name.clone(),
                expected: dtype.name().to_owned(),
                found: array.dtype().name().to_owned(),
            });
        }
        input.info.check_dims(array.dims())?;
        let has_tensor = input.tensor.is_some();
        if has_tensor && io.complete() {
            let mut dims = io.dims();
            dims[index] = array.dims().to_vec();
            self.bound.set_dims(&dims)?;
            self.bound.inputs().copy_in(index, array)
        } else {
            self.bound
                .modify_later(|io| io.put_tensor(index, dtype, array))
        }
    }

    /// Runs the model on the inputs set so far (every input must have been set once).
    ///
    /// After a failed run no output is readable ([`Error::NotRun`]) until a run succeeds:
    /// values of an earlier run are not passed off as this one's.
    pub fn run(&mut self) -> Result<()> {
        self.bound.run()
    }

    /// [`DynamicBinding::run`], stopped with [`Error::TimedOut`] when it has not finished
    /// after `timeout` ([`Binding::run_with_timeout`]).
    pub fn run_with_timeout(&mut self, timeout: Duration) -> Result<()> {
        self.bound.run_with_timeout(timeout)
    }

    /// Output `index` of the last run, a numeric tensor read in place (for outputs of other
    /// types, see [`DynamicBinding::output_value`]).
    pub fn output(&self, index: usize) -> Result<HostArrayRef<'_>> {
        self.bound.io().output(index)
    }

    /// Output `index` of the last run, of any type, copied out (a numeric tensor is copied
    /// from ONNX Runtime's memory; other values were read out of it after the run).
    pub fn output_value(&self, index: usize) -> Result<DynValue> {
        self.bound.io().output_value(index)
    }

    /// The session this binding runs.
    pub fn session(&self) -> &Session {
        self.bound.session()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_sequences_take_their_element_type_from_the_declared_type() {
        let tensor = |elem| ValueType::Tensor {
            elem,
            dims: vec![None],
        };
        let seq = |inner| ValueType::Sequence(Box::new(inner));
        assert_eq!(
            empty_sequence_elem("s", &seq(tensor(ElementType::Numeric(NumericType::F32)))).unwrap(),
            Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT
        );
        assert_eq!(
            empty_sequence_elem("s", &seq(tensor(ElementType::String))).unwrap(),
            Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING
        );
        let map = ValueType::Map {
            key: ElementType::Numeric(NumericType::I64),
            value: ElementType::Numeric(NumericType::F32),
        };
        let err = empty_sequence_elem("rows", &seq(map))
            .unwrap_err()
            .to_string();
        assert!(err.contains("rows"), "{err}");
        assert!(err.contains("empty sequence of maps"), "{err}");
        let nested = seq(seq(tensor(ElementType::String)));
        let err = empty_sequence_elem("deep", &nested)
            .unwrap_err()
            .to_string();
        assert!(err.contains("SequenceEmpty"), "{err}");
        assert!(err.contains("seq("), "{err}");
        let err = empty_sequence_elem("x", &tensor(ElementType::String))
            .unwrap_err()
            .to_string();
        assert!(err.contains("the model declares"), "{err}");
    }

    #[test]
    fn dtypes_round_trip() {
        for &d in NumericType::ALL {
            assert_eq!(NumericType::from_onnx(d.onnx()), Some(d));
        }
        assert_eq!(NumericType::F16.size(), 2);
        assert_eq!(NumericType::Bool.name(), "bool");
        assert_eq!(
            NumericType::from_onnx(Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING),
            None
        );
    }

    #[test]
    fn arrays_check_their_length() {
        let a = HostArray::from_vec(vec![2, 2], vec![1i64, 2, 3, 4]).unwrap();
        assert_eq!(a.dtype(), NumericType::I64);
        assert_eq!(a.as_slice::<i64>(), Some(&[1i64, 2, 3, 4][..]));
        assert_eq!(a.as_slice::<f32>(), None);
        assert_eq!(a.view().to_owned_array(), a);
        let err = HostArray::from_vec(vec![3], vec![1.0f32]).unwrap_err();
        assert!(err.to_string().contains("expected 3 elements"), "{err}");
        let err = HostArrayRef::of(&[usize::MAX, 2], &[0u8][..]).unwrap_err();
        assert!(matches!(err, Error::Length { .. }), "{err}");
        assert_eq!(bool::wrap_ref(&[true, false]).get_f64(0), Some(1.0));
    }

    #[test]
    fn narrow_types_hold_packed_values() {
        assert_eq!(NumericType::ALL.len(), 23);
        assert_eq!(NumericType::I4.name(), "int4");
        assert_eq!(NumericType::F8E4M3FN.name(), "float8e4m3fn");
        assert_eq!(
            (
                NumericType::I4.packing(),
                NumericType::U2.packing(),
                NumericType::F8E5M2.packing()
            ),
            (2, 4, 1)
        );
        assert_eq!(NumericType::F4E2M1.size(), 1);
        assert_eq!(
            NumericType::from_onnx(Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT2),
            Some(NumericType::U2)
        );

        // 5 int4 elements in 3 bytes; elements are indexed through the nibbles.
        let bytes = vec![
            Int4x2::pack([1, -2]),
            Int4x2::pack([3, -8]),
            Int4x2::pack([7, 0]),
        ];
        let a = HostArray::from_vec(vec![5], bytes.clone()).unwrap();
        assert_eq!(a.dtype(), NumericType::I4);
        assert_eq!(a.as_slice::<Int4x2>(), Some(&bytes[..]));
        assert_eq!(a.as_slice::<u8>(), None);
        assert_eq!((a.data().len(), a.view().element_count()), (3, 5));
        let values: Vec<f64> = (0..5)
            .map(|i| a.view().data().get_f64(i).unwrap())
            .collect();
        assert_eq!(values, [1.0, -2.0, 3.0, -8.0, 7.0]);
        assert_eq!(a.view().data().get_f64(6), None);
        let err = HostArray::from_vec(vec![5], bytes[..2].to_vec()).unwrap_err();
        assert!(
            err.to_string()
                .contains("hold 5 int4 elements, which pack 2 to a byte into 3 values; found 2"),
            "{err}"
        );
        assert!(HostArrayRef::of(&[2, 3], &bytes[..]).is_ok());

        // 2-bit: 5 elements take 2 bytes, the fifth in the second byte's low bits.
        let u2 = [UInt2x4::pack([0, 1, 2, 3]), UInt2x4::pack([3, 0, 0, 0])];
        let r = HostArrayRef::of(&[5], &u2[..]).unwrap();
        assert_eq!(r.data().get_f64(4), Some(3.0));
        assert_eq!(r.data().get_f64(2), Some(2.0));
        assert!(HostArrayRef::of(&[9], &u2[..]).is_err());
        let f4 = [Float4E2M1x2::pack([-0.5, 6.0])];
        assert_eq!(
            HostArrayRef::of(&[2], &f4[..]).unwrap().data().get_f64(1),
            Some(6.0)
        );

        // float8: one per byte, converted exactly; NaN stays NaN.
        let f8 = [
            Float8E4M3FN::from_f32(448.0),
            Float8E4M3FN::from_bits(1),
            Float8E4M3FN::from_f32(f32::NAN),
        ];
        let r = HostArrayRef::of(&[3], &f8[..]).unwrap();
        assert_eq!(r.data().get_f64(0), Some(448.0));
        assert_eq!(r.data().get_f64(1), Some(1.0 / 512.0)); // 2^-9
        assert!(r.data().get_f64(2).unwrap().is_nan());
        assert!(HostArrayRef::of(&[2], &f8[..]).is_err());
        let e8 = [Float8E8M0::from_bits(0), Float8E8M0::from_bits(130)];
        let r = HostArrayRef::of(&[2], &e8[..]).unwrap();
        // 2^-127, written by its bits: `powi` need not be exact (Miri varies it).
        assert_eq!(
            r.data().get_f64(0),
            Some(f64::from_bits((1023 - 127) << 52))
        );
        assert_eq!(r.data().get_f64(1), Some(8.0));
        assert_eq!(
            Float8E4M3FNUZ::wrap_ref(&[Float8E4M3FNUZ::from_bits(0xFF)]).get_f64(0),
            Some(-240.0)
        );
        assert_eq!(
            Float8E5M2::wrap_ref(&[Float8E5M2::from_bits(0xFC)]).get_f64(0),
            Some(f64::NEG_INFINITY)
        );
        assert!(
            Float8E5M2FNUZ::wrap_ref(&[Float8E5M2FNUZ::from_bits(0x80)])
                .get_f64(0)
                .unwrap()
                .is_nan()
        );
        assert_eq!(
            Int2x4::wrap_ref(&[Int2x4::pack([1, -2, -1, 0])]).get_f64(1),
            Some(-2.0)
        );
        assert_eq!(
            UInt4x2::wrap(vec![UInt4x2::pack([15, 3])]).dtype(),
            NumericType::U4
        );
    }

    #[test]
    fn declared_dims_are_checked() {
        let info = ValueInfo {
            name: "x".into(),
            ty: ValueType::Tensor {
                elem: ElementType::Numeric(NumericType::F32),
                dims: vec![Some(1), None],
            },
        };
        info.check_dims(&[1, 7]).unwrap();
        let err = info.check_dims(&[2, 7]).unwrap_err().to_string();
        assert!(
            err.contains("axis 0 is 2 where the model fixes it to 1"),
            "{err}"
        );
        let err = info.check_dims(&[1]).unwrap_err().to_string();
        assert!(
            err.contains("rank 1 where the model declares rank 2"),
            "{err}"
        );
    }
}
