//! Devices are types: a tensor's device is part of its type, so binding host
//! memory where the model binding wants device memory is a compile error, and
//! moving data between devices is an explicit call.
//!
//! [`Cpu`] is always here. With the `cuda` feature: `Cuda<N>`, memory on CUDA device `N`
//! (a `cudarc` device slice, used in the order of the device's stream), and
//! `CudaPinned`, page-locked host memory that copies to and from a device
//! asynchronously.

use std::ffi::c_void;
use std::fmt::Debug;

use crate::element::Element;
use crate::error::{Error, Result};
use crate::sys::MemoryInfo;

#[cfg(feature = "cuda")]
pub(crate) mod cuda;

#[cfg(feature = "cuda")]
pub use cuda::{Cuda, CudaPinned, cuda_provider_available};

/// Where a tensor's memory lives.
///
/// Implemented by [`Cpu`] (and, with the `cuda` feature, CUDA devices and pinned host
/// memory). Sealed: ONNX Runtime must understand the memory, so only ort-bind's own
/// devices qualify.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an ort-bind device",
    label = "expected a device type such as `Cpu`"
)]
pub trait Device: private::DeviceImpl + Clone + Debug + Send + Sync + 'static {
    /// A short name for messages (`cpu`, `cuda:0`, ...).
    const NAME: &'static str;
}

/// A device whose memory the host can read and write directly.
#[diagnostic::on_unimplemented(
    message = "`{Self}` memory cannot be read or written by the host in place",
    label = "device memory, not host memory",
    note = "copy explicitly (`copy_from_host`, `copy_to_host`, `to_vec`), or bind the model on a host device (`Cpu`, `CudaPinned`)"
)]
pub trait HostDevice: Device {}

/// Host memory, allocated by Rust's global allocator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Cpu;

impl Device for Cpu {
    const NAME: &'static str = "cpu";
}

impl HostDevice for Cpu {}

pub(crate) mod private {
    use super::*;

    /// What a session runs on, as far as binding memory to it goes: what
    /// `DeviceImpl::check_session` checks a tensor's memory against. Made from a
    /// [`Session`](crate::Session) (`From<&Session>`, in `session.rs`), so that devices need
    /// not know sessions.
    #[derive(Debug, Clone, Copy, Default)]
    #[allow(unreachable_pub)] // named by the sealed `DeviceImpl` trait, unreachable from outside
    pub struct SessionDevice<'a> {
        /// With the CUDA execution provider: its device ordinal, and the caller's stream the
        /// session runs on (`None`: a stream ONNX Runtime created).
        #[cfg(feature = "cuda")]
        pub(crate) cuda: Option<(
            usize,
            Option<&'a std::sync::Arc<cudarc::driver::CudaStream>>,
        )>,
        pub(crate) _session: std::marker::PhantomData<&'a ()>,
    }

    /// What a device must do for the runtime; hidden from users (sealed).
    #[allow(unreachable_pub)]
    pub trait DeviceImpl {
        /// Whether the host can touch this memory directly. A run that binds such memory
        /// on a device session waits for the device before it returns.
        const HOST_ACCESSIBLE: bool;

        /// Owned memory for `len` elements.
        type Buffer<T: Element>: Send + Debug;

        /// Allocates a buffer of `len` elements (zeroed or default-initialised on the host).
        fn alloc<T: Element>(&self, len: usize) -> Result<Self::Buffer<T>>;

        /// Number of elements the buffer can hold.
        fn capacity<T: Element>(buf: &Self::Buffer<T>) -> usize;

        /// Address of the first element (host or device address), for writing.
        fn data_ptr<T: Element>(buf: &mut Self::Buffer<T>) -> *mut c_void;

        /// Address of the first element (host or device address), for reading.
        fn data_ptr_const<T: Element>(buf: &Self::Buffer<T>) -> *const c_void;

        /// How ONNX Runtime describes this memory.
        fn memory_info(&self) -> Result<&MemoryInfo>;

        /// Host view of the first `len` elements, for host-accessible devices.
        fn host_slice<T: Element>(buf: &Self::Buffer<T>, len: usize) -> Option<&[T]>;

        /// Mutable host view of the first `len` elements, for host-accessible devices.
        fn host_slice_mut<T: Element>(buf: &mut Self::Buffer<T>, len: usize) -> Option<&mut [T]>;

        /// Checks that memory of this device may be bound to `session` (a `&Session`; named
        /// `tensor` in errors): device memory only where the session runs on the same
        /// device and stream.
        fn check_session<'s>(
            &self,
            session: impl Into<SessionDevice<'s>>,
            tensor: &str,
        ) -> Result<()>;
    }
}

impl private::DeviceImpl for Cpu {
    type Buffer<T: Element> = Vec<T>;

    const HOST_ACCESSIBLE: bool = true;

    fn alloc<T: Element>(&self, len: usize) -> Result<Vec<T>> {
        // Fallible: a huge but representable size is an error, not an abort.
        let mut v = Vec::new();
        v.try_reserve_exact(len).map_err(|_| Error::OutOfMemory {
            tensor: String::new(),
            bytes: len.saturating_mul(size_of::<T>()),
            device: Cpu::NAME.to_owned(),
        })?;
        v.resize(len, T::default());
        Ok(v)
    }

    fn capacity<T: Element>(buf: &Vec<T>) -> usize {
        buf.len()
    }

    fn data_ptr<T: Element>(buf: &mut Vec<T>) -> *mut c_void {
        buf.as_mut_ptr().cast()
    }

    fn data_ptr_const<T: Element>(buf: &Vec<T>) -> *const c_void {
        buf.as_ptr().cast()
    }

    fn memory_info(&self) -> Result<&MemoryInfo> {
        // Host tensors can be made before any session: load ONNX Runtime first
        // (`sys::api()` panics when it is not loaded; after the first call this is a load).
        crate::library::init()?;
        MemoryInfo::cpu()
    }

    fn host_slice<T: Element>(buf: &Vec<T>, len: usize) -> Option<&[T]> {
        buf.get(..len)
    }

    fn host_slice_mut<T: Element>(buf: &mut Vec<T>, len: usize) -> Option<&mut [T]> {
        buf.get_mut(..len)
    }

    fn check_session<'s>(
        &self,
        _session: impl Into<private::SessionDevice<'s>>,
        _tensor: &str,
    ) -> Result<()> {
        // Any session can read and write host memory (a device provider copies it).
        Ok(())
    }
}
