//! Devices are types: a tensor's device is part of its type, so binding host
//! memory where the model binding wants device memory is a compile error, and
//! moving data between devices is an explicit call.

use std::ffi::c_void;
use std::fmt::Debug;

use crate::element::Element;
use crate::error::{Error, Result};
use crate::sys::MemoryInfo;

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

    /// What a device must do for the runtime; hidden from users (sealed).
    #[allow(unreachable_pub)]
    pub trait DeviceImpl {
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
    }
}

impl private::DeviceImpl for Cpu {
    type Buffer<T: Element> = Vec<T>;

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
        MemoryInfo::cpu()
    }

    fn host_slice<T: Element>(buf: &Vec<T>, len: usize) -> Option<&[T]> {
        buf.get(..len)
    }

    fn host_slice_mut<T: Element>(buf: &mut Vec<T>, len: usize) -> Option<&mut [T]> {
        buf.get_mut(..len)
    }
}
