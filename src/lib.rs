//! # ort-bind
//!
//! Strongly typed, zero-copy ONNX Runtime bindings generated from ONNX model files.
//!
//! ort-bind reads a model's signature at build time and generates, per model, a
//! module with a `Model` (the loaded session), a `Dims` struct (one field per
//! dynamic dimension), and a `Binding` whose `Inputs`/`Outputs` views are typed
//! tensors: the compiler knows every name, element type, rank and fixed size.
//! Buffers are bound to ONNX Runtime once and reused; a run copies nothing and
//! allocates nothing in ort-bind.
//!
//! ## Route 1: `build.rs`
//!
//! ```toml
//! [dependencies]
//! ort-bind = "0.1"
//! [build-dependencies]
//! ort-bind-codegen = "0.1"
//! ```
//! ```ignore
//! // build.rs (compiled against the build-dependency `ort-bind-codegen`):
//! ort_bind_codegen::Builder::new()
//!     .model("models/add.onnx")
//!     .compile()
//!     .unwrap_or_else(|e| panic!("{e}"));
//! ```
//! ```ignore
//! mod add {
//!     ort_bind::include_bindings!("add");
//! }
//!
//! let model = add::Model::load()?;
//! let mut binding = model.bind(add::Dims { n: 4 })?;
//! binding.inputs().x.copy_from_slice(&[1.0, 2.0, 3.0, 4.0])?;
//! binding.inputs().y.fill(10.0);
//! binding.run()?;
//! assert_eq!(binding.outputs().sum.as_slice(), &[11.0, 12.0, 13.0, 14.0]);
//! ```
//!
//! The runtime types ([`Tensor`], [`Binding`], devices, shapes) are re-exported
//! from `ort-bind-runtime`.
//!
//! ## Vocabulary
//!
//! One word per concept, in the runtime, in generated code and in `ort-bind-codegen`:
//!
//! - **binding**: buffers bound to a session once, run many times. [`Binding<Io>`](Binding)
//!   (the derive route uses it directly; each generated module's `Binding` wraps one);
//!   `dynamic::DynamicBinding` (the `dynamic` feature) when the values are known only at
//!   run time.
//! - **pooled binding**: a binding lent by a [`Pool`] that goes back when dropped:
//!   [`PooledBinding`] (a generated module's `PooledBinding`).
//! - **I/O**: what a binding binds, its tensors and values: a [`BindingIo`] ([`SplitIo`] when
//!   inputs and outputs can be borrowed apart), whose `bind` hands them to a [`Binder`].
//! - **element type**: [`Element`] is the trait of the Rust element types; a
//!   [`NumericType`] names one of them as a value (numeric or bool); an [`ElementType`] is
//!   what a model declares, a `NumericType` or `string` (`ort_bind_codegen::ElementType`
//!   too).
//! - **value type, value info**: what a model declares for an input or output: a
//!   [`ValueType`] (tensor, sequence, map, optional), and a `ValueInfo` (name and
//!   `ValueType`; `dynamic::ValueInfo`, the `dynamic` feature); codegen's `ValueType` and
//!   `ValueInfo` are the same, read from the model file.
//! - **spec**: what generated code expects of a value, checked against what the model
//!   declares: a [`ValueSpec`] (with its `ValueKind`).
//! - **slot**: where a binding keeps one value: the value slots
//!   [`ValueInputSlot`](values::ValueInputSlot) and [`ValueOutputSlot`] (strings,
//!   sequences, maps, optionals, [`AllocatedOutput`]), and the tensor slots of derived
//!   structs.

// The user API, by name and in the order a newcomer meets it. Every item keeps its
// runtime path too (`ort_bind_runtime::tensor::Tensor`); this page is the one to read.

/// Loading models and running them: a [`Session`] is a loaded model (what generated
/// `Model`s wrap), [`ModelFile`] finds a model after deployment; every fallible call
/// returns [`Result`].
pub use ort_bind_runtime::{CudaErrorKind, Error, ModelFile, Result, Session, SessionOptions};

/// Tensors and their shapes: a [`Tensor`] owns a buffer bound once; [`TensorMut`] and
/// [`TensorRef`] are the in-place views bindings hand out; [`AllocatedOutput`] is an
/// output ONNX Runtime sizes. Shapes are types: [`Fix<N>`](Fix), [`Dyn`], [`AnyRank`].
pub use ort_bind_runtime::{
    AllocatedOutput, AnyRank, Axis, DimsChange, Dyn, Fix, Shape, Tensor, TensorMut, TensorRef,
};

/// Devices are types: [`Cpu`] always; `Cuda<N>` and `CudaPinned` with the `cuda` feature.
pub use ort_bind_runtime::{Cpu, Device, HostDevice};
#[cfg(feature = "cuda")]
pub use ort_bind_runtime::{Cuda, CudaPinned, cuda_provider_available, cudarc};

/// Element types: the primitives, [`f16`](struct@f16), [`bf16`], and ONNX's narrow types
/// (module [`narrow`]).
pub use ort_bind_runtime::{
    Element, Float4E2M1x2, Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2, Float8E5M2FNUZ, Float8E8M0,
    Int2x4, Int4x2, Packed, UInt2x4, UInt4x2, Unpacked, bf16, f16, narrow,
};

/// String tensors, sequences, maps and optionals (module [`values`]).
pub use ort_bind_runtime::{
    Map, MapKey, MapSequence, MapValue, Optional, OutputRef, Sequence, SequenceElement,
    StringOutput, StringTensor, StringTensorMut, Strings, values,
};

/// The binding every route builds on: [`Binding`] owns an ONNX Runtime I/O binding and the
/// buffers it points at (the derive's structs run through it); a hand-written set of
/// tensors implements [`BindingIo`] (its values described by [`ValueSpec`]s, what generated
/// code expects) with a [`Binder`], and [`SplitIo`] for inputs and outputs at once.
pub use ort_bind_runtime::{Binder, Binding, BindingIo, Feed, OutputValue, SplitIo, ValueSpec};

/// Serving: stop a run ([`Terminator`]), async runs ([`RunFuture`]), pools of bindings
/// ([`Pool`], lending [`PooledBinding`]s), dynamic batching ([`Batcher`], whose items hold
/// [`Row`]s).
pub use ort_bind_runtime::{
    BatchOptions, BatchSizing, Batcher, Batching, GetFuture, Pool, PooledBinding, ReplyFuture, Row,
    RunFuture, Shutdown, SizingReport, Terminator,
};

/// Overridable inputs and LoRA adapters: an [`Adapter`] (ONNX Runtime's `.onnx_adapter`
/// file) set on a generated binding with `set_adapter`, which returns a [`WithAdapter`]
/// guard ([`AdapterHost`] is what it asks of the binding when it goes).
pub use ort_bind_runtime::{Adapter, AdapterHost, WithAdapter};

/// Generative decoding: the typed KV-cache decode loop generated modules name
/// (`Decoder`, `SharedDecoder`).
pub use ort_bind_runtime::decode;

/// Finding and loading ONNX Runtime ([`library`]); its log lines ([`logging`]).
pub use ort_bind_runtime::{library, logging};

/// Bindings decided at run time, for tools that take any model (the `dynamic` feature):
/// [`dynamic::DynamicBinding`], [`dynamic::HostArray`], [`values::DynValue`]. Typed
/// bindings never need it, so a program that does not enable it does not compile it.
#[cfg(feature = "dynamic")]
pub use ort_bind_runtime::dynamic;

/// Interop with the `ort` crate (the `ort` feature): one ONNX Runtime for both crates,
/// [`Session::from_ort`], zero-copy conversions both ways ([`OrtTensorView`],
/// `TensorRef::to_ort`, ...), and the `ort` crate itself, so programs name the same
/// version. See [`guide::ort`].
#[cfg(feature = "ort")]
pub use ort_bind_runtime::{OrtTensorView, ort, ort_interop};

/// `ndarray` views of host tensors (the `ndarray` feature), and the `ndarray` crate they
/// are built on.
#[cfg(feature = "ndarray")]
pub use ort_bind_runtime::ndarray;

// Kept at the root, hidden, for programs that name them there: the dynamic route's types
// (from before they moved behind `dynamic`), `ValueOutputSlot` (the bound of `Optional<V>`),
// `element` (`ort_bind::element::narrow::pack_into`) and `ndarray_views`. What only
// generated code names lives in `__private`.
#[cfg(feature = "ndarray")]
#[doc(hidden)]
pub use ort_bind_runtime::ndarray_views;
#[cfg(feature = "dynamic")]
#[doc(hidden)]
pub use ort_bind_runtime::{
    DynKey, DynMap, DynValue, DynamicBinding, HostArray, HostArrayRef, HostData, HostDataRef,
    NumericElement,
};
#[doc(hidden)]
pub use ort_bind_runtime::{ElementType, NumericType, ValueOutputSlot, ValueType, element};

// Names from before the one-vocabulary pass (see the CHANGELOG), kept for one release so
// that the compiler names the new one instead of suggesting an unrelated item
// (`std::ops::Bound`). Hidden: new code uses the new names.

/// Renamed to [`Binding`].
#[deprecated(note = "renamed to `ort_bind::Binding`")]
#[doc(hidden)]
pub type Bound<Io> = Binding<Io>;

/// Renamed to [`PooledBinding`].
#[deprecated(note = "renamed to `ort_bind::PooledBinding`")]
#[doc(hidden)]
pub type Pooled<Io> = PooledBinding<Io>;

/// Renamed to [`ElementType`].
#[deprecated(note = "renamed to `ort_bind::ElementType`")]
#[doc(hidden)]
pub type ElemType = ElementType;

/// Renamed to [`NumericType`].
#[deprecated(note = "renamed to `ort_bind::NumericType`")]
#[doc(hidden)]
pub type DType = NumericType;

/// Renamed to [`ValueOutputSlot`]: a bound on it still works, with a warning.
#[deprecated(note = "renamed to `ort_bind::ValueOutputSlot`")]
#[doc(hidden)]
pub trait OutputSlot: ValueOutputSlot {}
#[allow(deprecated)]
impl<T: ValueOutputSlot> OutputSlot for T {}

/// Renamed to `values::ValueInputSlot`: a bound on it still works, with a warning.
#[deprecated(note = "renamed to `ort_bind::values::ValueInputSlot`")]
#[doc(hidden)]
pub trait InputValue: values::ValueInputSlot {}
#[allow(deprecated)]
impl<T: values::ValueInputSlot> InputValue for T {}

/// Renamed to `NumericElement` (the `dynamic` feature).
#[cfg(feature = "dynamic")]
#[deprecated(note = "renamed to `ort_bind::dynamic::NumericElement`")]
#[doc(hidden)]
pub trait DynElement: NumericElement {}
#[cfg(feature = "dynamic")]
#[allow(deprecated)]
impl<T: NumericElement> DynElement for T {}

/// Derives a zero-copy binding for a struct of tensors, checked against an ONNX model
/// at compile time (the derive route).
///
/// ```
/// use ort_bind::{Binding, Cpu, Device, Dyn, OnnxBinding, Session, SessionOptions, Tensor};
///
/// #[derive(OnnxBinding)]
/// #[onnx(model = "examples/models/add.onnx")] // relative to the crate's Cargo.toml
/// struct AddIo<D: Device = Cpu> {
///     x: Tensor<f32, (Dyn,), D>,           // model input `x`: float32 [n]
///     #[onnx(name = "y")]                    // a field may bind any model name
///     other: Tensor<f32, (Dyn,), D>,
///     sum: Tensor<f32, (Dyn,), D>,         // model output `sum`: float32 [n]
/// }
///
/// # fn main() -> ort_bind::Result<()> {
/// let session = Session::from_file(AddIo::<Cpu>::MODEL_FILE.find()?, &SessionOptions::new())?;
/// let io = AddIo::allocate(&Cpu, &AddIoDims { n: 3 })?;
/// let mut binding = Binding::new(&session, io)?; // binds every tensor once
/// binding.inputs().x.copy_from_slice(&[1.0, 2.0, 3.0])?;
/// binding.inputs().other.fill(10.0);
/// binding.run()?;
/// assert_eq!(binding.outputs().sum.as_slice(), &[11.0, 12.0, 13.0]);
/// # Ok(())
/// # }
/// ```
///
/// Every field binds the model input or output of the same name (or the name
/// codegen gives it: `gpu_0_data_0` for `gpu_0/data_0`), or the one named by
/// `#[onnx(name = "...")]`; `#[onnx(input)]`/`#[onnx(output)]` pick a side when a
/// name is both. At compile time the derive checks that every name exists ("did you
/// mean"), every input is bound exactly once, no value twice, at least one output is
/// bound, element types are equal, ranks are equal, and every dimension the model
/// fixes is `Fix<N>` with the model's `N` or `Dyn` (a field may fix a symbolic
/// dimension to a constant). Inputs must be [`Tensor`]s; outputs are [`Tensor`]s
/// (written in place) or [`AllocatedOutput`]s (allocated by ONNX Runtime, for
/// data-dependent shapes). `#[onnx(device = Cpu)]` on the struct requires every field
/// to live on that device. Types behind aliases or from other modules are checked by
/// trait bounds (see `ort_bind_runtime::assert`). Every mistake is a `compile_error!` at the
/// field (or at the attribute, for a missing or malformed model), all of a struct's
/// mistakes at once.
///
/// Outputs the struct leaves out are still computed: ONNX Runtime runs the whole graph
/// for any request (checked with a `Reshape` that fails when run), allocates the
/// unbound outputs from its arena and drops them. Bind every output whose cost matters
/// to you. At least one output must be bound: ONNX Runtime refuses a run without one.
///
/// Next to the struct `AddIo` the derive emits `AddIoDims` (one `usize` per symbolic
/// or unnamed dynamic dimension of the bound values: what `AddIo::allocate` and
/// [`Binding::set_dims`] take), the view structs `AddIoInputs` / `AddIoOutputs` that
/// [`Binding::inputs`] / [`Binding::outputs`] hand out (one field per struct field), and
/// `AddIo::MODEL_PATH` and `AddIo::MODEL_FILE` (a [`ModelFile`]: `MODEL_FILE.find()` looks for the model
/// after deployment, see [`guide::deployment`]). The model path is relative to the crate's `Cargo.toml`; where
/// the model is absent at build time the offline signature cache written by
/// `ort-bind prepare` stands in (see [`guide::routes`]). Editing the model makes the next
/// `cargo build` re-run the checks.
pub use ort_bind_macros::OnnxBinding;

/// Generates, at compile time, the module build-time codegen writes for an ONNX model
/// (the macro route: no `build.rs`).
///
/// ```
/// mod add {
///     ort_bind::bindings!("examples/models/add.onnx"); // relative to Cargo.toml
/// }
///
/// # fn main() -> ort_bind::Result<()> {
/// let model = add::Model::load()?;
/// let mut binding = model.bind(add::Dims { n: 2 })?;
/// binding.inputs().x.copy_from_slice(&[1.0, 2.0])?;
/// binding.inputs().y.fill(0.5);
/// binding.run()?;
/// assert_eq!(binding.outputs().sum.as_slice(), &[1.5, 2.5]);
/// # Ok(())
/// # }
/// ```
///
/// `bindings!("path", crate = "::renamed_ort_bind")` names the facade when the
/// dependency is renamed. A missing or malformed model is a compile error on the path;
/// where the model is absent the offline signature cache stands in; editing the model
/// makes the next `cargo build` regenerate the module.
pub use ort_bind_macros::bindings;

/// Generates, at compile time, a module per model of a pipeline and checks the edges
/// between them against both model files: element type, rank and every size either fixes
/// (a mismatch, an unknown name, an edge the wrong way round or a cycle is a compile error
/// naming both models). Edges not declared are found by name (`present_key_cross_0` feeds
/// `past_key_cross_0`, `last_hidden_state` feeds `encoder_hidden_states`, the encoder's
/// `attention_mask` feeds `encoder_attention_mask`).
///
/// Two models where the second is a decoder fed by the first also get `Pipeline` (both
/// models) and `Generator`, a [`decode::EncoderDecoder`]: the encoder runs once per source
/// and the decoder reads its output buffers, nothing copied.
///
/// ```
/// mod speech {
///     ort_bind::pipeline!(
///         encoder = "examples/models/speech/encoder.onnx",
///         decoder = "examples/models/speech/decoder.onnx",
///     );
/// }
///
/// # fn main() -> ort_bind::Result<()> {
/// let pipeline = speech::Pipeline::load()?;
/// let frames = 30; // the encoder halves them: 15 positions of cross-attention cache
/// let dims = speech::encoder::Dims { batch_size: 1, num_frames: frames };
/// let mut generator = pipeline.generator(dims, 1, 64)?;
/// generator.encoder_inputs().audio_features.fill(0.25);
/// generator.encode()?;
/// generator.prefill(&[3, 17, 42])?;
/// let token = generator.step_greedy()?[0];
/// assert!((0..512).contains(&token));
/// # Ok(())
/// # }
/// ```
///
/// Models are `name = "path"` or `name = ("path", options...)` with the options of
/// [`bindings!`]; edges are `model.output -> model.input` (`model["a.b"]` for names with
/// dots).
pub use ort_bind_macros::pipeline;

/// Not public API: the names generated code and the derive's expansions reach through
/// `::ort_bind::__private::…`. No semver promise: they change with the code generators
/// (like serde's `__private`). The runtime's names come from `ort_bind_runtime::__private`,
/// so generated code pointed at `ort_bind_runtime` directly finds the same paths.
#[doc(hidden)]
pub mod __private {
    pub use ort_bind_macros::track_model;
    pub use ort_bind_runtime::__private::*;
}

/// Includes the bindings `build.rs` generated for the model named `$name`
/// (the file stem, or the name given to `Builder::model_as`).
///
/// Expands to `include!(concat!(env!("OUT_DIR"), "/ort-bind/", $name, ".rs"))`;
/// use it inside a module of its own.
#[macro_export]
macro_rules! include_bindings {
    ($name:literal) => {
        include!(concat!(env!("OUT_DIR"), "/ort-bind/", $name, ".rs"));
    };
}

pub mod guide {
    //! The guide: what the README leaves out, one chapter per topic (the markdown files in
    //! `src/guide/`; every Rust example in them is compiled by `cargo test --doc`).
    //!
    //! - [`routes`]: the three routes (`build.rs`, `bindings!`, `#[derive(OnnxBinding)]`), the
    //!   generated module, the offline signature cache, optional features.
    //! - [`types`]: element types (narrow ones included), strings, sequences, maps,
    //!   optionals, the dynamic route, `ndarray` views.
    //! - [`shapes`]: dynamic shapes, inputs that size themselves, data-dependent outputs,
    //!   recurrent state, what allocates.
    //! - [`serving`]: threads, async runs, cancellation, pools, dynamic batching.
    //! - [`decoding`]: the typed KV-cache decode loop, its cache modes and figures.
    //! - [`pipelines`]: encoder-decoder pipelines and chains of models (`pipeline!`).
    //! - [`adapters`]: overridable inputs (inputs with a default) and LoRA adapters.
    //! - [`devices`]: CUDA, and what has run where.
    //! - [`deployment`]: where models and ONNX Runtime are found, telemetry and logs, the
    //!   `ort-bind` command line.
    //! - [`conformance`]: ONNX's backend and per-operator test data.
    //! - [`safety`]: fuzzing, hostile inputs, `unsafe`.
    //! - [`design`]: what a dependency compiles, cold build time, why not `ort`'s
    //!   `IoBinding`, performance, the repository's layout.
    //! - [`ort`]: moving an `ort` program to typed bindings one model at a time (the `ort`
    //!   feature).

    #[doc = include_str!("guide/routes.md")]
    pub mod routes {}
    #[doc = include_str!("guide/types.md")]
    pub mod types {}
    #[doc = include_str!("guide/shapes.md")]
    pub mod shapes {}
    #[doc = include_str!("guide/serving.md")]
    pub mod serving {}
    #[doc = include_str!("guide/decoding.md")]
    pub mod decoding {}
    #[doc = include_str!("guide/pipelines.md")]
    pub mod pipelines {}
    #[doc = include_str!("guide/adapters.md")]
    pub mod adapters {}
    #[doc = include_str!("guide/devices.md")]
    pub mod devices {}
    #[doc = include_str!("guide/deployment.md")]
    pub mod deployment {}
    #[doc = include_str!("guide/conformance.md")]
    pub mod conformance {}
    #[doc = include_str!("guide/safety.md")]
    pub mod safety {}
    #[doc = include_str!("guide/design.md")]
    pub mod design {}
    #[doc = include_str!("guide/ort.md")]
    pub mod ort {}
}
