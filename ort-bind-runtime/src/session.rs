//! Loading a model into ONNX Runtime, and checking it against generated bindings.

use std::path::Path;
use std::ptr::NonNull;
use std::sync::Arc;

use ort_sys::{ONNXTensorElementDataType, OrtSession};

use crate::element::onnx_type_name;
use crate::error::{Error, Result};
use crate::library;
use crate::sys::{self, Declared, DeclaredType, RunOptions};

/// How to build a session. The defaults are ONNX Runtime's, except that the number
/// of intra-op threads can be pinned for reproducible benchmarks.
#[derive(Debug, Clone, Default)]
pub struct SessionOptions {
    intra_threads: Option<usize>,
    inter_threads: Option<usize>,
    intra_spinning: Option<bool>,
    optimization: Option<u8>,
    #[cfg(feature = "cuda")]
    cuda: Option<crate::device::cuda::CudaProvider>,
    #[cfg(feature = "cuda")]
    cuda_tf32: Option<bool>,
}

impl SessionOptions {
    /// Default options.
    pub fn new() -> Self {
        Self::default()
    }

    /// Threads used inside one operator (0 lets ONNX Runtime decide).
    pub fn intra_threads(mut self, n: usize) -> Self {
        self.intra_threads = Some(n);
        self
    }

    /// Whether idle intra-op threads spin (busy-wait) before sleeping (ONNX Runtime's
    /// `session.intra_op.allow_spinning`; on by default). Spinning shortens the start of
    /// the next parallel kernel; turning it off frees the cores sooner, which helps when
    /// more runs than cores are in flight, and the thread that
    /// [`Binding::run_async`](crate::Binding::run_async) wakes when a run finishes.
    pub fn intra_spinning(mut self, spin: bool) -> Self {
        self.intra_spinning = Some(spin);
        self
    }

    /// Threads used to run independent operators in parallel.
    pub fn inter_threads(mut self, n: usize) -> Self {
        self.inter_threads = Some(n);
        self
    }

    /// Graph optimisation level: 0 (none), 1 (basic), 2 (extended), 3 (all; default).
    pub fn optimization_level(mut self, level: u8) -> Self {
        self.optimization = Some(level.min(3));
        self
    }

    /// Runs the model with ONNX Runtime's CUDA execution provider on `device`, on the
    /// device's stream (ONNX Runtime's "user compute stream"): kernels the caller enqueues
    /// on that stream before and after a run are ordered with the run, with no device-wide
    /// synchronization. Bindings on `device` (`bind_on(device.clone(), ..)`) then use
    /// device memory in place; host tensors (`Cpu`, `CudaPinned`) still work: ONNX Runtime
    /// copies host inputs to the device at each run (it copies an input when it is bound,
    /// so a binding binds its host inputs again before every run) and host outputs back
    /// before the run returns. The session keeps the stream alive.
    ///
    /// Creating the session fails with [`Error::Cuda`] of kind
    /// [`NoExecutionProvider`](crate::error::CudaErrorKind::NoExecutionProvider) when the
    /// loaded ONNX Runtime has no CUDA execution provider (the `onnxruntime` wheel is
    /// CPU-only; `onnxruntime-gpu` has it).
    #[cfg(feature = "cuda")]
    pub fn cuda<const N: usize>(mut self, device: &crate::device::Cuda<N>) -> Self {
        self.cuda = Some(crate::device::cuda::CudaProvider {
            ordinal: N,
            stream: Some(device.stream().clone()),
        });
        self
    }

    /// Runs the model with ONNX Runtime's CUDA execution provider on device `ordinal`,
    /// on a stream ONNX Runtime creates. Such a session takes host tensors only (`Cpu`,
    /// `CudaPinned`, copied by ONNX Runtime on each run); to bind device memory, build
    /// the session with [`SessionOptions::cuda`] so that it runs on the memory's stream.
    #[cfg(feature = "cuda")]
    pub fn cuda_provider(mut self, ordinal: usize) -> Self {
        self.cuda = Some(crate::device::cuda::CudaProvider {
            ordinal,
            stream: None,
        });
        self
    }

    /// Whether the CUDA execution provider may multiply float32 matrices in TensorFloat-32
    /// (ONNX Runtime's default: yes, on GPUs that have it). TF32 keeps 10 mantissa bits in
    /// the products, so results differ from the CPU's in the fourth significant digit;
    /// `false` gives float32 results that agree with the CPU's to rounding, at some speed.
    ///
    /// ```
    /// # #[cfg(feature = "cuda")] {
    /// let exact = ort_bind_runtime::SessionOptions::new().cuda_provider(0).cuda_tf32(false);
    /// # }
    /// ```
    #[cfg(feature = "cuda")]
    pub fn cuda_tf32(mut self, allowed: bool) -> Self {
        self.cuda_tf32 = Some(allowed);
        self
    }

    /// The C API's options for these.
    fn raw(&self) -> Result<sys::SessionOptions> {
        let mut raw = sys::SessionOptions::new()?;
        if let Some(n) = self.intra_threads {
            raw.set_intra_threads(n)?;
        }
        if let Some(spin) = self.intra_spinning {
            raw.set_config(
                c"session.intra_op.allow_spinning",
                if spin { c"1" } else { c"0" },
            )?;
        }
        if let Some(n) = self.inter_threads {
            raw.set_inter_threads(n)?;
        }
        if let Some(level) = self.optimization {
            raw.set_optimization_level(level)?;
        }
        #[cfg(feature = "cuda")]
        if let Some(provider) = &self.cuda {
            provider.register(&mut raw, self.cuda_tf32)?;
        }
        Ok(raw)
    }

    /// What the session needs to keep for its device (the CUDA stream, run options).
    fn device_state(&self) -> Result<DeviceState> {
        #[cfg(feature = "cuda")]
        if let Some(provider) = &self.cuda {
            return Ok(DeviceState {
                cuda: Some(Arc::new(provider.session_state()?)),
            });
        }
        Ok(DeviceState::default())
    }
}

/// A loaded model: an ONNX Runtime session shared (reference-counted) by every
/// binding made from it.
///
/// # Threads
/// `Session` is `Send + Sync`, and `clone` is a reference-count increment: hand a clone
/// to every thread or task. ONNX Runtime allows concurrent runs on one session, each
/// through its own binding ([`Binding`](crate::Binding)), with no lock in ort-bind: two
/// threads on one session, one intra-op thread each, run about 1.9x the throughput of one
/// (see the guide's design chapter, `ort_bind::guide::design`, "Performance"). Each run uses the session's intra-op threads;
/// with many concurrent runs, set [`SessionOptions::intra_threads`] so that
/// `runs x threads` does not exceed the cores.
#[derive(Debug, Clone)]
pub struct Session {
    // Declared first: the ONNX Runtime session is released before the stream it runs on.
    inner: Arc<Loaded>,
    device: DeviceState,
    intra_threads: Option<usize>,
}

/// An ONNX Runtime session and the inputs and outputs its model declares (read once).
#[derive(Debug)]
struct Loaded {
    raw: sys::Session,
    inputs: Vec<Declared>,
    outputs: Vec<Declared>,
    // Inputs with a default (an initializer), which a run may be given or not.
    overridable: Vec<Declared>,
}

impl Loaded {
    fn new(raw: sys::Session) -> Result<Loaded> {
        Ok(Loaded {
            inputs: raw.declared(sys::Side::Input)?,
            outputs: raw.declared(sys::Side::Output)?,
            overridable: raw.declared(sys::Side::Overridable)?,
            raw,
        })
    }
}

/// What a session keeps for the device it runs on.
#[derive(Debug, Clone, Default)]
struct DeviceState {
    #[cfg(feature = "cuda")]
    cuda: Option<Arc<crate::device::cuda::CudaSession>>,
}

/// What generated code expects of one model value: [`Session::check_signature`] compares
/// it with what the model declares (a `ValueInfo`, with the `dynamic` feature).
#[derive(Debug, Clone, Copy)]
pub struct ValueSpec {
    /// ONNX name.
    pub name: &'static str,
    /// Element type of the tensor; of the tensors of a sequence or optional; of a map's
    /// values.
    pub elem: ONNXTensorElementDataType,
    /// Rank of the tensor (or of a sequence's tensors), when the model declares one.
    pub rank: Option<usize>,
    /// What kind of value it is.
    pub kind: ValueKind,
}

/// The kind of a [`ValueSpec`] (what generated code expects): a tensor, or one of the
/// containers around tensors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// A tensor (numeric, bool or string).
    Tensor,
    /// `sequence(tensor)`.
    Sequence,
    /// `map(key, elem)`.
    Map {
        /// The key type.
        key: ONNXTensorElementDataType,
    },
    /// `sequence(map(key, elem))`.
    MapSequence {
        /// The key type.
        key: ONNXTensorElementDataType,
    },
    /// `optional(tensor)`.
    OptionalTensor,
    /// `optional(sequence(tensor))`.
    OptionalSequence,
}

impl ValueSpec {
    /// The spec of a tensor of `T` named `name` with the given rank.
    pub const fn of<T: crate::element::Element>(
        name: &'static str,
        rank: Option<usize>,
    ) -> ValueSpec {
        ValueSpec {
            name,
            elem: T::ONNX_TYPE,
            rank,
            kind: ValueKind::Tensor,
        }
    }

    /// The spec of a string tensor named `name` with the given rank.
    pub const fn string(name: &'static str, rank: Option<usize>) -> ValueSpec {
        ValueSpec {
            name,
            elem: ONNXTensorElementDataType::ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING,
            rank,
            kind: ValueKind::Tensor,
        }
    }

    /// The optional form of a tensor or sequence spec (other specs are returned unchanged).
    pub const fn optional(self) -> ValueSpec {
        let kind = match self.kind {
            ValueKind::Tensor => ValueKind::OptionalTensor,
            ValueKind::Sequence => ValueKind::OptionalSequence,
            other => other,
        };
        ValueSpec { kind, ..self }
    }
}

impl Session {
    /// Loads the model at `path`.
    pub fn from_file(path: impl AsRef<Path>, options: &SessionOptions) -> Result<Session> {
        let path = path.as_ref();
        if !path.exists() {
            return Err(Error::Io {
                path: path.display().to_string(),
                source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
            });
        }
        let env = library::init()?.environment();
        let raw = options.raw()?;
        let device = options.device_state()?;
        let session = sys::Session::from_file(env, path, &raw).map_err(|e| device.classify(e))?;
        Ok(Session {
            inner: Arc::new(Loaded::new(session)?),
            device,
            intra_threads: options.intra_threads,
        })
    }

    /// Loads a model from bytes in memory.
    pub fn from_memory(bytes: &[u8], options: &SessionOptions) -> Result<Session> {
        let env = library::init()?.environment();
        let raw = options.raw()?;
        let device = options.device_state()?;
        let session =
            sys::Session::from_memory(env, bytes, &raw).map_err(|e| device.classify(e))?;
        Ok(Session {
            inner: Arc::new(Loaded::new(session)?),
            device,
            intra_threads: options.intra_threads,
        })
    }

    /// Takes over a session the `ort` crate built (the `ort` feature), for typed bindings:
    /// generated modules take it through `Model::from_session`, which checks the model's
    /// signature like any session's (a mismatch is [`Error::SignatureMismatch`]). The `ort`
    /// session is kept (moved into the returned session, shared by its clones and bindings)
    /// and released when the last of them is dropped. ONNX Runtime is the one `ort` loaded
    /// (see [`library`]), so nothing is copied or loaded again.
    ///
    /// A session whose execution provider takes inputs on a device (`ort`'s CUDA provider)
    /// is refused with [`Error::Unsupported`]: ort-bind runs such sessions on a device stream
    /// it knows ([`SessionOptions::cuda`](SessionOptions)); build them with ort-bind.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let env = ort::init().build()?;
    /// let ort_session = ort::session::Session::builder(&env)?.commit_from_file("model.onnx")?;
    /// let session = ort_bind_runtime::Session::from_ort(ort_session)?;
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "ort")]
    pub fn from_ort(session: ort::session::Session) -> Result<Session> {
        use ort::AsPointer as _;
        let ptr = session.ptr();
        Session::adopt_ort(ptr, Box::new(session))
    }

    /// Like [`Session::from_ort`], but the `ort` session stays the caller's too: both run
    /// the same ONNX Runtime session (ONNX Runtime allows concurrent runs on one session),
    /// which is released when the `ort` session and every ort-bind session and binding
    /// using it are gone.
    #[cfg(feature = "ort")]
    pub fn from_ort_shared(session: &ort::session::Session) -> Result<Session> {
        use ort::AsPointer as _;
        Session::adopt_ort(session.ptr(), Box::new(session.inner()))
    }

    #[cfg(feature = "ort")]
    fn adopt_ort(
        ptr: *const OrtSession,
        owner: Box<dyn std::any::Any + Send + Sync>,
    ) -> Result<Session> {
        // `ort` has a library (it made this session): this makes it ort-bind's too.
        library::init()?;
        let loaded = Loaded::new(sys::Session::from_ort_parts(ptr, owner)?)?;
        if !loaded.raw.inputs_on_host(loaded.inputs.len())? {
            return Err(Error::Unsupported {
                role: "input",
                name: String::new(),
                kind: "the `ort` session's execution provider takes its inputs on a device; build device sessions with ort-bind (`SessionOptions::cuda`)".into(),
            });
        }
        Ok(Session {
            inner: Arc::new(loaded),
            device: DeviceState::default(),
            intra_threads: None,
        })
    }

    /// The number of intra-op threads the session was built with, when
    /// [`SessionOptions::intra_threads`] set one (`Some(0)` and `None`: ONNX Runtime's
    /// default, one per core).
    pub fn intra_threads(&self) -> Option<usize> {
        self.intra_threads
    }

    /// The ONNX Runtime session (`OrtSession*`), for C API calls ort-bind does not wrap
    /// (through the table [`LoadedLibrary::api`](crate::library::LoadedLibrary::api) gives,
    /// declared by [`ort_sys`]). Clones
    /// of a `Session` share it; it stays valid while any clone, or a binding made from one,
    /// is alive.
    pub fn as_raw(&self) -> NonNull<OrtSession> {
        self.inner.raw.as_ptr()
    }

    /// The ordinal of the CUDA device the session runs on, if it was built with
    /// [`SessionOptions::cuda`] or [`SessionOptions::cuda_provider`].
    #[cfg(feature = "cuda")]
    pub fn cuda_device(&self) -> Option<usize> {
        self.device.cuda.as_ref().map(|c| c.ordinal())
    }

    /// Whether the session runs on a device provider (CUDA), which copies host inputs to
    /// the device when they are bound (see `sys::IoBinding`).
    pub(crate) fn on_device(&self) -> bool {
        #[cfg(feature = "cuda")]
        if self.device.cuda.is_some() {
            return true;
        }
        false
    }

    /// Run options for runs that return before the device has finished, when the session
    /// runs on a caller's stream (`None` otherwise: runs use the defaults and return
    /// when the work is done).
    pub(crate) fn async_run_options(&self) -> Option<&RunOptions> {
        #[cfg(feature = "cuda")]
        if let Some(cuda) = &self.device.cuda {
            return cuda.async_run_options();
        }
        None
    }

    /// Refines an error of a run into the device problem it reports, where it reports one.
    pub(crate) fn run_error(&self, e: Error) -> Error {
        self.device.classify(e)
    }

    pub(crate) fn raw(&self) -> NonNull<OrtSession> {
        self.inner.raw.as_ptr()
    }

    /// The inputs (`output == false`) or outputs the model declares.
    pub(crate) fn declared(&self, output: bool) -> &[Declared] {
        if output {
            &self.inner.outputs
        } else {
            &self.inner.inputs
        }
    }

    /// The dims the model declares for input (`output == false`) or output `name`, `-1`
    /// for a dynamic axis; `None` when it has no such tensor.
    pub(crate) fn declared_dims(&self, output: bool, name: &str) -> Option<Vec<i64>> {
        match &self.declared(output).iter().find(|d| d.name == name)?.ty {
            DeclaredType::Tensor { dims, .. } => Some(dims.clone()),
            _ => None,
        }
    }

    /// Checks that the loaded model has exactly these inputs and outputs (names, element
    /// types and ranks), so bindings generated from one model file cannot silently run
    /// another.
    pub fn check_signature(&self, inputs: &[ValueSpec], outputs: &[ValueSpec]) -> Result<()> {
        check_side("input", &self.inner.inputs, inputs)?;
        check_side("output", &self.inner.outputs, outputs)
    }

    /// Checks that each of `specs` is an overridable input of the loaded model (an input
    /// with a default, which a run may be given or not) of that element type and rank. The
    /// model may have more: an overridable input the bindings do not know keeps its default.
    pub fn check_overridable(&self, specs: &[ValueSpec]) -> Result<()> {
        for spec in specs {
            let Some(declared) = self.inner.overridable.iter().find(|d| d.name == spec.name) else {
                let names: Vec<&str> = self
                    .inner
                    .overridable
                    .iter()
                    .map(|d| d.name.as_str())
                    .collect();
                return Err(Error::SignatureMismatch {
                    problem: format!(
                        "the model has no overridable input `{}` (an input with a default; it \
                         has {names:?})",
                        spec.name
                    ),
                });
            };
            if let Some(problem) = spec_mismatch(spec, &declared.ty) {
                return Err(Error::SignatureMismatch {
                    problem: format!("overridable input `{}` {problem}", spec.name),
                });
            }
        }
        Ok(())
    }

    /// The names of the model's overridable inputs (inputs with a default, which a run may
    /// be given or not: LoRA adapter weights, say), in the model's order.
    pub fn overridable_inputs(&self) -> impl Iterator<Item = &str> {
        self.inner.overridable.iter().map(|d| d.name.as_str())
    }
}

/// What devices check bound memory against (so that they need not know sessions).
impl<'a> From<&'a Session> for crate::device::private::SessionDevice<'a> {
    #[cfg_attr(not(feature = "cuda"), allow(unused_variables))]
    fn from(session: &'a Session) -> Self {
        crate::device::private::SessionDevice {
            #[cfg(feature = "cuda")]
            cuda: session
                .device
                .cuda
                .as_deref()
                .map(|c| (c.ordinal(), c.stream())),
            _session: std::marker::PhantomData,
        }
    }
}

impl DeviceState {
    /// Names the CUDA problem behind an ONNX Runtime error of a CUDA session (out of memory,
    /// no device, driver too old); other errors pass through.
    fn classify(&self, e: Error) -> Error {
        #[cfg(feature = "cuda")]
        if self.cuda.is_some() {
            return crate::device::cuda::classify_ort_error(e);
        }
        e
    }
}

/// How `ty` (the model's) differs from `spec` (the bindings'), if it does.
fn spec_mismatch(spec: &ValueSpec, ty: &DeclaredType) -> Option<String> {
    let tensor = |ty: &DeclaredType| -> Option<String> {
        match ty {
            DeclaredType::Tensor { elem, dims: shape } => {
                let found = *elem;
                if found != spec.elem {
                    return Some(format!(
                        "holds {} in the model, the bindings expect {}",
                        onnx_type_name(found),
                        onnx_type_name(spec.elem)
                    ));
                }
                match spec.rank {
                    Some(rank) if shape.len() != rank => Some(format!(
                        "has rank {} in the model, the bindings expect {rank}",
                        shape.len()
                    )),
                    _ => None,
                }
            }
            other => Some(format!(
                "is {other} in the model, the bindings expect a tensor"
            )),
        }
    };
    let map = |ty: &DeclaredType, key: ONNXTensorElementDataType| -> Option<String> {
        match ty {
            DeclaredType::Map { key: k, value: v } if *k == key && *v == spec.elem => None,
            other => Some(format!(
                "is {other} in the model, the bindings expect map({}, {})",
                onnx_type_name(key),
                onnx_type_name(spec.elem)
            )),
        }
    };
    let wrong = |want: &str| Some(format!("is {ty} in the model, the bindings expect {want}"));
    match (spec.kind, ty) {
        (ValueKind::Tensor, DeclaredType::Tensor { .. }) => tensor(ty),
        (ValueKind::Sequence, DeclaredType::Sequence(inner)) => tensor(inner),
        (ValueKind::Map { key }, _) => map(ty, key),
        (ValueKind::MapSequence { key }, DeclaredType::Sequence(inner)) => map(inner, key),
        (ValueKind::OptionalTensor, DeclaredType::Optional(inner)) => {
            matches!(**inner, DeclaredType::Tensor { .. })
                .then(|| tensor(inner))
                .unwrap_or_else(|| wrong("an optional tensor"))
        }
        (ValueKind::OptionalSequence, DeclaredType::Optional(inner)) => match &**inner {
            DeclaredType::Sequence(t) => tensor(t),
            _ => wrong("an optional sequence"),
        },
        (ValueKind::Tensor, _) => wrong("a tensor"),
        (ValueKind::Sequence, _) => wrong("a sequence"),
        (ValueKind::MapSequence { .. }, _) => wrong("a sequence of maps"),
        (ValueKind::OptionalTensor | ValueKind::OptionalSequence, _) => wrong("an optional"),
    }
}

fn check_side(kind: &str, actual: &[Declared], expected: &[ValueSpec]) -> Result<()> {
    for spec in expected {
        let Some(declared) = actual.iter().find(|d| d.name == spec.name) else {
            let names: Vec<&str> = actual.iter().map(|d| d.name.as_str()).collect();
            return Err(Error::SignatureMismatch {
                problem: format!("the model has no {kind} `{}` (it has {names:?})", spec.name),
            });
        };
        if let Some(problem) = spec_mismatch(spec, &declared.ty) {
            return Err(Error::SignatureMismatch {
                problem: format!("{kind} `{}` {problem}", spec.name),
            });
        }
    }
    if actual.len() != expected.len() {
        let extra: Vec<&str> = actual
            .iter()
            .map(|d| d.name.as_str())
            .filter(|n| !expected.iter().any(|s| s.name == *n))
            .collect();
        return Err(Error::SignatureMismatch {
            problem: format!("the model has {kind}s the bindings do not know: {extra:?}"),
        });
    }
    Ok(())
}
