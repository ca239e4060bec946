//! Runtime for ort-bind: element types, shapes, devices, tensors, and a sound,
//! zero-copy I/O binding over ONNX Runtime's C API.
//!
//! Generated bindings (from `ort-bind-codegen` or the `ort-bind` macros) are thin
//! typed layers over [`Binding`], [`Tensor`] and [`AllocatedOutput`]; most users
//! never name these directly.
//!
//! The modules are layers, bottom up: a module may name the modules of its own layer and
//! of the layers below, never one above (`tests/layers.rs` reads this table and checks
//! every `crate::` path of every file against it).
//!
//! | layer | modules | what they hold |
//! | --- | --- | --- |
//! | 0 | `element`, `shape` | element types (one table, [`NumericType`]) and shape types: plain data |
//! | 1 | `error` | [`Error`] and the detailed errors of each part |
//! | 2 | `sys` | every ONNX Runtime C API call and its `SAFETY` argument (private) |
//! | 3 | `library`, `logging` | finding and loading ONNX Runtime; its log lines and telemetry |
//! | 4 | `device`, `tensor` | devices and the buffers on them; [`Tensor`] and its views |
//! | 5 | `session`, `model_file` | loading models ([`Session`]) and finding them after deployment |
//! | 6 | `values`, `adapter` | string tensors, sequences, maps, optionals, host arrays of any type; LoRA adapters ([`Adapter`]) |
//! | 7 | `binding`, `feed`, `dims`, `cancel`, `deadline`, `run_async`, `workers` | [`Binding`], the binding every route builds on, with its runs: stop, timeout, async (on ONNX Runtime's `RunAsync` or ort-bind's worker threads), a chain's fed runs ([`Feed`]) |
//! | 8 | `slot`, `assert`, `pool`, `batch`, `ndarray_views`, `ort_interop` | what the derive builds on; serving: [`Pool`], [`Batcher`]; `ndarray` views; interop with the `ort` crate (the `ort` feature) |
//! | 9 | `dynamic`, `decode` | `DynamicBinding` (the `dynamic` feature; element types read at run time: a [`Binding`] over `DynamicIo`, so async, stops, timeouts and shape buckets too); [`decode::Decoder`] (the KV-cache decode loop) |

pub mod adapter;
pub mod assert;
pub mod batch;
pub mod binding;
pub mod cancel;
mod deadline;
pub mod decode;
pub mod device;
pub mod dims;
#[cfg(feature = "dynamic")]
pub mod dynamic;
pub mod element;
pub mod error;
pub mod feed;
pub mod library;
pub mod logging;
pub mod model_file;
#[cfg(feature = "ndarray")]
pub mod ndarray_views;
#[cfg(feature = "ort")]
pub mod ort_interop;
pub mod pool;
pub mod run_async;
pub mod session;
pub mod shape;
pub mod slot;
mod sys;
pub mod tensor;
pub mod values;
mod workers;

pub use adapter::{Adapter, AdapterHost, WithAdapter};
pub use batch::{
    BatchOptions, BatchSizing, Batcher, Batching, ReplyFuture, Row, Shutdown, SizingReport,
};
pub use binding::{Binder, Binding, BindingIo, DEFAULT_RECENT_DIMS, IoNames, OutputValue, SplitIo};
pub use cancel::Terminator;
pub use device::{Cpu, Device, HostDevice};
#[cfg(feature = "cuda")]
pub use device::{Cuda, CudaPinned, cuda_provider_available};
pub use dims::{AxisRule, DimsSolver};
#[cfg(feature = "dynamic")]
pub use dynamic::{
    DynDims, DynInputsMut, DynamicBinding, DynamicIo, HostArray, HostArrayRef, HostData,
    HostDataRef, NumericElement,
};
pub use element::{
    Element, Float4E2M1x2, Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2, Float8E5M2FNUZ, Float8E8M0,
    Int2x4, Int4x2, NumericType, Packed, UInt2x4, UInt4x2, Unpacked, bf16, f16, narrow,
};
pub use error::{CudaErrorKind, Error, Result};
pub use feed::Feed;
pub use model_file::ModelFile;
pub use pool::{CheckedOut, CheckoutFuture, GetFuture, Pool, PoolOf, Poolable, PooledBinding};
pub use run_async::RunFuture;
pub use session::{Session, SessionOptions, ValueKind, ValueSpec};
pub use shape::{AcceptsFixed, AnyRank, Axis, Dyn, Fix, HasRank, Shape};
pub use slot::{InputSlot, Slot};
pub use tensor::{AllocatedOutput, DimsChange, Tensor, TensorMut, TensorRef};
#[cfg(feature = "dynamic")]
pub use values::{DynKey, DynMap, DynValue};
pub use values::{
    ElementType, Map, MapKey, MapSequence, MapValue, Optional, OutputRef, Sequence,
    SequenceElement, StringOutput, StringTensor, StringTensorMut, Strings, ValueInputSlot,
    ValueOutputSlot, ValueType,
};

/// The `cudarc` crate ort-bind's CUDA devices are built on (the `cuda` feature), so
/// callers name the same version: `ort_bind_runtime::cudarc::driver::CudaStream`.
#[cfg(feature = "cuda")]
pub use cudarc;

/// The `ndarray` crate the host views are built on (the `ndarray` feature), so callers name
/// the same version.
#[cfg(feature = "ndarray")]
pub use ndarray;

/// The `ort` crate (`=2.0.0-rc.15`) that [`ort_interop`] works with (the `ort` feature), so
/// callers name the same version.
#[cfg(feature = "ort")]
pub use ort;
#[cfg(feature = "ort")]
pub use ort_interop::OrtTensorView;

/// Re-exported so generated code can name ONNX element codes.
pub use ort_sys::ONNXTensorElementDataType;

/// The ONNX Runtime C API declarations ort-bind calls through (`ort-sys`, generated from
/// ONNX Runtime's header), for C API calls on [`Session::as_raw`] that ort-bind does not
/// wrap.
pub use ort_sys;

/// Not public API: the names generated code and the derive's expansions reach through
/// `<runtime>::__private::…` (`::ort_bind::__private` re-exports this module). No semver
/// promise: these change with the code generators (like serde's `__private`).
#[doc(hidden)]
pub mod __private {
    pub use crate::adapter::{BoundAdapter, DeclaredAxis};
    pub use crate::assert;
    pub use crate::batch::{NoBatchDim, gather_row, scatter_row};
    pub use crate::binding::DEFAULT_RECENT_DIMS;
    pub use crate::dims::{AxisRule, DimsSolver, SizeOp, sized_axis, solve as solve_dims};
    pub use crate::session::ValueKind;
    pub use crate::shape::InputShape;
    pub use crate::shape::{AcceptsFixed, HasRank};
    pub use crate::slot::{InputSlot, Slot, spec, spec_any_rank};
    pub use crate::values::ValueInputSlot;
    pub use ort_sys::ONNXTensorElementDataType;
}
