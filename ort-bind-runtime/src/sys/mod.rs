//! Every call into the ONNX Runtime C API that ort-bind makes, and nothing else.
//!
//! The C API is a table of function pointers that the shared library hands out
//! (`api.rs`); the declarations are `ort-sys`'s, generated from ONNX Runtime's header.
//! Each `unsafe` block states the invariant it relies on. Callers must have loaded the
//! library (`library::init`, a layer above) first: [`api()`] panics otherwise.
//!
//! | file | what it calls |
//! | --- | --- |
//! | `api.rs` | loading the library and taking its table |
//! | `env.rs` | the process's environment: its logger and telemetry |
//! | `session.rs` | session options, sessions, the inputs and outputs a model declares |
//! | `mod.rs` | memory info, values, I/O bindings, runs (also `RunAsync`), providers |
//! | `ort_crate.rs` | the `ort` crate's library, table, sessions and values (the `ort` feature) |

mod api;
mod env;
#[cfg(feature = "ort")]
mod ort_crate;
mod session;

#[cfg(any(target_os = "linux", target_os = "android", target_os = "macos"))]
pub(crate) use api::address_in_library;
#[cfg(feature = "ort")]
pub(crate) use api::adopt;
pub(crate) use api::{API_VERSION, api, build_info, load};
pub(crate) use env::Env;
#[cfg(feature = "ort")]
pub(crate) use ort_crate::{
    Placement, ort_api, ort_has_library, ort_tensor_memory, share_library_with_ort,
};
pub(crate) use session::{Declared, DeclaredType, Session, SessionOptions, Side};

use std::ffi::{CStr, CString, c_void};
use std::ptr::{self, NonNull};
use std::sync::OnceLock;

use ort_sys::{
    ONNXTensorElementDataType, ONNXType, OrtAllocator, OrtAllocatorType, OrtIoBinding, OrtMemType,
    OrtMemoryInfo, OrtMemoryInfoDeviceType, OrtRunOptions, OrtSession, OrtStatusPtr, OrtValue,
};

use crate::error::{Error, Result};

/// Turns an `OrtStatus*` into a `Result`, releasing the status.
fn check(status: OrtStatusPtr, context: impl FnOnce() -> String) -> Result<()> {
    if status.0.is_null() {
        return Ok(());
    }
    Err(status_error(status, context()))
}

/// The error a non-null status reports, the status released. Not generic and cold, so each
/// of [`check`]'s many callers compiles only the null test.
#[cold]
#[inline(never)]
fn status_error(status: OrtStatusPtr, context: String) -> Error {
    let status = status.0;
    let api = api();
    // SAFETY: `status` is a non-null status just returned by the C API; ONNX Runtime
    // guarantees its message is a NUL-terminated string that lives until ReleaseStatus,
    // and we copy it out before releasing the status exactly once.
    let message = unsafe {
        let msg = (api.GetErrorMessage)(status);
        let text = if msg.is_null() {
            String::from("(no message)")
        } else {
            CStr::from_ptr(msg).to_string_lossy().into_owned()
        };
        (api.ReleaseStatus)(status);
        text
    };
    Error::Ort { context, message }
}

/// An `OrtMemoryInfo` describing where a buffer lives, owned by us.
#[derive(Debug)]
#[allow(unreachable_pub)] // named by the sealed `DeviceImpl` trait, unreachable from outside
pub struct MemoryInfo(NonNull<OrtMemoryInfo>);

// SAFETY: an OrtMemoryInfo is an immutable description (device, id, memory type);
// ONNX Runtime only reads it, so sharing the pointer across threads is sound.
unsafe impl Send for MemoryInfo {}
// SAFETY: see `Send`: no method mutates it after creation.
unsafe impl Sync for MemoryInfo {}

impl MemoryInfo {
    /// Memory info for plain host memory; created once per process. ONNX Runtime must be
    /// loaded (`Cpu::memory_info`, which host tensors made before any session reach, loads it).
    pub(crate) fn cpu() -> Result<&'static MemoryInfo> {
        static CPU: OnceLock<MemoryInfo> = OnceLock::new();
        if let Some(info) = CPU.get() {
            return Ok(info);
        }
        let mut out = ptr::null_mut();
        // SAFETY: `out` is a valid out-pointer; the enum values are ones the C API documents.
        let status = unsafe {
            (api().CreateCpuMemoryInfo)(
                OrtAllocatorType::OrtDeviceAllocator,
                OrtMemType::OrtMemTypeDefault,
                &mut out,
            )
        };
        check(status, || "creating CPU memory info".into())?;
        let info = MemoryInfo(non_null(out, "CreateCpuMemoryInfo")?);
        // A racing thread may have set it first; then ours is dropped (released).
        Ok(CPU.get_or_init(|| info))
    }

    /// Memory info built from its parts (device name as ONNX Runtime spells it, e.g. `Cuda`).
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    pub(crate) fn new(name: &CStr, device_id: i32, mem_type: OrtMemType) -> Result<MemoryInfo> {
        let mut out = ptr::null_mut();
        // SAFETY: `name` is NUL-terminated and outlives the call; `out` is a valid out-pointer.
        let status = unsafe {
            (api().CreateMemoryInfo)(
                name.as_ptr(),
                OrtAllocatorType::OrtDeviceAllocator,
                device_id,
                mem_type,
                &mut out,
            )
        };
        check(status, || format!("creating memory info for {name:?}"))?;
        Ok(MemoryInfo(non_null(out, "CreateMemoryInfo")?))
    }

    pub(crate) fn as_ptr(&self) -> *const OrtMemoryInfo {
        self.0.as_ptr()
    }
}

impl Drop for MemoryInfo {
    fn drop(&mut self) {
        // SAFETY: we own this memory info and release it exactly once.
        unsafe { (api().ReleaseMemoryInfo)(self.0.as_ptr()) }
    }
}

fn non_null<T>(p: *mut T, what: &str) -> Result<NonNull<T>> {
    NonNull::new(p).ok_or_else(|| Error::Ort {
        context: format!("calling {what}"),
        message: "ONNX Runtime returned a null pointer".into(),
    })
}

/// ONNX Runtime's default CPU allocator (process-global, never released).
fn default_allocator() -> Result<*mut OrtAllocator> {
    let mut allocator: *mut OrtAllocator = ptr::null_mut();
    // SAFETY: valid out-pointer; the default allocator is process-global and never released.
    let status = unsafe { (api().GetAllocatorWithDefaultOptions)(&mut allocator) };
    check(status, || "getting the default allocator".into())?;
    Ok(allocator)
}

/// An owned `OrtValue` (one reference to it).
#[derive(Debug)]
#[allow(unreachable_pub)] // named by the sealed traits of `values`, unreachable from outside
pub struct Value(NonNull<OrtValue>);

// SAFETY: an OrtValue is a reference-counted handle; moving the handle to another thread
// is sound. It is not `Sync`: reading its shape while another thread runs a session
// that writes it would race, and nothing here needs shared access.
unsafe impl Send for Value {}

/// A tensor value over part of another tensor's memory ([`Value::part`]), which it
/// borrows: it cannot outlive the value it is part of.
#[derive(Debug)]
pub(crate) struct ValuePart<'a> {
    value: Value,
    _whole: std::marker::PhantomData<&'a Value>,
}

impl ValuePart<'_> {
    /// The part, to bind.
    pub(crate) fn value(&self) -> &Value {
        &self.value
    }
}

/// The element count of `dims`, if none is negative and it does not overflow.
fn count_of(dims: &[i64]) -> Option<usize> {
    dims.iter().try_fold(1usize, |n, &d| {
        usize::try_from(d).ok().and_then(|d| n.checked_mul(d))
    })
}

/// A [`Value`] that is never written after it is made (an adapter's parameters), so it may
/// be shared between threads: bindings on several threads bind it at once.
#[derive(Debug)]
pub(crate) struct ReadOnlyValue(Value);

// SAFETY: no `&mut` access exists after construction (the field is private and `get` hands
// out `&Value`, whose methods only read or bind it); ONNX Runtime only reads a value bound as
// an input, and binding one (`BindInput`) takes a reference-counted handle, which it counts
// atomically. Concurrent reads of an immutable tensor are sound.
unsafe impl Sync for ReadOnlyValue {}

impl ReadOnlyValue {
    /// Wraps a value no one will write.
    pub(crate) fn new(value: Value) -> ReadOnlyValue {
        ReadOnlyValue(value)
    }

    /// The value, to bind or read.
    pub(crate) fn get(&self) -> &Value {
        &self.0
    }
}

impl Value {
    /// Creates a tensor value that views `bytes` bytes at `data` without copying.
    ///
    /// # Safety
    /// `data` must point to `bytes` bytes valid for reads and writes, laid out as
    /// elements of `elem`, on the device `info` describes, and must stay valid (not
    /// moved or freed) for as long as this value, or any binding that refers to it,
    /// may be used by ONNX Runtime.
    pub(crate) unsafe fn tensor_over(
        info: &MemoryInfo,
        data: *mut c_void,
        bytes: usize,
        dims: &[i64],
        elem: ONNXTensorElementDataType,
    ) -> Result<Value> {
        let mut out = ptr::null_mut();
        // SAFETY: the caller guarantees `data`/`bytes`; `dims` is a live slice whose length
        // we pass; `info` outlives the call (ORT copies what it needs).
        let status = unsafe {
            (api().CreateTensorWithDataAsOrtValue)(
                info.as_ptr(),
                data,
                bytes,
                dims.as_ptr(),
                dims.len(),
                elem,
                &mut out,
            )
        };
        check(status, || {
            format!("creating a tensor value of dims {dims:?}")
        })?;
        Ok(Value(non_null(out, "CreateTensorWithDataAsOrtValue")?))
    }

    pub(crate) fn as_ptr(&self) -> *const OrtValue {
        self.0.as_ptr()
    }

    /// A second tensor value over the memory of the tensor value `raw` (same dims,
    /// element type and device; nothing copied).
    ///
    /// # Safety
    /// `raw` must be a live tensor value; its memory must stay valid and in place for as
    /// long as the new value, or any binding it is bound in, may be used by ONNX Runtime
    /// (the rule of [`Value::tensor_over`]).
    pub(crate) unsafe fn alias_of(raw: *const OrtValue) -> Result<Value> {
        // SAFETY: the caller's contract, passed on.
        unsafe { Value::view_of(raw, None) }
    }

    /// A tensor value over the memory of the tensor value `raw` with `dims` (`None`: its
    /// own), element type and device kept: one model reading another's buffer in another
    /// shape. Fails unless `dims` hold exactly the elements `raw` does.
    ///
    /// # Safety
    /// As [`Value::alias_of`].
    pub(crate) unsafe fn view_of(raw: *const OrtValue, dims: Option<&[i64]>) -> Result<Value> {
        let mut own = Vec::new();
        // SAFETY: the caller's contract, passed on.
        let borrowed = unsafe { Value::borrowed(raw)? };
        let elem = borrowed.tensor_info(&mut own)?;
        let dims = dims.unwrap_or(&own);
        let count = |d: &[i64]| {
            d.iter()
                .try_fold(1i64, |n, &x| if x < 0 { None } else { n.checked_mul(x) })
        };
        if count(dims).is_none() || count(dims) != count(&own) {
            return Err(Error::Value {
                value: format!("a view of dims {dims:?}"),
                problem: format!("the tensor it views has dims {own:?}, another element count"),
            });
        }
        let (data, bytes, info) = (
            borrowed.data_ptr()?,
            borrowed.size_in_bytes()?,
            borrowed.memory_info_ptr()?,
        );
        let mut out = ptr::null_mut();
        // SAFETY: `data` holds `bytes` bytes of `elem` on the device `info` describes (read
        // from the live value, which owns `info`), which `dims` (checked above) covers
        // exactly; the caller keeps that memory valid.
        let status = unsafe {
            (api().CreateTensorWithDataAsOrtValue)(
                info,
                data,
                bytes,
                dims.as_ptr(),
                dims.len(),
                elem,
                &mut out,
            )
        };
        check(status, || {
            format!("creating a second value over a tensor of dims {dims:?}")
        })?;
        Ok(Value(non_null(out, "CreateTensorWithDataAsOrtValue")?))
    }

    /// A tensor value over part of this tensor's memory: `dims` elements from element
    /// `offset` on (element type and device kept, nothing copied), which must lie within
    /// this tensor. The part borrows this value, so it cannot outlive it; a binding it is
    /// bound in follows the rule of every binding (its owner keeps the memory in place
    /// while the binding can run). Refused: a string tensor, a part that does not fit.
    pub(crate) fn part(&self, offset: usize, dims: &[i64]) -> Result<ValuePart<'_>> {
        let mut own = Vec::new();
        let (elem, own_count) = (self.tensor_info(&mut own)?, count_of(&own));
        let count = count_of(dims);
        let refuse = |problem: String| Error::Value {
            value: format!("a part of dims {dims:?} from element {offset}"),
            problem,
        };
        if elem == ONNXTensorElementDataType::ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING {
            return Err(refuse(
                "a string tensor's elements are not plain memory".into(),
            ));
        }
        let (Some(own_count), Some(count)) = (own_count, count) else {
            return Err(refuse(format!(
                "dims {dims:?} or {own:?} hold no element count"
            )));
        };
        if own_count == 0 || offset.checked_add(count).is_none_or(|end| end > own_count) {
            return Err(refuse(format!(
                "the tensor it is part of has dims {own:?} ({own_count} elements)"
            )));
        }
        let bytes = self.size_in_bytes()?;
        let size = bytes / own_count;
        let (data, info) = (self.data_ptr()?, self.memory_info_ptr()?);
        // Address arithmetic only (device memory is not dereferenced here).
        let start = data.wrapping_byte_add(offset * size);
        let mut out = ptr::null_mut();
        // SAFETY: this live tensor holds `own_count` elements of `elem` (`size` bytes each)
        // at `data` on the device `info` (its own memory info) describes; elements
        // `offset..offset + count` lie within them (checked above), so `start` and
        // `count * size` bytes from it are inside that memory, which stays valid while the
        // returned part borrows `self`.
        let status = unsafe {
            (api().CreateTensorWithDataAsOrtValue)(
                info,
                start,
                count * size,
                dims.as_ptr(),
                dims.len(),
                elem,
                &mut out,
            )
        };
        check(status, || {
            format!("creating a value over part of a tensor, dims {dims:?}")
        })?;
        Ok(ValuePart {
            value: Value(non_null(out, "CreateTensorWithDataAsOrtValue")?),
            _whole: std::marker::PhantomData,
        })
    }

    /// A handle over the live value `raw` that is never released: `raw` stays its owner's.
    ///
    /// # Safety
    /// `raw` must be a live value for as long as the handle is used.
    unsafe fn borrowed(raw: *const OrtValue) -> Result<std::mem::ManuallyDrop<Value>> {
        Ok(std::mem::ManuallyDrop::new(Value(non_null(
            raw.cast_mut(),
            "a bound value",
        )?)))
    }

    /// The dims of the live tensor value `raw`, written into `dims`, and its element type.
    ///
    /// # Safety
    /// `raw` must be a live tensor value (it is only read).
    pub(crate) unsafe fn dims_of(
        raw: *const OrtValue,
        dims: &mut Vec<i64>,
    ) -> Result<ONNXTensorElementDataType> {
        // SAFETY: the caller's contract, passed on.
        unsafe { Value::borrowed(raw)? }.tensor_info(dims)
    }

    /// Element type, data address and size in bytes of the live tensor value `raw`.
    ///
    /// # Safety
    /// `raw` must be a live tensor value (it is only read).
    pub(crate) unsafe fn memory_of(
        raw: *const OrtValue,
    ) -> Result<(ONNXTensorElementDataType, usize, usize)> {
        // SAFETY: the caller's contract, passed on.
        let borrowed = unsafe { Value::borrowed(raw)? };
        Ok((
            borrowed.element_type()?,
            borrowed.data_ptr()?.addr(),
            borrowed.size_in_bytes()?,
        ))
    }

    /// The size of a tensor value's data in bytes.
    fn size_in_bytes(&self) -> Result<usize> {
        let mut bytes = 0usize;
        // SAFETY: the value is a live tensor; `bytes` is a valid out-pointer.
        let status = unsafe { (api().GetTensorSizeInBytes)(self.as_ptr(), &mut bytes) };
        check(status, || "reading a tensor's size".into())?;
        Ok(bytes)
    }

    /// The memory info of a tensor value: owned by the value, valid while it lives.
    fn memory_info_ptr(&self) -> Result<*const OrtMemoryInfo> {
        let mut info: *const OrtMemoryInfo = ptr::null();
        // SAFETY: the value is a live tensor; `info` is a valid out-pointer.
        let status = unsafe { (api().GetTensorMemoryInfo)(self.as_ptr(), &mut info) };
        check(status, || "reading a tensor's memory info".into())?;
        Ok(info)
    }

    /// The element type of a tensor value (read without allocating).
    pub(crate) fn element_type(&self) -> Result<ONNXTensorElementDataType> {
        Ok(self.type_and_shape()?.0)
    }

    /// Element type, and the value's own dims array and its length (valid while the value
    /// lives, and unmodified).
    fn type_and_shape(&self) -> Result<(ONNXTensorElementDataType, *const i64, usize)> {
        let mut elem = ONNXTensorElementDataType::ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
        let mut shape: *const i64 = ptr::null();
        let mut count = 0usize;
        // SAFETY: the value is alive; all out-pointers are valid. This call returns a pointer
        // into the value's own shape storage, valid while the value lives and unmodified.
        let status = unsafe {
            (api().GetTensorElementTypeAndShapeDataReference)(
                self.as_ptr(),
                &mut elem,
                &mut shape,
                &mut count,
            )
        };
        check(status, || "reading a tensor's type and shape".into())?;
        Ok((elem, shape, count))
    }

    /// Whether this is a tensor (of any element type but strings) in host memory, as
    /// its memory info says.
    pub(crate) fn is_host_tensor(&self) -> Result<bool> {
        let api = api();
        let mut is_tensor = 0;
        // SAFETY: the value is alive; `is_tensor` is a valid out-pointer.
        let status = unsafe { (api.IsTensor)(self.as_ptr(), &mut is_tensor) };
        check(status, || "reading a value's kind".into())?;
        if is_tensor == 0 {
            return Ok(false);
        }
        if self.element_type()? == ONNXTensorElementDataType::ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING {
            return Ok(false);
        }
        let info = self.memory_info_ptr()?;
        let mut device = OrtMemoryInfoDeviceType::OrtMemoryInfoDeviceType_GPU;
        // SAFETY: `info` is the live memory info read above; `device` is a valid out-pointer.
        unsafe { (api.MemoryInfoGetDeviceType)(info, &mut device) };
        Ok(device == OrtMemoryInfoDeviceType::OrtMemoryInfoDeviceType_CPU)
    }

    /// Element type and dims of a tensor value, written into `dims` (whose capacity is reused).
    pub(crate) fn tensor_info(&self, dims: &mut Vec<i64>) -> Result<ONNXTensorElementDataType> {
        let (elem, shape, count) = self.type_and_shape()?;
        dims.clear();
        if count > 0 {
            // SAFETY: ORT reported `count` dims at `shape`, alive as long as `self` (borrowed here).
            dims.extend_from_slice(unsafe { std::slice::from_raw_parts(shape, count) });
        }
        Ok(elem)
    }

    /// Address of the tensor's first element (host or device address).
    pub(crate) fn data_ptr(&self) -> Result<*mut c_void> {
        let mut out = ptr::null_mut();
        // SAFETY: the value is a live tensor; `out` is a valid out-pointer.
        let status = unsafe { (api().GetTensorMutableData)(self.0.as_ptr(), &mut out) };
        check(status, || "reading a tensor's data pointer".into())?;
        Ok(out)
    }

    /// A tensor of `elem` and `dims` in memory ONNX Runtime allocates (its default CPU
    /// allocator) and owns: string tensors, and the parts of sequences and maps we build.
    /// ONNX Runtime leaves numeric elements uninitialised, so callers write every element
    /// ([`Value::data_ptr`]) before the value is read; string elements start empty.
    pub(crate) fn new_owned_tensor(dims: &[i64], elem: ONNXTensorElementDataType) -> Result<Value> {
        let allocator = default_allocator()?;
        let mut out = ptr::null_mut();
        // SAFETY: the allocator is ONNX Runtime's global one; `dims` is a live slice whose
        // length we pass; `out` is a valid out-pointer.
        let status = unsafe {
            (api().CreateTensorAsOrtValue)(allocator, dims.as_ptr(), dims.len(), elem, &mut out)
        };
        check(status, || format!("creating a tensor of dims {dims:?}"))?;
        Ok(Value(non_null(out, "CreateTensorAsOrtValue")?))
    }

    /// A tensor of `T` with `dims` holding a copy of `data`, in memory ONNX Runtime owns.
    pub(crate) fn owned_tensor_from<T: crate::element::Element>(
        dims: &[i64],
        data: &[T],
    ) -> Result<Value> {
        let count = dims
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(usize::try_from(d).ok()?));
        if count != Some(data.len()) {
            return Err(Error::Ort {
                context: format!("creating a tensor of dims {dims:?}"),
                message: format!("{} values do not fill these dims", data.len()),
            });
        }
        let value = Value::new_owned_tensor(dims, T::ONNX_TYPE)?;
        if !data.is_empty() {
            let dst = non_null(value.data_ptr()?, "GetTensorMutableData")?;
            // SAFETY: ONNX Runtime allocated the tensor for `data.len()` elements of `T`
            // (same element type code, dims checked above), suitably aligned; nothing else
            // refers to the new value yet, and the source is a live Rust slice.
            unsafe {
                ptr::copy_nonoverlapping(data.as_ptr(), dst.as_ptr().cast::<T>(), data.len());
            }
        }
        Ok(value)
    }

    /// A host tensor of element code `elem` and `dims` holding a copy of `bytes` (its
    /// elements, little-endian, as a file stores them), in memory ONNX Runtime owns and
    /// aligns. `bytes` must be exactly the tensor's size; the caller has checked that the
    /// bytes are valid elements of `elem` (bools 0 or 1).
    pub(crate) fn owned_tensor_from_bytes(
        dims: &[i64],
        elem: ONNXTensorElementDataType,
        bytes: &[u8],
    ) -> Result<Value> {
        let value = Value::new_owned_tensor(dims, elem)?;
        let size = value.size_in_bytes()?;
        if size != bytes.len() {
            return Err(Error::Ort {
                context: format!("creating a tensor of dims {dims:?}"),
                message: format!("{} bytes do not fill its {size} bytes", bytes.len()),
            });
        }
        if size > 0 {
            let dst = non_null(value.data_ptr()?, "GetTensorMutableData")?;
            // SAFETY: ONNX Runtime allocated the new tensor's `size` bytes (checked equal to
            // `bytes.len()` above); nothing else refers to it yet, and the source is a live
            // Rust slice that cannot overlap memory ONNX Runtime just allocated.
            unsafe {
                ptr::copy_nonoverlapping(bytes.as_ptr(), dst.as_ptr().cast::<u8>(), size);
            }
        }
        Ok(value)
    }

    /// Copies the `count` elements of a host tensor of `T` into `out` (capacity reused).
    /// The caller has checked the value's element type and count (`tensor_info`).
    pub(crate) fn copy_elements<T: crate::element::Element>(
        &self,
        count: usize,
        out: &mut Vec<T>,
    ) -> Result<()> {
        out.clear();
        if count == 0 {
            return Ok(());
        }
        let src = non_null(self.data_ptr()?, "GetTensorMutableData")?;
        // SAFETY: the caller checked that this live host tensor holds `count` elements of
        // `T` (its element type code and dims); ONNX Runtime's buffer is aligned for them and
        // nothing writes it while `&self` is borrowed; we only read.
        out.extend_from_slice(unsafe {
            std::slice::from_raw_parts(src.as_ptr().cast::<T>(), count)
        });
        Ok(())
    }

    /// What kind of value this is (tensor, sequence, map, optional).
    pub(crate) fn onnx_type(&self) -> Result<ONNXType> {
        let mut out = ONNXType::ONNX_TYPE_UNKNOWN;
        // SAFETY: the value is alive; `out` is a valid out-pointer.
        let status = unsafe { (api().GetValueType)(self.as_ptr(), &mut out) };
        check(status, || "reading a value's type".into())?;
        Ok(out)
    }

    /// Whether the value holds something: false for an optional without a value.
    pub(crate) fn has_value(&self) -> Result<bool> {
        let mut out = 0;
        // SAFETY: the value is alive; `out` is a valid out-pointer.
        let status = unsafe { (api().HasValue)(self.as_ptr(), &mut out) };
        check(status, || {
            "checking whether an optional value is present".into()
        })?;
        Ok(out != 0)
    }

    /// The number of elements of a sequence (2 for a map: its keys and its values).
    pub(crate) fn count(&self) -> Result<usize> {
        let mut out = 0usize;
        // SAFETY: the value is alive; `out` is a valid out-pointer.
        let status = unsafe { (api().GetValueCount)(self.as_ptr(), &mut out) };
        check(status, || {
            "counting the elements of a sequence or map".into()
        })?;
        Ok(out)
    }

    /// Element `index` of a sequence, or (index 0 / 1) a map's keys / values as a tensor.
    /// ONNX Runtime hands out a new reference to a sequence's tensor (no copy of its data)
    /// and copies a map's keys or values into a new tensor.
    pub(crate) fn element(&self, index: usize) -> Result<Value> {
        let allocator = default_allocator()?;
        let i = std::ffi::c_int::try_from(index).map_err(|_| Error::Ort {
            context: format!("reading element {index} of a sequence"),
            message: "the index does not fit in a C int".into(),
        })?;
        let mut out = ptr::null_mut();
        // SAFETY: the value is alive; the allocator is ONNX Runtime's global one; `out` is a
        // valid out-pointer; ONNX Runtime checks the index against the value's length.
        let status = unsafe { (api().GetValue)(self.as_ptr(), i, allocator, &mut out) };
        check(status, || {
            format!("reading element {index} of a sequence or map")
        })?;
        Ok(Value(non_null(out, "GetValue")?))
    }

    /// A sequence (`ONNX_TYPE_SEQUENCE`: of tensors, or of maps) or a map (`ONNX_TYPE_MAP`:
    /// `parts` = keys tensor, values tensor) made of `parts`. ONNX Runtime keeps what it needs
    /// (it copies map entries into its own map, and takes references to tensors: the memory
    /// of a tensor over our own buffer must outlive the result).
    pub(crate) fn compose<'v>(
        parts: impl IntoIterator<Item = &'v Value>,
        kind: ONNXType,
    ) -> Result<Value> {
        let pointers: Vec<*const OrtValue> = parts.into_iter().map(Value::as_ptr).collect();
        let mut out = ptr::null_mut();
        // SAFETY: `pointers` holds `pointers.len()` live value pointers (borrowed from
        // `parts` for the call); `out` is a valid out-pointer.
        let status =
            unsafe { (api().CreateValue)(pointers.as_ptr(), pointers.len(), kind, &mut out) };
        check(status, || {
            format!(
                "creating an ONNX value of type {kind:?} from {} parts",
                pointers.len()
            )
        })?;
        Ok(Value(non_null(out, "CreateValue")?))
    }

    /// Writes `bytes` as element `index` of a string tensor this value owns (ONNX Runtime
    /// resizes its string, reusing its capacity, and we copy into it: no NUL terminator is
    /// needed, so strings holding NUL bytes pass through whole).
    pub(crate) fn set_string(&mut self, index: usize, bytes: &[u8]) -> Result<()> {
        let mut buffer: *mut std::ffi::c_char = ptr::null_mut();
        // SAFETY: the value is a live string tensor we hold (`&mut self`: nothing else writes
        // it now); ONNX Runtime checks `index` and hands back its string's buffer resized to
        // `bytes.len()` bytes; `buffer` is a valid out-pointer.
        let status = unsafe {
            (api().GetResizedStringTensorElementBuffer)(
                self.0.as_ptr(),
                index,
                bytes.len(),
                &mut buffer,
            )
        };
        check(status, || format!("writing string element {index}"))?;
        if !bytes.is_empty() {
            let buffer = non_null(buffer, "GetResizedStringTensorElementBuffer")?;
            // SAFETY: ONNX Runtime resized the element to exactly `bytes.len()` bytes at
            // `buffer`, which it owns and nothing else touches during the copy; the source is a
            // live Rust slice that cannot overlap ONNX Runtime's buffer.
            unsafe {
                ptr::copy_nonoverlapping(bytes.as_ptr(), buffer.as_ptr().cast::<u8>(), bytes.len());
            }
        }
        Ok(())
    }

    /// Reads a string tensor of `count` elements: every string's bytes, concatenated, into
    /// `bytes`, and the start of each in `starts` (capacities are reused).
    pub(crate) fn read_strings(
        &self,
        count: usize,
        bytes: &mut Vec<u8>,
        starts: &mut Vec<usize>,
    ) -> Result<()> {
        let mut total = 0usize;
        // SAFETY: the value is alive; `total` is a valid out-pointer.
        let status = unsafe { (api().GetStringTensorDataLength)(self.as_ptr(), &mut total) };
        check(status, || "reading the length of a string tensor".into())?;
        bytes.clear();
        bytes.resize(total, 0);
        starts.clear();
        starts.resize(count, 0);
        if count == 0 {
            return Ok(());
        }
        // SAFETY: the value is alive; `bytes` holds `total` writable bytes and `starts` holds
        // `count` writable offsets, the lengths we pass; ONNX Runtime checks them against the
        // tensor's element count and content length and writes within them.
        let status = unsafe {
            (api().GetStringTensorContent)(
                self.as_ptr(),
                bytes.as_mut_ptr().cast(),
                total,
                starts.as_mut_ptr(),
                count,
            )
        };
        check(status, || "reading the content of a string tensor".into())
    }
}

impl Drop for Value {
    fn drop(&mut self) {
        // SAFETY: we own one reference to this value and release it exactly once.
        unsafe { (api().ReleaseValue)(self.0.as_ptr()) }
    }
}

/// An `OrtIoBinding` for one session.
#[derive(Debug)]
pub(crate) struct IoBinding {
    ptr: NonNull<OrtIoBinding>,
    session: NonNull<OrtSession>,
    /// On a session whose provider runs on a device (CUDA), ONNX Runtime copies a host
    /// input to the device when it is *bound*, not when the model runs, so a run would
    /// read what the buffer held at bind time. Such inputs are kept here (a second value
    /// over the same memory, by input name) and bound again before every run. `None`:
    /// the session reads host inputs in place.
    recopied: Option<Vec<(CString, Value)>>,
}

// SAFETY: an OrtIoBinding may be used from any thread as long as it is not used from two
// at once; `&mut self` on every mutating method and the absence of `Sync` guarantee that.
unsafe impl Send for IoBinding {}

impl IoBinding {
    /// Creates a binding for `session`. `device_session`: the session runs on a device
    /// provider, which copies host inputs when they are bound (see `recopied`).
    ///
    /// # Safety
    /// `session` must be a live session that outlives the returned binding.
    pub(crate) unsafe fn new(
        session: NonNull<OrtSession>,
        device_session: bool,
    ) -> Result<IoBinding> {
        let mut out = ptr::null_mut();
        // SAFETY: the caller guarantees the session is alive; `out` is a valid out-pointer.
        let status = unsafe { (api().CreateIoBinding)(session.as_ptr(), &mut out) };
        check(status, || "creating an I/O binding".into())?;
        Ok(IoBinding {
            ptr: non_null(out, "CreateIoBinding")?,
            session,
            recopied: device_session.then(Vec::new),
        })
    }

    /// Binds `value` to the input `name`. ONNX Runtime keeps its own reference to the
    /// value (not a copy of the data): the memory under it must outlive the binding.
    pub(crate) fn bind_input(&mut self, name: &CStr, value: &Value) -> Result<()> {
        // SAFETY: binding and value are alive; `name` is NUL-terminated. ORT takes a new
        // reference to the OrtValue, so `value` may be released afterwards; the buffer it
        // views is kept alive by the owner of this binding (see `Value::tensor_over`).
        let status = unsafe { (api().BindInput)(self.ptr.as_ptr(), name.as_ptr(), value.as_ptr()) };
        check(status, || format!("binding input {name:?}"))?;
        if let Some(recopied) = &mut self.recopied {
            recopied.retain(|(bound, _)| bound.as_c_str() != name);
            if value.is_host_tensor()? {
                // SAFETY: `value` is a live tensor value; its memory outlives this binding
                // (the contract above), so it outlives the second value kept with it.
                let alias = unsafe { Value::alias_of(value.as_ptr())? };
                recopied.push((name.to_owned(), alias));
            }
        }
        Ok(())
    }

    /// Binds again the host inputs that a device session copied when they were bound
    /// (see `recopied`), so that the next run reads what they hold now: ONNX Runtime
    /// copies each to the device again. Nothing to do on other sessions.
    fn recopy_host_inputs(&mut self) -> Result<()> {
        let Some(recopied) = &self.recopied else {
            return Ok(());
        };
        for (name, value) in recopied {
            // SAFETY: as in `bind_input`: binding and value are alive, `name` is
            // NUL-terminated, and the memory under the value outlives the binding.
            let status =
                unsafe { (api().BindInput)(self.ptr.as_ptr(), name.as_ptr(), value.as_ptr()) };
            check(status, || format!("copying input {name:?} to the device"))?;
        }
        Ok(())
    }

    /// Unbinds every input, so that one a full bind leaves out (an optional input made
    /// absent) is absent for the next run rather than still bound to its old value.
    pub(crate) fn clear_inputs(&mut self) {
        if let Some(recopied) = &mut self.recopied {
            recopied.clear();
        }
        // SAFETY: the binding is alive; ORT drops its references to the bound values.
        unsafe { (api().ClearBoundInputs)(self.ptr.as_ptr()) }
    }

    /// Binds `value` as the buffer output `name` is written into.
    pub(crate) fn bind_output(&mut self, name: &CStr, value: &Value) -> Result<()> {
        // SAFETY: as for `bind_input`; ORT writes the output into the value's memory.
        let status =
            unsafe { (api().BindOutput)(self.ptr.as_ptr(), name.as_ptr(), value.as_ptr()) };
        check(status, || format!("binding output {name:?}"))
    }

    /// Lets ONNX Runtime allocate output `name` on the device `info` describes, at run time.
    pub(crate) fn bind_output_to_device(&mut self, name: &CStr, info: &MemoryInfo) -> Result<()> {
        // SAFETY: binding and memory info are alive; `name` is NUL-terminated.
        let status =
            unsafe { (api().BindOutputToDevice)(self.ptr.as_ptr(), name.as_ptr(), info.as_ptr()) };
        check(status, || format!("binding output {name:?} to a device"))
    }

    /// Runs the session on the bound values with default run options.
    #[allow(dead_code)] // not every binding kind needs run options
    pub(crate) fn run(&mut self) -> Result<()> {
        self.run_with(None)
    }

    /// Runs the session on the bound values with `options` (`None`: defaults).
    pub(crate) fn run_with(&mut self, options: Option<&RunOptions>) -> Result<()> {
        self.recopy_host_inputs()?;
        let options = options.map_or(ptr::null(), RunOptions::as_ptr);
        // SAFETY: session and binding are alive (the session outlives the binding by the
        // contract of `new`); `options` is null (defaults) or a live run options object
        // borrowed for the call; every bound value views memory its owner keeps alive and
        // does not touch during the run (`&mut self`).
        let status =
            unsafe { (api().RunWithBinding)(self.session.as_ptr(), options, self.ptr.as_ptr()) };
        check(status, || "running the model".into())
    }

    /// The run [`IoBinding::run_with`] would make, handed over as raw handles so that
    /// another thread can make it ([`DetachedRun::run`]): how `run_async` runs on
    /// ort-bind's worker threads where ONNX Runtime's `RunAsync` cannot serve.
    ///
    /// # Safety
    /// Until the returned run has been made ([`DetachedRun::run`] has returned) or dropped
    /// unmade: this binding, its session, `options`, every value bound in it and the memory
    /// under those values must stay alive; nothing else may use the binding, read the
    /// memory of bound outputs or write the memory of bound inputs. On a device session the
    /// host inputs are bound again first, as for [`IoBinding::run_with`].
    pub(crate) unsafe fn detach_run(&mut self, options: &RunOptions) -> Result<DetachedRun> {
        self.recopy_host_inputs()?;
        Ok(DetachedRun {
            session: self.session,
            options: options.0,
            binding: self.ptr,
        })
    }

    /// Calls `take(index, value)` for every bound output, in binding order, with a new
    /// reference to the value ONNX Runtime holds for it after the last run.
    pub(crate) fn bound_outputs(&self, mut take: impl FnMut(usize, Value)) -> Result<()> {
        let api = api();
        let allocator = default_allocator()?;
        let mut values: *mut *mut OrtValue = ptr::null_mut();
        let mut count = 0usize;
        // SAFETY: binding and allocator are alive; out-pointers valid. On success ORT hands us
        // `count` new value references in an array allocated with `allocator`.
        let status = unsafe {
            (api.GetBoundOutputValues)(self.ptr.as_ptr(), allocator, &mut values, &mut count)
        };
        check(status, || "reading bound outputs".into())?;
        if values.is_null() {
            return Ok(());
        }
        for i in 0..count {
            // SAFETY: `values` holds `count` pointers; each is a new reference we now own.
            let raw = unsafe { *values.add(i) };
            if let Some(v) = NonNull::new(raw) {
                take(i, Value(v));
            }
        }
        // SAFETY: the array came from `allocator` and is freed exactly once, after we moved
        // every value reference out of it.
        let status = unsafe { (api.AllocatorFree)(allocator, values.cast()) };
        check(status, || "freeing the bound output array".into())
    }
}

impl Drop for IoBinding {
    fn drop(&mut self) {
        // SAFETY: we own the binding and release it exactly once; the session is still alive.
        unsafe { (api().ReleaseIoBinding)(self.ptr.as_ptr()) }
    }
}

/// A run of an I/O binding made by another thread than its owner's (see
/// [`IoBinding::detach_run`], whose caller keeps every handle alive and untouched until the
/// run has been made).
#[derive(Debug)]
pub(crate) struct DetachedRun {
    session: NonNull<OrtSession>,
    options: NonNull<OrtRunOptions>,
    binding: NonNull<OrtIoBinding>,
}

// SAFETY: the handles are only used by `DetachedRun::run`, on whichever one thread holds the
// run; `detach_run`'s caller guarantees that nothing else uses the binding meanwhile (an
// `OrtIoBinding` may be used from any one thread at a time, as for `IoBinding`'s `Send`),
// and sessions and run options may be used from any thread (`Session` is `Sync`; see
// `RunOptions`'s `Sync`).
unsafe impl Send for DetachedRun {}

impl DetachedRun {
    /// Makes the run (`RunWithBinding`) on the calling thread.
    pub(crate) fn run(self) -> Result<()> {
        // SAFETY: by the contract of `IoBinding::detach_run`, which made `self`: session,
        // options, binding and every bound value and its memory are alive and used by
        // nobody else until this call returns; the run is made once (`self` is consumed).
        let status = unsafe {
            (api().RunWithBinding)(
                self.session.as_ptr(),
                self.options.as_ptr(),
                self.binding.as_ptr(),
            )
        };
        check(status, || "running the model".into())
    }
}

/// An `OrtRunOptions`, owned by us.
#[derive(Debug)]
pub(crate) struct RunOptions(NonNull<OrtRunOptions>);

// SAFETY: run options are configured (`AddRunConfigEntry`) once, before they are shared;
// afterwards the only changes are `RunOptionsSetTerminate`/`RunOptionsUnsetTerminate`, which
// ONNX Runtime documents as the way for another thread to stop runs that use the options
// (its runs read the flag between kernels). ort-bind serialises its own calls of the two
// (`cancel::RunControl` holds a lock around them), so moving or sharing the handle across
// threads is sound.
unsafe impl Send for RunOptions {}
// SAFETY: see `Send`.
unsafe impl Sync for RunOptions {}

impl RunOptions {
    /// Run options with the given `config` entries (`AddRunConfigEntry` keys and values).
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    pub(crate) fn with_config(config: &[(&CStr, &CStr)]) -> Result<RunOptions> {
        let mut out = ptr::null_mut();
        // SAFETY: `out` is a valid out-pointer.
        let status = unsafe { (api().CreateRunOptions)(&mut out) };
        check(status, || "creating run options".into())?;
        let options = RunOptions(non_null(out, "CreateRunOptions")?);
        for (key, value) in config {
            // SAFETY: the options are alive and not shared yet; key and value are
            // NUL-terminated strings that outlive the call (ONNX Runtime copies them).
            let status = unsafe {
                (api().AddRunConfigEntry)(options.0.as_ptr(), key.as_ptr(), value.as_ptr())
            };
            check(status, || {
                format!("setting run option {key:?} to {value:?}")
            })?;
        }
        Ok(options)
    }

    fn as_ptr(&self) -> *const OrtRunOptions {
        self.0.as_ptr()
    }

    /// Asks every run using these options to stop as soon as possible (between kernels);
    /// runs started while the flag is set stop at once.
    pub(crate) fn set_terminate(&self) -> Result<()> {
        // SAFETY: the options are alive; ONNX Runtime documents this call as safe while runs
        // that use the options are in progress on other threads (it sets the flag they poll).
        let status = unsafe { (api().RunOptionsSetTerminate)(self.0.as_ptr()) };
        check(status, || "terminating a run".into())
    }

    /// Clears the flag [`RunOptions::set_terminate`] set, so later runs proceed.
    pub(crate) fn unset_terminate(&self) -> Result<()> {
        // SAFETY: as for `set_terminate`; only ever called when no run uses the options.
        let status = unsafe { (api().RunOptionsUnsetTerminate)(self.0.as_ptr()) };
        check(status, || "clearing a run's terminate flag".into())
    }
}

impl Drop for RunOptions {
    fn drop(&mut self) {
        // SAFETY: we own the run options and release them exactly once.
        unsafe { (api().ReleaseRunOptions)(self.0.as_ptr()) }
    }
}

/// The arrays `RunAsync` reads and writes: input names and values, output names and values,
/// in binding order. They live in the binding (heap memory, so moving the binding moves no
/// array) and are filled when it binds; value pointers are borrowed from the binding's
/// tensors, except the outputs ONNX Runtime allocates, whose slots are null before a run
/// and hold a new value reference (owned here) after it.
#[derive(Debug, Default)]
pub(crate) struct RunArgs {
    input_names: Vec<*const std::ffi::c_char>,
    input_values: Vec<*const OrtValue>,
    // Position of input `i` (model order) in the arrays above.
    input_pos: Vec<Option<usize>>,
    output_names: Vec<*const std::ffi::c_char>,
    output_values: Vec<*mut OrtValue>,
    // Whether the output at a position is allocated by ONNX Runtime (its slot is reset to
    // null before each run, and what ONNX Runtime writes there is owned by us).
    output_allocated: Vec<bool>,
    output_pos: Vec<Option<usize>>,
}

// SAFETY: the pointers are names and values owned by the binding that owns this struct (and
// moves with it); they are only read by ONNX Runtime during a run the binding waits for, and
// the owned output references are plain reference-counted handles, `Send` like `Value`.
unsafe impl Send for RunArgs {}

impl RunArgs {
    /// Arrays for `inputs` inputs and `outputs` outputs; nothing allocates after this.
    pub(crate) fn with_capacity(inputs: usize, outputs: usize) -> RunArgs {
        RunArgs {
            input_names: Vec::with_capacity(inputs),
            input_values: Vec::with_capacity(inputs),
            input_pos: vec![None; inputs],
            output_names: Vec::with_capacity(outputs),
            output_values: Vec::with_capacity(outputs),
            output_allocated: Vec::with_capacity(outputs),
            output_pos: vec![None; outputs],
        }
    }

    /// Forgets every recorded value (before binding everything again), releasing output
    /// values ONNX Runtime allocated that nobody took.
    pub(crate) fn clear(&mut self) {
        if self.output_allocated.contains(&true) {
            self.release_allocated();
        }
        self.input_names.clear();
        self.input_values.clear();
        self.input_pos.iter_mut().for_each(|p| *p = None);
        self.output_names.clear();
        self.output_values.clear();
        self.output_allocated.clear();
        self.output_pos.iter_mut().for_each(|p| *p = None);
    }

    /// Records `value` as input `index` named `name`. The name and the value must stay
    /// alive and in place until the record is cleared or replaced (the binding's names and
    /// tensors do: they change only through `Binding`, which records again).
    pub(crate) fn record_input(&mut self, index: usize, name: &CStr, value: &Value) {
        record(
            &mut self.input_pos,
            &mut self.input_names,
            &mut self.input_values,
            index,
            name,
            value.as_ptr(),
        );
    }

    /// Records `value` as the buffer of output `index`, or (`None`) that ONNX Runtime
    /// allocates it. Same lifetime rule as [`RunArgs::record_input`].
    pub(crate) fn record_output(&mut self, index: usize, name: &CStr, value: Option<&Value>) {
        let ptr = value.map_or(ptr::null_mut(), |v| v.as_ptr().cast_mut());
        let pos = record(
            &mut self.output_pos,
            &mut self.output_names,
            &mut self.output_values,
            index,
            name,
            ptr,
        );
        if let Some(pos) = pos {
            if pos == self.output_allocated.len() {
                self.output_allocated.push(value.is_none());
            } else {
                self.output_allocated[pos] = value.is_none();
            }
        }
    }

    /// The value recorded for input (`output == false`) or output `index`, if any (null
    /// for an output ONNX Runtime allocates that no run has produced).
    pub(crate) fn recorded(&self, output: bool, index: usize) -> Option<*const OrtValue> {
        if output {
            let pos = (*self.output_pos.get(index)?)?;
            self.output_values.get(pos).map(|v| v.cast_const())
        } else {
            let pos = (*self.input_pos.get(index)?)?;
            self.input_values.get(pos).copied()
        }
    }

    /// The number of recorded outputs (positions `0..n`, in binding order).
    pub(crate) fn output_count(&self) -> usize {
        self.output_values.len()
    }

    /// Takes the value ONNX Runtime allocated for the output at `pos` in the last run.
    pub(crate) fn take_allocated(&mut self, pos: usize) -> Option<Value> {
        if !self.output_allocated.get(pos).copied().unwrap_or(false) {
            return None;
        }
        let raw = std::mem::replace(&mut self.output_values[pos], ptr::null_mut());
        NonNull::new(raw).map(Value)
    }

    /// Releases (and resets to null) every allocated output value nobody took.
    pub(crate) fn release_allocated(&mut self) {
        for pos in 0..self.output_values.len() {
            drop(self.take_allocated(pos));
        }
    }
}

/// Records `(name, value)` at the position of model index `index` (appending the first time);
/// returns the position, or `None` for an index out of range.
fn record<P>(
    positions: &mut [Option<usize>],
    names: &mut Vec<*const std::ffi::c_char>,
    values: &mut Vec<P>,
    index: usize,
    name: &CStr,
    value: P,
) -> Option<usize> {
    let slot = positions.get_mut(index)?;
    match *slot {
        Some(pos) => {
            names[pos] = name.as_ptr();
            values[pos] = value;
            Some(pos)
        }
        None => {
            let pos = names.len();
            names.push(name.as_ptr());
            values.push(value);
            *slot = Some(pos);
            Some(pos)
        }
    }
}

/// What `RunAsync`'s callback reports to: the run's result, exactly once, from a thread of
/// the session's intra-op pool (the serving layer's completion implements it; `sys` names
/// no layer above it).
pub(crate) trait RunCompletion: Send + Sync {
    /// Receives the run's result.
    fn complete(&self, result: Result<()>);
}

/// Starts `RunAsync` on `session` over `args`; ONNX Runtime runs it on a thread of the
/// session's intra-op pool and then calls [`RunCompletion::complete`] on `completion`,
/// exactly once, from that thread. When this returns an error the run did
/// not start and `completion` is not called.
///
/// # Safety
/// Until `completion` has been completed: the session, `options`, the arrays of `args`, and
/// every name and value recorded in them must stay alive and unmoved; nothing else may read
/// the memory of recorded outputs or write the memory of recorded inputs; `args` must not
/// be touched (ONNX Runtime writes allocated outputs into it).
pub(crate) unsafe fn run_async<C: RunCompletion>(
    session: NonNull<OrtSession>,
    options: &RunOptions,
    args: &mut RunArgs,
    completion: std::sync::Arc<C>,
) -> Result<()> {
    // Allocated outputs start as null: ONNX Runtime allocates a value for each null slot.
    args.release_allocated();
    let user_data = std::sync::Arc::into_raw(completion);
    // SAFETY: the caller keeps the session, options, arrays, names and values alive and
    // untouched until the callback (see `# Safety`); lengths are the arrays' own; the
    // callback matches `RunAsyncCallbackFn` and takes back the `Arc` leaked into `user_data`.
    let status = unsafe {
        (api().RunAsync)(
            session.as_ptr(),
            options.as_ptr(),
            args.input_names.as_ptr(),
            args.input_values.as_ptr(),
            args.input_values.len(),
            args.output_names.as_ptr(),
            args.output_names.len(),
            args.output_values.as_mut_ptr(),
            Some(run_async_done::<C>),
            user_data.cast_mut().cast(),
        )
    };
    let started = check(status, || {
        "starting an asynchronous run (`RunAsync`)".into()
    });
    if started.is_err() {
        // SAFETY: ONNX Runtime does not call the callback when `RunAsync` fails, so the
        // reference leaked above is still ours; it is taken back exactly once.
        drop(unsafe { std::sync::Arc::from_raw(user_data) });
    }
    started
}

/// `RunAsync`'s callback: reports the run's status to the completion in `user_data`.
unsafe extern "C" fn run_async_done<C: RunCompletion>(
    user_data: *mut c_void,
    _outputs: *mut *mut OrtValue,
    _count: usize,
    status: OrtStatusPtr,
) {
    // SAFETY: `user_data` is the `Arc<C>` leaked by `run_async::<C>` for this run (this
    // callback was instantiated for the same `C`); ONNX Runtime calls it exactly once per
    // started run, so it is taken back exactly once.
    let completion = unsafe { std::sync::Arc::from_raw(user_data.cast_const().cast::<C>()) };
    // The outputs ONNX Runtime allocated are in the output array it was given (`_outputs`
    // is that array); the binding takes them after it sees the completion.
    completion.complete(check(status, || "running the model asynchronously".into()));
}

/// Names of the execution providers the loaded ONNX Runtime library was built with
/// (`GetAvailableProviders`), e.g. `["CPUExecutionProvider"]` for the CPU-only wheel.
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
pub(crate) fn available_providers() -> Result<Vec<String>> {
    let api = api();
    let mut names: *mut *mut std::ffi::c_char = ptr::null_mut();
    let mut count: std::ffi::c_int = 0;
    // SAFETY: both out-pointers are valid; on success ONNX Runtime hands us an array of
    // `count` NUL-terminated strings that we release below with the matching call.
    let status = unsafe { (api.GetAvailableProviders)(&mut names, &mut count) };
    check(status, || "listing the execution providers".into())?;
    if names.is_null() {
        return Ok(Vec::new());
    }
    let count_usize = usize::try_from(count).unwrap_or(0);
    let mut out = Vec::with_capacity(count_usize);
    for i in 0..count_usize {
        // SAFETY: `names` holds `count` pointers, each to a NUL-terminated string alive
        // until `ReleaseAvailableProviders`; we copy each out first.
        let name = unsafe { *names.add(i) };
        if !name.is_null() {
            // SAFETY: see above.
            out.push(
                unsafe { CStr::from_ptr(name) }
                    .to_string_lossy()
                    .into_owned(),
            );
        }
    }
    // SAFETY: the array and count are exactly what `GetAvailableProviders` returned; it is
    // released once, after the last read.
    let status = unsafe { (api.ReleaseAvailableProviders)(names, count) };
    check(status, || "releasing the execution provider list".into())?;
    Ok(out)
}

/// Appends ONNX Runtime's CUDA execution provider on device `device_id` to `options`;
/// with `stream`, the provider runs every kernel and copy on that CUDA stream (its
/// "user compute stream") instead of a stream of its own. `tf32`: whether float32 matrix
/// products may use TensorFloat-32 (`None`: ONNX Runtime's default).
///
/// # Safety
/// `options` must be a live `OrtSessionOptions`. A non-null `stream` must be a CUDA stream
/// (`CUstream`) of device `device_id` that stays alive for as long as any session created
/// from `options` exists.
#[cfg(feature = "cuda")]
pub(crate) unsafe fn append_cuda_provider(
    options: *mut ort_sys::OrtSessionOptions,
    device_id: i32,
    stream: Option<NonNull<c_void>>,
    tf32: Option<bool>,
) -> Result<()> {
    let api = api();
    let mut cuda = ptr::null_mut();
    // SAFETY: `cuda` is a valid out-pointer.
    let status = unsafe { (api.CreateCUDAProviderOptions)(&mut cuda) };
    check(status, || "creating CUDA provider options".into())?;
    let cuda = non_null(cuda, "CreateCUDAProviderOptions")?;
    struct Release(NonNull<ort_sys::OrtCUDAProviderOptionsV2>);
    impl Drop for Release {
        fn drop(&mut self) {
            // SAFETY: created above, released exactly once (ONNX Runtime copies the options
            // into the session options when the provider is appended).
            unsafe { (crate::sys::api().ReleaseCUDAProviderOptions)(self.0.as_ptr()) }
        }
    }
    let cuda = Release(cuda);
    let device = std::ffi::CString::new(device_id.to_string()).unwrap_or_default();
    let mut keys = vec![c"device_id".as_ptr()];
    let mut values = vec![device.as_ptr()];
    if let Some(tf32) = tf32 {
        keys.push(c"use_tf32".as_ptr());
        values.push(if tf32 { c"1" } else { c"0" }.as_ptr());
    }
    // SAFETY: the options are alive; `keys`/`values` hold `keys.len()` NUL-terminated
    // strings each, alive for the call.
    let status = unsafe {
        (api.UpdateCUDAProviderOptions)(cuda.0.as_ptr(), keys.as_ptr(), values.as_ptr(), keys.len())
    };
    check(status, || {
        format!("setting the CUDA provider options (device id {device_id}, TF32 {tf32:?})")
    })?;
    if let Some(stream) = stream {
        // SAFETY: the options are alive; `user_compute_stream` takes a `cudaStream_t`
        // (the same handle as the driver's `CUstream`), which the caller keeps alive for the
        // life of every session built from these options. Setting it also sets
        // `has_user_compute_stream`.
        let status = unsafe {
            (api.UpdateCUDAProviderOptionsWithValue)(
                cuda.0.as_ptr(),
                c"user_compute_stream".as_ptr(),
                stream.as_ptr(),
            )
        };
        check(status, || {
            "setting the CUDA provider's compute stream".into()
        })?;
    }
    // SAFETY: `options` is live (caller's contract) and `cuda` is a valid provider options
    // object; ONNX Runtime copies what it needs.
    let status =
        unsafe { (api.SessionOptionsAppendExecutionProvider_CUDA_V2)(options, cuda.0.as_ptr()) };
    check(status, || {
        format!("adding the CUDA execution provider on device {device_id}")
    })
}
