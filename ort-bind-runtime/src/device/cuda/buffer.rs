//! The memory of a [`Cuda<N>`] tensor: [`CudaBuffer`], a `cudarc` slice that ort-bind
//! allocated, that the caller handed over ([`Tensor::from_cuda_slice`]), or that another
//! framework owns and ort-bind adopted ([`Tensor::from_raw_device_ptr`]); and the device's
//! `DeviceImpl` (allocation, addresses, ONNX Runtime's view of the memory, which sessions
//! may bind it).

use std::any::Any;
use std::ffi::c_void;
use std::fmt;
use std::mem::ManuallyDrop;
use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaSlice, CudaStream, CudaView, CudaViewMut, DevicePtr};

use super::device::Cuda;
use super::driver;
use super::error::{alloc_error, driver_error, no_panic};
use crate::device::Device;
use crate::device::private::{DeviceImpl, SessionDevice};
use crate::element::Element;
use crate::error::{CudaErrorKind, Error, Result};
use crate::shape::Shape;
use crate::sys::MemoryInfo;
use crate::tensor::Tensor;

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
        self.ort_memory_info()
    }

    fn host_slice<T: Element>(_buf: &CudaBuffer<T>, _len: usize) -> Option<&[T]> {
        None
    }

    fn host_slice_mut<T: Element>(_buf: &mut CudaBuffer<T>, _len: usize) -> Option<&mut [T]> {
        None
    }

    fn check_session<'s>(&self, session: impl Into<SessionDevice<'s>>, tensor: &str) -> Result<()> {
        let wrong = |why: String| {
            Err(Error::Cuda {
                kind: CudaErrorKind::WrongDevice,
                message: format!("tensor `{tensor}` is memory of cuda:{N}, but {why}"),
            })
        };
        let Some((ordinal, stream)) = session.into().cuda else {
            return wrong(
                "the session has no CUDA execution provider: build it with \
                 `SessionOptions::new().cuda(&device)`"
                    .into(),
            );
        };
        if ordinal != N {
            return wrong(format!("the session runs on cuda:{ordinal}"));
        }
        match stream {
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
    pub(super) slice: ManuallyDrop<CudaSlice<T>>,
    /// The slice's device address, read once.
    pub(super) ptr: u64,
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
        // SAFETY: the caller guarantees `ptr` addresses `len` elements of `T` on this device,
        // owned by `owner`; the slice made here is never freed (see `CudaBuffer::drop`:
        // adopted memory is leaked back to its owner).
        let slice = no_panic("adopting device memory", || unsafe {
            driver::adopt_device_ptr::<T>(stream, ptr, len)
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
    let mem_type = driver::pointer_memory_type(ptr).map_err(|e| {
        wrong(format!(
            "is not memory the CUDA driver knows ({}): host or freed memory?",
            driver::describe(&e)
        ))
    })?;
    if !driver::is_device_memory(mem_type) {
        return Err(wrong("is host memory, not device memory".into()));
    }
    let ordinal = driver::pointer_device_ordinal(ptr)
        .map_err(|e| driver_error(e, "reading the memory's device"))?;
    if usize::try_from(ordinal).ok() != Some(N) {
        return Err(wrong(format!("is memory of cuda:{ordinal}, not cuda:{N}")));
    }
    Ok(())
}
