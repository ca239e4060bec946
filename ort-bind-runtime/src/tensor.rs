//! Tensors that own their memory and the ONNX Runtime value viewing it, plus the
//! borrowed views the generated bindings hand out.
//!
//! A [`Tensor`] is created once, bound once, and reused: changing its dims keeps
//! the buffer when it is large enough ([`Tensor::set_dims`]). Users never get the
//! tensor itself out of a binding, only a [`TensorMut`] (fill inputs in place) or a
//! [`TensorRef`] (read outputs in place); neither can replace or free the buffer
//! ONNX Runtime points at.

use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;

use crate::device::{Cpu, Device, HostDevice};
use crate::element::{Element, Packed, Unpacked, onnx_type_name, storage_len};
use crate::error::{Error, Result};
use crate::shape::{Shape, element_count};
use crate::sys::Value;

/// What [`Tensor::set_dims`] had to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DimsChange {
    /// Same dims as before: nothing to rebind.
    Unchanged,
    /// New dims within the buffer's capacity: only metadata changed; must be rebound.
    Resized,
    /// The buffer grew (one allocation); must be rebound.
    Reallocated,
}

/// A tensor of `T` with shape type `S`, owning its memory on device `D`.
pub struct Tensor<T: Element, S: Shape, D: Device = Cpu> {
    name: Box<str>,
    device: D,
    buf: D::Buffer<T>,
    dims: Vec<usize>,
    dims_i64: Vec<i64>,
    len: usize,
    value: Value,
    // Values over the same buffer for dims used recently (see `set_dims`); emptied whenever
    // the buffer is replaced, since they view it.
    recent: Recents,
    // Resized through its view (`TensorMut::resize`) since the binding last asked
    // (`InputShape::take_resized`): the binding derives its dims again before a run.
    resized: bool,
    _shape: PhantomData<fn() -> S>,
}

/// A value for dims used recently, kept so that switching back creates no ONNX Runtime value.
#[derive(Debug)]
struct Recent {
    // Inline (no allocation); tensors of a rank above `RECENT_MAX_RANK` keep no values.
    rank: usize,
    dims: [usize; RECENT_MAX_RANK],
    len: usize,
    value: Value,
}

/// The largest rank whose values a tensor keeps for switching back.
const RECENT_MAX_RANK: usize = 8;

impl Recent {
    #[inline]
    fn dims(&self) -> &[usize] {
        &self.dims[..self.rank]
    }
}

/// A tensor's recent values (at most `RECENT_DIMS`), with the one code every tensor type
/// shares for switching among them.
#[derive(Debug)]
struct Recents {
    entries: Vec<Recent>,
    // The entry replaced next when full.
    evict: usize,
}

impl Recents {
    fn new() -> Self {
        // Reserved up front: switching dims within capacity allocates nothing, ever.
        Recents {
            entries: Vec::with_capacity(RECENT_DIMS),
            evict: 0,
        }
    }

    /// Forgets every value (the buffer they view is being replaced).
    fn clear(&mut self) {
        self.entries.clear();
        self.evict = 0;
    }

    /// Switches a tensor whose current value is `value` (of `len` values, `current` dims) to
    /// the recent value kept for `dims`, keeping the current one in its place; `false` when
    /// none is kept.
    // Inlined where it is called: the hot path of a shape-bucket switch.
    #[inline(always)]
    fn switch_to(
        &mut self,
        dims: &[usize],
        current: &mut Vec<usize>,
        value: &mut Value,
        len: &mut usize,
    ) -> bool {
        let Some(hit) = self.entries.iter().position(|r| same(r.dims(), dims)) else {
            return false;
        };
        let rank = current.len();
        if rank <= RECENT_MAX_RANK {
            // The current value takes the entry's place.
            let recent = &mut self.entries[hit];
            recent.rank = rank;
            recent.dims[..rank].copy_from_slice(current);
            std::mem::swap(value, &mut recent.value);
            std::mem::swap(len, &mut recent.len);
        } else {
            // A rank too large to keep (tensors of open rank): the entry leaves.
            let recent = self.entries.swap_remove(hit);
            self.evict = 0;
            *value = recent.value;
            *len = recent.len;
        }
        if current.len() == dims.len() {
            // An element loop: cheaper than the `memcpy` call for a handful of dims.
            for (d, &n) in current.iter_mut().zip(dims) {
                *d = n;
            }
        } else {
            current.clear();
            current.extend_from_slice(dims);
        }
        true
    }

    /// Keeps `value` (of `len` values and `dims`, just replaced) among the recent ones.
    fn keep(&mut self, dims: &[usize], len: usize, value: Value) {
        let rank = dims.len();
        if rank > RECENT_MAX_RANK {
            return;
        }
        let mut kept = [0; RECENT_MAX_RANK];
        kept[..rank].copy_from_slice(dims);
        let recent = Recent {
            rank,
            dims: kept,
            len,
            value,
        };
        if self.entries.len() < RECENT_DIMS {
            self.entries.push(recent);
        } else {
            self.entries[self.evict] = recent;
            self.evict = (self.evict + 1) % RECENT_DIMS;
        }
    }
}

/// `a == b` for the short slices of dims, without a call to `memcmp` (which costs more than
/// the comparison at these lengths; `set_dims` runs it on every switch).
#[inline]
pub(crate) fn same<T: PartialEq>(a: &[T], b: &[T]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// How many values of other dims a tensor keeps (see [`Tensor::set_dims`]).
pub(crate) const RECENT_DIMS: usize = 4;

impl<T: Element, S: Shape, D: Device> fmt::Debug for Tensor<T, S, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tensor")
            .field("name", &self.name)
            .field("dtype", &T::NAME)
            .field("dims", &self.dims)
            .field("device", &D::NAME)
            .finish()
    }
}

/// Values of `T` a tensor of `dims` holds (its element count, or for packed types the
/// count of packed bytes), checked against the shape type and the address space.
fn checked_len<T: Element, S: Shape>(name: &str, dims: &[usize]) -> Result<usize> {
    storage_len_of(name, dims, S::check(dims), T::PACKING, size_of::<T>())
}

/// [`checked_len`] past the generic parts: `shape` is the shape's verdict on `dims`, and a
/// value of `packing` elements per `size` bytes. One copy for every tensor type.
fn storage_len_of(
    name: &str,
    dims: &[usize],
    shape: std::result::Result<(), String>,
    packing: usize,
    size: usize,
) -> Result<usize> {
    shape.map_err(|reason| Error::Shape {
        tensor: name.to_owned(),
        found: dims.to_vec(),
        reason,
    })?;
    let len = element_count(dims)
        .map(|n| n.div_ceil(packing))
        .filter(|n| {
            n.checked_mul(size)
                .is_some_and(|b| b <= isize::MAX as usize)
        });
    let too_large = || Error::TooLarge {
        tensor: name.to_owned(),
        dims: dims.to_vec(),
    };
    let len = len.ok_or_else(too_large)?;
    if dims.iter().any(|&d| i64::try_from(d).is_err()) {
        return Err(too_large());
    }
    Ok(len)
}

/// A buffer of `capacity` values given for a tensor that needs `len` of them.
#[cold]
fn short_buffer(name: &str, len: usize, capacity: usize, dims: &[usize]) -> Error {
    Error::Length {
        tensor: name.to_owned(),
        expected: len,
        found: capacity,
        dims: dims.to_vec(),
    }
}

/// Dims as ONNX Runtime takes them (each already checked to fit `i64`).
fn to_i64(dims: &[usize]) -> Vec<i64> {
    dims.iter().map(|&d| d as i64).collect()
}

impl<T: Element, S: Shape, D: Device> Tensor<T, S, D> {
    /// Allocates a tensor named `name` (the ONNX name, used in errors) with `dims` on `device`.
    pub fn new_in(name: &str, device: D, dims: &[usize]) -> Result<Self> {
        // Exactly the room `dims` needs.
        Self::with_capacity_in(name, device, dims, 0)
    }

    /// Allocates a tensor of `dims` on `device` with room for `capacity` values of `T`
    /// (or the element count of `dims`, if larger): [`set_dims`](Self::set_dims) within
    /// that room never allocates.
    pub fn with_capacity_in(
        name: &str,
        device: D,
        dims: &[usize],
        capacity: usize,
    ) -> Result<Self> {
        let len = checked_len::<T, S>(name, dims)?;
        let buf = device
            .alloc::<T>(capacity.max(len))
            .map_err(|e| e.for_tensor(name))?;
        Self::from_buffer(name, device, buf, dims)
    }

    fn make_value(device: &D, buf: &mut D::Buffer<T>, len: usize, dims: &[i64]) -> Result<Value> {
        let info = device.memory_info()?;
        let ptr: *mut c_void = D::data_ptr(buf);
        // SAFETY: `ptr` addresses `D::capacity(buf) >= len` elements of `T` on `device`,
        // and the value is stored next to the buffer in the same `Tensor`: every code path
        // that reallocates or drops `buf` replaces or drops this value too, and bindings
        // that refer to it are owned by the same binding object and dropped first.
        unsafe { Value::tensor_over(info, ptr, len * size_of::<T>(), dims, T::ONNX_TYPE) }
    }

    /// The ONNX name of this tensor.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Current dims.
    pub fn dims(&self) -> &[usize] {
        &self.dims
    }

    /// Number of values of `T` at the current dims: the element count, or for packed
    /// types (`T::PACKING > 1`, e.g. [`Int4x2`](crate::Int4x2)) the number of packed
    /// bytes, `elements.div_ceil(T::PACKING)`. [`as_slice`](Self::as_slice) has this length.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the tensor has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Elements the buffer can hold without reallocating.
    pub fn capacity(&self) -> usize {
        D::capacity(&self.buf)
    }

    /// The device this tensor lives on.
    pub fn device(&self) -> &D {
        &self.device
    }

    /// Changes the dims, reusing the buffer when it is large enough. A binding that
    /// holds this tensor must rebind it unless the result is [`DimsChange::Unchanged`].
    ///
    /// Within capacity, the tensor keeps the ONNX Runtime values of the last few dims it
    /// had (up to 4, over the same buffer): switching back to one of them makes no value and
    /// no allocation. Growing the buffer drops them.
    pub fn set_dims(&mut self, dims: &[usize]) -> Result<DimsChange> {
        if same(dims, &self.dims) {
            return Ok(DimsChange::Unchanged);
        }
        // A recent value was made for these dims over this buffer: they were checked then.
        if self
            .recent
            .switch_to(dims, &mut self.dims, &mut self.value, &mut self.len)
        {
            return Ok(DimsChange::Resized);
        }
        let len = checked_len::<T, S>(&self.name, dims)?;
        let grow = len > D::capacity(&self.buf);
        let mut dims_i64 = std::mem::take(&mut self.dims_i64);
        dims_i64.clear();
        dims_i64.extend(dims.iter().map(|&d| d as i64));
        let result = if grow {
            let name = &self.name;
            self.device
                .alloc::<T>(len)
                .map_err(|e| e.for_tensor(name))
                .and_then(|mut buf| {
                    let value = Self::make_value(&self.device, &mut buf, len, &dims_i64)?;
                    // Replace the values first: the old ones view the old buffer.
                    self.recent.clear();
                    self.value = value;
                    self.buf = buf;
                    Ok(DimsChange::Reallocated)
                })
        } else {
            Self::make_value(&self.device, &mut self.buf, len, &dims_i64).map(|value| {
                let old = std::mem::replace(&mut self.value, value);
                self.recent.keep(&self.dims, self.len, old);
                DimsChange::Resized
            })
        };
        self.dims_i64 = dims_i64;
        let change = result?;
        self.dims.clear();
        self.dims.extend_from_slice(dims);
        self.len = len;
        Ok(change)
    }

    /// The current value's address, and the address and element count of the memory it
    /// views: equal keys mean equal bindings (see `Binding::set_dims`).
    pub(crate) fn storage_key(&self) -> [usize; 3] {
        [
            self.value.as_ptr() as usize,
            D::data_ptr_const(&self.buf) as usize,
            self.len,
        ]
    }

    pub(crate) fn value(&self) -> &Value {
        &self.value
    }

    /// A mutable view for filling the tensor in place.
    pub fn view_mut(&mut self) -> TensorMut<'_, T, S, D> {
        TensorMut { tensor: self }
    }

    /// A shared view for reading the tensor in place.
    pub fn view(&self) -> TensorRef<'_, T, S, D> {
        TensorRef {
            name: &self.name,
            dims: &self.dims,
            data: self.data_ptr_const(),
            len: self.len,
            device: &self.device,
            buffer: Some(&self.buf),
            _marker: PhantomData,
        }
    }

    /// Wraps a buffer that already exists (device code hands over user memory this way).
    /// The buffer must hold at least the element count of `dims`.
    pub(crate) fn from_buffer(
        name: &str,
        device: D,
        mut buf: D::Buffer<T>,
        dims: &[usize],
    ) -> Result<Self> {
        let len = checked_len::<T, S>(name, dims)?;
        let capacity = D::capacity(&buf);
        if capacity < len {
            return Err(short_buffer(name, len, capacity, dims));
        }
        let dims_i64 = to_i64(dims);
        let value = Self::make_value(&device, &mut buf, len, &dims_i64)?;
        Ok(Tensor {
            name: name.into(),
            device,
            buf,
            dims: dims.to_vec(),
            dims_i64,
            len,
            value,
            recent: Recents::new(),
            resized: false,
            _shape: PhantomData,
        })
    }

    /// Gives the buffer back, releasing the ONNX Runtime value that viewed it first.
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    pub(crate) fn into_buffer(self) -> D::Buffer<T> {
        let Tensor {
            buf, value, recent, ..
        } = self;
        drop(value);
        drop(recent);
        buf
    }

    /// The buffer, for device code in this crate (never handed out mutably: replacing it
    /// would leave ONNX Runtime pointing at freed memory).
    pub(crate) fn buffer(&self) -> &D::Buffer<T> {
        &self.buf
    }

    /// The buffer, mutable, for device code in this crate that writes elements in place.
    pub(crate) fn buffer_mut(&mut self) -> &mut D::Buffer<T> {
        &mut self.buf
    }

    fn data_ptr_const(&self) -> *const T {
        // Only read through `TensorRef`, which borrows `self`.
        D::data_ptr_const(&self.buf).cast()
    }

    /// Swaps the memory of two tensors of the same type and dims (used to feed an output
    /// back as the next run's input without a copy). Both must be rebound afterwards.
    pub fn swap_storage(&mut self, other: &mut Self) -> Result<()> {
        if self.dims != other.dims {
            return Err(Error::Shape {
                tensor: other.name.to_string(),
                found: other.dims.clone(),
                reason: format!(
                    "cannot exchange buffers with `{}` whose dims are {:?}",
                    self.name, self.dims
                ),
            });
        }
        std::mem::swap(&mut self.buf, &mut other.buf);
        std::mem::swap(&mut self.value, &mut other.value);
        // The recent values view the buffers: they move with them.
        std::mem::swap(&mut self.recent, &mut other.recent);
        Ok(())
    }
}

impl<T: Element, S: Shape, D: HostDevice> Tensor<T, S, D> {
    /// The elements, in row-major order.
    pub fn as_slice(&self) -> &[T] {
        D::host_slice(&self.buf, self.len).unwrap_or(&[])
    }

    /// The elements, mutable, in row-major order.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        D::host_slice_mut(&mut self.buf, self.len).unwrap_or(&mut [])
    }
}

impl<T: Element, S: Shape, D: Device> crate::shape::InputShape for Tensor<T, S, D> {
    fn input_dims(&self) -> &[usize] {
        &self.dims
    }
    fn take_resized(&mut self) -> bool {
        std::mem::take(&mut self.resized)
    }
}

impl<T: Element, S: Shape> Tensor<T, S, Cpu> {
    /// Allocates a host tensor (see [`Tensor::new_in`]).
    pub fn new(name: &str, dims: &[usize]) -> Result<Self> {
        Self::new_in(name, Cpu, dims)
    }
}

/// A mutable, borrowed view of a bound tensor: write inputs in place before a run.
///
/// It cannot replace, resize or free the buffer ONNX Runtime points at.
pub struct TensorMut<'a, T: Element, S: Shape, D: Device = Cpu> {
    tensor: &'a mut Tensor<T, S, D>,
}

impl<T: Element, S: Shape, D: Device> fmt::Debug for TensorMut<'_, T, S, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.tensor.fmt(f)
    }
}

impl<T: Element, S: Shape, D: Device> TensorMut<'_, T, S, D> {
    /// The tensor behind the view, for device code in this crate.
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    pub(crate) fn tensor(&self) -> &Tensor<T, S, D> {
        self.tensor
    }

    /// The tensor behind the view, mutable, for device code in this crate (which must not
    /// replace its buffer: ONNX Runtime points at it).
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    pub(crate) fn tensor_mut(&mut self) -> &mut Tensor<T, S, D> {
        self.tensor
    }

    /// The ONNX name.
    pub fn name(&self) -> &str {
        self.tensor.name()
    }

    /// Current dims.
    pub fn dims(&self) -> &[usize] {
        self.tensor.dims()
    }

    /// Number of values of `T` (for packed types: packed bytes; see [`Tensor::len`]).
    pub fn len(&self) -> usize {
        self.tensor.len()
    }

    /// Whether the tensor has no elements.
    pub fn is_empty(&self) -> bool {
        self.tensor.is_empty()
    }

    /// Gives this input new dims (reusing its buffer's capacity; growing it allocates once);
    /// the elements are then unspecified until written. The binding sees the change before
    /// its next run: it derives every dim from the shapes of its inputs (as the generated
    /// `Dims::from_input_shapes` does), resizes the outputs to match and binds again. Set
    /// every input that shares a dim before running: inputs that disagree make the run an
    /// error naming the dim. Dims equal to the current ones change nothing.
    pub fn resize(&mut self, dims: &[usize]) -> Result<()> {
        if self.tensor.set_dims(dims)? != DimsChange::Unchanged {
            self.tensor.resized = true;
        }
        Ok(())
    }
}

impl<'a, T: Element, S: Shape, D: HostDevice> TensorMut<'a, T, S, D> {
    /// Gives this input `dims` and copies `data` in (as many elements as `dims` holds):
    /// [`TensorMut::resize`], then [`TensorMut::copy_from_slice`]. A wrong count is an
    /// error before anything changes.
    pub fn set(&mut self, dims: &[usize], data: &[T]) -> Result<()> {
        let len = checked_len::<T, S>(self.tensor.name(), dims)?;
        if len != data.len() {
            return Err(Error::Length {
                tensor: self.tensor.name().to_owned(),
                expected: len,
                found: data.len(),
                dims: dims.to_vec(),
            });
        }
        self.resize(dims)?;
        self.copy_from_slice(data)
    }

    /// The elements, mutable, in row-major order.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        self.tensor.as_mut_slice()
    }

    /// The elements, in row-major order.
    pub fn as_slice(&self) -> &[T] {
        self.tensor.as_slice()
    }

    /// The elements, mutable, for the view's whole lifetime (the view is used up).
    #[cfg(feature = "ort")]
    pub(crate) fn into_mut_slice(self) -> &'a mut [T] {
        let TensorMut { tensor } = self;
        tensor.as_mut_slice()
    }

    /// Copies `data` in; its length must equal the tensor's element count.
    pub fn copy_from_slice(&mut self, data: &[T]) -> Result<()> {
        if self.tensor.len() != data.len() {
            return Err(Error::Length {
                tensor: self.tensor.name().to_owned(),
                expected: self.tensor.len(),
                found: data.len(),
                dims: self.tensor.dims().to_vec(),
            });
        }
        self.tensor.as_mut_slice().copy_from_slice(data);
        Ok(())
    }

    /// Row `row` along axis 0 (e.g. one item of a batch), mutable: the elements of
    /// `self[row, ..]` in row-major order. An error for a scalar or a row past the end.
    pub fn row_mut(&mut self, row: usize) -> Result<&mut [T]> {
        let range = row_range(self.tensor.name(), self.tensor.dims(), row)?;
        Ok(&mut self.tensor.as_mut_slice()[range])
    }

    /// Sets every element to `value`.
    pub fn fill(&mut self, value: T) {
        self.tensor.as_mut_slice().fill(value);
    }
}

impl<T: Unpacked, S: Shape, D: HostDevice> TensorMut<'_, T, S, D> {
    /// Copies `data` in, sizing the one dynamic axis of the shape type to hold it: `data`
    /// of 6 values into a `(Dyn, Fix<3>)` input makes it `[2, 3]`. The count is given once,
    /// by `data`; see [`TensorMut::resize`] for what the binding does next. An error when
    /// the shape type does not have exactly one `Dyn` axis, or when `data` does not fill
    /// whole slices of the others.
    pub fn fill_resized(&mut self, data: &[T]) -> Result<()> {
        let dims = crate::shape::dims_holding(S::RANK, S::AXES, data.len()).map_err(|problem| {
            Error::Value {
                value: self.tensor.name().to_owned(),
                problem,
            }
        })?;
        self.set(&dims[..S::AXES.len()], data)
    }
}

impl<T: Element + Packed, S: Shape, D: HostDevice> TensorMut<'_, T, S, D> {
    /// Packs `values` (one per tensor element, row-major) into the tensor, in place: two
    /// per byte for 4-bit types, four for 2-bit ones, the first in the lowest bits, each
    /// clamped (integers) or rounded (`float4e2m1`) as [`Packed::set_element`] does; the
    /// unused bits of the last byte are zeroed. `values.len()` must equal the element
    /// count (the product of the dims).
    pub fn pack_from(&mut self, values: &[T::Value]) -> Result<()> {
        let elements = element_count(self.tensor.dims()).unwrap_or(usize::MAX);
        if values.len() != elements {
            return Err(Error::Length {
                tensor: self.tensor.name().to_owned(),
                expected: elements,
                found: values.len(),
                dims: self.tensor.dims().to_vec(),
            });
        }
        crate::element::narrow::pack_into(self.tensor.as_mut_slice(), values)
            .expect("a tensor holds storage_len(elements) bytes");
        Ok(())
    }
}

impl<'a, T: Element + Packed, S: Shape, D: HostDevice> TensorRef<'a, T, S, D> {
    /// The elements of a packed tensor, unpacked, row-major: as many as the product of the
    /// dims (for an odd number of 4-bit elements, the last byte's high nibble is not one).
    pub fn unpacked(&self) -> impl Iterator<Item = T::Value> + 'a {
        let elements = element_count(self.dims).unwrap_or(0);
        crate::element::narrow::unpack(self.as_slice(), elements)
    }
}

/// A shared, borrowed view of a tensor: read outputs in place after a run.
///
/// While it lives, the binding it came from cannot run (the borrow checker sees to it).
pub struct TensorRef<'a, T: Element, S: Shape, D: Device = Cpu> {
    name: &'a str,
    dims: &'a [usize],
    data: *const T,
    len: usize,
    device: &'a D,
    /// The tensor's buffer; `None` for values ONNX Runtime allocated.
    buffer: Option<&'a D::Buffer<T>>,
    _marker: ViewMarker<'a, T, S, D>,
}

/// Variance and auto-trait marker of [`TensorRef`]: borrows `T`s for `'a`.
type ViewMarker<'a, T, S, D> = PhantomData<(&'a T, fn() -> S, D)>;

impl<T: Element, S: Shape, D: Device> Clone for TensorRef<'_, T, S, D> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: Element, S: Shape, D: Device> Copy for TensorRef<'_, T, S, D> {}

impl<T: Element, S: Shape, D: Device> fmt::Debug for TensorRef<'_, T, S, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TensorRef")
            .field("name", &self.name)
            .field("dtype", &T::NAME)
            .field("dims", &self.dims)
            .field("device", &D::NAME)
            .finish()
    }
}

impl<'a, T: Element, S: Shape, D: Device> TensorRef<'a, T, S, D> {
    /// The device the value lives on.
    pub fn device(&self) -> &'a D {
        self.device
    }

    /// Address of the first element (host or device address), for device code in this crate.
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    pub(crate) fn data_ptr(&self) -> *const T {
        self.data
    }

    /// The buffer behind the view, when ort-bind owns it (not for values ONNX Runtime allocated).
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    pub(crate) fn buffer(&self) -> Option<&'a D::Buffer<T>> {
        self.buffer
    }

    /// The ONNX name.
    pub fn name(&self) -> &'a str {
        self.name
    }

    /// Dims of the value.
    pub fn dims(&self) -> &'a [usize] {
        self.dims
    }

    /// Number of values of `T` (for packed types: packed bytes; see [`Tensor::len`]).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the value has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<'a, T: Element, S: Shape> TensorRef<'a, T, S, Cpu> {
    /// A view of `len` elements at `data`, host memory of a value ONNX Runtime allocated
    /// (a sequence's element, ...). The caller keeps that value alive and unwritten for
    /// `'a` (it owns the value and lends it for `'a`).
    pub(crate) fn over_host_value(
        name: &'a str,
        dims: &'a [usize],
        data: *const T,
        len: usize,
    ) -> Self {
        Self::over_borrowed_value(name, dims, data, len, &Cpu)
    }
}

impl<'a, T: Element, S: Shape, D: Device> TensorRef<'a, T, S, D> {
    /// A view of `len` values of `T` at `data` on `device`: memory of a value another owner
    /// holds (an `ort` value), which the caller keeps alive and unwritten for `'a` (it lends
    /// that value for `'a`), and which holds at least `len` initialised values.
    pub(crate) fn over_borrowed_value(
        name: &'a str,
        dims: &'a [usize],
        data: *const T,
        len: usize,
        device: &'a D,
    ) -> Self {
        TensorRef {
            name,
            dims,
            data,
            len,
            device,
            buffer: None,
            _marker: PhantomData,
        }
    }
}

impl<'a, T: Element, S: Shape, D: HostDevice> TensorRef<'a, T, S, D> {
    /// The elements, in row-major order, read in place.
    pub fn as_slice(&self) -> &'a [T] {
        if self.len == 0 || self.data.is_null() {
            return &[];
        }
        // SAFETY: `data` points to `len` initialised elements of host memory owned by a
        // tensor or output value that the lifetime `'a` keeps borrowed (and so alive and
        // unwritten: running the binding needs `&mut`).
        unsafe { std::slice::from_raw_parts(self.data, self.len) }
    }

    /// Copies the elements into a new `Vec` (allocates; for convenience, not for hot loops).
    pub fn to_vec(&self) -> Vec<T> {
        self.as_slice().to_vec()
    }

    /// Row `row` along axis 0 (e.g. one item of a batch), read in place: the elements of
    /// `self[row, ..]` in row-major order. An error for a scalar or a row past the end.
    pub fn row(&self, row: usize) -> Result<&'a [T]> {
        let range = row_range(self.name, self.dims, row)?;
        Ok(&self.as_slice()[range])
    }
}

/// Where row `row` along axis 0 lies in the elements of a tensor with `dims`.
fn row_range(name: &str, dims: &[usize], row: usize) -> Result<std::ops::Range<usize>> {
    let Some((&rows, rest)) = dims.split_first() else {
        return Err(Error::Shape {
            tensor: name.to_owned(),
            found: dims.to_vec(),
            reason: "a scalar has no rows".into(),
        });
    };
    if row >= rows {
        return Err(Error::Shape {
            tensor: name.to_owned(),
            found: dims.to_vec(),
            reason: format!("row {row} is past the last of its {rows} rows"),
        });
    }
    let width: usize = rest.iter().product();
    Ok(row * width..(row + 1) * width)
}

/// An output whose shape ONNX Runtime decides during the run (data-dependent, or
/// named by dims no input carries). ONNX Runtime allocates it on the device on each
/// run; ort-bind keeps the latest value and exposes it typed, in place, with its
/// actual shape.
///
/// # Memory
///
/// - ort-bind's own code allocates nothing per run for these outputs: the value is a
///   reference-counted handle, and its dims are read into storage reserved up front
///   (for the declared rank; an output of unknown rank reserves 8 axes and grows once
///   when a value has more).
/// - Before each run the output is bound to its device afresh
///   ([`BindingIo::rebind_allocated`](crate::BindingIo::rebind_allocated)): ONNX Runtime's
///   binding would otherwise write the next result into the previous value and fail the
///   run when the shape changes. So ONNX Runtime allocates a new value every run, with the
///   session's allocator for that device. On the CPU that is, by default, its arena
///   (`enable_cpu_mem_arena`), which keeps blocks that are released and hands them out
///   again: with sizes that recur, runs reuse arena memory and make no system allocation.
///   The previous run's value is released when the new one arrives, so two blocks
///   alternate.
/// - Memory is not reused: when the session's arena is disabled (each run is then a
///   `malloc`/`free` pair inside ONNX Runtime); when a value is larger than every free
///   block (the arena grows, once per new peak size); while a [`TensorRef`] to it is held
///   — which the borrow checker makes impossible across a run anyway.
/// - To reuse a buffer of ours instead, give the output a size the bindings can compute
///   (codegen's `ModelOptions::dim` / `rename_dim`): it is then a [`Tensor`] bound once.
pub struct AllocatedOutput<T: Element, S: Shape, D: Device = Cpu> {
    name: Box<str>,
    device: D,
    value: Option<Value>,
    dims: Vec<usize>,
    scratch: Vec<i64>,
    data: *const T,
    len: usize,
    _shape: PhantomData<fn() -> S>,
}

// SAFETY: `data` points into `value`'s memory, which this struct owns (one reference);
// moving it to another thread moves that ownership with it.
unsafe impl<T: Element, S: Shape, D: Device> Send for AllocatedOutput<T, S, D> {}

impl<T: Element, S: Shape, D: Device> fmt::Debug for AllocatedOutput<T, S, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AllocatedOutput")
            .field("name", &self.name)
            .field("dtype", &T::NAME)
            .field("dims", &self.dims)
            .field("device", &D::NAME)
            .finish()
    }
}

impl<T: Element, S: Shape, D: Device> AllocatedOutput<T, S, D> {
    /// An output slot named `name` on `device`; empty until a run fills it.
    pub fn new_in(name: &str, device: D) -> Self {
        let rank = S::RANK.unwrap_or(8);
        AllocatedOutput {
            name: name.into(),
            device,
            value: None,
            dims: Vec::with_capacity(rank),
            scratch: Vec::with_capacity(rank),
            data: std::ptr::null(),
            len: 0,
            _shape: PhantomData,
        }
    }

    /// The ONNX name.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn device(&self) -> &D {
        &self.device
    }

    /// Forgets the last run's value (releasing it to ONNX Runtime): [`AllocatedOutput::get`]
    /// is [`Error::NotRun`] until the next successful run. [`Binding`](crate::Binding) calls it
    /// when dims change and when a run fails, so a view never shows a stale result.
    pub fn clear(&mut self) {
        self.value = None;
        self.len = 0;
        self.data = std::ptr::null();
        self.dims.clear();
    }

    /// Takes the value ONNX Runtime produced in the last run, checking its type and shape.
    pub(crate) fn accept(&mut self, value: Value) -> Result<()> {
        self.clear();
        let elem = value.tensor_info(&mut self.scratch)?;
        if elem != T::ONNX_TYPE {
            return Err(Error::OutputType {
                output: self.name.to_string(),
                expected: T::NAME.to_owned(),
                found: onnx_type_name(elem).to_owned(),
            });
        }
        self.dims.extend(
            self.scratch
                .iter()
                .map(|&d| usize::try_from(d).unwrap_or(0)),
        );
        if let Err(reason) = S::check(&self.dims) {
            return Err(Error::Shape {
                tensor: self.name.to_string(),
                found: self.dims.clone(),
                reason: format!(
                    "ONNX Runtime produced a value that breaks the declared shape: {reason}"
                ),
            });
        }
        let len = element_count(&self.dims)
            .map(storage_len::<T>)
            .ok_or_else(|| Error::TooLarge {
                tensor: self.name.to_string(),
                dims: self.dims.clone(),
            })?;
        self.data = value.data_ptr()?.cast_const().cast();
        self.len = len;
        self.value = Some(value);
        Ok(())
    }

    /// The value of the last run, or [`Error::NotRun`] before the first successful run.
    pub fn get(&self) -> Result<TensorRef<'_, T, S, D>> {
        if self.value.is_none() {
            return Err(Error::NotRun {
                output: self.name.to_string(),
            });
        }
        Ok(TensorRef {
            name: &self.name,
            dims: &self.dims,
            data: self.data,
            len: self.len,
            device: &self.device,
            buffer: None,
            _marker: PhantomData,
        })
    }
}

#[cfg(test)]
mod miri_tests;
