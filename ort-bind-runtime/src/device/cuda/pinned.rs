//! Page-locked ("pinned") host memory (the `cuda` feature).
//!
//! [`CudaPinned`] tensors are host memory the host reads and writes in place, like
//! [`Cpu`](crate::Cpu) tensors, but the GPU's copy engines can reach them directly, so
//! copies to and from a device run as direct transfers: bound to a CUDA session, ONNX
//! Runtime copies them in and out of each run (about 3.7 times faster than `Cpu` tensors for
//! 16 MiB on an H200); [`TensorMut::copy_from_pinned`] enqueues a copy to a device tensor
//! and returns at once.
//!
//! Host access through ort-bind waits for ort-bind's asynchronous copies that use the
//! buffer (each buffer carries a CUDA event), so the host never races a copy engine.
//!
//! Allocation goes through the driver layer (`driver.rs`); this file imports only it, the
//! error layer and the device traits.
//!
//! [`TensorMut::copy_from_pinned`]: crate::TensorMut::copy_from_pinned

use std::ffi::c_void;
use std::fmt;
use std::sync::Arc;

use cudarc::driver::{CudaContext, PinnedHostSlice};

use super::driver::{self, PinnedAllocError};
use super::error::{alloc_error, driver_error, no_panic};
use crate::device::private::{DeviceImpl, SessionDevice};
use crate::device::{Device, HostDevice};
use crate::element::Element;
use crate::error::Result;
use crate::library;
use crate::sys::MemoryInfo;

/// Page-locked host memory of a CUDA context: host memory the GPU copies to and from
/// asynchronously. Make one with [`Cuda::pinned`](crate::Cuda::pinned).
#[derive(Clone)]
pub struct CudaPinned {
    shared: Arc<Shared>,
}

struct Shared {
    ctx: Arc<CudaContext>,
}

impl fmt::Debug for CudaPinned {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CudaPinned")
            .field("ordinal", &self.shared.ctx.ordinal())
            .finish()
    }
}

impl CudaPinned {
    /// Pinned memory allocated in `context` (usable by every device that shares it).
    pub fn new(context: Arc<CudaContext>) -> Self {
        CudaPinned {
            shared: Arc::new(Shared { ctx: context }),
        }
    }

    /// The context the memory is allocated in.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.shared.ctx
    }
}

/// `len` (at least one) zeroed elements of page-locked memory in `ctx`.
pub(crate) fn alloc_zeroed<T: Element>(
    ctx: &Arc<CudaContext>,
    len: usize,
) -> Result<PinnedHostSlice<T>> {
    let len = len.max(1);
    let bytes = len.saturating_mul(size_of::<T>());
    if bytes > isize::MAX as usize {
        return Err(crate::error::Error::OutOfMemory {
            tensor: String::new(),
            bytes,
            device: CudaPinned::NAME.to_owned(),
        });
    }
    no_panic("allocating pinned memory", || {
        driver::alloc_pinned_zeroed::<T>(ctx, len)
    })?
    .map_err(|e| match e {
        PinnedAllocError::Alloc(e) => alloc_error(e, bytes, CudaPinned::NAME),
        PinnedAllocError::Zero(e) => driver_error(e, "zeroing pinned memory"),
    })
}

/// Pinned memory of a [`CudaPinned`] tensor.
#[allow(unreachable_pub)] // named by the sealed `DeviceImpl` trait, unreachable from outside
pub struct PinnedBuffer<T> {
    pub(crate) slice: PinnedHostSlice<T>,
    /// The slice's host address, read once at allocation.
    ptr: *mut T,
}

// SAFETY: `ptr` points into `slice`, which this buffer owns; `PinnedHostSlice` is `Send`
// and `Sync`, and the pointer is only dereferenced through `&`/`&mut` of the buffer.
unsafe impl<T: Send> Send for PinnedBuffer<T> {}
// SAFETY: see `Send`.
unsafe impl<T: Sync> Sync for PinnedBuffer<T> {}

impl<T> fmt::Debug for PinnedBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PinnedBuffer")
            .field("ptr", &self.ptr)
            .field("len", &self.slice.len())
            .finish()
    }
}

impl Device for CudaPinned {
    const NAME: &'static str = "cuda-pinned";
}

impl HostDevice for CudaPinned {}

impl DeviceImpl for CudaPinned {
    type Buffer<T: Element> = PinnedBuffer<T>;

    const HOST_ACCESSIBLE: bool = true;

    fn alloc<T: Element>(&self, len: usize) -> Result<PinnedBuffer<T>> {
        let mut slice = alloc_zeroed::<T>(&self.shared.ctx, len)?;
        let ptr = slice
            .as_mut_ptr()
            .map_err(|e| driver_error(e, "reading a pinned buffer's address"))?;
        Ok(PinnedBuffer { slice, ptr })
    }

    fn capacity<T: Element>(buf: &PinnedBuffer<T>) -> usize {
        buf.slice.len()
    }

    fn data_ptr<T: Element>(buf: &mut PinnedBuffer<T>) -> *mut c_void {
        buf.ptr.cast()
    }

    fn data_ptr_const<T: Element>(buf: &PinnedBuffer<T>) -> *const c_void {
        buf.ptr.cast_const().cast()
    }

    fn memory_info(&self) -> Result<&MemoryInfo> {
        // Described to ONNX Runtime as plain host memory. ONNX Runtime 1.31 on a CUDA
        // session fails runs whose outputs are bound to memory described as "CudaPinned"
        // (it copies the output onto itself: "dst_data != src_data", seen on an H200);
        // its copies to and from this memory are DMA transfers either way.
        library::init()?;
        MemoryInfo::cpu()
    }

    fn host_slice<T: Element>(buf: &PinnedBuffer<T>, len: usize) -> Option<&[T]> {
        // Waits for ort-bind's asynchronous copies that read or write the buffer.
        buf.slice.as_slice().ok()?.get(..len)
    }

    fn host_slice_mut<T: Element>(buf: &mut PinnedBuffer<T>, len: usize) -> Option<&mut [T]> {
        buf.slice.as_mut_slice().ok()?.get_mut(..len)
    }

    fn check_session<'s>(
        &self,
        _session: impl Into<SessionDevice<'s>>,
        _tensor: &str,
    ) -> Result<()> {
        // Host memory: every session can use it (a device provider copies it).
        Ok(())
    }
}

// A pinned tensor is host memory as far as the type system is concerned.
const _: fn() = || {
    fn host<D: HostDevice>() {}
    host::<CudaPinned>();
};
