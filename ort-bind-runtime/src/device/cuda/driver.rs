//! Every raw call into the CUDA driver that ort-bind makes, and nothing else: the CUDA
//! analogue of `sys.rs` (ONNX Runtime's C API).
//!
//! This is the only file with driver `unsafe`: probing and loading `libcuda`, pointer
//! attributes, adopting foreign device memory, allocating pinned memory, and the
//! asynchronous copies that take raw addresses. It reaches the driver through `cudarc`'s
//! `sys` and `result` layers (and the few `unsafe` methods of its safe layer); every
//! function here is a safe wrapper whose types carry the invariant the `unsafe` relies on,
//! except [`adopt_device_ptr`] and [`DeviceSrc::new`], whose callers state it. The rest
//! of the CUDA code uses `cudarc`'s safe layer and these wrappers only.
//!
//! Errors come back as `cudarc`'s [`DriverError`]; the error layer (`error.rs`) turns them
//! into ort-bind's [`Error`]. The driver probe ([`check`]) reports its own findings, since
//! nothing can be asked of a driver that is not there.

use std::ffi::c_void;
use std::marker::PhantomData;
use std::panic::catch_unwind;
use std::sync::{Arc, OnceLock};

use cudarc::driver::result as cu_result;
use cudarc::driver::sys as cu;
use cudarc::driver::{
    CudaContext, CudaSlice, CudaStream, CudaViewMut, DevicePtrMut, DriverError, HostSlice,
    PinnedHostSlice,
};

use crate::element::Element;
use crate::error::{CudaErrorKind, Error, Result};

/// Driver entry points ort-bind's CUDA path reaches (through `cudarc`). `cudarc` loads
/// each lazily and panics when one is missing, so they are all looked up once, up front,
/// and a driver that lacks one is reported as too old.
const REQUIRED_SYMBOLS: &[&str] = &[
    "cuInit",
    "cuGetErrorName",
    "cuGetErrorString",
    "cuDeviceGet",
    "cuDeviceGetCount",
    "cuDeviceGetAttribute",
    "cuDevicePrimaryCtxRetain",
    "cuDevicePrimaryCtxRelease_v2",
    "cuCtxGetCurrent",
    "cuCtxSetCurrent",
    "cuCtxSynchronize",
    "cuStreamCreate",
    "cuStreamDestroy_v2",
    "cuStreamSynchronize",
    "cuStreamWaitEvent",
    "cuEventCreate",
    "cuEventRecord",
    "cuEventSynchronize",
    "cuEventDestroy_v2",
    "cuMemAlloc_v2",
    "cuMemAllocAsync",
    "cuMemFree_v2",
    "cuMemFreeAsync",
    "cuMemHostAlloc",
    "cuMemFreeHost",
    "cuMemcpyHtoDAsync_v2",
    "cuMemcpyDtoHAsync_v2",
    "cuMemcpyDtoDAsync_v2",
    "cuMemsetD8Async",
    "cuPointerGetAttribute",
];

/// Checks, once per process, that a CUDA driver can be loaded and initialised.
pub(crate) fn check() -> Result<()> {
    static STATE: OnceLock<std::result::Result<(), (CudaErrorKind, String)>> = OnceLock::new();
    STATE
        .get_or_init(probe)
        .clone()
        .map_err(|(kind, message)| Error::Cuda { kind, message })
}

fn probe() -> std::result::Result<(), (CudaErrorKind, String)> {
    let no_driver = |message: String| (CudaErrorKind::NoDriver, message);
    // SAFETY: only tries to open the driver library under its usual names.
    if !unsafe { cu::is_culib_present() } {
        return Err(no_driver(
            "the CUDA driver library (libcuda.so.1) could not be loaded: this machine has no \
             NVIDIA driver, or the library is not on the dynamic loader's path"
                .into(),
        ));
    }
    // SAFETY: `culib` opens the library found above and keeps it for the process; it only
    // panics when no candidate loads, which was just ruled out (and is caught regardless).
    let lib = catch_unwind(|| unsafe { cu::culib() })
        .map_err(|_| no_driver("the CUDA driver library could not be loaded".into()))?;
    for symbol in REQUIRED_SYMBOLS {
        // SAFETY: only looks the symbol up; the pointer is not called here.
        if unsafe { lib.get::<*const c_void>(symbol.as_bytes()) }.is_err() {
            return Err(no_driver(format!(
                "the CUDA driver is too old: it has no `{symbol}` (ort-bind needs a driver \
                 for CUDA 12)"
            )));
        }
    }
    match catch_unwind(cu_result::init) {
        Err(_) => Err(no_driver("initialising the CUDA driver panicked".into())),
        Ok(Err(e)) if e.0 == cu::CUresult::CUDA_ERROR_NO_DEVICE => Err((
            CudaErrorKind::NoDevice,
            format!("the CUDA driver found no device ({})", describe_loaded(&e)),
        )),
        Ok(Err(e)) => Err(no_driver(format!(
            "initialising the CUDA driver failed: {}",
            describe_loaded(&e)
        ))),
        Ok(Ok(())) => Ok(()),
    }
}

/// The error's code and, when the driver is loaded, its description. (`DriverError`'s
/// own `Display` asks the driver, and `cudarc` panics when there is none.)
pub(crate) fn describe(e: &DriverError) -> String {
    if check().is_ok() {
        describe_loaded(e)
    } else {
        format!("{:?}", e.0)
    }
}

/// As [`describe`], for when the driver library is known to be loaded.
fn describe_loaded(e: &DriverError) -> String {
    match catch_unwind(|| e.error_string().map(|s| s.to_string_lossy().into_owned())) {
        Ok(Ok(text)) => format!("{:?}: {text}", e.0),
        _ => format!("{:?}", e.0),
    }
}

/// The number of CUDA devices the driver reports (after [`check`]).
pub(crate) fn device_count() -> std::result::Result<i32, DriverError> {
    cu_result::device::get_count()
}

/// What kind of memory `ptr` is (`CU_POINTER_ATTRIBUTE_MEMORY_TYPE`); an error for an
/// address the driver does not know. Needs a current context.
pub(crate) fn pointer_memory_type(ptr: u64) -> std::result::Result<u32, DriverError> {
    let mut mem_type: u32 = 0;
    // SAFETY: `mem_type` is a valid out-pointer for this attribute (an unsigned int); the
    // driver accepts any address and reports unknown ones as an error.
    let status = unsafe {
        cu::cuPointerGetAttribute(
            (&mut mem_type as *mut u32).cast(),
            cu::CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
            ptr,
        )
    };
    if status != cu::CUresult::CUDA_SUCCESS {
        return Err(DriverError(status));
    }
    Ok(mem_type)
}

/// Whether a [`pointer_memory_type`] is device memory.
pub(crate) fn is_device_memory(mem_type: u32) -> bool {
    mem_type == cu::CUmemorytype::CU_MEMORYTYPE_DEVICE as u32
}

/// The ordinal of the device `ptr` belongs to (`CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL`).
pub(crate) fn pointer_device_ordinal(ptr: u64) -> std::result::Result<i32, DriverError> {
    let mut ordinal: i32 = -1;
    // SAFETY: `ordinal` is a valid out-pointer for this attribute (an int).
    let status = unsafe {
        cu::cuPointerGetAttribute(
            (&mut ordinal as *mut i32).cast(),
            cu::CUpointer_attribute::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
            ptr,
        )
    };
    if status != cu::CUresult::CUDA_SUCCESS {
        return Err(DriverError(status));
    }
    Ok(ordinal)
}

/// A `cudarc` slice over device memory another framework owns, on `stream`.
///
/// # Safety
/// `ptr` addresses `len` elements of `T` in device memory of `stream`'s device, valid in
/// its context, owned by someone else and kept allocated until the slice is gone. The
/// slice must never be dropped (that would free the memory): leak it
/// ([`CudaSlice::leak`]), as `CudaBuffer` does for adopted memory.
pub(crate) unsafe fn adopt_device_ptr<T>(
    stream: &Arc<CudaStream>,
    ptr: u64,
    len: usize,
) -> CudaSlice<T> {
    // SAFETY: the caller's contract above is `upgrade_device_ptr`'s.
    unsafe { stream.upgrade_device_ptr::<T>(ptr, len) }
}

/// `len` (already at least one) elements of plain page-locked memory in `ctx` (flags 0,
/// not write-combined: the host reads outputs back), zeroed before anyone can read them.
pub(crate) fn alloc_pinned_zeroed<T: Element>(
    ctx: &Arc<CudaContext>,
    len: usize,
) -> std::result::Result<PinnedHostSlice<T>, PinnedAllocError> {
    // SAFETY: the memory is uninitialised until it is zeroed below, before it is returned.
    let mut slice =
        unsafe { ctx.alloc_pinned_with_flags::<T>(len, 0) }.map_err(PinnedAllocError::Alloc)?;
    slice
        .as_mut_slice()
        .map_err(PinnedAllocError::Zero)?
        .fill(T::default());
    Ok(slice)
}

/// Which step of [`alloc_pinned_zeroed`] failed.
#[derive(Debug)]
pub(crate) enum PinnedAllocError {
    /// Allocating the memory.
    Alloc(DriverError),
    /// Zeroing it (waiting for its event).
    Zero(DriverError),
}

/// `len` elements of `T` in device memory, borrowed for `'a`: the source of a copy made
/// from a raw device address (a tensor's, which may be memory ONNX Runtime allocated, so
/// there is no `cudarc` view of it).
#[derive(Debug, Clone, Copy)]
pub(crate) struct DeviceSrc<'a, T> {
    ptr: u64,
    len: usize,
    _borrow: PhantomData<&'a [T]>,
}

impl<T> DeviceSrc<'_, T> {
    /// # Safety
    /// For `'a`, `ptr` addresses `len` initialised elements of `T` in device memory that
    /// stays allocated, and ort-bind and ONNX Runtime write or free it only in work
    /// enqueued on the stream the copies taking this source are enqueued on (the tensor's
    /// device stream), so a copy enqueued there reads it before any later write.
    pub(crate) unsafe fn new(ptr: u64, len: usize) -> Self {
        DeviceSrc {
            ptr,
            len,
            _borrow: PhantomData,
        }
    }
}

/// Enqueues a copy of the first `dst.len()` elements of the pinned slice `src` into `dst`
/// on `stream`. Host writes to `src` through its accessors wait for the copy (the guard
/// records `src`'s event after it). Panics if `src` is shorter than `dst`. The stream's
/// context must be current.
pub(crate) fn copy_pinned_to_device<T>(
    stream: &Arc<CudaStream>,
    src: &PinnedHostSlice<T>,
    dst: &mut CudaViewMut<'_, T>,
) -> std::result::Result<(), DriverError> {
    let len = dst.len();
    // SAFETY: the host slice is used with `stream` only (the copy below), and the returned
    // guard records the pinned buffer's event after the copy, so host writes through
    // ort-bind wait for it.
    let (host, record) = unsafe { src.stream_synced_slice(stream) };
    let (dst, record_dst) = dst.device_ptr_mut(stream);
    // SAFETY: `dst` addresses `len` elements of `T` on this device (the view);
    // `host[..len]` is pinned memory that stays allocated until the event the guard
    // records has completed (`PinnedHostSlice` waits for it on drop).
    let r = unsafe { cu_result::memcpy_htod_async(dst, &host[..len], stream.cu_stream()) };
    drop(record_dst);
    drop(record);
    r
}

/// Enqueues a device-to-device copy of `src` into `dst` on `stream`; panics if the lengths
/// differ. The stream's context must be current.
pub(crate) fn copy_device_to_device<T>(
    stream: &Arc<CudaStream>,
    src: DeviceSrc<'_, T>,
    dst: &mut CudaViewMut<'_, T>,
) -> std::result::Result<(), DriverError> {
    assert_eq!(src.len, dst.len(), "device copy between different lengths");
    let bytes = src.len * size_of::<T>();
    let (dst, record) = dst.device_ptr_mut(stream);
    // SAFETY: both addresses hold `src.len` elements of `T` on this device (`src` by its
    // contract, `dst` is the view); the copy is ordered on `stream`, where every other use
    // of both buffers by ort-bind and ONNX Runtime is enqueued.
    let r = unsafe { cu_result::memcpy_dtod_async(dst, src.ptr, bytes, stream.cu_stream()) };
    drop(record);
    r
}

/// Copies `src` into host memory `dst` on `stream` and waits for the copy; panics if the
/// lengths differ. The stream's context must be current.
pub(crate) fn copy_device_to_host<T>(
    stream: &Arc<CudaStream>,
    src: DeviceSrc<'_, T>,
    dst: &mut [T],
) -> std::result::Result<(), DriverError> {
    assert_eq!(src.len, dst.len(), "host copy between different lengths");
    // SAFETY: `src` addresses `len` elements of `T` on this device, alive for the call by
    // its contract; `dst` has exactly that many; the stream is synchronized below before
    // `dst`'s borrow ends, so the copy never outlives it.
    let r = unsafe { cu_result::memcpy_dtoh_async(dst, src.ptr, stream.cu_stream()) };
    r.and_then(|()| stream.synchronize())
}

/// Enqueues a copy of `src` into the start of the pinned slice `dst` on `stream`;
/// `dst`'s host accessors wait for it. Panics if `dst` is shorter than `src`. The
/// stream's context must be current.
pub(crate) fn copy_device_to_pinned<T>(
    stream: &Arc<CudaStream>,
    src: DeviceSrc<'_, T>,
    dst: &mut PinnedHostSlice<T>,
) -> std::result::Result<(), DriverError> {
    // SAFETY: the host slice is used with `stream` only; the guard records the pinned
    // slice's event after the copy, and the slice's host accessors wait for that event.
    let (host, record) = unsafe { dst.stream_synced_mut_slice(stream) };
    // SAFETY: the source holds `len` elements of `T` on this device, alive for `'a`, and
    // ONNX Runtime cannot overwrite it before the copy completes: the next run is enqueued
    // on the same stream, after it (the source's contract). `host[..len]` is pinned memory
    // that `PinnedHostSlice` keeps allocated until the recorded event has completed.
    let r =
        unsafe { cu_result::memcpy_dtoh_async(&mut host[..src.len], src.ptr, stream.cu_stream()) };
    drop(record);
    r
}
