//! CUDA devices through `cudarc` (the `cuda` feature).
//!
//! [`Cuda<N>`] is CUDA device `N` together with the stream every operation on it is
//! enqueued on: allocations, copies, and the runs of sessions built with
//! [`SessionOptions::cuda`](crate::SessionOptions::cuda), which hand that stream to ONNX
//! Runtime as its "user compute stream". Work a caller enqueues on the same stream
//! before and after a run is ordered with it; no device-wide synchronization happens.
//!
//! A tensor on `Cuda<N>` is backed by a [`CudaSlice`](cudarc::driver::CudaSlice): one
//! ort-bind allocates ([`Tensor::new_in`](crate::Tensor::new_in), or a binding made with
//! `bind_on`), one the caller hands over
//! ([`Tensor::from_cuda_slice`](crate::Tensor::from_cuda_slice)), or memory another
//! framework owns, adopted with the `unsafe`
//! [`Tensor::from_raw_device_ptr`](crate::Tensor::from_raw_device_ptr). Inputs are written
//! in place by the caller's kernels ([`TensorMut::cuda_view_mut`](crate::TensorMut::cuda_view_mut))
//! or by explicit copies ([`TensorMut::copy_from_host`](crate::TensorMut::copy_from_host));
//! outputs are read in place ([`TensorRef::cuda_view`](crate::TensorRef::cuda_view),
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
//!
//! # Layers
//! Each file has one job; each uses only the files above it in this list:
//!
//! | file | what |
//! | --- | --- |
//! | `driver.rs` | every raw driver call: the only file with driver `unsafe` (like `sys.rs` for ONNX Runtime) |
//! | `error.rs` | driver codes, allocation failures and ONNX Runtime's CUDA messages as [`Error`]s; `cudarc` panics as errors |
//! | `pinned.rs` | the [`CudaPinned`] device: page-locked host memory |
//! | `device.rs` | the [`Cuda<N>`] device: context, stream, pinned staging memory |
//! | `buffer.rs` | a `Cuda<N>` tensor's memory: allocated, handed over or adopted ([`Tensor`](crate::Tensor) constructors) |
//! | `copy.rs` | [`TensorMut`](crate::TensorMut) / [`TensorRef`](crate::TensorRef) on `Cuda<N>`: in-place views, host and device copies |
//! | `provider.rs` | ONNX Runtime's CUDA execution provider for sessions; used by `session.rs` only, never by the device files |
//!
//! [`CudaErrorKind::NoDriver`]: crate::CudaErrorKind::NoDriver
//! [`CudaErrorKind::NoDevice`]: crate::CudaErrorKind::NoDevice
//! [`CudaErrorKind::WrongDevice`]: crate::CudaErrorKind::WrongDevice
//! [`Error::OutOfMemory`]: crate::Error::OutOfMemory
//! [`Error`]: crate::Error

mod buffer;
mod copy;
mod device;
mod driver;
mod error;
mod pinned;
mod provider;

pub use device::Cuda;
pub use pinned::CudaPinned;
pub use provider::cuda_provider_available;

pub(crate) use error::classify_ort_error;
pub(crate) use provider::{CudaProvider, CudaSession};
