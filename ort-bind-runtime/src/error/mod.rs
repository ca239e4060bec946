//! The runtime's errors: the bottom layer, which names nothing else in the crate.
//!
//! [`Error`] is what every fallible call returns; the errors of one part that carry more
//! detail live in files of their own here (`library.rs`: the ONNX Runtime library could not
//! be loaded; `model_search.rs`: where a model was looked for; `decode.rs`: what the decode
//! loop refuses) and are re-exported where users meet them.

pub(crate) mod decode;
pub(crate) mod library;
pub(crate) mod model_search;

pub use decode::DecodeError;
use library::LibraryError;
use std::fmt;

/// Result alias for the runtime.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong when loading a model, binding buffers or running.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The ONNX Runtime shared library could not be found or loaded.
    Library(LibraryError),

    /// An ONNX Runtime call failed; `context` says which step.
    Ort {
        /// What ort-bind was doing.
        context: String,
        /// ONNX Runtime's own message.
        message: String,
    },

    /// A tensor was given dims that do not fit its type or the model.
    Shape {
        /// ONNX name of the tensor.
        tensor: String,
        /// The dims that were asked for.
        found: Vec<usize>,
        /// What is wrong with them.
        reason: String,
    },

    /// Data of the wrong length was written into a tensor.
    Length {
        /// ONNX name of the tensor.
        tensor: String,
        /// Elements the tensor holds.
        expected: usize,
        /// Elements that were given.
        found: usize,
        /// The tensor's current dims.
        dims: Vec<usize>,
    },

    /// The product of a tensor's dims overflows `usize`.
    TooLarge {
        /// ONNX name of the tensor.
        tensor: String,
        /// The dims that overflow.
        dims: Vec<usize>,
    },

    /// Two values of a symbolic dimension disagree, or a dim contradicts the model.
    Dim {
        /// Name of the dimension.
        dim: String,
        /// What is wrong.
        reason: String,
    },

    /// The model loaded at run time does not match the signature the bindings were generated from.
    SignatureMismatch {
        /// What differs.
        problem: String,
    },

    /// An output was read before any successful run produced it.
    NotRun {
        /// ONNX name of the output.
        output: String,
    },

    /// ONNX Runtime produced a value whose type differs from the declared one.
    OutputType {
        /// ONNX name of the output.
        output: String,
        /// Declared type.
        expected: String,
        /// Produced type.
        found: String,
    },

    /// A buffer could not be allocated.
    OutOfMemory {
        /// ONNX name of the tensor.
        tensor: String,
        /// Bytes requested.
        bytes: usize,
        /// Device name (`cpu`, `cuda:0`, ...).
        device: String,
    },

    /// A CUDA problem (the `cuda` feature); `kind` says which, `message` what to do about it.
    Cuda {
        /// What went wrong.
        kind: CudaErrorKind,
        /// Details, and how to fix it.
        message: String,
    },

    /// Data of one element type was given for an input of another.
    InputType {
        /// ONNX name of the input.
        input: String,
        /// The model's element type.
        expected: String,
        /// The data's element type.
        found: String,
    },

    /// A run was asked for before every input had data.
    MissingInput {
        /// ONNX name of the input.
        input: String,
    },

    /// A model value ort-bind cannot bind (an element type it has no Rust type for, a
    /// sparse tensor, ...).
    Unsupported {
        /// `input` or `output`.
        role: &'static str,
        /// ONNX name.
        name: String,
        /// What the value is.
        kind: String,
    },

    /// A string tensor, sequence, map or optional value is malformed or does not fit its
    /// type (strings that are not UTF-8, a map with a duplicate key, keys and values of
    /// different lengths, a sequence element of the wrong type, ...).
    Value {
        /// ONNX name of the value.
        value: String,
        /// What is wrong.
        problem: String,
    },

    /// A run was stopped by its binding's [`Terminator`](crate::Terminator) (or its
    /// asynchronous run's future was dropped); the binding stays usable.
    Terminated,

    /// A run did not finish within its timeout and was stopped
    /// ([`Binding::run_with_timeout`](crate::Binding::run_with_timeout)); the binding stays usable.
    TimedOut {
        /// The timeout the run was given.
        timeout: std::time::Duration,
    },

    /// [`Binding::run_async`](crate::Binding::run_async) could not run: no worker thread could
    /// be started (or one panicked), or its future was polled again after it completed.
    AsyncRun {
        /// Why, and what to do instead.
        reason: String,
    },

    /// The batch a request of a [`Batcher`](crate::Batcher) ran in failed; every request
    /// of that batch gets this error, with the batch's own error as its `cause` (shared by
    /// them, to match on: `Error::Batch { cause } if matches!(*cause, Error::Terminated)`).
    Batch {
        /// The error of the batch's binding or run.
        cause: std::sync::Arc<Error>,
    },

    /// The decode loop refused a request ([`decode::Decoder`](crate::decode::Decoder)); the
    /// decoder is unchanged.
    Decode(DecodeError),

    /// A file could not be read.
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },

    /// A LoRA adapter file ([`Adapter`](crate::Adapter)) could not be read, or does not
    /// fit the model it was set on (a parameter the model has no overridable input for, of
    /// another element type or size, or a rank that differs between parameters).
    Adapter {
        /// The adapter: its file, or `<bytes>` when read from memory.
        adapter: String,
        /// What is wrong.
        problem: String,
    },

    /// A model file was found in none of the places [`ModelFile::find`] looks.
    ///
    /// [`ModelFile::find`]: crate::ModelFile::find
    ModelNotFound {
        /// The model's file name.
        model: String,
        /// Every place looked at, in order.
        looked: Vec<model_search::LookedAt>,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Library(inner) => fmt::Display::fmt(inner, f),
            Error::Ort { context, message } => {
                write!(f, "ONNX Runtime failed while {context}: {message}")
            }
            Error::Shape {
                tensor,
                found,
                reason,
            } => write!(f, "tensor `{tensor}`: dims {found:?} do not fit: {reason}"),
            Error::Length {
                tensor,
                expected,
                found,
                dims,
            } => write!(
                f,
                "tensor `{tensor}`: expected {expected} elements (dims {dims:?}), found {found}"
            ),
            Error::TooLarge { tensor, dims } => write!(
                f,
                "tensor `{tensor}`: dims {dims:?} hold more elements than fit in memory"
            ),
            Error::Dim { dim, reason } => write!(f, "dimension `{dim}`: {reason}"),
            Error::SignatureMismatch { problem } => write!(
                f,
                "the model does not match the bindings generated for it: {problem}; regenerate the bindings (rebuild) or load the model they were generated from"
            ),
            Error::NotRun { output } => write!(
                f,
                "output `{output}` has no value yet: run the binding first"
            ),
            Error::OutputType {
                output,
                expected,
                found,
            } => write!(
                f,
                "output `{output}`: ONNX Runtime produced {found} where the model declares {expected}"
            ),
            Error::OutOfMemory {
                tensor,
                bytes,
                device,
            } => write!(
                f,
                "tensor `{tensor}`: cannot allocate {bytes} bytes on {device}"
            ),
            Error::Cuda { kind, message } => write!(f, "{kind}: {message}"),
            Error::InputType {
                input,
                expected,
                found,
            } => write!(
                f,
                "input `{input}` is {expected} in the model, the data is {found}"
            ),
            Error::MissingInput { input } => write!(
                f,
                "input `{input}` has no data: set every input before running"
            ),
            Error::Unsupported { role, name, kind } => {
                write!(f, "{role} `{name}` is {kind}, which ort-bind does not bind")
            }
            Error::Value { value, problem } => write!(f, "value `{value}`: {problem}"),
            Error::Terminated => f.write_str("the run was terminated before it finished"),
            Error::TimedOut { timeout } => write!(
                f,
                "the run did not finish within {timeout:?} and was stopped"
            ),
            Error::AsyncRun { reason } => write!(f, "cannot run asynchronously: {reason}"),
            Error::Batch { cause } => write!(f, "the batch this request ran in failed: {cause}"),
            Error::Decode(inner) => fmt::Display::fmt(inner, f),
            Error::Io { path, source } => write!(f, "cannot read `{path}`: {source}"),
            Error::Adapter { adapter, problem } => write!(f, "adapter {adapter}: {problem}"),
            Error::ModelNotFound { model, looked } => write!(
                f,
                "model `{model}` not found; looked at:{}",
                model_search::describe_search(looked)
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Library(inner) => std::error::Error::source(inner),
            Error::Batch { cause, .. } => Some(&**cause),
            Error::Decode(inner) => std::error::Error::source(inner),
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<LibraryError> for Error {
    fn from(e: LibraryError) -> Self {
        Error::Library(e)
    }
}

impl From<DecodeError> for Error {
    fn from(e: DecodeError) -> Self {
        Error::Decode(e)
    }
}

impl Error {
    /// Names the tensor in an allocation error raised before the name was known.
    pub(crate) fn for_tensor(mut self, name: &str) -> Self {
        if let Error::OutOfMemory { tensor, .. } = &mut self
            && tensor.is_empty()
        {
            *tensor = name.to_owned();
        }
        self
    }
}

/// The kinds of [`Error::Cuda`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CudaErrorKind {
    /// No usable NVIDIA driver: `libcuda` is missing, too old, or failed to initialise.
    NoDriver,
    /// The driver works but has no device with the requested ordinal.
    NoDevice,
    /// The loaded ONNX Runtime library has no CUDA execution provider, or the provider
    /// could not load its CUDA libraries.
    NoExecutionProvider,
    /// Memory, a stream or a session belongs to another device, context or stream than
    /// the one it is used with.
    WrongDevice,
    /// The device ran out of memory while ONNX Runtime ran the model (ort-bind's own
    /// allocations report [`Error::OutOfMemory`]).
    OutOfMemory,
    /// Any other failure reported by the CUDA driver.
    Driver,
}

impl std::fmt::Display for CudaErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CudaErrorKind::NoDriver => "no usable CUDA driver",
            CudaErrorKind::NoDevice => "no such CUDA device",
            CudaErrorKind::NoExecutionProvider => "no CUDA execution provider in ONNX Runtime",
            CudaErrorKind::WrongDevice => "wrong CUDA device",
            CudaErrorKind::OutOfMemory => "CUDA device out of memory",
            CudaErrorKind::Driver => "CUDA driver error",
        })
    }
}
