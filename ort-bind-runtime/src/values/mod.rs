//! The values of ONNX's type system beyond numeric tensors: string tensors, sequences,
//! maps and optionals, as inputs and outputs.
//!
//! | ONNX type | Rust type | reads as |
//! | --- | --- | --- |
//! | `tensor(string)` | [`StringTensor<S>`] (input), [`StringOutput<S>`] (output) | [`Strings`]: dims + `&str` by index or iterator |
//! | `sequence(tensor(T))` | [`Sequence<T, S>`] | an iterator of [`TensorRef<T, S>`](crate::TensorRef) (numeric `T`) or of `&Strings` (`T = String`) |
//! | `sequence(map(K, V))` | [`MapSequence<K, V>`] | an iterator of `&Map<K, V>` |
//! | `map(K, V)` | [`Map<K, V>`] | `(key, value)` pairs; `to_hash_map()` / `to_btree_map()` |
//! | `optional(tensor)`, `optional(sequence)` | [`Optional<V>`] | `Option<view>`: the check cannot be skipped |
//!
//! # Why these shapes
//!
//! - **Strings** are owned by ONNX Runtime (its tensors hold `std::string`s), so they cannot
//!   be bound in place like numbers: a [`StringTensor`] input writes each string into ONNX
//!   Runtime's own tensor (one copy, into string buffers ONNX Runtime resizes and reuses),
//!   and a [`StringOutput`] copies the run's strings into one UTF-8 buffer plus offsets that
//!   it reuses on the next run. What you read is a [`Strings`]: dims like an ndarray, and
//!   `&str` elements (`strings[i]`, `strings.get(i)`, `strings.iter()`), row-major. That is
//!   what a serde or ndarray user expects of a string array (`Vec<String>`-like access,
//!   no per-element allocation; with the `ndarray` feature `Strings::to_array` gives an
//!   `ArrayD<&str>` and `Strings::from_array` takes any array of strings). Strings that are
//!   not UTF-8 are an error when read.
//! - **Sequences** are lists of tensors whose shapes may differ element to element, so a
//!   sequence is not one array: [`Sequence::iter`] yields one typed view per element,
//!   each with its own dims, read in place (ONNX Runtime hands out its element tensors
//!   without copying them).
//! - **Maps** (`ai.onnx.ml` `ZipMap`, `DictVectorizer`, ...) come out of ONNX Runtime as
//!   a keys tensor and a values tensor, which is what a [`Map`] keeps (two columns, in the
//!   order ONNX Runtime gives them: sorted by key); [`Map::iter`] gives pairs and
//!   [`Map::to_hash_map`] / [`Map::to_btree_map`] the std collections a serde user
//!   serialises. ONNX Runtime's C API makes and reads maps with keys `i64` or `String` and
//!   values `f32`, `f64`, `i64` or `String` only, so those are the [`MapKey`] and
//!   [`MapValue`] types. Building a map from pairs with a duplicate key is an error
//!   ([`Error::Value`]): which value would win is not obvious.
//! - **Optionals** read as `Result<Option<view>>` ([`Optional::get`]): a model that may
//!   produce nothing makes the caller handle nothing, at compile time.
//!
//! Every output type is a [`ValueOutputSlot`]: ONNX Runtime allocates the value during the run
//! (the size of a string or a sequence is not known beforehand), the slot takes it and
//! reads it, reusing its buffers from run to run. A binding's `outputs()` shows each such
//! slot as an [`OutputRef`], read the same way for every kind and every route:
//! `out.x.get()?` ([`OutputRef`] says why a `Result`). Inputs are filled in place through
//! a binding's `inputs()`, like tensors: [`StringTensorMut::fill`], [`Map::set_pairs`],
//! [`MapSequence::set_maps`], [`Sequence::set_arrays`], [`Optional::set_present`]; the
//! binding binds a new map, sequence or optional before the next run. ONNX Runtime copies
//! map entries into its own maps and keeps references to sequence elements.

#[cfg(feature = "dynamic")]
pub(crate) mod any;
pub(crate) mod empty;
#[cfg(feature = "dynamic")]
pub(crate) mod host;
pub(crate) mod map;
mod optional;
pub(crate) mod sequence;
mod strings;

use std::fmt;

use ort_sys::ONNXType;

#[cfg(feature = "dynamic")]
pub use any::{DynKey, DynMap, DynValue};
pub use map::{Map, MapItem, MapIter, MapKey, MapSequence, MapValue};
pub use optional::Optional;
pub use sequence::{Sequence, SequenceElement, SequenceIter};
pub use strings::{StringOutput, StringTensor, StringTensorMut, Strings, StringsIter};

use crate::element::NumericType;
use crate::error::{Error, Result};
use crate::session::{ValueKind, ValueSpec};
use crate::sys::Value;

pub(crate) mod sealed {
    /// Seals the value traits: their implementations read ONNX Runtime values in ways only
    /// ort-bind checks.
    pub trait Sealed {}
}

/// A value slot for an output, which ONNX Runtime writes into during a run: every output
/// type of this module and [`AllocatedOutput`](crate::AllocatedOutput) (the bound of
/// [`Optional<V>`]). With [`ValueInputSlot`] it is one family, the value slots; the
/// derive's tensor fields have their own, simpler slots.
///
/// Generated bindings and `DynamicBinding` (the `dynamic` feature) bind such outputs with
/// [`Binder::value_output`](crate::Binder::value_output) and give each run's value to the
/// slot with [`OutputValue::store_in_slot`](crate::OutputValue::store_in_slot).
pub trait ValueOutputSlot: sealed::Sealed + Send {
    /// What reading the slot gives.
    type View<'a>
    where
        Self: 'a;
    /// The ONNX name.
    fn name(&self) -> &str;
    /// The last run's value, or [`Error::NotRun`] before a successful run.
    fn view(&self) -> Result<Self::View<'_>>;
    /// Forgets the last run's value (keeping buffer capacity).
    fn clear(&mut self);
    /// Takes a value ONNX Runtime produced, checking its type.
    #[doc(hidden)]
    fn accept(&mut self, value: Value) -> Result<()>;
}

/// An output ONNX Runtime allocates during the run, as a binding's `outputs()` hands it
/// out: string tensors ([`StringOutput`]), sequences ([`Sequence`]), maps ([`Map`]),
/// sequences of maps ([`MapSequence`]), optionals ([`Optional`]) and
/// [`AllocatedOutput`](crate::AllocatedOutput) tensors. Every route shows such an output
/// this way (a build.rs or `bindings!` module's `Outputs`, and a derived struct's), and
/// every one reads the same way: [`OutputRef::get`].
///
/// # Why `get()` returning a `Result`
///
/// Before the first successful run (and after a change of dims or a failed run, which
/// clear it) such an output has no value. `get()` says so with [`Error::NotRun`], whose
/// message names the output and says to run the binding first, so `?` carries a useful
/// error where an `Option` would make every caller invent one. `Option` keeps one meaning
/// only: a model that may produce nothing ([`Optional`], read as
/// `Result<Option<view>>`). Reading is zero-copy: `get()` borrows the slot's value for
/// `'a` (a `&Strings`, a `&MapSequence`, a [`TensorRef`](crate::TensorRef), ...), and the
/// borrow checker keeps the binding from running while it is held.
///
/// Outputs bound to a buffer before the run (numeric tensors whose dims the bindings
/// know) are read directly as a [`TensorRef`](crate::TensorRef): they always have a value.
pub struct OutputRef<'a, S> {
    slot: &'a S,
}

impl<S> Clone for OutputRef<'_, S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S> Copy for OutputRef<'_, S> {}

impl<S: fmt::Debug> fmt::Debug for OutputRef<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.slot, f)
    }
}

impl<'a, S: ValueOutputSlot> OutputRef<'a, S> {
    /// The output view of `slot` (what generated bindings hand out).
    pub fn new(slot: &'a S) -> Self {
        OutputRef { slot }
    }

    /// The last run's value, in place; [`Error::NotRun`] ("output `x` has no value yet:
    /// run the binding first") before a successful run.
    pub fn get(&self) -> Result<S::View<'a>> {
        self.slot.view()
    }

    /// The ONNX name.
    pub fn name(&self) -> &'a str {
        self.slot.name()
    }
}

/// A value slot for an input, which ort-bind binds as the input: every input type of this
/// module and [`Tensor`](crate::Tensor) (see
/// [`Binder::value_input`](crate::Binder::value_input)).
pub trait ValueInputSlot: sealed::Sealed {
    /// The ONNX name.
    fn name(&self) -> &str;
    /// The ONNX Runtime value to bind; `None` for an optional input without a value.
    #[doc(hidden)]
    fn bound_value(&self) -> Result<Option<&Value>>;
    /// Whether the input has a value to bind: `false` for a map, sequence or sequence of
    /// maps not filled yet (a binding leaves it unbound, and a run is then
    /// [`Error::MissingInput`]). `true` for everything else (an absent [`Optional`] is a
    /// value: "absent").
    fn is_set(&self) -> bool {
        true
    }
}

/// The element type of a tensor, as the model declares it: a [`NumericType`] (numeric or
/// bool), or string. (Codegen's `ort_bind_codegen::ElementType` names the same thing, read
/// from the model file.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ElementType {
    /// A numeric or bool element type.
    Numeric(NumericType),
    /// `string`.
    String,
}

impl fmt::Display for ElementType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ElementType::Numeric(d) => write!(f, "{d}"),
            ElementType::String => f.write_str("string"),
        }
    }
}

/// The type of a model input or output, as the model declares it (read from the loaded
/// session): a tensor, sequence, map or optional. (Codegen's `ort_bind_codegen::ValueType`
/// is the same, read from the model file.) What generated code expects of a value is a
/// [`ValueSpec`] instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValueType {
    /// A tensor: element type and dims (`None` for a dynamic dim). ONNX Runtime reports a
    /// tensor of unknown rank like a scalar (no dims), so empty dims do not prove rank 0.
    Tensor {
        /// Element type.
        elem: ElementType,
        /// Declared dims.
        dims: Vec<Option<usize>>,
    },
    /// `sequence(T)`.
    Sequence(Box<ValueType>),
    /// `map(K, V)`: ONNX Runtime declares maps with scalar element types for keys and values.
    Map {
        /// Key type.
        key: ElementType,
        /// Value type.
        value: ElementType,
    },
    /// `optional(T)`.
    Optional(Box<ValueType>),
}

impl ValueType {
    /// The type a loaded session declares; `None` for element types (or kinds) ort-bind
    /// does not bind.
    #[cfg(feature = "dynamic")]
    pub(crate) fn from_declared(ty: &crate::sys::DeclaredType) -> Option<ValueType> {
        use crate::sys::DeclaredType as D;
        Some(match ty {
            D::Tensor { elem, dims } => ValueType::Tensor {
                elem: element_type(*elem)?,
                dims: dims.iter().map(|&d| usize::try_from(d).ok()).collect(),
            },
            D::Sequence(inner) => ValueType::Sequence(Box::new(ValueType::from_declared(inner)?)),
            D::Map { key, value } => ValueType::Map {
                key: element_type(*key)?,
                value: element_type(*value)?,
            },
            D::Optional(inner) => ValueType::Optional(Box::new(ValueType::from_declared(inner)?)),
            D::Other(_) => return None,
        })
    }

    /// The element type and dims, for a tensor.
    pub fn as_tensor(&self) -> Option<(ElementType, &[Option<usize>])> {
        match self {
            ValueType::Tensor { elem, dims } => Some((*elem, dims)),
            _ => None,
        }
    }
}

#[cfg(feature = "dynamic")]
fn element_type(code: ort_sys::ONNXTensorElementDataType) -> Option<ElementType> {
    if code == ort_sys::ONNXTensorElementDataType::ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING {
        Some(ElementType::String)
    } else {
        NumericType::from_onnx(code).map(ElementType::Numeric)
    }
}

impl fmt::Display for ValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ValueType::Tensor { elem, dims } => {
                write!(f, "{elem}[")?;
                for (i, d) in dims.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    match d {
                        Some(d) => write!(f, "{d}")?,
                        None => f.write_str("?")?,
                    }
                }
                f.write_str("]")
            }
            ValueType::Sequence(inner) => write!(f, "seq({inner})"),
            ValueType::Map { key, value } => write!(f, "map({key}, {value})"),
            ValueType::Optional(inner) => write!(f, "optional({inner})"),
        }
    }
}

/// Dims as ONNX Runtime takes them; `Err` when one does not fit an `i64`.
pub(crate) fn dims_i64(name: &str, dims: &[usize], out: &mut Vec<i64>) -> Result<()> {
    out.clear();
    for &d in dims {
        out.push(i64::try_from(d).map_err(|_| Error::TooLarge {
            tensor: name.to_owned(),
            dims: dims.to_vec(),
        })?);
    }
    Ok(())
}

/// Checks that `value` is a tensor of element code `want`, writing its dims into `dims`.
pub(crate) fn tensor_dims(
    name: &str,
    value: &Value,
    want: ort_sys::ONNXTensorElementDataType,
    scratch: &mut Vec<i64>,
    dims: &mut Vec<usize>,
) -> Result<()> {
    let kind = value.onnx_type()?;
    if kind != ONNXType::ONNX_TYPE_TENSOR {
        return Err(Error::Value {
            value: name.to_owned(),
            problem: format!(
                "ONNX Runtime produced {} where a tensor was expected",
                with_article(kind_name(kind))
            ),
        });
    }
    let elem = value.tensor_info(scratch)?;
    if elem != want {
        return Err(Error::OutputType {
            output: name.to_owned(),
            expected: crate::element::onnx_type_name(want).to_owned(),
            found: crate::element::onnx_type_name(elem).to_owned(),
        });
    }
    dims.clear();
    for &d in scratch.iter() {
        dims.push(usize::try_from(d).map_err(|_| Error::Value {
            value: name.to_owned(),
            problem: format!("ONNX Runtime produced a negative dim {d}"),
        })?);
    }
    Ok(())
}

/// A readable name of an ONNX value kind.
pub(crate) fn kind_name(kind: ONNXType) -> &'static str {
    match kind {
        ONNXType::ONNX_TYPE_TENSOR => "tensor",
        ONNXType::ONNX_TYPE_SEQUENCE => "sequence",
        ONNXType::ONNX_TYPE_MAP => "map",
        ONNXType::ONNX_TYPE_OPTIONAL => "optional",
        ONNXType::ONNX_TYPE_SPARSETENSOR => "sparse tensor",
        ONNXType::ONNX_TYPE_OPAQUE => "opaque value",
        _ => "value of unknown kind",
    }
}

/// `word` after its indefinite article: "an optional", "an opaque value", "a map".
pub(crate) fn with_article(word: &str) -> String {
    let vowel = word.starts_with(['a', 'e', 'i', 'o', 'u', 'A', 'E', 'I', 'O', 'U'])
        && !["uint", "uni", "use", "one"]
            .iter()
            .any(|p| word.to_ascii_lowercase().starts_with(p));
    format!("{} {word}", if vowel { "an" } else { "a" })
}

/// Checks that `value` is of `kind`.
pub(crate) fn expect_kind(name: &str, value: &Value, kind: ONNXType) -> Result<()> {
    let found = value.onnx_type()?;
    if found == kind {
        Ok(())
    } else {
        Err(Error::Value {
            value: name.to_owned(),
            problem: format!(
                "ONNX Runtime produced {} where {} was expected",
                with_article(kind_name(found)),
                with_article(kind_name(kind))
            ),
        })
    }
}

/// [`Error::NotRun`] for `name`.
pub(crate) fn not_run(name: &str) -> Error {
    Error::NotRun {
        output: name.to_owned(),
    }
}

/// The view of a container output slot (`Sequence`, `Map`, `MapSequence`): the slot
/// itself once it holds a value (`whole`), [`Error::NotRun`] before.
pub(crate) fn filled<'a, T>(slot: &'a T, name: &str, whole: Option<&Value>) -> Result<&'a T> {
    match whole {
        Some(_) => Ok(slot),
        None => Err(not_run(name)),
    }
}

/// The value a container input binds, [`Error::MissingInput`] while it has none.
pub(crate) fn bound_whole<'a>(name: &str, whole: Option<&'a Value>) -> Result<Option<&'a Value>> {
    match whole {
        Some(v) => Ok(Some(v)),
        None => Err(Error::MissingInput {
            input: name.to_owned(),
        }),
    }
}

impl<T: crate::element::Element> sealed::Sealed for T {}
impl sealed::Sealed for String {}
impl<T: crate::element::Element, S: crate::shape::Shape, D: crate::device::Device> sealed::Sealed
    for crate::tensor::AllocatedOutput<T, S, D>
{
}
impl<T: crate::element::Element, S: crate::shape::Shape> sealed::Sealed
    for crate::tensor::Tensor<T, S, crate::device::Cpu>
{
}

impl<T: crate::element::Element, S: crate::shape::Shape, D: crate::device::Device> ValueOutputSlot
    for crate::tensor::AllocatedOutput<T, S, D>
where
    Self: Send,
{
    type View<'a> = crate::tensor::TensorRef<'a, T, S, D>;

    fn name(&self) -> &str {
        crate::tensor::AllocatedOutput::name(self)
    }

    fn view(&self) -> Result<Self::View<'_>> {
        self.get()
    }

    fn clear(&mut self) {
        crate::tensor::AllocatedOutput::clear(self);
    }

    fn accept(&mut self, value: Value) -> Result<()> {
        crate::tensor::AllocatedOutput::accept(self, value)
    }
}

impl<T: crate::element::Element, S: crate::shape::Shape> ValueInputSlot
    for crate::tensor::Tensor<T, S, crate::device::Cpu>
{
    fn name(&self) -> &str {
        crate::tensor::Tensor::name(self)
    }

    fn bound_value(&self) -> Result<Option<&Value>> {
        Ok(Some(self.value()))
    }
}

/// The specs of the container values, next to the traits that bound them (the session,
/// a layer below, declares `ValueSpec` and checks models against it).
impl ValueSpec {
    /// The spec of a sequence of tensors of `T` (numeric or `String`) of the given rank.
    pub const fn sequence<T: SequenceElement>(
        name: &'static str,
        rank: Option<usize>,
    ) -> ValueSpec {
        ValueSpec {
            name,
            elem: T::ONNX_TYPE,
            rank,
            kind: ValueKind::Sequence,
        }
    }

    /// The spec of a `map(K, V)`.
    pub const fn map<K: MapKey, V: MapValue>(name: &'static str) -> ValueSpec {
        ValueSpec {
            name,
            elem: V::ONNX_TYPE,
            rank: None,
            kind: ValueKind::Map { key: K::ONNX_TYPE },
        }
    }

    /// The spec of a `sequence(map(K, V))`.
    pub const fn map_sequence<K: MapKey, V: MapValue>(name: &'static str) -> ValueSpec {
        ValueSpec {
            name,
            elem: V::ONNX_TYPE,
            rank: None,
            kind: ValueKind::MapSequence { key: K::ONNX_TYPE },
        }
    }
}
