//! CUDA devices through `cudarc` (the `cuda` feature).
//!
//! [`Cuda<N>`] is CUDA device `N` together with the stream every operation on it is
//! enqueued on: allocations, copies, and the runs of sessions built with
//! [`SessionOptions::cuda`](crate::SessionOptions::cuda), which hand that stream to ONNX
//! Runtime as its "user compute stream". Work a caller enqueues on the same stream
//! before and after a run is ordered with it; no device-wide synchronization happens.
//!
//! A tensor on `Cuda<N>` is backed by a [`CudaSlice`]: one ort-bind allocates
//! ([`Tensor::new_in`], or a binding made with `bind_on`), one the caller hands over
//! ([`Tensor::from_cuda_slice`]), or memory another framework owns, adopted with the
//! `unsafe` [`Tensor::from_raw_device_ptr`]. Inputs are written in place by the caller's
//! kernels ([`TensorMut::cuda_view_mut`](crate::TensorMut::cuda_view_mut)) or by explicit
//! copies ([`TensorMut::copy_from_host`](crate::TensorMut::copy_from_host)); outputs are
//! read in place ([`TensorRef::cuda_view`](crate::TensorRef::cuda_view),
//! [`TensorRef::device_ptr`](crate::TensorRef::device_ptr)) or copied out
//! ([`TensorRef::copy_to_host`](crate::TensorRef::copy_to_host)).
//!
//! # Stream order
//! Everything ort-bind does with a `Cuda<N>` tensor is enqueued on the device's stream,
//! [`Cuda::stream`]. Work on other streams must be ordered with it by the caller (for
//! example `other.join(device.stream())`), as with any CUDA memory.
//!
//! # Errors, not panics
//! `cudarc` loads the driver at run time and panics where it is missing; every entry
//! point here first checks the driver ([`CudaErrorKind::NoDriver`]), the device
//! ([`CudaErrorKind::NoDevice`]) and the memory's device and stream
//! ([`CudaErrorKind::WrongDevice`]), and reports allocation failures as
//! [`Error::OutOfMemory`].

use std::any::Any;
use std::ffi::c_void;
use std::fmt;
use std::mem::ManuallyDrop;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr::NonNull;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::result as cu_result;
use cudarc::driver::sys as cu;
use cudarc::driver::{
    CudaContext, CudaSlice, CudaStream, CudaView, CudaViewMut, DevicePtr, DevicePtrMut,
    DriverError, HostSlice, PinnedHostSlice,
};
use ort::AsPointer;
use ort::sys::OrtMemType;

use super::pinned::CudaPinned;
use super::private::DeviceImpl;
use super::{Device, HostDevice};
use crate::element::Element;
use crate::error::{CudaErrorKind, Error, Result};
use crate::library;
use crate::session::Session;
use crate::shape::Shape;
use crate::sys::{self, MemoryInfo, RunOptions};
use crate::tensor::{Tensor, TensorMut, TensorRef};

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
pub(crate) fn driver() -> Result<()> {
    static STATE: OnceLock<std::result::Result<(), (CudaErrorKind, String)>> = OnceLock::new();
    STATE
        .get_or_init(probe_driver)
        .clone()
        .map_err(|(kind, message)| Error::Cuda { kind, message })
}

fn probe_driver() -> std::result::Result<(), (CudaErrorKind, String)> {
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
fn describe(e: &DriverError) -> String {
    if driver().is_ok() {
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

/// An error of the driver while doing `what`, with the kind its code says.
pub(crate) fn driver_error(e: DriverError, what: &str) -> Error {
    use cu::CUresult as R;
    let kind = match e.0 {
        R::CUDA_ERROR_NO_DEVICE | R::CUDA_ERROR_INVALID_DEVICE => CudaErrorKind::NoDevice,
        R::CUDA_ERROR_NOT_INITIALIZED
        | R::CUDA_ERROR_DEINITIALIZED
        | R::CUDA_ERROR_STUB_LIBRARY
        | R::CUDA_ERROR_SYSTEM_DRIVER_MISMATCH
        | R::CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE => CudaErrorKind::NoDriver,
        R::CUDA_ERROR_OUT_OF_MEMORY => CudaErrorKind::OutOfMemory,
        R::CUDA_ERROR_INVALID_CONTEXT | R::CUDA_ERROR_CONTEXT_IS_DESTROYED => {
            CudaErrorKind::WrongDevice
        }
        _ => CudaErrorKind::Driver,
    };
    Error::Cuda {
        kind,
        message: format!("{what}: {}", describe(&e)),
    }
}

/// An allocation failure: [`Error::OutOfMemory`] when the device is out of memory.
pub(crate) fn alloc_error(e: DriverError, bytes: usize, device: &str) -> Error {
    if e.0 == cu::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
        Error::OutOfMemory {
            tensor: String::new(),
            bytes,
            device: device.to_owned(),
        }
    } else {
        driver_error(e, &format!("allocating {bytes} bytes on {device}"))
    }
}

/// The CUDA problem an ONNX Runtime message reports, if it reports one.
fn classify_ort_message(message: &str) -> Option<CudaErrorKind> {
    let m = message.to_ascii_lowercase();
    if m.contains("out of memory") || m.contains("failed to allocate memory") {
        Some(CudaErrorKind::OutOfMemory)
    } else if m.contains("no cuda-capable device") || m.contains("invalid device ordinal") {
        Some(CudaErrorKind::NoDevice)
    } else if m.contains("driver version is insufficient")
        || m.contains("cuda driver version")
        || m.contains("forward compatibility")
    {
        Some(CudaErrorKind::NoDriver)
    } else if m.contains("onnxruntime_providers_cuda")
        || m.contains("libcudnn")
        || m.contains("libcublas")
        || m.contains("libcudart")
        || m.contains("libcufft")
    {
        Some(CudaErrorKind::NoExecutionProvider)
    } else {
        None
    }
}

/// Turns an ONNX Runtime error of a CUDA session into [`Error::Cuda`] when its message
/// names a CUDA problem (out of memory, no device, old driver, missing CUDA libraries).
pub(crate) fn classify_ort_error(e: Error) -> Error {
    match e {
        Error::Ort { context, message } => match classify_ort_message(&message) {
            Some(kind) => Error::Cuda {
                kind,
                message: format!("ONNX Runtime failed while {context}: {message}"),
            },
            None => Error::Ort { context, message },
        },
        other => other,
    }
}

/// Runs `f`, turning a panic inside `cudarc` into an error (it panics on a missing driver
/// symbol, which [`driver`] rules out beforehand, and when it cannot create an event).
pub(crate) fn no_panic<R>(what: &str, f: impl FnOnce() -> R) -> Result<R> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|_| Error::Cuda {
        kind: CudaErrorKind::Driver,
        message: format!("{what}: the CUDA driver call failed (cudarc panicked)"),
    })
}

const fn cuda_name(ordinal: usize) -> &'static str {
    const NAMES: [&str; 16] = [
        "cuda:0", "cuda:1", "cuda:2", "cuda:3", "cuda:4", "cuda:5", "cuda:6", "cuda:7", "cuda:8",
        "cuda:9", "cuda:10", "cuda:11", "cuda:12", "cuda:13", "cuda:14", "cuda:15",
    ];
    if ordinal < 16 {
        NAMES[ordinal]
    } else {
        "cuda:16+"
    }
}

/// CUDA device `N` and the stream ort-bind enqueues its work on.
///
/// The ordinal is part of the type, so a binding on `Cuda<0>` cannot take a tensor on
/// `Cuda<1>`, nor host memory (both are compile errors). Cloning is cheap and keeps the
/// same stream.
///
/// ```no_run
/// use ort_bind_runtime::{Cuda, SessionOptions};
///
/// let gpu = Cuda::<0>::new()?; // no driver or no device 0: an error, never a panic
/// let options = SessionOptions::new().cuda(&gpu); // ONNX Runtime runs on gpu.stream()
/// # Ok::<(), ort_bind_runtime::Error>(())
/// ```
#[derive(Clone)]
pub struct Cuda<const N: usize> {
    shared: Arc<Shared>,
}

struct Shared {
    stream: Arc<CudaStream>,
    info: OnceLock<MemoryInfo>,
}

impl<const N: usize> fmt::Debug for Cuda<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cuda")
            .field("ordinal", &N)
            .field("stream", &self.shared.stream.cu_stream())
            .finish()
    }
}

impl<const N: usize> PartialEq for Cuda<N> {
    /// Two handles are equal when they enqueue on the same stream.
    fn eq(&self, other: &Self) -> bool {
        self.shared.stream == other.shared.stream
    }
}

impl<const N: usize> Eq for Cuda<N> {}

impl<const N: usize> Cuda<N> {
    /// The device ordinal.
    pub const ORDINAL: usize = N;

    /// Device `N` (its primary context, as the CUDA runtime and most frameworks use) with
    /// a new non-blocking stream.
    ///
    /// # Errors
    /// [`Error::Cuda`] of kind [`CudaErrorKind::NoDriver`] when no usable driver is
    /// installed, [`CudaErrorKind::NoDevice`] when there is no device `N`.
    pub fn new() -> Result<Self> {
        let ctx = context(N)?;
        let stream = no_panic("creating a CUDA stream", || ctx.new_stream())?
            .map_err(|e| driver_error(e, &format!("creating a stream on cuda:{N}")))?;
        Ok(Self::from_parts(stream))
    }

    /// Device `N` with the caller's `stream`: ONNX Runtime and ort-bind enqueue their
    /// work on it, in order with the caller's own kernels.
    ///
    /// # Errors
    /// [`CudaErrorKind::WrongDevice`] when the stream belongs to another device, or is the
    /// legacy default stream or the per-thread stream (ONNX Runtime needs a stream handle
    /// of its own; create one with `CudaContext::new_stream`).
    pub fn with_stream(stream: Arc<CudaStream>) -> Result<Self> {
        driver()?;
        let ordinal = stream.context().ordinal();
        if ordinal != N {
            return Err(Error::Cuda {
                kind: CudaErrorKind::WrongDevice,
                message: format!("the stream belongs to cuda:{ordinal}, not cuda:{N}"),
            });
        }
        let handle = stream.cu_stream() as usize;
        if handle == 0 || handle == 2 {
            return Err(Error::Cuda {
                kind: CudaErrorKind::WrongDevice,
                message: "the legacy default stream and the per-thread stream cannot be \
                          ONNX Runtime's compute stream: create a stream with \
                          `CudaContext::new_stream`"
                    .into(),
            });
        }
        Ok(Self::from_parts(stream))
    }

    fn from_parts(stream: Arc<CudaStream>) -> Self {
        Cuda {
            shared: Arc::new(Shared {
                stream,
                info: OnceLock::new(),
            }),
        }
    }

    /// The stream everything on this device is enqueued on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.shared.stream
    }

    /// The device's CUDA context.
    pub fn context(&self) -> &Arc<CudaContext> {
        self.shared.stream.context()
    }

    /// Blocks until everything enqueued on the device's stream (runs, copies, the caller's
    /// kernels) has finished. Only this stream: other work on the device goes on.
    pub fn synchronize(&self) -> Result<()> {
        self.shared
            .stream
            .synchronize()
            .map_err(|e| driver_error(e, &format!("synchronizing the stream of cuda:{N}")))
    }

    /// Page-locked host memory in this device's context, for asynchronous copies.
    pub fn pinned(&self) -> CudaPinned {
        CudaPinned::new(self.context().clone())
    }

    /// Page-locked host memory for `len` elements, zeroed: a staging buffer for
    /// [`TensorRef::copy_to_pinned`] and [`TensorMut::copy_from_pinned_slice`].
    pub fn alloc_pinned<T: Element>(&self, len: usize) -> Result<PinnedHostSlice<T>> {
        super::pinned::alloc_zeroed(self.context(), len)
    }

    fn check_memory(&self, ctx: &Arc<CudaContext>, tensor: &str) -> Result<()> {
        if **ctx != **self.context() {
            return Err(Error::Cuda {
                kind: CudaErrorKind::WrongDevice,
                message: format!(
                    "tensor `{tensor}`: the memory belongs to cuda:{} (context {:?}), the \
                     tensor's device is cuda:{N} (context {:?})",
                    ctx.ordinal(),
                    ctx.cu_ctx(),
                    self.context().cu_ctx()
                ),
            });
        }
        Ok(())
    }
}

/// The primary context of device `ordinal`, checking driver and device first.
fn context(ordinal: usize) -> Result<Arc<CudaContext>> {
    driver()?;
    let count =
        cu_result::device::get_count().map_err(|e| driver_error(e, "counting CUDA devices"))?;
    if usize::try_from(count).map_or(true, |count| ordinal >= count) {
        return Err(Error::Cuda {
            kind: CudaErrorKind::NoDevice,
            message: format!("there is no cuda:{ordinal}: the driver reports {count} device(s)"),
        });
    }
    no_panic("creating a CUDA context", || CudaContext::new(ordinal))?
        .map_err(|e| driver_error(e, &format!("creating a context on cuda:{ordinal}")))
}

impl<const N: usize> Device for Cuda<N> {
    const NAME: &'static str = cuda_name(N);
}

impl<const N: usize> DeviceImpl for Cuda<N> {
    type Buffer<T: Element> = CudaBuffer<T>;

    const HOST_ACCESSIBLE: bool = false;

    fn alloc<T: Element>(&self, len: usize) -> Result<CudaBuffer<T>> {
        let stream = self.stream();
        // Never a zero-byte allocation (the driver rejects those); capacity covers `len`.
        let slice = no_panic("allocating device memory", || {
            stream.alloc_zeros::<T>(len.max(1))
        })?
        .map_err(|e| alloc_error(e, len.max(1).saturating_mul(size_of::<T>()), Self::NAME))?;
        CudaBuffer::new(slice, stream, None)
    }

    fn capacity<T: Element>(buf: &CudaBuffer<T>) -> usize {
        buf.slice.len()
    }

    fn data_ptr<T: Element>(buf: &mut CudaBuffer<T>) -> *mut c_void {
        buf.ptr as *mut c_void
    }

    fn data_ptr_const<T: Element>(buf: &CudaBuffer<T>) -> *const c_void {
        buf.ptr as *const c_void
    }

    fn memory_info(&self) -> Result<&MemoryInfo> {
        if let Some(info) = self.shared.info.get() {
            return Ok(info);
        }
        library::init()?;
        let id = i32::try_from(N).map_err(|_| Error::Cuda {
            kind: CudaErrorKind::NoDevice,
            message: format!("device ordinal {N} does not fit ONNX Runtime's device id"),
        })?;
        let info = MemoryInfo::new(c"Cuda", id, OrtMemType::OrtMemTypeDefault)?;
        Ok(self.shared.info.get_or_init(|| info))
    }

    fn host_slice<T: Element>(_buf: &CudaBuffer<T>, _len: usize) -> Option<&[T]> {
        None
    }

    fn host_slice_mut<T: Element>(_buf: &mut CudaBuffer<T>, _len: usize) -> Option<&mut [T]> {
        None
    }

    fn check_session(&self, session: &Session, tensor: &str) -> Result<()> {
        let wrong = |why: String| {
            Err(Error::Cuda {
                kind: CudaErrorKind::WrongDevice,
                message: format!("tensor `{tensor}` is memory of cuda:{N}, but {why}"),
            })
        };
        let Some(cuda) = session.cuda() else {
            return wrong(
                "the session has no CUDA execution provider: build it with \
                 `SessionOptions::new().cuda(&device)`"
                    .into(),
            );
        };
        if cuda.ordinal() != N {
            return wrong(format!("the session runs on cuda:{}", cuda.ordinal()));
        }
        match &cuda.provider.stream {
            None => wrong(
                "the session runs on a stream ONNX Runtime created \
                 (`SessionOptions::cuda_provider`), unordered with this memory's stream: \
                 build it with `SessionOptions::cuda(&device)`"
                    .into(),
            ),
            Some(stream) if stream != self.stream() => wrong(
                "the session runs on another stream of that device: build the session \
                 (`SessionOptions::cuda`) and the binding from the same `Cuda` handle"
                    .into(),
            ),
            Some(_) => Ok(()),
        }
    }
}

/// Device memory of a [`Cuda`] tensor: a `cudarc` slice, owned or adopted.
#[allow(unreachable_pub)] // named by the sealed `DeviceImpl` trait, unreachable from outside
pub struct CudaBuffer<T> {
    slice: ManuallyDrop<CudaSlice<T>>,
    /// The slice's device address, read once.
    ptr: u64,
    /// The tensor's device stream, when it differs from the stream the slice was made on.
    device_stream: Option<Arc<CudaStream>>,
    /// For adopted memory: what keeps it alive. Such memory is never freed here.
    owner: Option<Mutex<Box<dyn Any + Send>>>,
}

impl<T> fmt::Debug for CudaBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CudaBuffer")
            .field("ptr", &format_args!("{:#x}", self.ptr))
            .field("len", &self.slice.len())
            .field("adopted", &self.owner.is_some())
            .finish()
    }
}

impl<T> CudaBuffer<T> {
    /// Wraps `slice` for a tensor whose device enqueues on `device_stream`. When the slice
    /// was made on another stream, the device stream first waits for the work pending on it.
    fn new(
        slice: CudaSlice<T>,
        device_stream: &Arc<CudaStream>,
        owner: Option<Box<dyn Any + Send>>,
    ) -> Result<Self> {
        let (ptr, record) = slice.device_ptr(slice.stream());
        drop(record);
        let device_stream = if slice.stream() == device_stream {
            None
        } else {
            device_stream.join(slice.stream()).map_err(|e| {
                driver_error(e, "ordering the device stream after the memory's stream")
            })?;
            Some(device_stream.clone())
        };
        Ok(CudaBuffer {
            slice: ManuallyDrop::new(slice),
            ptr,
            device_stream,
            owner: owner.map(Mutex::new),
        })
    }

    /// The slice, after making its own stream wait for the work on the device stream;
    /// `None` for adopted memory, which is released to its owner instead (a `CudaSlice`
    /// over it would free memory ort-bind does not own).
    fn into_slice(mut self) -> Option<CudaSlice<T>> {
        if self.owner.is_some() {
            return None;
        }
        self.order_after_device();
        // SAFETY: `slice` is taken exactly once, and `self` is forgotten right after, so its
        // `Drop` (the only other place that takes it) never runs.
        let slice = unsafe { ManuallyDrop::take(&mut self.slice) };
        let device_stream = self.device_stream.take();
        std::mem::forget(self);
        drop(device_stream);
        Some(slice)
    }

    fn order_after_device(&self) {
        if let Some(device_stream) = &self.device_stream {
            let ctx = self.slice.context();
            ctx.record_err(self.slice.stream().join(device_stream));
        }
    }
}

impl<T> Drop for CudaBuffer<T> {
    fn drop(&mut self) {
        // `cudarc` frees without making the context current; this thread may have none.
        let ctx = self.slice.context();
        ctx.record_err(ctx.bind_to_thread());
        self.order_after_device();
        // SAFETY: `slice` is taken exactly once, here; nothing uses it afterwards.
        let slice = unsafe { ManuallyDrop::take(&mut self.slice) };
        match self.owner.take() {
            None => drop(slice),
            Some(owner) => {
                // Adopted memory belongs to `owner`: forget the slice without freeing it, and
                // let the owner go only once the device stream is done with the memory.
                let stream = self
                    .device_stream
                    .clone()
                    .unwrap_or_else(|| slice.stream().clone());
                let _ = slice.leak();
                stream.context().record_err(stream.synchronize());
                drop(owner);
            }
        }
    }
}

impl<T: Element, S: Shape, const N: usize> Tensor<T, S, Cuda<N>> {
    /// A tensor over a device slice the caller already owns (no copy), with `dims`.
    ///
    /// The slice may be longer than the dims need (the rest is spare capacity). When it was
    /// made on another stream than `device`'s, the device stream first waits for the work
    /// pending on it, and the slice's stream waits for the device stream's work before the
    /// slice is freed or handed back ([`Tensor::into_cuda_slice`]).
    ///
    /// # Errors
    /// [`CudaErrorKind::WrongDevice`] when the slice belongs to another device or context;
    /// [`Error::Length`] when it is too short for `dims` (the slice is dropped).
    pub fn from_cuda_slice(
        name: &str,
        device: Cuda<N>,
        slice: CudaSlice<T>,
        dims: &[usize],
    ) -> Result<Self> {
        device.check_memory(slice.context(), name)?;
        let buf = CudaBuffer::new(slice, device.stream(), None)?;
        Tensor::from_buffer(name, device, buf, dims)
    }

    /// Adopts device memory another framework owns (a PyTorch tensor's `data_ptr()`, a
    /// DLPack capsule, a DALI buffer) as a tensor with `dims`, without copying. `owner` is
    /// kept until the tensor is dropped, after the device stream has finished with the
    /// memory (pass the framework's tensor or capsule to keep the memory alive); the memory
    /// is never freed by ort-bind.
    ///
    /// The pointer is checked with the driver: it must be device memory of device `N`.
    ///
    /// # Safety
    /// - `ptr` is the address of at least `len` elements of `T`, aligned for `T`, in device
    ///   memory of device `N` that is valid in `device`'s context (the primary context, as
    ///   the CUDA runtime, PyTorch and DLPack producers use);
    /// - the memory stays allocated while `owner` lives, and nothing else writes it (or
    ///   reads it while ONNX Runtime or ort-bind may write it) while the tensor exists,
    ///   except work ordered on `device.stream()`;
    /// - work the producer enqueued on other streams that touches the memory has finished,
    ///   or is ordered before `device.stream()` (for example by recording an event on the
    ///   producer's stream and waiting on it in `device.stream()`).
    ///
    /// # Errors
    /// [`CudaErrorKind::WrongDevice`] when the driver says `ptr` is not device memory of
    /// device `N`; [`Error::Length`] when `len` is too short for `dims`.
    pub unsafe fn from_raw_device_ptr(
        name: &str,
        device: Cuda<N>,
        ptr: u64,
        len: usize,
        dims: &[usize],
        owner: impl Any + Send,
    ) -> Result<Self> {
        check_device_pointer(&device, ptr, name)?;
        if len
            .checked_mul(size_of::<T>())
            .is_none_or(|b| b > isize::MAX as usize)
        {
            return Err(Error::TooLarge {
                tensor: name.to_owned(),
                dims: vec![len],
            });
        }
        let stream = device.stream();
        // SAFETY: the caller guarantees `ptr` addresses `len` elements of `T` on this device;
        // the slice made here is never freed (see `CudaBuffer::drop`: adopted memory is
        // leaked back to its owner).
        let slice = no_panic("adopting device memory", || unsafe {
            stream.upgrade_device_ptr::<T>(ptr, len)
        })?;
        let buf = CudaBuffer::new(slice, stream, Some(Box::new(owner)))?;
        Tensor::from_buffer(name, device, buf, dims)
    }

    /// The device slice back (its capacity may exceed the element count). Memory adopted
    /// with [`Tensor::from_raw_device_ptr`] has no `CudaSlice`: it goes back to its owner
    /// and the result is `None` (see [`Tensor::is_adopted`]).
    pub fn into_cuda_slice(self) -> Option<CudaSlice<T>> {
        self.into_buffer().into_slice()
    }

    /// Whether the memory was adopted with [`Tensor::from_raw_device_ptr`].
    pub fn is_adopted(&self) -> bool {
        self.buffer().owner.is_some()
    }

    /// The elements on the device, for the caller's kernels and `cudarc` copies.
    pub fn cuda_view(&self) -> CudaView<'_, T> {
        // `len <= capacity` always holds, so the range is in bounds.
        self.buffer().slice.slice(..self.len())
    }

    /// The elements on the device, mutable, for the caller's kernels and `cudarc` copies.
    pub fn cuda_view_mut(&mut self) -> CudaViewMut<'_, T> {
        let len = self.len();
        self.buffer_mut().slice.slice_mut(..len)
    }
}

/// Makes `stream`'s context current on this thread.
fn make_current(stream: &CudaStream) -> Result<()> {
    stream
        .context()
        .bind_to_thread()
        .map_err(|e| driver_error(e, "making the device's context current"))
}

/// Checks with the driver that `ptr` is device memory of `device`'s ordinal.
fn check_device_pointer<const N: usize>(device: &Cuda<N>, ptr: u64, tensor: &str) -> Result<()> {
    let wrong = |why: String| Error::Cuda {
        kind: CudaErrorKind::WrongDevice,
        message: format!("tensor `{tensor}`: address {ptr:#x} {why}"),
    };
    device
        .context()
        .bind_to_thread()
        .map_err(|e| driver_error(e, "making the device's context current"))?;
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
        return Err(wrong(format!(
            "is not memory the CUDA driver knows ({}): host or freed memory?",
            describe(&DriverError(status))
        )));
    }
    if mem_type != cu::CUmemorytype::CU_MEMORYTYPE_DEVICE as u32 {
        return Err(wrong("is host memory, not device memory".into()));
    }
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
        return Err(driver_error(
            DriverError(status),
            "reading the memory's device",
        ));
    }
    if usize::try_from(ordinal).ok() != Some(N) {
        return Err(wrong(format!("is memory of cuda:{ordinal}, not cuda:{N}")));
    }
    Ok(())
}

impl<T: Element, S: Shape, const N: usize> TensorMut<'_, T, S, Cuda<N>> {
    /// The address of the first element on the device (valid while the view lives).
    pub fn device_ptr(&self) -> u64 {
        self.tensor().buffer().ptr
    }

    /// The elements on the device, for the caller's kernels (enqueue them on the
    /// device's stream) and `cudarc` copies.
    pub fn cuda_view_mut(&mut self) -> CudaViewMut<'_, T> {
        self.tensor_mut().cuda_view_mut()
    }

    fn check_len(&self, found: usize) -> Result<()> {
        let t = self.tensor();
        if t.len() != found {
            return Err(Error::Length {
                tensor: t.name().to_owned(),
                expected: t.len(),
                found,
                dims: t.dims().to_vec(),
            });
        }
        Ok(())
    }

    /// The device's stream, with its context made current on this thread (raw driver
    /// calls need it; `cudarc`'s own calls do it themselves).
    fn stream(&self) -> Result<Arc<CudaStream>> {
        let stream = self.tensor().device().stream();
        make_current(stream)?;
        Ok(stream.clone())
    }

    /// Copies `data` from host memory in; its length must equal the element count. The
    /// copy is enqueued on the device's stream; `data` may be reused when this returns.
    pub fn copy_from_host(&mut self, data: &[T]) -> Result<()> {
        self.check_len(data.len())?;
        let stream = self.stream()?;
        let mut view = self.cuda_view_mut();
        stream
            .memcpy_htod(data, &mut view)
            .map_err(|e| driver_error(e, "copying host memory to the device"))
    }

    /// Copies a pinned host tensor in, asynchronously (enqueued on the device's stream;
    /// host writes to `src` through ort-bind wait for the copy). Lengths must match.
    pub fn copy_from_pinned<S2: Shape>(
        &mut self,
        src: TensorRef<'_, T, S2, CudaPinned>,
    ) -> Result<()> {
        self.check_len(src.len())?;
        let stream = self.stream()?;
        match src.buffer() {
            Some(pinned) => {
                let len = src.len();
                let mut view = self.cuda_view_mut();
                // SAFETY: the host slice is used with `stream` only (the copy below), and the
                // returned guard records the pinned buffer's event after the copy, so host
                // writes through ort-bind wait for it.
                let (host, record) = unsafe { pinned.slice.stream_synced_slice(&stream) };
                let (dst, record_dst) = view.device_ptr_mut(&stream);
                // SAFETY: `dst` addresses `len` elements of `T` on this device (the view);
                // `host[..len]` is pinned memory that stays allocated until the event the
                // guard records has completed (`PinnedHostSlice` waits for it on drop).
                let r =
                    unsafe { cu_result::memcpy_htod_async(dst, &host[..len], stream.cu_stream()) };
                drop(record_dst);
                drop(record);
                r.map_err(|e| driver_error(e, "copying pinned memory to the device"))
            }
            None => {
                // ONNX Runtime's own pinned output: no event guards it, so wait here.
                let host = src.as_slice();
                let mut view = self.cuda_view_mut();
                stream
                    .memcpy_htod(host, &mut view)
                    .and_then(|()| stream.synchronize())
                    .map_err(|e| driver_error(e, "copying pinned memory to the device"))
            }
        }
    }

    /// Copies a `cudarc` pinned slice in, asynchronously; lengths must match.
    pub fn copy_from_pinned_slice(&mut self, src: &PinnedHostSlice<T>) -> Result<()> {
        self.check_len(src.len())?;
        let stream = self.stream()?;
        let mut view = self.cuda_view_mut();
        stream
            .memcpy_htod(src, &mut view)
            .map_err(|e| driver_error(e, "copying pinned memory to the device"))
    }

    /// Copies another tensor of the same device in (device to device, enqueued on the
    /// device's stream); lengths must match.
    pub fn copy_from_device<S2: Shape>(
        &mut self,
        src: TensorRef<'_, T, S2, Cuda<N>>,
    ) -> Result<()> {
        self.check_len(src.len())?;
        let stream = self.stream()?;
        let bytes = src.len() * size_of::<T>();
        let mut view = self.cuda_view_mut();
        let (dst, record) = view.device_ptr_mut(&stream);
        // SAFETY: both addresses hold `src.len()` elements of `T` on this device (`src` is
        // alive for the call, `dst` is the view); the copy is ordered on `stream`, where
        // every other use of both buffers by ort-bind and ONNX Runtime is enqueued.
        let r = unsafe {
            cu_result::memcpy_dtod_async(dst, src.device_ptr(), bytes, stream.cu_stream())
        };
        drop(record);
        r.map_err(|e| driver_error(e, "copying device memory"))
    }

    /// Sets every byte to zero (enqueued on the device's stream).
    pub fn fill_zeros(&mut self) -> Result<()> {
        let stream = self.stream()?;
        let mut view = self.cuda_view_mut();
        stream
            .memset_zeros(&mut view)
            .map_err(|e| driver_error(e, "zeroing device memory"))
    }
}

impl<'a, T: Element, S: Shape, const N: usize> TensorRef<'a, T, S, Cuda<N>> {
    /// The address of the first element on the device: for kernel arguments. Valid while
    /// the view lives (a run needs `&mut` on the binding, so it cannot overwrite or free
    /// the value meanwhile); use it on the device's stream.
    pub fn device_ptr(&self) -> u64 {
        self.data_ptr() as u64
    }

    /// The elements as a `cudarc` view, for tensors ort-bind allocated or was handed; `None`
    /// for outputs ONNX Runtime allocated (use [`TensorRef::device_ptr`] for those).
    pub fn cuda_view(&self) -> Option<CudaView<'a, T>> {
        self.buffer().map(|buf| buf.slice.slice(..self.len()))
    }

    /// Copies the elements into host memory `dst` (whose length must equal the element
    /// count) and waits for the copy: enqueued on the device's stream after the work
    /// already there (the last run included).
    pub fn copy_to_host(&self, dst: &mut [T]) -> Result<()> {
        self.check_len(dst.len())?;
        let stream = self.device().stream();
        make_current(stream)?;
        // SAFETY: `device_ptr` addresses `len` elements of `T` on this device, alive while
        // `self` borrows it; `dst` has exactly that many; the stream is synchronized below
        // before `dst`'s borrow ends, so the copy never outlives it.
        let r = unsafe { cu_result::memcpy_dtoh_async(dst, self.device_ptr(), stream.cu_stream()) };
        r.and_then(|()| stream.synchronize())
            .map_err(|e| driver_error(e, "copying device memory to the host"))
    }

    /// The elements copied into a new `Vec` (see [`TensorRef::copy_to_host`]).
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let mut out = vec![T::default(); self.len()];
        self.copy_to_host(&mut out)?;
        Ok(out)
    }

    /// Copies the elements into the start of the pinned slice `dst` asynchronously
    /// (enqueued on the device's stream); `dst.as_slice()` waits for the copy. `dst` must
    /// hold at least the element count.
    pub fn copy_to_pinned(&self, dst: &mut PinnedHostSlice<T>) -> Result<()> {
        if dst.len() < self.len() {
            return Err(Error::Length {
                tensor: self.name().to_owned(),
                expected: self.len(),
                found: dst.len(),
                dims: self.dims().to_vec(),
            });
        }
        let stream = self.device().stream();
        make_current(stream)?;
        // SAFETY: the host slice is used with `stream` only; the guard records the pinned
        // slice's event after the copy, and the slice's host accessors wait for that event.
        let (host, record) = unsafe { dst.stream_synced_mut_slice(stream) };
        let len = self.len();
        // SAFETY: the source holds `len` elements of `T` on this device, alive for `'a`,
        // and ONNX Runtime cannot overwrite it before the copy completes: the next run is
        // enqueued on the same stream, after it. `host[..len]` is pinned memory that
        // `PinnedHostSlice` keeps allocated until the recorded event has completed.
        let r = unsafe {
            cu_result::memcpy_dtoh_async(&mut host[..len], self.device_ptr(), stream.cu_stream())
        };
        drop(record);
        r.map_err(|e| driver_error(e, "copying device memory to pinned memory"))
    }

    fn check_len(&self, found: usize) -> Result<()> {
        if self.len() != found {
            return Err(Error::Length {
                tensor: self.name().to_owned(),
                expected: self.len(),
                found,
                dims: self.dims().to_vec(),
            });
        }
        Ok(())
    }
}

/// Whether the ONNX Runtime library ort-bind loads (loading it now if needed) was built
/// with the CUDA execution provider. The default `onnxruntime` Python wheel is CPU-only;
/// `onnxruntime-gpu` has it.
pub fn cuda_provider_available() -> Result<bool> {
    library::init()?;
    Ok(sys::available_providers()?
        .iter()
        .any(|p| p == CUDA_PROVIDER))
}

const CUDA_PROVIDER: &str = "CUDAExecutionProvider";

/// The CUDA execution provider a [`crate::SessionOptions`] asks for.
#[derive(Debug, Clone)]
pub(crate) struct CudaProvider {
    pub(crate) ordinal: usize,
    /// The caller's stream; `None`: ONNX Runtime creates its own.
    pub(crate) stream: Option<Arc<CudaStream>>,
}

impl CudaProvider {
    /// Adds the CUDA execution provider to `builder`, after checking that the loaded ONNX
    /// Runtime has one.
    pub(crate) fn register(
        &self,
        builder: &mut ort::session::builder::SessionBuilder,
    ) -> Result<()> {
        let providers = sys::available_providers()?;
        if !providers.iter().any(|p| p == CUDA_PROVIDER) {
            let lib = library::get();
            return Err(Error::Cuda {
                kind: CudaErrorKind::NoExecutionProvider,
                message: format!(
                    "the loaded ONNX Runtime library ({}, version {}) was built without the \
                     CUDA execution provider (it has {providers:?}); the `onnxruntime` Python \
                     wheel is CPU-only: `python3 -m pip download --no-deps \
                     onnxruntime-gpu==1.31.1`, unzip it, and set ORT_DYLIB_PATH to its \
                     `onnxruntime/capi/libonnxruntime.so.1.31.1` (it needs CUDA 12 and cuDNN 9 \
                     libraries on the loader's path)",
                    lib.map_or_else(|| "?".into(), |l| l.path().display().to_string()),
                    lib.map_or("?", |l| l.version()),
                ),
            });
        }
        let device_id = i32::try_from(self.ordinal).map_err(|_| Error::Cuda {
            kind: CudaErrorKind::NoDevice,
            message: format!(
                "device ordinal {} does not fit ONNX Runtime's device id",
                self.ordinal
            ),
        })?;
        let stream = match &self.stream {
            None => None,
            Some(stream) => Some(
                NonNull::new(stream.cu_stream().cast::<c_void>()).ok_or_else(|| Error::Cuda {
                    kind: CudaErrorKind::WrongDevice,
                    message: "the legacy default stream cannot be ONNX Runtime's compute stream"
                        .into(),
                })?,
            ),
        };
        // SAFETY: the builder's options are alive (borrowed mutably here). The stream is kept
        // alive by the session: `Session` holds this provider's `Arc<CudaStream>` (through
        // `CudaSession`) and drops it only after the ONNX Runtime session.
        unsafe { sys::append_cuda_provider(builder.ptr_mut(), device_id, stream) }
            .map_err(classify_ort_error)
    }

    /// What a session built with this provider keeps.
    pub(crate) fn session_state(&self) -> Result<CudaSession> {
        let async_run = match self.stream {
            // Runs on the caller's stream may return before the device is done: ordering is
            // the stream's job (ONNX Runtime otherwise synchronizes the stream after each run).
            Some(_) => Some(RunOptions::with_config(&[(
                c"disable_synchronize_execution_providers",
                c"1",
            )])?),
            None => None,
        };
        Ok(CudaSession {
            provider: self.clone(),
            async_run,
        })
    }
}

/// The CUDA set-up a [`Session`] keeps: the provider (and with it the stream, alive for as
/// long as the session) and the run options of asynchronous runs.
#[derive(Debug)]
pub(crate) struct CudaSession {
    provider: CudaProvider,
    async_run: Option<RunOptions>,
}

impl CudaSession {
    pub(crate) fn ordinal(&self) -> usize {
        self.provider.ordinal
    }

    pub(crate) fn async_run_options(&self) -> Option<&RunOptions> {
        self.async_run.as_ref()
    }
}

// A pinned tensor is host memory as far as the type system is concerned.
const _: fn() = || {
    fn host<D: HostDevice>() {}
    host::<CudaPinned>();
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_names_carry_the_ordinal() {
        assert_eq!(<Cuda<0> as Device>::NAME, "cuda:0");
        assert_eq!(<Cuda<7> as Device>::NAME, "cuda:7");
        assert_eq!(<Cuda<15> as Device>::NAME, "cuda:15");
        assert_eq!(<Cuda<99> as Device>::NAME, "cuda:16+");
    }

    #[test]
    fn onnx_runtime_messages_name_the_cuda_problem() {
        let cases = [
            (
                "CUDA failure 2: out of memory ; GPU=0 ; hostname=h ; file=cuda_allocator.cc ; line=47 ; expr=cudaMalloc((void**)&p, size);",
                Some(CudaErrorKind::OutOfMemory),
            ),
            (
                "BFCArena::AllocateRawInternal Failed to allocate memory for requested buffer of size 4294967296",
                Some(CudaErrorKind::OutOfMemory),
            ),
            (
                "CUDA failure 100: no CUDA-capable device is detected ; GPU=-1",
                Some(CudaErrorKind::NoDevice),
            ),
            (
                "CUDA failure 101: invalid device ordinal",
                Some(CudaErrorKind::NoDevice),
            ),
            (
                "CUDA failure 35: CUDA driver version is insufficient for CUDA runtime version",
                Some(CudaErrorKind::NoDriver),
            ),
            (
                "Failed to load library libonnxruntime_providers_cuda.so with error: libcudnn.so.9: cannot open shared object file",
                Some(CudaErrorKind::NoExecutionProvider),
            ),
            ("Non-zero status code returned while running Add node", None),
        ];
        for (message, kind) in cases {
            assert_eq!(classify_ort_message(message), kind, "{message}");
        }
    }

    #[test]
    fn classified_errors_keep_the_message_and_others_pass_through() {
        let e = classify_ort_error(Error::Ort {
            context: "running the model".into(),
            message: "CUDA failure 2: out of memory".into(),
        });
        match e {
            Error::Cuda { kind, message } => {
                assert_eq!(kind, CudaErrorKind::OutOfMemory);
                assert!(message.contains("running the model"), "{message}");
                assert!(message.contains("CUDA failure 2"), "{message}");
            }
            other => panic!("not classified: {other:?}"),
        }
        let e = classify_ort_error(Error::Ort {
            context: "running the model".into(),
            message: "Invalid input shape".into(),
        });
        assert!(matches!(e, Error::Ort { .. }), "{e:?}");
    }

    #[test]
    fn out_of_memory_from_the_driver_is_an_out_of_memory_error() {
        let e = alloc_error(
            DriverError(cu::CUresult::CUDA_ERROR_OUT_OF_MEMORY),
            1 << 40,
            "cuda:0",
        );
        assert!(
            matches!(&e, Error::OutOfMemory { bytes, device, .. } if *bytes == 1 << 40 && device == "cuda:0"),
            "{e:?}"
        );
        let e = e.for_tensor("x");
        assert!(e.to_string().contains("tensor `x`"), "{e}");
        assert!(e.to_string().contains("cuda:0"), "{e}");
    }

    #[test]
    fn driver_codes_map_to_kinds() {
        use cu::CUresult as R;
        let kind = |r| match driver_error(DriverError(r), "testing") {
            Error::Cuda { kind, .. } => kind,
            other => panic!("{other:?}"),
        };
        assert_eq!(kind(R::CUDA_ERROR_NO_DEVICE), CudaErrorKind::NoDevice);
        assert_eq!(kind(R::CUDA_ERROR_INVALID_DEVICE), CudaErrorKind::NoDevice);
        assert_eq!(kind(R::CUDA_ERROR_NOT_INITIALIZED), CudaErrorKind::NoDriver);
        assert_eq!(
            kind(R::CUDA_ERROR_OUT_OF_MEMORY),
            CudaErrorKind::OutOfMemory
        );
        assert_eq!(
            kind(R::CUDA_ERROR_INVALID_CONTEXT),
            CudaErrorKind::WrongDevice
        );
        assert_eq!(kind(R::CUDA_ERROR_LAUNCH_FAILED), CudaErrorKind::Driver);
    }
}
