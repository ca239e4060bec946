//! Sequences of tensors: [`Sequence<T, S>`], read as an iterator of typed views.

use std::fmt;
use std::marker::PhantomData;

use ort_sys::{ONNXTensorElementDataType as Onnx, ONNXType};

use super::{
    Strings, ValueInputSlot, ValueOutputSlot, bound_whole, dims_i64, expect_kind, filled, sealed,
    tensor_dims,
};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::shape::{AnyRank, Shape, element_count};
use crate::sys::Value;
use crate::tensor::TensorRef;

/// An element type a [`Sequence`] can hold: every [`Element`] (read as
/// [`TensorRef`]s, in place) and `String` (read as [`&Strings`](Strings)).
pub trait SequenceElement: sealed::Sealed + Send + 'static {
    /// The ONNX element code.
    const ONNX_TYPE: Onnx;
    /// How one element of the sequence reads.
    type View<'a, S: Shape>;
    /// Reads an element tensor of a sequence into `item`.
    #[doc(hidden)]
    fn load(name: &str, value: &Value, item: &mut Item) -> Result<()>;
    /// The view of a loaded `item`.
    #[doc(hidden)]
    fn view<'a, S: Shape>(name: &'a str, item: &'a Item) -> Self::View<'a, S>;
}

/// What a [`Sequence`] knows of one element (dims, where its data is).
#[doc(hidden)]
#[derive(Debug, Default)]
#[allow(unreachable_pub)] // named by the sealed `SequenceElement`, unreachable from outside
pub struct Item {
    dims: Vec<usize>,
    scratch: Vec<i64>,
    // Address (exposed provenance) and element count of a numeric element: host memory of
    // its ONNX Runtime value, which the sequence owns in `parts` next to this item.
    data: usize,
    len: usize,
    strings: Strings,
}

impl<T: Element> SequenceElement for T {
    const ONNX_TYPE: Onnx = T::ONNX_TYPE;
    type View<'a, S: Shape> = TensorRef<'a, T, S>;

    fn load(name: &str, value: &Value, item: &mut Item) -> Result<()> {
        tensor_dims(name, value, T::ONNX_TYPE, &mut item.scratch, &mut item.dims)?;
        item.len = element_count(&item.dims).ok_or_else(|| Error::TooLarge {
            tensor: name.to_owned(),
            dims: item.dims.clone(),
        })?;
        item.data = value.data_ptr()?.expose_provenance();
        Ok(())
    }

    fn view<'a, S: Shape>(name: &'a str, item: &'a Item) -> TensorRef<'a, T, S> {
        TensorRef::over_host_value(
            name,
            &item.dims,
            std::ptr::with_exposed_provenance::<T>(item.data),
            item.len,
        )
    }
}

impl SequenceElement for String {
    const ONNX_TYPE: Onnx = Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING;
    type View<'a, S: Shape> = &'a Strings;

    fn load(name: &str, value: &Value, item: &mut Item) -> Result<()> {
        item.strings.load(name, value, &mut item.scratch)?;
        item.dims.clear();
        item.dims.extend_from_slice(item.strings.dims());
        Ok(())
    }

    fn view<'a, S: Shape>(_name: &'a str, item: &'a Item) -> &'a Strings {
        &item.strings
    }
}

/// `sequence(tensor(T))`: tensors of one element type whose dims may differ from element
/// to element, read as an iterator of typed views ([`Sequence::iter`]).
///
/// As an output (a slot made with [`Sequence::new`]), ONNX Runtime allocates the sequence
/// during the run; the views read its element tensors in place (ONNX Runtime hands them out
/// without copying), and the per-element bookkeeping is reused from run to run. As an
/// input, [`Sequence::from_arrays`] (numeric `T`) or [`Sequence::from_strings`]
/// (`T = String`) copies the elements once into tensors ONNX Runtime owns. No elements
/// make an empty sequence, which ONNX Runtime's C API cannot build from parts: ort-bind
/// runs a cached one-node `SequenceEmpty` model for it (about 3 µs a sequence after the
/// first, which loads the model).
///
/// `S` is the shape every element has ([`AnyRank`] for any): an element that breaks it is
/// an error when the sequence is read.
pub struct Sequence<T: SequenceElement, S: Shape = AnyRank> {
    name: Box<str>,
    // The element values, in order; `items[i]` describes `parts[i]`.
    parts: Vec<Value>,
    items: Vec<Item>,
    whole: Option<Value>,
    scratch: Vec<i64>,
    _marker: PhantomData<fn() -> (T, S)>,
}

impl<T: SequenceElement, S: Shape> fmt::Debug for Sequence<T, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sequence")
            .field("name", &self.name)
            .field("len", &self.parts.len())
            .field(
                "dims",
                &self.items[..self.parts.len()]
                    .iter()
                    .map(|i| &i.dims)
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl<T: SequenceElement, S: Shape> Sequence<T, S> {
    /// An empty sequence named `name`, without a value: an output slot until a run fills
    /// it, or an input until `set_arrays` / `set_strings` fills it.
    pub fn new(name: &str) -> Self {
        Sequence {
            name: name.into(),
            parts: Vec::new(),
            items: Vec::new(),
            whole: None,
            scratch: Vec::new(),
            _marker: PhantomData,
        }
    }

    /// The ONNX name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.parts.len()
    }

    /// Whether the sequence has no elements.
    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }

    /// Element `index`.
    pub fn get(&self, index: usize) -> Option<T::View<'_, S>> {
        if index >= self.parts.len() {
            return None;
        }
        Some(T::view(&self.name, &self.items[index]))
    }

    /// The elements, in order.
    pub fn iter(&self) -> SequenceIter<'_, T, S> {
        SequenceIter {
            sequence: self,
            next: 0,
        }
    }

    /// Forgets the elements (releasing them to ONNX Runtime), keeping bookkeeping capacity.
    pub fn clear(&mut self) {
        self.parts.clear();
        self.whole = None;
    }

    /// Reads a sequence value (an output, or a part of one) into this slot.
    pub(crate) fn load(&mut self, value: Value) -> Result<()> {
        self.clear();
        expect_kind(&self.name, &value, ONNXType::ONNX_TYPE_SEQUENCE)?;
        let count = value.count()?;
        if self.items.len() < count {
            self.items.resize_with(count, Item::default);
        }
        for i in 0..count {
            let element = value.element(i)?;
            let item = &mut self.items[i];
            T::load(&self.name, &element, item)?;
            S::check(&item.dims).map_err(|reason| Error::Shape {
                tensor: format!("{}[{i}]", self.name),
                found: item.dims.clone(),
                reason: format!("a sequence element breaks the declared shape: {reason}"),
            })?;
            self.parts.push(element);
        }
        self.whole = Some(value);
        Ok(())
    }

    /// Makes the sequence value of the parts built so far.
    fn seal(&mut self) -> Result<()> {
        if self.items.len() < self.parts.len() {
            self.items.resize_with(self.parts.len(), Item::default);
        }
        for (value, item) in self.parts.iter().zip(&mut self.items) {
            T::load(&self.name, value, item)?;
        }
        self.whole = Some(if self.parts.is_empty() {
            // `CreateValue` cannot make a sequence of nothing (it takes the element type
            // from the first element); `SequenceEmpty` can.
            super::empty::empty_sequence(T::ONNX_TYPE)?
        } else {
            Value::compose(&self.parts, ONNXType::ONNX_TYPE_SEQUENCE)?
        });
        Ok(())
    }
}

impl<T: Element, S: Shape> Sequence<T, S> {
    /// An input sequence named `name` of the given arrays (`(dims, values)` each), copied
    /// into tensors ONNX Runtime owns.
    pub fn from_arrays<'d>(
        name: &str,
        arrays: impl IntoIterator<Item = (&'d [usize], &'d [T])>,
    ) -> Result<Self> {
        let mut s = Sequence::new(name);
        s.set_arrays(arrays)?;
        Ok(s)
    }

    /// Replaces the elements with `arrays` (see [`Sequence::from_arrays`]). Through a
    /// binding's `inputs()` view, the binding binds the new sequence before the next run.
    pub fn set_arrays<'d>(
        &mut self,
        arrays: impl IntoIterator<Item = (&'d [usize], &'d [T])>,
    ) -> Result<()> {
        self.clear();
        crate::library::init()?;
        for (i, (dims, values)) in arrays.into_iter().enumerate() {
            S::check(dims).map_err(|reason| Error::Shape {
                tensor: format!("{}[{i}]", self.name),
                found: dims.to_vec(),
                reason,
            })?;
            let count = element_count(dims).ok_or_else(|| Error::TooLarge {
                tensor: self.name.to_string(),
                dims: dims.to_vec(),
            })?;
            if count != values.len() {
                return Err(Error::Length {
                    tensor: format!("{}[{i}]", self.name),
                    expected: count,
                    found: values.len(),
                    dims: dims.to_vec(),
                });
            }
            dims_i64(&self.name, dims, &mut self.scratch)?;
            self.parts
                .push(Value::owned_tensor_from(&self.scratch, values)?);
        }
        self.seal()
    }
}

impl<S: Shape> Sequence<String, S> {
    /// An input sequence named `name` of string tensors, copied into tensors ONNX Runtime owns.
    pub fn from_strings<'d>(
        name: &str,
        items: impl IntoIterator<Item = &'d Strings>,
    ) -> Result<Self> {
        let mut s = Sequence::new(name);
        s.set_strings(items)?;
        Ok(s)
    }

    /// Replaces the elements with `items` (see [`Sequence::from_strings`]).
    pub fn set_strings<'d>(&mut self, items: impl IntoIterator<Item = &'d Strings>) -> Result<()> {
        self.clear();
        crate::library::init()?;
        for (i, strings) in items.into_iter().enumerate() {
            S::check(strings.dims()).map_err(|reason| Error::Shape {
                tensor: format!("{}[{i}]", self.name),
                found: strings.dims().to_vec(),
                reason,
            })?;
            self.parts
                .push(string_value(&self.name, strings, &mut self.scratch)?);
        }
        self.seal()
    }
}

/// A string tensor ONNX Runtime owns holding `strings`.
pub(crate) fn string_value(name: &str, strings: &Strings, scratch: &mut Vec<i64>) -> Result<Value> {
    dims_i64(name, strings.dims(), scratch)?;
    let mut value = Value::new_owned_tensor(scratch, Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING)?;
    for (i, s) in strings.iter().enumerate() {
        value.set_string(i, s.as_bytes())?;
    }
    Ok(value)
}

/// The elements of a [`Sequence`], in order.
pub struct SequenceIter<'a, T: SequenceElement, S: Shape> {
    sequence: &'a Sequence<T, S>,
    next: usize,
}

impl<T: SequenceElement, S: Shape> fmt::Debug for SequenceIter<'_, T, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SequenceIter")
            .field("sequence", &self.sequence.name)
            .field("next", &self.next)
            .finish()
    }
}

impl<'a, T: SequenceElement, S: Shape> Iterator for SequenceIter<'a, T, S> {
    type Item = T::View<'a, S>;

    fn next(&mut self) -> Option<Self::Item> {
        let view = self.sequence.get(self.next)?;
        self.next += 1;
        Some(view)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.sequence.len().saturating_sub(self.next);
        (n, Some(n))
    }
}

impl<T: SequenceElement, S: Shape> ExactSizeIterator for SequenceIter<'_, T, S> {}

impl<'a, T: SequenceElement, S: Shape> IntoIterator for &'a Sequence<T, S> {
    type Item = T::View<'a, S>;
    type IntoIter = SequenceIter<'a, T, S>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<T: SequenceElement, S: Shape> sealed::Sealed for Sequence<T, S> {}

impl<T: SequenceElement, S: Shape> ValueOutputSlot for Sequence<T, S> {
    type View<'a> = &'a Sequence<T, S>;

    fn name(&self) -> &str {
        &self.name
    }

    fn view(&self) -> Result<&Sequence<T, S>> {
        filled(self, &self.name, self.whole.as_ref())
    }

    fn clear(&mut self) {
        Sequence::clear(self);
    }

    fn accept(&mut self, value: Value) -> Result<()> {
        self.load(value)
    }
}

impl<T: SequenceElement, S: Shape> ValueInputSlot for Sequence<T, S> {
    fn name(&self) -> &str {
        &self.name
    }

    fn bound_value(&self) -> Result<Option<&Value>> {
        bound_whole(&self.name, self.whole.as_ref())
    }

    fn is_set(&self) -> bool {
        self.whole.is_some()
    }
}
