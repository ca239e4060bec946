//! The [`Cuda<N>`] device type: CUDA device `N`, its (primary) context and the stream
//! everything on it is enqueued on. Its memory (the `DeviceImpl` side) is in `buffer.rs`.

use std::fmt;
use std::sync::{Arc, OnceLock};

use cudarc::driver::{CudaContext, CudaStream, PinnedHostSlice};
use ort_sys::OrtMemType;

use super::driver;
use super::error::{driver_error, no_panic};
use super::pinned::{self, CudaPinned};
use crate::device::Device;
use crate::element::Element;
use crate::error::{CudaErrorKind, Error, Result};
use crate::library;
use crate::sys::MemoryInfo;

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
        driver::check()?;
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
    /// [`TensorRef::copy_to_pinned`](crate::TensorRef::copy_to_pinned) and
    /// [`TensorMut::copy_from_pinned_slice`](crate::TensorMut::copy_from_pinned_slice).
    pub fn alloc_pinned<T: Element>(&self, len: usize) -> Result<PinnedHostSlice<T>> {
        pinned::alloc_zeroed(self.context(), len)
    }

    /// How ONNX Runtime describes this device's memory (made once per handle).
    pub(super) fn ort_memory_info(&self) -> Result<&MemoryInfo> {
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

    /// Checks that memory of context `ctx` belongs to this device (named `tensor` in errors).
    pub(super) fn check_memory(&self, ctx: &Arc<CudaContext>, tensor: &str) -> Result<()> {
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
    driver::check()?;
    let count = driver::device_count().map_err(|e| driver_error(e, "counting CUDA devices"))?;
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
}
