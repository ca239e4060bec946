//! String tensors: [`Strings`] (host strings with dims), [`StringTensor`] (an input ONNX
//! Runtime reads) and [`StringOutput`] (an output ONNX Runtime writes).

use std::fmt;
use std::marker::PhantomData;
use std::ops::Index;

use ort_sys::ONNXTensorElementDataType as Onnx;

use super::{ValueInputSlot, ValueOutputSlot, dims_i64, not_run, sealed, tensor_dims};
use crate::error::{Error, Result};
use crate::shape::{AnyRank, Shape, element_count};
use crate::sys::Value;

const STRING: Onnx = Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING;

/// Strings with dims, row-major: what a string tensor holds.
///
/// One UTF-8 buffer plus the end offset of each string, so reading a run's strings into it
/// again reuses its capacity. Elements are `&str`: `strings[i]`, [`Strings::get`],
/// [`Strings::iter`] (also `for s in &strings`).
///
/// ```
/// use ort_bind_runtime::values::Strings;
/// let s = Strings::from_strs(&[2], &["héllo", "world"])?;
/// assert_eq!(s.dims(), &[2]);
/// assert_eq!(&s[0], "héllo");
/// assert_eq!(s.iter().collect::<Vec<_>>(), ["héllo", "world"]);
/// assert_eq!(s.to_vec(), vec!["héllo".to_owned(), "world".to_owned()]);
/// # Ok::<(), ort_bind_runtime::Error>(())
/// ```
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Strings {
    dims: Vec<usize>,
    text: String,
    ends: Vec<usize>,
}

impl fmt::Debug for Strings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Strings")
            .field("dims", &self.dims)
            .field("values", &self.iter().collect::<Vec<_>>())
            .finish()
    }
}

fn count_of(name: &str, dims: &[usize]) -> Result<usize> {
    element_count(dims).ok_or_else(|| Error::TooLarge {
        tensor: name.to_owned(),
        dims: dims.to_vec(),
    })
}

impl Strings {
    /// No strings, dims `[0]`.
    pub fn new() -> Self {
        Strings {
            dims: vec![0],
            ..Strings::default()
        }
    }

    /// Strings of `dims` (the number of items must be the product of `dims`).
    pub fn from_strs<I: AsRef<str>>(dims: &[usize], items: &[I]) -> Result<Self> {
        let mut s = Strings::default();
        s.set(dims, items)?;
        Ok(s)
    }

    /// Strings of `dims`, taking a `Vec<String>`.
    pub fn from_vec(dims: &[usize], items: Vec<String>) -> Result<Self> {
        Self::from_strs(dims, &items)
    }

    /// A one-dimensional array of `items`.
    pub fn from_iter_1d<I: AsRef<str>>(items: impl IntoIterator<Item = I>) -> Self {
        let mut s = Strings::default();
        for item in items {
            s.push(item.as_ref());
        }
        s.dims = vec![s.ends.len()];
        s
    }

    /// Replaces the content with `items` of `dims`, reusing capacity.
    pub fn set<I: AsRef<str>>(&mut self, dims: &[usize], items: &[I]) -> Result<()> {
        let count = count_of("strings", dims)?;
        if count != items.len() {
            return Err(Error::Length {
                tensor: "strings".into(),
                expected: count,
                found: items.len(),
                dims: dims.to_vec(),
            });
        }
        self.clear();
        for item in items {
            self.push(item.as_ref());
        }
        self.dims.clear();
        self.dims.extend_from_slice(dims);
        Ok(())
    }

    /// Appends a string and makes the array one-dimensional (`[len]`).
    pub fn push(&mut self, item: &str) {
        self.text.push_str(item);
        self.ends.push(self.text.len());
        self.dims.clear();
        self.dims.push(self.ends.len());
    }

    /// Removes every string (dims `[0]`), keeping capacity.
    pub fn clear(&mut self) {
        self.text.clear();
        self.ends.clear();
        self.dims.clear();
        self.dims.push(0);
    }

    /// Gives the strings new dims with the same number of elements.
    pub fn reshape(&mut self, dims: &[usize]) -> Result<()> {
        let count = count_of("strings", dims)?;
        if count != self.len() {
            return Err(Error::Length {
                tensor: "strings".into(),
                expected: count,
                found: self.len(),
                dims: dims.to_vec(),
            });
        }
        self.dims.clear();
        self.dims.extend_from_slice(dims);
        Ok(())
    }

    /// The dims.
    pub fn dims(&self) -> &[usize] {
        &self.dims
    }

    /// The number of strings.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there are no strings.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// String `index` (row-major), if there is one.
    pub fn get(&self, index: usize) -> Option<&str> {
        let end = *self.ends.get(index)?;
        let start = if index == 0 { 0 } else { self.ends[index - 1] };
        self.text.get(start..end)
    }

    /// The strings, row-major.
    pub fn iter(&self) -> StringsIter<'_> {
        StringsIter {
            strings: self,
            next: 0,
        }
    }

    /// Copies the strings out.
    pub fn to_vec(&self) -> Vec<String> {
        self.iter().map(str::to_owned).collect()
    }

    /// Every string concatenated (what [`Strings::get`] slices).
    pub fn as_concatenated(&self) -> &str {
        &self.text
    }

    /// The strings as an `ndarray` array of `&str` with the same dims (the `ndarray`
    /// feature; one allocation for the array of slices, none per string).
    #[cfg(feature = "ndarray")]
    pub fn to_array(&self) -> Result<ndarray::ArrayD<&str>> {
        ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&self.dims), self.iter().collect()).map_err(
            |e| Error::Value {
                value: "strings".into(),
                problem: e.to_string(),
            },
        )
    }

    /// Strings with the dims and (logical, row-major) order of an `ndarray` array of any
    /// layout (the `ndarray` feature).
    #[cfg(feature = "ndarray")]
    pub fn from_array<A, S, D>(array: &ndarray::ArrayBase<S, D>) -> Self
    where
        A: AsRef<str>,
        S: ndarray::Data<Elem = A>,
        D: ndarray::Dimension,
    {
        let mut s = Strings::from_iter_1d(array.iter());
        s.dims.clear();
        s.dims.extend_from_slice(array.shape());
        s
    }

    /// Reads a string tensor of ONNX Runtime into `self`, reusing capacity; `name` names it
    /// in errors.
    pub(crate) fn load(&mut self, name: &str, value: &Value, scratch: &mut Vec<i64>) -> Result<()> {
        let mut dims = std::mem::take(&mut self.dims);
        let loaded = tensor_dims(name, value, STRING, scratch, &mut dims);
        self.dims = dims;
        loaded?;
        let count = count_of(name, &self.dims)?;
        let mut bytes = std::mem::take(&mut self.text).into_bytes();
        let read = value.read_strings(count, &mut bytes, &mut self.ends);
        let text = String::from_utf8(bytes);
        let utf8 = match text {
            Ok(text) => {
                self.text = text;
                true
            }
            Err(e) => {
                // Keep the buffer's capacity for the next read.
                let mut bytes = e.into_bytes();
                bytes.clear();
                self.text = String::from_utf8(bytes).unwrap_or_default();
                false
            }
        };
        read?;
        // `ends` holds start offsets: turn them into ends, checking each is in order and on
        // a character boundary.
        let total = self.text.len();
        let mut ok = utf8;
        for i in 0..count {
            let end = if i + 1 < count {
                self.ends[i + 1]
            } else {
                total
            };
            ok &= self.ends[i] <= end && self.text.is_char_boundary(end);
            self.ends[i] = end;
        }
        if !ok {
            self.clear();
            return Err(Error::Value {
                value: name.to_owned(),
                problem: "ONNX Runtime produced strings that are not valid UTF-8".into(),
            });
        }
        Ok(())
    }

    /// Writes every string into ONNX Runtime's string tensor `value` (of the same count).
    fn store(&self, value: &mut Value) -> Result<()> {
        for (i, s) in self.iter().enumerate() {
            value.set_string(i, s.as_bytes())?;
        }
        Ok(())
    }
}

impl Index<usize> for Strings {
    type Output = str;

    /// String `index`; panics when out of range, like slices (use [`Strings::get`]).
    fn index(&self, index: usize) -> &str {
        match self.get(index) {
            Some(s) => s,
            None => panic!("index {index} is out of range for {} strings", self.len()),
        }
    }
}

/// The strings of a [`Strings`], row-major.
#[derive(Debug, Clone)]
pub struct StringsIter<'a> {
    strings: &'a Strings,
    next: usize,
}

impl<'a> Iterator for StringsIter<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let s = self.strings.get(self.next)?;
        self.next += 1;
        Some(s)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.strings.len().saturating_sub(self.next);
        (n, Some(n))
    }
}

impl ExactSizeIterator for StringsIter<'_> {}

impl<'a> IntoIterator for &'a Strings {
    type Item = &'a str;
    type IntoIter = StringsIter<'a>;

    fn into_iter(self) -> StringsIter<'a> {
        self.iter()
    }
}

impl<S: AsRef<str>> FromIterator<S> for Strings {
    fn from_iter<T: IntoIterator<Item = S>>(iter: T) -> Self {
        Strings::from_iter_1d(iter)
    }
}

/// A string tensor input: ONNX Runtime's own string tensor, which the strings are copied
/// into (ONNX Runtime cannot read strings from Rust memory), plus a host copy to read back.
///
/// [`StringTensor::fill`] writes new strings of the same count in place (ONNX Runtime
/// resizes each string, reusing its capacity; the tensor stays bound);
/// [`StringTensor::set`] may change the dims (a new ONNX Runtime tensor, bound again before
/// the next run). `S` is the shape the bindings declare ([`AnyRank`] for any).
pub struct StringTensor<S: Shape = AnyRank> {
    name: Box<str>,
    host: Strings,
    value: Value,
    scratch: Vec<i64>,
    // Given new dims through its view since the binding last asked (see `Tensor`'s).
    resized: bool,
    _shape: PhantomData<fn() -> S>,
}

impl<S: Shape> fmt::Debug for StringTensor<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StringTensor")
            .field("name", &self.name)
            .field("strings", &self.host)
            .finish()
    }
}

impl<S: Shape> StringTensor<S> {
    /// A tensor named `name` of `dims` empty strings.
    pub fn new(name: &str, dims: &[usize]) -> Result<Self> {
        let count = count_of(name, dims)?;
        let empty = vec![""; count];
        Self::from_strs(name, dims, &empty)
    }

    /// A tensor named `name` of `dims` holding `items`.
    pub fn from_strs<I: AsRef<str>>(name: &str, dims: &[usize], items: &[I]) -> Result<Self> {
        let host = Strings::from_strs(dims, items).map_err(|e| rename(e, name))?;
        Self::from_strings(name, host)
    }

    /// A tensor named `name` holding `strings` (with their dims).
    pub fn from_strings(name: &str, strings: Strings) -> Result<Self> {
        check_shape::<S>(name, strings.dims())?;
        let mut scratch = Vec::new();
        dims_i64(name, strings.dims(), &mut scratch)?;
        crate::library::init()?;
        let mut value = Value::new_owned_tensor(&scratch, STRING)?;
        strings.store(&mut value)?;
        Ok(StringTensor {
            name: name.into(),
            host: strings,
            value,
            scratch,
            resized: false,
            _shape: PhantomData,
        })
    }

    /// The ONNX name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The dims.
    pub fn dims(&self) -> &[usize] {
        self.host.dims()
    }

    /// The strings written last.
    pub fn strings(&self) -> &Strings {
        &self.host
    }

    /// Writes `items` (as many as the tensor holds) in place: the bound tensor stays.
    pub fn fill<I: AsRef<str>>(&mut self, items: &[I]) -> Result<()> {
        if items.len() != self.host.len() {
            return Err(Error::Length {
                tensor: self.name.to_string(),
                expected: self.host.len(),
                found: items.len(),
                dims: self.host.dims().to_vec(),
            });
        }
        for (i, item) in items.iter().enumerate() {
            self.value.set_string(i, item.as_ref().as_bytes())?;
        }
        // The host copy, in place (same count, same dims).
        self.host.text.clear();
        self.host.ends.clear();
        for item in items {
            self.host.text.push_str(item.as_ref());
            self.host.ends.push(self.host.text.len());
        }
        Ok(())
    }

    /// Replaces the content with `items` of `dims`. With the same dims this is
    /// [`StringTensor::fill`]; other dims make a new ONNX Runtime tensor, which must be bound
    /// again (returns `true` then).
    pub fn set<I: AsRef<str>>(&mut self, dims: &[usize], items: &[I]) -> Result<bool> {
        if dims == self.host.dims() {
            self.fill(items)?;
            return Ok(false);
        }
        check_shape::<S>(&self.name, dims)?;
        // The new tensor first: an error before `host.set` leaves both as they were.
        dims_i64(&self.name, dims, &mut self.scratch)?;
        let mut value = Value::new_owned_tensor(&self.scratch, STRING)?;
        self.host
            .set(dims, items)
            .map_err(|e| rename(e, &self.name))?;
        // From here the dims are the new ones: the value goes with them even when ONNX
        // Runtime fails to take a string (the error says so; the dims stay consistent).
        let stored = self.host.store(&mut value);
        self.value = value;
        stored?;
        Ok(true)
    }
}

impl<S: Shape> StringTensor<S> {
    /// Gives the tensor `dims`, every string empty; the same dims do nothing (the strings
    /// stay). Other dims make a new ONNX Runtime tensor, which must be bound again (returns
    /// `true` then): generated bindings call this from `set_dims`, which rebinds.
    pub fn resize(&mut self, dims: &[usize]) -> Result<bool> {
        if dims == self.host.dims() {
            return Ok(false);
        }
        check_shape::<S>(&self.name, dims)?;
        let count = count_of(&self.name, dims)?;
        dims_i64(&self.name, dims, &mut self.scratch)?;
        // A new ONNX Runtime string tensor holds empty strings.
        let value = Value::new_owned_tensor(&self.scratch, STRING)?;
        let mut host = std::mem::take(&mut self.host);
        host.clear();
        for _ in 0..count {
            host.push("");
        }
        host.dims.clear();
        host.dims.extend_from_slice(dims);
        self.host = host;
        self.value = value;
        Ok(true)
    }

    /// The in-place view of this input a binding hands out ([`StringTensorMut`]).
    pub fn view_mut(&mut self) -> StringTensorMut<'_, S> {
        StringTensorMut { tensor: self }
    }
}

/// A bound string tensor input, to fill in place before a run: the strings are written
/// into ONNX Runtime's own tensor (a copy per string, into buffers ONNX Runtime reuses),
/// which stays bound. [`StringTensorMut::fill`] keeps the number of strings;
/// [`StringTensorMut::fill_resized`] and [`StringTensorMut::set`] change it, and the binding
/// then derives its dims from its inputs before the next run.
pub struct StringTensorMut<'a, S: Shape = AnyRank> {
    tensor: &'a mut StringTensor<S>,
}

impl<S: Shape> fmt::Debug for StringTensorMut<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.tensor, f)
    }
}

impl<S: Shape> StringTensorMut<'_, S> {
    /// The ONNX name.
    pub fn name(&self) -> &str {
        self.tensor.name()
    }

    /// The dims.
    pub fn dims(&self) -> &[usize] {
        self.tensor.dims()
    }

    /// The number of strings the tensor holds.
    pub fn len(&self) -> usize {
        self.tensor.host.len()
    }

    /// Whether the tensor holds no strings.
    pub fn is_empty(&self) -> bool {
        self.tensor.host.is_empty()
    }

    /// The strings written last, row-major.
    pub fn strings(&self) -> &Strings {
        self.tensor.strings()
    }

    /// Writes `items` (exactly [`StringTensorMut::len`] of them, row-major) into the bound
    /// tensor; a wrong count is [`Error::Length`] naming the input.
    pub fn fill<I: AsRef<str>>(&mut self, items: &[I]) -> Result<()> {
        self.tensor.fill(items)
    }

    /// Writes `items`, sizing the one dynamic axis of the shape type to hold them: three
    /// sentences into a `(Dyn, Fix<1>)` input make it `[3, 1]`. The count is given once, by
    /// `items`. Other dims than the current ones make a new ONNX Runtime tensor; the binding
    /// sees it before its next run, derives every dim from the shapes of its inputs (as the
    /// generated `Dims::from_input_shapes` does), resizes the outputs and binds again. An
    /// error when the shape type does not have exactly one `Dyn` axis.
    pub fn fill_resized<I: AsRef<str>>(&mut self, items: &[I]) -> Result<()> {
        let dims =
            crate::shape::dims_holding(S::RANK, S::AXES, items.len()).map_err(|problem| {
                Error::Value {
                    value: self.name().to_owned(),
                    problem,
                }
            })?;
        self.set(&dims[..S::AXES.len()], items)
    }

    /// Gives this input `dims` and writes `items` (as many as `dims` holds); see
    /// [`StringTensorMut::fill_resized`] for what the binding does next. A wrong count is an
    /// error that changes nothing.
    pub fn set<I: AsRef<str>>(&mut self, dims: &[usize], items: &[I]) -> Result<()> {
        if self.tensor.set(dims, items)? {
            self.tensor.resized = true;
        }
        Ok(())
    }
}

fn rename(e: Error, name: &str) -> Error {
    match e {
        Error::Length {
            expected,
            found,
            dims,
            ..
        } => Error::Length {
            tensor: name.to_owned(),
            expected,
            found,
            dims,
        },
        Error::TooLarge { dims, .. } => Error::TooLarge {
            tensor: name.to_owned(),
            dims,
        },
        other => other,
    }
}

fn check_shape<S: Shape>(name: &str, dims: &[usize]) -> Result<()> {
    S::check(dims).map_err(|reason| Error::Shape {
        tensor: name.to_owned(),
        found: dims.to_vec(),
        reason,
    })
}

impl<S: Shape> crate::shape::InputShape for StringTensor<S> {
    fn input_dims(&self) -> &[usize] {
        self.host.dims()
    }
    fn take_resized(&mut self) -> bool {
        std::mem::take(&mut self.resized)
    }
}

impl<S: Shape> sealed::Sealed for StringTensor<S> {}

impl<S: Shape> ValueInputSlot for StringTensor<S> {
    fn name(&self) -> &str {
        &self.name
    }

    fn bound_value(&self) -> Result<Option<&Value>> {
        Ok(Some(&self.value))
    }
}

/// A string tensor output: ONNX Runtime allocates it during the run; the slot copies its
/// strings into a [`Strings`] whose buffers are reused from run to run (a steady-state run
/// allocates nothing here once they are large enough).
pub struct StringOutput<S: Shape = AnyRank> {
    name: Box<str>,
    strings: Strings,
    produced: bool,
    scratch: Vec<i64>,
    _shape: PhantomData<fn() -> S>,
}

impl<S: Shape> fmt::Debug for StringOutput<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StringOutput")
            .field("name", &self.name)
            .field("strings", &self.produced.then_some(&self.strings))
            .finish()
    }
}

impl<S: Shape> StringOutput<S> {
    /// An output slot named `name`; empty until a run fills it.
    pub fn new(name: &str) -> Self {
        StringOutput {
            name: name.into(),
            strings: Strings::new(),
            produced: false,
            scratch: Vec::with_capacity(S::RANK.unwrap_or(4)),
            _shape: PhantomData,
        }
    }

    /// The strings of the last run, or [`Error::NotRun`] before a successful run.
    pub fn get(&self) -> Result<&Strings> {
        if self.produced {
            Ok(&self.strings)
        } else {
            Err(not_run(&self.name))
        }
    }

    /// Reads a string tensor (a whole output or a part of one) into this slot.
    pub(crate) fn load(&mut self, value: &Value) -> Result<()> {
        self.produced = false;
        self.strings.load(&self.name, value, &mut self.scratch)?;
        check_shape::<S>(&self.name, self.strings.dims()).map_err(|e| match e {
            Error::Shape {
                tensor,
                found,
                reason,
            } => Error::Shape {
                tensor,
                found,
                reason: format!(
                    "ONNX Runtime produced a value that breaks the declared shape: {reason}"
                ),
            },
            other => other,
        })?;
        self.produced = true;
        Ok(())
    }
}

impl<S: Shape> sealed::Sealed for StringOutput<S> {}

impl<S: Shape> ValueOutputSlot for StringOutput<S> {
    type View<'a> = &'a Strings;

    fn name(&self) -> &str {
        &self.name
    }

    fn view(&self) -> Result<&Strings> {
        self.get()
    }

    fn clear(&mut self) {
        self.produced = false;
        self.strings.clear();
    }

    fn accept(&mut self, value: Value) -> Result<()> {
        self.load(&value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "ndarray")]
    #[test]
    fn strings_to_and_from_ndarray() {
        let a = ndarray::arr2(&[["a", "b", "c"], ["d", "é", "f"]]);
        let s = Strings::from_array(&a.t());
        assert_eq!(s.dims(), &[3, 2]);
        assert_eq!(s.to_vec(), ["a", "d", "b", "é", "c", "f"]);
        let back = s.to_array().unwrap();
        assert_eq!(back.shape(), &[3, 2]);
        assert_eq!(back[[1, 1]], "é");
    }

    #[test]
    fn strings_index_iterate_and_reshape() {
        let mut s = Strings::from_strs(&[2, 2], &["a", "", "ß", "dé"]).unwrap();
        assert_eq!(s.len(), 4);
        assert_eq!(s.get(1), Some(""));
        assert_eq!(&s[3], "dé");
        assert_eq!(s.get(4), None);
        assert_eq!(s.iter().len(), 4);
        s.reshape(&[4]).unwrap();
        assert_eq!(s.dims(), &[4]);
        assert!(s.reshape(&[3]).is_err());
        let err = Strings::from_strs(&[3], &["x"]).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Length {
                    expected: 3,
                    found: 1,
                    ..
                }
            ),
            "{err}"
        );
        let t: Strings = ["x", "y"].into_iter().collect();
        assert_eq!(t.dims(), &[2]);
        assert_eq!(t.as_concatenated(), "xy");
        assert!(Strings::from_strs(&[usize::MAX, 2], &["x"]).is_err());
        let mut e = Strings::new();
        assert!(e.is_empty());
        e.push("q");
        assert_eq!(e.dims(), &[1]);
    }
}
