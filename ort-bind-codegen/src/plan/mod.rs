//! From a model signature to a binding plan: every decision codegen makes
//! (identifiers, which dims the user sets, which outputs are pre-allocated,
//! which outputs feed back into inputs), validated in one place so expansion can
//! assume valid input.
//!
//! # Dims that are really the same
//!
//! Exporters often name (or leave unnamed) dims that are equal in fact: an output
//! `[N, 3]` whose `N` is the input's `batch`, a state output `[?, ?, ?]` that has
//! exactly the shape of the state input `[2, ?, 128]`. Guessing such equalities from
//! positions would be wrong for many models, so the plan only unifies what it can
//! justify, and lets the user state the rest ([`ModelOptions`]):
//!
//! - [`ModelOptions::rename_dim`]: every occurrence of one named dim is another one
//!   (`N` is `batch`);
//! - [`ModelOptions::dim`]: axis `k` of a value is a given named dim (names an
//!   unnamed `?`/`-1`/unset axis, or renames one occurrence);
//! - recurrent pairs ([`FeedBack`]): an output that feeds the next run's input must
//!   have that input's shape, so pairing them unifies the output's dims with the
//!   input's. Pairs are found by name (one name is a prefix of the other, e.g.
//!   `state` / `stateN`), equal element type and rank, and dims that do not
//!   contradict each other axis by axis (equal, or left open on the output: `?`, or a
//!   named dim no input carries); a pair whose dims differ is only made when it is the
//!   only candidate on both sides. [`ModelOptions::feed_back`] declares a pair
//!   explicitly and [`ModelOptions::no_auto_feed_back`] turns the search off.
//!
//! If a unification is wrong for a model, nothing unsafe follows: ONNX Runtime checks
//! the shape of every pre-allocated output at each run and fails the run with an
//! error that names the output.

use std::collections::HashMap;

pub mod decoder;

pub use decoder::{CacheAxis, CachePlan, DecoderNames, DecoderPlan, DecoderRole, plan_decoder};

use crate::dtype::ElementType;
use crate::ident::IdentAllocator;
use crate::signature::{Dim, ModelSignature, ValueKind, ValueSig, format_dims};

/// Which side of the model a value is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// A graph input.
    Input,
    /// A graph output.
    Output,
}

impl Role {
    /// `input` / `output`.
    pub fn word(self) -> &'static str {
        match self {
            Role::Input => "input",
            Role::Output => "output",
        }
    }
}

/// Why a model cannot get generated bindings.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    /// A graph input or output has a type generated code does not bind.
    #[error("{role} `{name}` is {kind}: {reason}")]
    Unsupported {
        /// `input` or `output`.
        role: &'static str,
        /// ONNX name.
        name: String,
        /// What the value is (`a string tensor [n]`, `a sequence seq(float32)`, ...).
        kind: String,
        /// Why it is refused.
        reason: String,
    },
    /// The model has no outputs.
    #[error("the model declares no outputs")]
    NoOutputs,
    /// A [`ModelOptions`] entry names a value the model does not have.
    #[error("{what}: the model has no input or output `{name}` (it has {known})")]
    UnknownValue {
        /// Which option.
        what: String,
        /// The name given.
        name: String,
        /// The model's value names, for the message.
        known: String,
    },
    /// A [`ModelOptions::rename_dim`] entry names a dim no value carries.
    #[error(
        "rename_dim(`{name}`, ..): no value of the model has a dim named `{name}` (named dims: {known})"
    )]
    UnknownDim {
        /// The name given.
        name: String,
        /// The model's named dims, for the message.
        known: String,
    },
    /// A [`ModelOptions::dim`] entry contradicts the model.
    #[error("dim(`{value}`, {axis}, `{dim}`): {reason}")]
    DimContradicts {
        /// ONNX name of the value.
        value: String,
        /// Axis index.
        axis: usize,
        /// The dim name given.
        dim: String,
        /// What the model says instead.
        reason: String,
    },
    /// The dim named by [`ModelOptions::batch_dim`] cannot batch the model.
    #[error("batch_dim(`{dim}`): {reason}")]
    BatchDim {
        /// The dim name given.
        dim: String,
        /// Why not.
        reason: String,
    },
    /// An output declared (with [`ModelOptions::feed_back`]) to feed an input cannot.
    #[error("feed_back(`{output}`, `{input}`): {reason}")]
    FeedBack {
        /// ONNX name of the output.
        output: String,
        /// ONNX name of the input.
        input: String,
        /// Why not.
        reason: String,
    },
    /// Two fields of a user's struct ([`plan_struct`]) fix one dim to different sizes.
    #[error("{0}")]
    PinsDisagree(Box<PinsDisagree>),
    /// A field of a user's struct fixes an axis that the model (through a recurrent
    /// pair) sizes otherwise.
    #[error("{0}")]
    PinContradicts(Box<PinContradicts>),
    /// The model is (or was declared) a decoder, but its signature does not fit a decode
    /// loop: the reason is in the model's terms.
    #[error("decoder: {0}")]
    Decoder(String),
}

impl PlanError {
    /// For the errors about one field of a user's struct ([`plan_struct`]): the field's
    /// index among the fields given, and the axis.
    pub fn field_axis(&self) -> Option<(usize, usize)> {
        match self {
            PlanError::PinsDisagree(p) => Some((p.at, p.axis)),
            PlanError::PinContradicts(p) => Some((p.at, p.axis)),
            _ => None,
        }
    }
}

/// Two fields fix one dim to different sizes ([`PlanError::PinsDisagree`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{dim} is {size} in field `{field}` (axis {axis}: `Fix<{size}>`) but {other_size} in \
     field `{other_field}` (axis {other_axis}: `Fix<{other_size}>`): one binding cannot have both"
)]
pub struct PinsDisagree {
    /// The dim, in words (``dim `batch` ``, ``unnamed axis 1 of input `state` ``).
    pub dim: String,
    /// Index of the field (in [`plan_struct`]'s `fields`) reported.
    pub at: usize,
    /// Rust name of that field.
    pub field: String,
    /// Its axis.
    pub axis: usize,
    /// The size it writes.
    pub size: u64,
    /// Rust name of the field that fixed the dim first.
    pub other_field: String,
    /// Its axis.
    pub other_axis: usize,
    /// The size it writes.
    pub other_size: u64,
}

/// A field fixes an axis the plan sizes otherwise ([`PlanError::PinContradicts`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("axis {axis} of field `{field}` is `Fix<{size}>`, but the binding sizes it {want}: {why}")]
pub struct PinContradicts {
    /// Index of the field (in [`plan_struct`]'s `fields`).
    pub at: usize,
    /// Rust name of the field.
    pub field: String,
    /// The axis.
    pub axis: usize,
    /// The size the field writes.
    pub size: u64,
    /// The size the plan gives the axis.
    pub want: u64,
    /// Where that size comes from.
    pub why: String,
}

/// Settings of one model that the signature alone cannot give: dims that are really
/// the same, and recurrent (output -> input) pairs. See the [module docs](self).
///
/// ```
/// use ort_bind_codegen::plan::ModelOptions;
/// // Silero VAD (silero_vad.onnx) leaves every dynamic dim unnamed.
/// let options = ModelOptions::new()
///     .dim("input", 0, "batch")
///     .dim("input", 1, "samples")
///     .dim("state", 1, "batch")
///     .dim("output", 0, "batch");
/// # let _ = options;
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelOptions {
    module_name: Option<String>,
    renames: Vec<(String, String)>,
    dims: Vec<(String, usize, String)>,
    feed_back: Vec<(String, String)>,
    no_auto_feed_back: bool,
    embed: bool,
    batch_dim: Option<String>,
    decoder: Option<DecoderNames>,
}

impl ModelOptions {
    /// No settings: the plan follows the signature alone.
    pub fn new() -> Self {
        Self::default()
    }

    /// Names the generated module (default: the model file's stem, sanitised).
    pub fn module_name(mut self, name: &str) -> Self {
        self.module_name = Some(name.to_owned());
        self
    }

    /// The module name set with [`ModelOptions::module_name`].
    pub fn name(&self) -> Option<&str> {
        self.module_name.as_deref()
    }

    /// Every dim named `from` is the dim named `to` (e.g. an output's `N` is the
    /// input's `batch`), so outputs sized by it can be pre-allocated.
    pub fn rename_dim(mut self, from: &str, to: &str) -> Self {
        self.renames.push((from.to_owned(), to.to_owned()));
        self
    }

    /// Axis `axis` of the input or output `value` (ONNX name) is the named dim `dim`.
    /// The axis must be dynamic in the model (`?`, `-1`, unset or named); naming a fixed
    /// axis is an error. Applied after [`ModelOptions::rename_dim`].
    pub fn dim(mut self, value: &str, axis: usize, dim: &str) -> Self {
        self.dims.push((value.to_owned(), axis, dim.to_owned()));
        self
    }

    /// Declares that output `output` feeds input `input` in the next run (recurrent
    /// state): the output gets the input's shape and a generated
    /// `feed_<output>_into_<input>` method swaps their buffers.
    pub fn feed_back(mut self, output: &str, input: &str) -> Self {
        self.feed_back.push((output.to_owned(), input.to_owned()));
        self
    }

    /// Embeds the model's bytes in the binary (`include_bytes!`), so `Model::load()` needs
    /// no file at run time: one file deploys. The binary grows by the model's size, and
    /// rustc reads the whole file at every build of the crate (a 1 GiB model costs tens of
    /// seconds); a model with external data files cannot load from memory.
    pub fn embed(mut self) -> Self {
        self.embed = true;
        self
    }

    /// Whether [`ModelOptions::embed`] was set.
    pub fn embeds(&self) -> bool {
        self.embed
    }

    /// The dim along which single-item requests are batched (a named dim, after
    /// [`ModelOptions::rename_dim`] and [`ModelOptions::dim`]): axis 0 of every input and
    /// output. The generated module then gets `Item`, `Reply`, `BatchSpec` and
    /// `Model::batcher` (dynamic batching). Without it, a dim named `batch` or
    /// `batch_size` that meets the same rule is the batch dim; naming one that does not is
    /// an error.
    pub fn batch_dim(mut self, dim: &str) -> Self {
        self.batch_dim = Some(dim.to_owned());
        self
    }

    /// Requires the model to be a decoder (a generated `Decoder`; see
    /// [`decoder`]): a model that does not fit is an error saying why. Models that follow
    /// the exporters' conventions are recognised without it.
    pub fn decoder(mut self) -> Self {
        self.decoder.get_or_insert_with(DecoderNames::default);
        self
    }

    /// Names the input or output that plays decoder role `role` where the model uses
    /// another name than the conventional one (implies [`ModelOptions::decoder`]).
    pub fn decoder_role(mut self, role: DecoderRole, name: &str) -> Self {
        let names = self.decoder.get_or_insert_with(DecoderNames::default);
        let slot = match role {
            DecoderRole::InputIds => &mut names.input_ids,
            DecoderRole::AttentionMask => &mut names.attention_mask,
            DecoderRole::PositionIds => &mut names.position_ids,
            DecoderRole::Logits => &mut names.logits,
        };
        *slot = Some(name.to_owned());
        self
    }

    /// Declares a cache pair the names do not reveal: input `past` takes what output
    /// `present` returned (implies [`ModelOptions::decoder`]).
    pub fn decoder_cache(mut self, past: &str, present: &str) -> Self {
        self.decoder
            .get_or_insert_with(DecoderNames::default)
            .caches
            .push((past.to_owned(), present.to_owned()));
        self
    }

    /// Turns off the search for recurrent pairs by name; only pairs declared with
    /// [`ModelOptions::feed_back`] are made.
    pub fn no_auto_feed_back(mut self) -> Self {
        self.no_auto_feed_back = true;
        self
    }
}

fn value_names(sig: &ModelSignature) -> String {
    let names: Vec<String> = sig
        .inputs
        .iter()
        .chain(&sig.outputs)
        .map(|v| format!("`{}`", v.name))
        .collect();
    names.join(", ")
}

fn dims_of_mut(v: &mut ValueSig) -> Option<&mut Vec<Dim>> {
    match &mut v.kind {
        ValueKind::Tensor { dims, .. } => dims.as_mut(),
        // Dims inside sequences, maps and optionals do not become `Dims` fields.
        _ => None,
    }
}

/// The signature with the dim renames and namings of `options` applied.
pub fn apply_dim_options(
    sig: &ModelSignature,
    options: &ModelOptions,
) -> Result<ModelSignature, PlanError> {
    let mut sig = sig.clone();
    for (from, to) in &options.renames {
        let mut found = false;
        for v in sig.inputs.iter_mut().chain(sig.outputs.iter_mut()) {
            for d in dims_of_mut(v).into_iter().flatten() {
                if matches!(d, Dim::Named(n) if n == from) {
                    *d = Dim::Named(to.clone());
                    found = true;
                }
            }
        }
        if !found {
            let mut known: Vec<String> = Vec::new();
            for v in sig.inputs.iter().chain(&sig.outputs) {
                if let Some((_, Some(ds))) = v.tensor() {
                    for d in ds {
                        if let Dim::Named(n) = d
                            && !known.iter().any(|k| k == &format!("`{n}`"))
                        {
                            known.push(format!("`{n}`"));
                        }
                    }
                }
            }
            return Err(PlanError::UnknownDim {
                name: from.clone(),
                known: if known.is_empty() {
                    "none".into()
                } else {
                    known.join(", ")
                },
            });
        }
    }
    for (value, axis, dim) in &options.dims {
        let known = value_names(&sig);
        let contradiction = |reason: String| PlanError::DimContradicts {
            value: value.clone(),
            axis: *axis,
            dim: dim.clone(),
            reason,
        };
        let mut found = false;
        // An input passed straight through is also an output of the same name: same value.
        for v in sig.inputs.iter_mut().chain(sig.outputs.iter_mut()) {
            if &v.name != value {
                continue;
            }
            found = true;
            let Some(ds) = dims_of_mut(v) else {
                return Err(contradiction(
                    "the model declares no shape (unknown rank) for it".into(),
                ));
            };
            let rank = ds.len();
            let Some(d) = ds.get_mut(*axis) else {
                return Err(contradiction(format!("it has rank {rank}")));
            };
            if let Dim::Fixed(n) = d {
                return Err(contradiction(format!("the model fixes that axis to {n}")));
            }
            *d = Dim::Named(dim.clone());
        }
        if !found {
            return Err(PlanError::UnknownValue {
                what: format!("dim(`{value}`, {axis}, `{dim}`)"),
                name: value.clone(),
                known,
            });
        }
    }
    Ok(sig)
}

/// How one axis of a tensor is sized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AxisSize {
    /// Fixed by the model.
    Fixed(u64),
    /// Taken from field `dims[index]` of the dims struct.
    Field(usize),
}

/// How a tensor's storage is provided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Storage {
    /// Buffer owned by ort-bind, sized from the dims struct: one entry per axis.
    Owned(Vec<AxisSize>),
    /// Owned buffer of unknown rank: its whole shape is dims field `index` (a `Vec<usize>`).
    OwnedAnyRank(usize),
    /// Allocated by ONNX Runtime at run time (data-dependent or unknown dims; every
    /// output that is not a numeric tensor).
    Allocated,
    /// A whole value the caller builds and sets (a sequence, map or optional input): not
    /// sized by the dims struct.
    Value,
}

/// What kind of value a planned input or output is, which decides its Rust type. The
/// element type and dims of [`PlannedValue`] are those of the tensors it holds (a map's
/// value type, without dims).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Form {
    /// A tensor of numeric or bool elements: `Tensor` / `AllocatedOutput`.
    Tensor,
    /// A string tensor: `StringTensor` (input), `StringOutput` (output).
    Strings,
    /// `sequence(tensor)`: `Sequence<T, S>`.
    Sequence,
    /// `sequence(map(key, elem))`: `MapSequence<K, V>`.
    MapSequence {
        /// The key type (`int64` or `string`).
        key: ElementType,
    },
    /// `map(key, elem)`: `Map<K, V>`.
    Map {
        /// The key type (`int64` or `string`).
        key: ElementType,
    },
    /// `optional(tensor)`: `Optional<..>` around the tensor's type.
    OptionalTensor,
    /// `optional(sequence(tensor))`: `Optional<Sequence<T, S>>`.
    OptionalSequence,
}

impl Form {
    /// Whether this is a numeric (or bool) tensor, bound as a typed buffer.
    pub fn is_tensor(self) -> bool {
        self == Form::Tensor
    }

    /// Whether the dims struct sizes it when it is an input (numeric and string tensors).
    pub fn is_sized(self) -> bool {
        matches!(self, Form::Tensor | Form::Strings)
    }
}

/// One graph input or output, planned.
#[derive(Debug, Clone)]
pub struct PlannedValue {
    /// ONNX name.
    pub name: String,
    /// Rust field name (sanitised, unique in its struct; without `r#`).
    pub field: String,
    /// What kind of value it is.
    pub form: Form,
    /// Element type (of the tensors a sequence or optional holds; a map's value type).
    pub elem: ElementType,
    /// Declared dims (of a sequence's or optional's tensors; `None`: unknown rank, and
    /// always for maps).
    pub dims: Option<Vec<Dim>>,
    /// The whole type as the model declares it (`seq(map(string, float32))`).
    pub onnx_type: String,
    /// Doc string from the model.
    pub doc: String,
    /// Storage decision.
    pub storage: Storage,
}

/// What a field of the generated dims struct stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DimSource {
    /// A named symbolic dimension (`dim_param`).
    Named(String),
    /// An unnamed dynamic axis of one input.
    Axis {
        /// ONNX name of the input.
        input: String,
        /// Axis index.
        axis: usize,
    },
    /// The whole shape of an input of unknown rank.
    Shape {
        /// ONNX name of the input.
        input: String,
    },
    /// An unnamed dynamic axis of one output the user sizes (the derive's `Tensor`
    /// outputs; generated modules let ONNX Runtime allocate such outputs instead).
    OutputAxis {
        /// ONNX name of the output.
        output: String,
        /// Axis index.
        axis: usize,
    },
    /// The whole shape of an output of unknown rank the user sizes (derive only).
    OutputShape {
        /// ONNX name of the output.
        output: String,
    },
}

impl DimSource {
    /// Whether the field holds a whole shape (a `Vec<usize>`) rather than one size.
    pub fn is_shape(&self) -> bool {
        matches!(
            self,
            DimSource::Shape { .. } | DimSource::OutputShape { .. }
        )
    }
}

/// One field of the dims struct.
#[derive(Debug, Clone)]
pub struct DimField {
    /// Rust field name.
    pub field: String,
    /// What it stands for.
    pub source: DimSource,
    /// `(value name, axis)` pairs that use this dim, for documentation.
    pub used_by: Vec<(String, usize)>,
    /// More to say in the field's doc (e.g. the exporter's name for the dim).
    pub note: Option<String>,
}

/// A recurrent pair: an output with the same type and dims as an input, whose buffer
/// can be swapped in as the next run's input.
#[derive(Debug, Clone)]
pub struct FeedBack {
    /// Index into [`Plan::outputs`].
    pub output: usize,
    /// Index into [`Plan::inputs`].
    pub input: usize,
}

/// The full plan for one model.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Inputs in model order.
    pub inputs: Vec<PlannedValue>,
    /// Outputs in model order.
    pub outputs: Vec<PlannedValue>,
    /// Fields of the dims struct.
    pub dims: Vec<DimField>,
    /// Output -> input pairs that can be fed back without a copy.
    pub feed_back: Vec<FeedBack>,
    /// The dims field along which items batch (axis 0 of every input and output), when
    /// known: see [`ModelOptions::batch_dim`].
    pub batch: Option<usize>,
    /// The decode loop, when the model is a decoder (see [`decoder`]).
    pub decoder: Option<DecoderPlan>,
}

impl Plan {
    /// Whether every dims field is a plain `usize` (the dims struct can be `Copy`).
    pub fn dims_are_copy(&self) -> bool {
        !self.dims.iter().any(|d| d.source.is_shape())
    }

    /// The first dims field that no input's axes size, if any: without one, the shapes of
    /// the inputs determine every dim (`Dims::from_input_shapes` solves them).
    pub fn dim_unsized_by_inputs(&self) -> Option<&DimField> {
        self.dims.iter().enumerate().find_map(|(i, d)| {
            let sized = match &d.source {
                DimSource::Shape { .. } => true,
                DimSource::OutputShape { .. } => false,
                _ => self.inputs.iter().any(|v| match &v.storage {
                    Storage::Owned(axes) => axes.contains(&AxisSize::Field(i)),
                    _ => false,
                }),
            };
            (!sized).then_some(d)
        })
    }
}

/// Key types ONNX Runtime's C API makes and reads maps of.
fn runtime_map_key(t: ElementType) -> bool {
    matches!(t, ElementType::I64 | ElementType::String)
}

/// Value types ONNX Runtime's C API makes and reads maps of.
fn runtime_map_value(t: ElementType) -> bool {
    matches!(
        t,
        ElementType::I64 | ElementType::F32 | ElementType::F64 | ElementType::String
    )
}

/// How a value binds: its form, the element type and dims of the tensors it holds; or why
/// it cannot.
fn classify<'a>(
    v: &'a ValueSig,
    role: &'static str,
) -> Result<(Form, ElementType, Option<&'a [Dim]>), PlanError> {
    let refuse = |reason: &str| PlanError::Unsupported {
        role,
        name: v.name.clone(),
        kind: describe_kind(&v.kind),
        reason: reason.to_owned(),
    };
    if let Some(part) = v.kind.unsupported_part() {
        let whole = v.kind.to_string();
        let why = why_unsupported(part);
        let reason = if whole == part {
            why.to_owned()
        } else {
            format!("it holds {part}, and {why}")
        };
        return Err(PlanError::Unsupported {
            role,
            name: v.name.clone(),
            kind: whole,
            reason,
        });
    }
    let map_of = |key: ElementType, value: &ValueKind| -> Result<ElementType, PlanError> {
        match value {
            ValueKind::Tensor { elem, .. } if runtime_map_key(key) && runtime_map_value(*elem) => {
                Ok(*elem)
            }
            ValueKind::Tensor { .. } => Err(refuse(
                "ONNX Runtime's C API makes and reads maps with int64 or string keys and \
                 int64, float32, float64 or string values only",
            )),
            _ => Err(refuse(
                "ort-bind binds maps whose values are single numbers or strings only",
            )),
        }
    };
    match &v.kind {
        ValueKind::Tensor { elem, dims } => {
            let form = if *elem == ElementType::String {
                Form::Strings
            } else {
                Form::Tensor
            };
            Ok((form, *elem, dims.as_deref()))
        }
        ValueKind::Sequence(inner) => match &**inner {
            ValueKind::Tensor { elem, dims } => Ok((Form::Sequence, *elem, dims.as_deref())),
            ValueKind::Map { key, value } => {
                let elem = map_of(*key, value)?;
                Ok((Form::MapSequence { key: *key }, elem, None))
            }
            _ => Err(refuse(
                "ort-bind binds sequences of tensors and sequences of maps only",
            )),
        },
        ValueKind::Map { key, value } => {
            let elem = map_of(*key, value)?;
            Ok((Form::Map { key: *key }, elem, None))
        }
        ValueKind::Optional(inner) => match &**inner {
            ValueKind::Tensor { elem, dims } => Ok((Form::OptionalTensor, *elem, dims.as_deref())),
            ValueKind::Sequence(t) => match &**t {
                ValueKind::Tensor { elem, dims } => {
                    Ok((Form::OptionalSequence, *elem, dims.as_deref()))
                }
                _ => Err(refuse(
                    "ort-bind binds optional tensors and optional sequences of tensors only",
                )),
            },
            _ => Err(refuse(
                "ort-bind binds optional tensors and optional sequences of tensors only",
            )),
        },
        ValueKind::Unsupported(what) => Err(refuse(&format!("ort-bind cannot represent {what}"))),
    }
}

/// `a string tensor [n]`, `a sequence seq(float32)`, ...: what a value is, in words.
fn describe_kind(kind: &ValueKind) -> String {
    match kind {
        ValueKind::Tensor { elem, dims } => {
            format!("a {elem} tensor {}", format_dims(dims.as_deref()))
        }
        other => kind_word(other),
    }
}

/// `a sequence seq(float32)`, `an optional optional(float32)`, ...: what a non-tensor
/// kind is.
fn kind_word(kind: &ValueKind) -> String {
    let word = match kind {
        ValueKind::Sequence(_) => "a sequence",
        ValueKind::Map { .. } => "a map",
        ValueKind::Optional(_) => "an optional",
        _ => "a value",
    };
    format!("{word} {kind}")
}

/// Why a leaf of a type cannot be represented, from its description.
fn why_unsupported(part: &str) -> &'static str {
    if part.starts_with("map(") {
        "ONNX allows map keys of integer types and string only"
    } else if part == crate::model::NO_TYPE {
        "the model leaves that element type unset"
    } else if part.starts_with("sparse_tensor(") || part.starts_with("opaque(") {
        "ort-bind does not bind sparse or opaque types"
    } else {
        "ort-bind does not bind that element type"
    }
}

/// How value `v` binds: its form and the element type and dims of the tensors it holds
/// (a map's value type, no dims); `None` when it cannot be bound.
pub fn form_of(v: &ValueSig) -> Option<(Form, ElementType, Option<&[Dim]>)> {
    classify(v, "value").ok()
}

/// Why value `v` (on side `role`) cannot be bound, if it cannot.
pub fn value_refusal(v: &ValueSig, role: Role) -> Option<PlanError> {
    classify(v, role.word()).err()
}

/// Every reason `sig` cannot be bound at all, in model order (a value that is not a
/// bindable tensor, no outputs); empty when it can.
pub fn refusals(sig: &ModelSignature) -> Vec<PlanError> {
    let mut out = Vec::new();
    for (role, values) in [("input", &sig.inputs), ("output", &sig.outputs)] {
        for v in values {
            if let Err(e) = classify(v, role) {
                out.push(e);
            }
        }
    }
    if sig.outputs.is_empty() {
        out.push(PlanError::NoOutputs);
    }
    out
}

/// Plans bindings for `sig`, from its signature alone.
pub fn plan(sig: &ModelSignature) -> Result<Plan, PlanError> {
    plan_with(sig, &ModelOptions::new())
}

/// Plans bindings for `sig` with the settings in `options`.
pub fn plan_with(sig: &ModelSignature, options: &ModelOptions) -> Result<Plan, PlanError> {
    if sig.outputs.is_empty() {
        return Err(PlanError::NoOutputs);
    }
    let (mut plan, _) = plan_core(sig, options, &|_| OutputUse::Auto)?;
    plan.batch = batch_field(&plan, options.batch_dim.as_deref())?;
    plan.decoder = plan_decoder(sig, options.decoder.as_ref())?;
    Ok(plan)
}

/// Dim names taken as the batch dim when the options name none.
const BATCH_NAMES: &[&str] = &["batch", "batch_size"];

/// The dims field items batch along: the one `declared` names, else one named like a
/// batch; it must be axis 0 of every input and of every output ONNX Runtime does not
/// allocate, and appear on no other axis (so a row is one item).
fn batch_field(plan: &Plan, declared: Option<&str>) -> Result<Option<usize>, PlanError> {
    let named = |i: usize| match &plan.dims[i].source {
        DimSource::Named(n) => Some(n.as_str()),
        _ => None,
    };
    let candidate = match declared {
        Some(name) => (0..plan.dims.len())
            .find(|&i| named(i) == Some(name) || plan.dims[i].field == name)
            .ok_or_else(|| PlanError::BatchDim {
                dim: name.to_owned(),
                reason: format!(
                    "the model has no dim of that name (dims fields: {})",
                    plan.dims
                        .iter()
                        .map(|d| format!("`{}`", d.field))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            })?,
        None => match (0..plan.dims.len()).find(|&i| {
            named(i).is_some_and(|n| BATCH_NAMES.contains(&n.to_ascii_lowercase().as_str()))
        }) {
            Some(i) => i,
            None => return Ok(None),
        },
    };
    let misfit = plan
        .inputs
        .iter()
        .map(|v| ("input", v))
        .chain(plan.outputs.iter().map(|v| ("output", v)))
        .find_map(|(role, v)| {
            if !v.form.is_tensor() {
                return Some(format!(
                    "{role} `{}` is {}: batching gathers rows of numeric tensors only",
                    v.name, v.onnx_type
                ));
            }
            let axes = match &v.storage {
                Storage::Owned(axes) => axes,
                Storage::Allocated if role == "output" => return None,
                _ => return Some(format!("{role} `{}` has no fixed rank", v.name)),
            };
            let first = axes.first() == Some(&AxisSize::Field(candidate));
            let elsewhere = axes
                .iter()
                .skip(1)
                .any(|a| a == &AxisSize::Field(candidate));
            (!first || elsewhere).then(|| {
                format!(
                    "{role} `{}` is {}: the batch dim must be its axis 0 and no other",
                    v.name,
                    format_dims(v.dims.as_deref())
                )
            })
        });
    // A batcher reads an item's dims from its shapes, so every dim must follow from them.
    let misfit = misfit.or_else(|| {
        plan.dim_unsized_by_inputs().map(|d| {
            format!(
                "a batcher reads every dim from its items' shapes, but {} sizes no input axis",
                dim_words(d)
            )
        })
    });
    match (misfit, declared) {
        (None, _) => Ok(Some(candidate)),
        (Some(_), None) => Ok(None),
        (Some(reason), Some(name)) => Err(PlanError::BatchDim {
            dim: name.to_owned(),
            reason,
        }),
    }
}

/// How the plan treats one model output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OutputUse {
    /// Not bound (a derive struct without a field for it): left out of the plan.
    Skip,
    /// Pre-allocated when its dims follow from the inputs', else allocated by ONNX
    /// Runtime (generated modules).
    Auto,
    /// Always pre-allocated: dims no input gives become dims fields (a derive `Tensor`).
    Owned,
    /// Allocated by ONNX Runtime (a derive `AllocatedOutput`); never in a pair.
    Allocated,
}

/// Whether a dim name says nothing a reader can use: `?`, `unk__123`,
/// `p2o.DynamicDimension.0`, `DynamicDimension_3`, `-1`, `None`, or a name without a
/// letter. Such dims keep what the name tells (every axis named alike is one dim) but
/// get a field named after where they are used.
pub fn is_placeholder_name(name: &str) -> bool {
    let lower = name.trim().to_ascii_lowercase();
    let digits_after = |prefix: &str| {
        lower.strip_prefix(prefix).is_some_and(|rest| {
            rest.trim_start_matches(['.', '_'])
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
    };
    !lower.bytes().any(|b| b.is_ascii_alphabetic())
        || lower == "none"
        || lower == "unknown"
        || digits_after("unk__")
        || digits_after("p2o.dynamicdimension")
        || digits_after("dynamicdimension")
        || digits_after("dynamic_dimension")
}

/// How to name an unnamed axis, for the doc of its dims field.
fn unnamed_note(value: &str, axis: usize) -> String {
    format!(
        "Name it with `dim({value:?}, {axis}, \"NAME\")`, or with `#[onnx(dims = \"..\")]` on \
         a derive's field."
    )
}

/// The dims field of the named dim `name`, made on its first use at `(value, field,
/// axis)`: named like the dim, unless that name is an exporter's placeholder.
fn named_field(
    idents: &mut IdentAllocator,
    dims: &mut Vec<DimField>,
    named: &mut HashMap<String, usize>,
    name: &str,
    (value, field, axis): (&str, &str, usize),
) -> usize {
    if let Some(&i) = named.get(name) {
        return i;
    }
    let (ident, note) = if is_placeholder_name(name) {
        (
            idents.allocate(&format!("{field}_dim{axis}")),
            Some(format!(
                "`{name}` is an exporter's placeholder, so the field is named after its first \
                 use (`{value}` axis {axis}); name it with `rename_dim({name:?}, \"NAME\")`, or \
                 with `#[onnx(dims = \"..\")]` on a derive's field."
            )),
        )
    } else {
        (idents.allocate(name), None)
    };
    dims.push(DimField {
        field: ident,
        source: DimSource::Named(name.to_owned()),
        used_by: vec![],
        note,
    });
    named.insert(name.to_owned(), dims.len() - 1);
    dims.len() - 1
}

/// The plan, and for each planned output its index among the model's outputs.
fn plan_core(
    sig: &ModelSignature,
    options: &ModelOptions,
    use_of: &dyn Fn(usize) -> OutputUse,
) -> Result<(Plan, Vec<usize>), PlanError> {
    plan_core_named(sig, options, use_of, &|_, _| None)
}

/// [`plan_core`], with `field_of(role, model index)` naming values' fields (the
/// derive's struct fields) instead of the identifiers codegen makes.
fn plan_core_named(
    sig: &ModelSignature,
    options: &ModelOptions,
    use_of: &dyn Fn(usize) -> OutputUse,
    field_of: &dyn Fn(Role, usize) -> Option<String>,
) -> Result<(Plan, Vec<usize>), PlanError> {
    let sig = apply_dim_options(sig, options)?;
    let mut dim_idents = IdentAllocator::new();
    let mut dims: Vec<DimField> = Vec::new();
    let mut named: HashMap<String, usize> = HashMap::new();

    let mut input_idents = IdentAllocator::new();
    let mut inputs = Vec::with_capacity(sig.inputs.len());
    for (index, v) in sig.inputs.iter().enumerate() {
        let (form, elem, vdims) = classify(v, "input")?;
        // Dims fields are named after the value's generated identifier, not the derive's
        // field name: one model has the same `Dims` whichever route binds it.
        let base = input_idents.allocate(&v.name);
        let field = field_of(Role::Input, index).unwrap_or_else(|| base.clone());
        let storage = match vdims {
            // Sequences, maps and optionals are built whole by the caller; the dims of
            // the tensors they hold are theirs, not the binding's.
            _ if !form.is_sized() => Storage::Value,
            None => {
                let idx = dims.len();
                dims.push(DimField {
                    field: dim_idents.allocate(&format!("{base}_shape")),
                    source: DimSource::Shape {
                        input: v.name.clone(),
                    },
                    used_by: vec![],
                    note: None,
                });
                Storage::OwnedAnyRank(idx)
            }
            Some(ds) => {
                let mut axes = Vec::with_capacity(ds.len());
                for (axis, d) in ds.iter().enumerate() {
                    let size = match d {
                        Dim::Fixed(n) => AxisSize::Fixed(*n),
                        Dim::Named(name) => {
                            let idx = named_field(
                                &mut dim_idents,
                                &mut dims,
                                &mut named,
                                name,
                                (&v.name, &base, axis),
                            );
                            dims[idx].used_by.push((v.name.clone(), axis));
                            AxisSize::Field(idx)
                        }
                        Dim::Dynamic => {
                            dims.push(DimField {
                                field: dim_idents.allocate(&format!("{base}_dim{axis}")),
                                source: DimSource::Axis {
                                    input: v.name.clone(),
                                    axis,
                                },
                                used_by: vec![(v.name.clone(), axis)],
                                note: Some(unnamed_note(&v.name, axis)),
                            });
                            AxisSize::Field(dims.len() - 1)
                        }
                    };
                    axes.push(size);
                }
                Storage::Owned(axes)
            }
        };
        inputs.push(PlannedValue {
            name: v.name.clone(),
            field,
            form,
            onnx_type: v.kind.to_string(),
            elem,
            dims: vdims.map(<[Dim]>::to_vec),
            doc: v.doc_string.clone(),
            storage,
        });
    }

    let mut output_idents = IdentAllocator::new();
    let mut output_bases = Vec::with_capacity(sig.outputs.len());
    let mut outputs = Vec::with_capacity(sig.outputs.len());
    let mut model_index = Vec::with_capacity(sig.outputs.len());
    let mut uses = Vec::with_capacity(sig.outputs.len());
    for (index, v) in sig.outputs.iter().enumerate() {
        // Allocated for every output, bound or not, so names match the generated module's.
        let base = output_idents.allocate(&v.name);
        let use_ = use_of(index);
        if use_ == OutputUse::Skip {
            continue;
        }
        let (form, elem, vdims) = classify(v, "output")?;
        let field = field_of(Role::Output, index).unwrap_or_else(|| base.clone());
        output_bases.push(base);
        // Pre-allocate only when every axis is fixed or a named dim some input carries:
        // then the size is known before the run. ONNX Runtime owns strings and makes
        // sequences, maps and optionals during the run: those outputs are its to allocate.
        let storage = match use_ {
            _ if !form.is_tensor() => Storage::Allocated,
            OutputUse::Allocated => Storage::Allocated,
            _ => vdims
                .and_then(|ds| {
                    ds.iter()
                        .map(|d| match d {
                            Dim::Fixed(n) => Some(AxisSize::Fixed(*n)),
                            Dim::Named(name) => named.get(name).map(|&i| AxisSize::Field(i)),
                            Dim::Dynamic => None,
                        })
                        .collect::<Option<Vec<_>>>()
                })
                .map_or(Storage::Allocated, Storage::Owned),
        };
        outputs.push(PlannedValue {
            name: v.name.clone(),
            field,
            form,
            onnx_type: v.kind.to_string(),
            elem,
            dims: vdims.map(<[Dim]>::to_vec),
            doc: v.doc_string.clone(),
            storage,
        });
        model_index.push(index);
        uses.push(use_);
    }

    let pairable: Vec<bool> = uses
        .iter()
        .zip(&outputs)
        .map(|(u, o)| *u != OutputUse::Allocated && o.form.is_tensor())
        .collect();
    let feed_back = feed_back_pairs(&inputs, &mut outputs, &pairable, &named, &dims, options)?;

    // Outputs the user sizes, which no input and no pair sized: their own dims fields.
    for ((o, use_), base) in outputs.iter_mut().zip(&uses).zip(&output_bases) {
        if *use_ != OutputUse::Owned || o.storage != Storage::Allocated || !o.form.is_tensor() {
            continue;
        }
        o.storage = match &o.dims {
            None => {
                dims.push(DimField {
                    field: dim_idents.allocate(&format!("{base}_shape")),
                    source: DimSource::OutputShape {
                        output: o.name.clone(),
                    },
                    used_by: vec![],
                    note: None,
                });
                Storage::OwnedAnyRank(dims.len() - 1)
            }
            Some(ds) => {
                let mut axes = Vec::with_capacity(ds.len());
                for (axis, d) in ds.iter().enumerate() {
                    axes.push(match d {
                        Dim::Fixed(n) => AxisSize::Fixed(*n),
                        Dim::Named(name) => AxisSize::Field(named_field(
                            &mut dim_idents,
                            &mut dims,
                            &mut named,
                            name,
                            (&o.name, base, axis),
                        )),
                        Dim::Dynamic => {
                            dims.push(DimField {
                                field: dim_idents.allocate(&format!("{base}_dim{axis}")),
                                source: DimSource::OutputAxis {
                                    output: o.name.clone(),
                                    axis,
                                },
                                used_by: vec![],
                                note: Some(unnamed_note(&o.name, axis)),
                            });
                            AxisSize::Field(dims.len() - 1)
                        }
                    });
                }
                Storage::Owned(axes)
            }
        };
    }

    for o in &outputs {
        match &o.storage {
            Storage::Owned(axes) => {
                for (axis, a) in axes.iter().enumerate() {
                    if let AxisSize::Field(i) = a {
                        dims[*i].used_by.push((o.name.clone(), axis));
                    }
                }
            }
            Storage::OwnedAnyRank(i) => dims[*i].used_by.push((o.name.clone(), 0)),
            Storage::Allocated | Storage::Value => {}
        }
    }
    Ok((
        Plan {
            inputs,
            outputs,
            dims,
            feed_back,
            batch: None,
            decoder: None,
        },
        model_index,
    ))
}

/// One field of a user's struct (`#[derive(OnnxBinding)]`), as the plan needs it: what
/// it binds and what its type fixes.
#[derive(Debug, Clone)]
pub struct FieldUse {
    /// Rust field name (without `r#`).
    pub field: String,
    /// Which side of the model it binds.
    pub role: Role,
    /// Index among the model's inputs or outputs.
    pub index: usize,
    /// Whether ONNX Runtime allocates it (an `AllocatedOutput`).
    pub allocated: bool,
    /// Per axis of the field's type, the size it fixes (`Fix<N>`), or `None` (`Dyn`,
    /// or not readable); `None` for the whole when the type shows no tuple shape.
    pub pins: Option<Vec<Option<u64>>>,
}

/// A plan for a user's struct: [`Plan`] over the values its fields bind, with the dims
/// its field types fix taken out of the dims struct.
#[derive(Debug, Clone)]
pub struct StructPlan {
    /// The plan: inputs in model order, then the bound outputs in model order.
    pub plan: Plan,
    /// Per field (same order as given): its value's position in `plan.inputs` or
    /// `plan.outputs`.
    pub values: Vec<(Role, usize)>,
    /// Per planned output, its index among the model's outputs.
    pub output_index: Vec<usize>,
}

/// How a dim reads in messages: ``dim `batch` ``, ``unnamed axis 1 of `state` ``.
fn dim_words(d: &DimField) -> String {
    match &d.source {
        DimSource::Named(n) if d.note.is_some() => format!("dim `{}` (the model's `{n}`)", d.field),
        DimSource::Named(n) => format!("dim `{n}`"),
        DimSource::Axis { input, axis } => format!("unnamed axis {axis} of input `{input}`"),
        DimSource::OutputAxis { output, axis } => {
            format!("unnamed axis {axis} of output `{output}`")
        }
        DimSource::Shape { input } => format!("the shape of input `{input}`"),
        DimSource::OutputShape { output } => format!("the shape of output `{output}`"),
    }
}

/// Plans the struct whose fields are `fields`: the same plan as [`plan_with`] (dims,
/// recurrent pairs, who allocates what), restricted to the outputs the struct binds, with
/// every output written as a `Tensor` pre-allocated (its dims no input gives become dims
/// fields), and every dim a field type fixes with `Fix<N>` fixed for the whole struct.
///
/// Errors: everything [`plan_with`] refuses, and two fields fixing one dim to different
/// sizes ([`PlanError::PinsDisagree`]) or fixing an axis a recurrent pair sizes
/// otherwise ([`PlanError::PinContradicts`]), each naming the field ([`FieldUse`] index).
/// Fields the model fixes to another size are not reported here: checking field types
/// against the model (the `check` module) does that.
pub fn plan_struct(
    sig: &ModelSignature,
    options: &ModelOptions,
    fields: &[FieldUse],
) -> Result<StructPlan, Vec<PlanError>> {
    let refused = refusals(sig);
    if !refused.is_empty() {
        return Err(refused);
    }
    let mut out_field: HashMap<usize, usize> = HashMap::new();
    let mut in_field: HashMap<usize, usize> = HashMap::new();
    for (k, f) in fields.iter().enumerate() {
        match f.role {
            Role::Input => in_field.entry(f.index).or_insert(k),
            Role::Output => out_field.entry(f.index).or_insert(k),
        };
    }
    let use_of = |index: usize| match out_field.get(&index) {
        None => OutputUse::Skip,
        Some(&k) if fields[k].allocated => OutputUse::Allocated,
        Some(_) => OutputUse::Owned,
    };
    let field_of = |role: Role, index: usize| {
        let k = match role {
            Role::Input => in_field.get(&index),
            Role::Output => out_field.get(&index),
        }?;
        Some(fields[*k].field.clone())
    };
    let (mut plan, output_index) =
        plan_core_named(sig, options, &use_of, &field_of).map_err(|e| vec![e])?;
    let values: Vec<(Role, usize)> = fields
        .iter()
        .map(|f| match f.role {
            Role::Input => (Role::Input, f.index),
            Role::Output => (
                Role::Output,
                output_index.iter().position(|&i| i == f.index).unwrap_or(0),
            ),
        })
        .collect();

    // Sizes the field types fix, per dims field: the first (field, axis, size) seen.
    let mut pinned: Vec<Option<(usize, usize, u64)>> = vec![None; plan.dims.len()];
    let mut errors = Vec::new();
    for (k, (f, &(role, pos))) in fields.iter().zip(&values).enumerate() {
        let v = match role {
            Role::Input => &plan.inputs[pos],
            Role::Output => &plan.outputs[pos],
        };
        let (Some(pins), Storage::Owned(axes)) = (&f.pins, &v.storage) else {
            continue;
        };
        if pins.len() != axes.len() {
            continue; // a rank mismatch, reported by the check
        }
        for (axis, (pin, size)) in pins.iter().zip(axes).enumerate() {
            let Some(n) = *pin else { continue };
            match *size {
                AxisSize::Field(i) => match pinned[i] {
                    None => pinned[i] = Some((k, axis, n)),
                    Some((first, first_axis, m)) if m != n => {
                        errors.push(PlanError::PinsDisagree(Box::new(PinsDisagree {
                            dim: dim_words(&plan.dims[i]),
                            at: k,
                            field: f.field.clone(),
                            axis,
                            size: n,
                            other_field: fields[first].field.clone(),
                            other_axis: first_axis,
                            other_size: m,
                        })));
                    }
                    Some(_) => {}
                },
                AxisSize::Fixed(m) if m != n => {
                    let model_fixes = matches!(
                        v.dims.as_ref().and_then(|d| d.get(axis)),
                        Some(Dim::Fixed(_))
                    );
                    // The model's own fixed axes are the check's to report.
                    if model_fixes {
                        continue;
                    }
                    let why = match plan
                        .feed_back
                        .iter()
                        .find(|fb| role == Role::Output && fb.output == pos)
                    {
                        Some(fb) => format!(
                            "output `{}` feeds back into input `{}`, whose axis {axis} the \
                             model fixes to {m}",
                            v.name, plan.inputs[fb.input].name
                        ),
                        None => format!("the model fixes it to {m}"),
                    };
                    errors.push(PlanError::PinContradicts(Box::new(PinContradicts {
                        at: k,
                        field: f.field.clone(),
                        axis,
                        size: n,
                        want: m,
                        why,
                    })));
                }
                AxisSize::Fixed(_) => {}
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }

    // Fixed dims leave the dims struct; the others are renumbered.
    let sizes: Vec<Option<u64>> = pinned.iter().map(|p| p.map(|(_, _, n)| n)).collect();
    let mut used = vec![false; plan.dims.len()];
    for v in plan.inputs.iter().chain(&plan.outputs) {
        match &v.storage {
            Storage::Owned(axes) => {
                for a in axes {
                    if let AxisSize::Field(i) = a {
                        used[*i] = sizes[*i].is_none();
                    }
                }
            }
            Storage::OwnedAnyRank(i) => used[*i] = true,
            Storage::Allocated | Storage::Value => {}
        }
    }
    let mut renumber = vec![usize::MAX; plan.dims.len()];
    let mut kept = Vec::new();
    for (i, d) in std::mem::take(&mut plan.dims).into_iter().enumerate() {
        if used[i] {
            renumber[i] = kept.len();
            kept.push(d);
        }
    }
    plan.dims = kept;
    for v in plan.inputs.iter_mut().chain(plan.outputs.iter_mut()) {
        match &mut v.storage {
            Storage::Owned(axes) => {
                for a in axes {
                    if let AxisSize::Field(i) = *a {
                        *a = match sizes[i] {
                            Some(n) => AxisSize::Fixed(n),
                            None => AxisSize::Field(renumber[i]),
                        };
                    }
                }
            }
            Storage::OwnedAnyRank(i) => *i = renumber[*i],
            Storage::Allocated | Storage::Value => {}
        }
    }
    Ok(StructPlan {
        plan,
        values,
        output_index,
    })
}

/// How one axis of a value is sized in the bindings: what `ort-bind inspect` shows next
/// to it ([`axes`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AxisBinding {
    /// Fixed by the model: no field.
    Fixed(u64),
    /// Sized by this field of `Dims`.
    Field(String),
    /// Decided by ONNX Runtime during each run (the output is allocated by it).
    Runtime,
}

/// One axis of one input or output, as the generated bindings see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AxisInfo {
    /// Input or output.
    pub role: Role,
    /// ONNX name of the value.
    pub value: String,
    /// Axis index.
    pub axis: usize,
    /// The axis as the model declares it.
    pub declared: Dim,
    /// How the bindings size it.
    pub binding: AxisBinding,
    /// The option that names (or renames) the dim, in the words `ModelOptions` and
    /// `bindings!` share (`dim("x", 0, "NAME")`, `rename_dim("N", "NAME")`); `None` for an
    /// axis the model fixes.
    pub rename: Option<String>,
}

/// Every axis of every input and output of `sig` under `options`, in model order: the
/// `Dims` field it becomes (or why it has none) and the option that renames it. Values
/// of unknown rank have no axes listed. Pure: for `ort-bind inspect`.
///
/// ```
/// use ort_bind_codegen::plan::{AxisBinding, ModelOptions, axes};
/// use ort_bind_codegen::{Dim, ElementType, ModelSignature, ValueKind, ValueSig};
/// let t = |name: &str, dims| ValueSig {
///     name: name.into(),
///     kind: ValueKind::Tensor { elem: ElementType::F32, dims: Some(dims) },
///     doc_string: String::new(),
/// };
/// let sig = ModelSignature {
///     inputs: vec![t("x", vec![Dim::Named("p2o.DynamicDimension.0".into()), Dim::Fixed(3)])],
///     outputs: vec![t("y", vec![Dim::Named("p2o.DynamicDimension.1".into())])],
///     ..Default::default()
/// };
/// let a = axes(&sig, &ModelOptions::new()).unwrap();
/// assert_eq!(a[0].binding, AxisBinding::Field("x_dim0".into()));
/// assert_eq!(a[0].rename.as_deref(), Some(r#"rename_dim("p2o.DynamicDimension.0", "NAME")"#));
/// assert_eq!(a[1].binding, AxisBinding::Fixed(3));
/// assert_eq!(a[2].binding, AxisBinding::Runtime);
/// ```
pub fn axes(sig: &ModelSignature, options: &ModelOptions) -> Result<Vec<AxisInfo>, PlanError> {
    let plan = plan_with(sig, options)?;
    let mut out = Vec::new();
    for (role, values) in [(Role::Input, &plan.inputs), (Role::Output, &plan.outputs)] {
        for v in values {
            let Some(dims) = &v.dims else { continue };
            // The tensors inside sequences and optionals have no axes of the binding's.
            if !v.form.is_sized() {
                continue;
            }
            for (axis, d) in dims.iter().enumerate() {
                let binding = match &v.storage {
                    Storage::Owned(axes) => match axes.get(axis) {
                        Some(AxisSize::Fixed(n)) => AxisBinding::Fixed(*n),
                        Some(AxisSize::Field(i)) => AxisBinding::Field(plan.dims[*i].field.clone()),
                        None => AxisBinding::Runtime,
                    },
                    Storage::OwnedAnyRank(i) => AxisBinding::Field(plan.dims[*i].field.clone()),
                    Storage::Allocated | Storage::Value => match d {
                        Dim::Fixed(n) => AxisBinding::Fixed(*n),
                        _ => AxisBinding::Runtime,
                    },
                };
                let rename = match d {
                    Dim::Fixed(_) => None,
                    Dim::Named(n) => Some(format!("rename_dim({n:?}, \"NAME\")")),
                    Dim::Dynamic => Some(format!("dim({:?}, {axis}, \"NAME\")", v.name)),
                };
                out.push(AxisInfo {
                    role,
                    value: v.name.clone(),
                    axis,
                    declared: d.clone(),
                    binding,
                    rename,
                });
            }
        }
    }
    Ok(out)
}

/// The derive's way to name the axes of `value` ([`axes`] of one value): the
/// `#[onnx(dims = "..")]` attribute a field binding it would carry to get the same dims
/// fields as the generated module (fixed axes as their size, axes ONNX Runtime sizes as
/// `_`), as a template to edit: `dims = "x_dim0, 3, x_dim2, x_dim3"`. `None` when `axes`
/// lists no axis of that value.
pub fn dims_attribute(axes: &[AxisInfo], role: Role, value: &str) -> Option<String> {
    let entries: Vec<String> = axes
        .iter()
        .filter(|a| a.role == role && a.value == value)
        .map(|a| match &a.binding {
            AxisBinding::Fixed(n) => n.to_string(),
            AxisBinding::Field(f) => f.clone(),
            AxisBinding::Runtime => "_".to_owned(),
        })
        .collect();
    (!entries.is_empty()).then(|| format!("dims = \"{}\"", entries.join(", ")))
}

/// Whether the output's declared dims leave room for the input's shape, axis by axis:
/// equal, or open on the output (`?`, or a named dim that no input carries).
fn compatible(
    out: &PlannedValue,
    input: &PlannedValue,
    named: &HashMap<String, usize>,
    dims: &[DimField],
) -> Result<(), String> {
    let (Some(od), Storage::Owned(iaxes)) = (&out.dims, &input.storage) else {
        // Unknown rank on either side: the input's shape (whatever sizes it) is taken.
        return Ok(());
    };
    if od.len() != iaxes.len() {
        return Err(format!(
            "the output has rank {} and the input rank {}",
            od.len(),
            iaxes.len()
        ));
    }
    for (axis, (d, a)) in od.iter().zip(iaxes).enumerate() {
        let ok = match (d, a) {
            (Dim::Dynamic, _) => true,
            (Dim::Fixed(n), AxisSize::Fixed(m)) => n == m,
            (Dim::Named(name), AxisSize::Field(f)) => named.get(name).is_none_or(|g| g == f),
            (Dim::Named(name), AxisSize::Fixed(_)) => !named.contains_key(name),
            (Dim::Fixed(_), AxisSize::Field(_)) => false,
        };
        if !ok {
            let theirs = match a {
                AxisSize::Fixed(m) => m.to_string(),
                AxisSize::Field(f) => match &dims[*f].source {
                    DimSource::Named(n) => n.clone(),
                    _ => "?".into(),
                },
            };
            return Err(format!(
                "axis {axis} is `{d}` on the output but `{theirs}` on the input"
            ));
        }
    }
    Ok(())
}

/// Input names indexed to list, for an output name, the input names related to it: the
/// names say the values belong together when one is a proper prefix of the other
/// (`state` / `stateN`, `h` / `h_out`). Time is linear in the name's length plus the
/// matches.
struct NameIndex<'a> {
    /// Names in byte order, with their input index: the names that extend a given name
    /// form one run.
    sorted: Vec<(&'a str, usize)>,
    /// Byte trie of the names, `(node, byte) -> child`; node 0 is the empty prefix.
    edges: HashMap<(u32, u8), u32>,
    /// Trie node where a name ends -> the inputs of that name.
    ends: HashMap<u32, Vec<usize>>,
}

impl<'a> NameIndex<'a> {
    fn new(inputs: &'a [PlannedValue]) -> Self {
        let mut sorted: Vec<(&str, usize)> = inputs
            .iter()
            .enumerate()
            .map(|(i, v)| (v.name.as_str(), i))
            .collect();
        sorted.sort_unstable();
        let mut edges: HashMap<(u32, u8), u32> = HashMap::new();
        let mut ends: HashMap<u32, Vec<usize>> = HashMap::new();
        for &(name, index) in &sorted {
            let mut node = 0u32;
            for &b in name.as_bytes() {
                // Node ids fit in u32: a model file is far smaller than 4 GiB of names.
                let fresh = u32::try_from(edges.len() + 1).unwrap_or(u32::MAX);
                node = *edges.entry((node, b)).or_insert(fresh);
            }
            ends.entry(node).or_default().push(index);
        }
        NameIndex {
            sorted,
            edges,
            ends,
        }
    }

    /// Fills `out` with the inputs whose names are related to `name`.
    fn related(&self, name: &str, out: &mut Vec<usize>) {
        out.clear();
        // Shorter names that are prefixes of `name`: the name ends met along its path.
        let mut node = 0u32;
        for &b in name.as_bytes() {
            if let Some(found) = self.ends.get(&node) {
                out.extend_from_slice(found);
            }
            match self.edges.get(&(node, b)) {
                Some(&next) => node = next,
                None => break,
            }
        }
        // Longer names that start with `name`: the run right after it in byte order.
        let start = self.sorted.partition_point(|&(s, _)| s <= name);
        out.extend(
            self.sorted[start..]
                .iter()
                .take_while(|(s, _)| s.starts_with(name))
                .map(|&(_, i)| i),
        );
    }
}

/// Recurrent pairs: declared ones first, then (unless turned off) name-related pairs of
/// equal element type whose dims are equal, or compatible and unambiguous. A pair makes
/// the output take the input's storage (its shape).
fn feed_back_pairs(
    inputs: &[PlannedValue],
    outputs: &mut [PlannedValue],
    pairable: &[bool],
    named: &HashMap<String, usize>,
    dims: &[DimField],
    options: &ModelOptions,
) -> Result<Vec<FeedBack>, PlanError> {
    let mut pairs: Vec<FeedBack> = Vec::new();
    for (oname, iname) in &options.feed_back {
        let err = |reason: String| PlanError::FeedBack {
            output: oname.clone(),
            input: iname.clone(),
            reason,
        };
        let oi = outputs
            .iter()
            .position(|o| &o.name == oname)
            .ok_or_else(|| err(format!("the model has no output `{oname}`")))?;
        let ii = inputs
            .iter()
            .position(|i| &i.name == iname)
            .ok_or_else(|| err(format!("the model has no input `{iname}`")))?;
        if pairs.iter().any(|p| p.output == oi || p.input == ii) {
            return Err(err("one of them is already in another pair".into()));
        }
        if !pairable[oi] {
            return Err(err(
                "the output is an `AllocatedOutput`, whose memory ONNX Runtime allocates: \
                 only a `Tensor` output can become an input"
                    .into(),
            ));
        }
        let (o, i) = (&outputs[oi], &inputs[ii]);
        if !o.form.is_tensor() || !i.form.is_tensor() {
            return Err(err(format!(
                "the output is {} and the input {}: only numeric tensors exchange buffers",
                o.onnx_type, i.onnx_type
            )));
        }
        if o.elem != i.elem {
            return Err(err(format!(
                "the output is {} and the input {}",
                o.elem, i.elem
            )));
        }
        compatible(o, i, named, dims).map_err(err)?;
        outputs[oi].storage = inputs[ii].storage.clone();
        pairs.push(FeedBack {
            output: oi,
            input: ii,
        });
    }
    if options.no_auto_feed_back {
        return Ok(pairs);
    }
    let mut out_taken: Vec<bool> = pairable.iter().map(|p| !p).collect();
    let mut in_taken = vec![false; inputs.len()];
    for p in &pairs {
        out_taken[p.output] = true;
        in_taken[p.input] = true;
    }
    // Candidates: related names, same element type, dims that do not contradict. Names
    // are matched through an index rather than pairwise, so the search is linear in the
    // total length of the names, and so is the number of candidates (a name has at most
    // as many proper prefixes as bytes). Pairwise, 100,000 outputs took minutes.
    let index = NameIndex::new(inputs);
    let mut related_inputs = Vec::new();
    let mut candidates: Vec<(usize, usize, bool)> = Vec::new();
    for (oi, o) in outputs.iter().enumerate() {
        if out_taken[oi] {
            continue;
        }
        index.related(&o.name, &mut related_inputs);
        related_inputs.sort_unstable();
        for &ii in &related_inputs {
            let i = &inputs[ii];
            if in_taken[ii] || o.elem != i.elem || !i.form.is_tensor() {
                continue;
            }
            let equal = o.storage == i.storage;
            let auto_rank = o.dims.as_ref().map(Vec::len) == i.dims.as_ref().map(Vec::len);
            if equal || (auto_rank && compatible(o, i, named, dims).is_ok()) {
                candidates.push((oi, ii, equal));
            }
        }
    }
    let mut per_out = vec![0usize; outputs.len()];
    let mut per_in = vec![0usize; inputs.len()];
    for &(oi, ii, _) in &candidates {
        per_out[oi] += 1;
        per_in[ii] += 1;
    }
    // Dims that differ: only a pair that is the only candidate on both sides.
    for &(oi, ii, equal) in &candidates {
        if !equal && per_out[oi] == 1 && per_in[ii] == 1 {
            outputs[oi].storage = inputs[ii].storage.clone();
            out_taken[oi] = true;
            in_taken[ii] = true;
            pairs.push(FeedBack {
                output: oi,
                input: ii,
            });
        }
    }
    // Same storage already: pairing changes nothing about the output. Each output feeds
    // at most one input and each input at most one output (otherwise the pairs, and the
    // generated methods, could number outputs x inputs); the closest names win: the
    // longest shared prefix first, then model order.
    let mut equal: Vec<(usize, usize)> = candidates
        .iter()
        .filter(|c| c.2)
        .map(|&(oi, ii, _)| (oi, ii))
        .collect();
    equal.sort_by_key(|&(oi, ii)| {
        let shared = outputs[oi].name.len().min(inputs[ii].name.len());
        (std::cmp::Reverse(shared), oi, ii)
    });
    for (oi, ii) in equal {
        if !out_taken[oi] && !in_taken[ii] {
            out_taken[oi] = true;
            in_taken[ii] = true;
            pairs.push(FeedBack {
                output: oi,
                input: ii,
            });
        }
    }
    pairs.sort_by_key(|p| (p.output, p.input));
    Ok(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::ElementType;

    fn t(name: &str, elem: ElementType, dims: Option<Vec<Dim>>) -> ValueSig {
        ValueSig {
            name: name.into(),
            kind: ValueKind::Tensor { elem, dims },
            doc_string: String::new(),
        }
    }
    fn named(n: &str) -> Dim {
        Dim::Named(n.into())
    }
    const F: ElementType = ElementType::F32;

    /// silero_vad.onnx as exported: every dynamic dim unnamed.
    fn silero() -> ModelSignature {
        ModelSignature {
            inputs: vec![
                t("input", F, Some(vec![Dim::Dynamic, Dim::Dynamic])),
                t(
                    "state",
                    F,
                    Some(vec![Dim::Fixed(2), Dim::Dynamic, Dim::Fixed(128)]),
                ),
                t("sr", ElementType::I64, Some(vec![])),
            ],
            outputs: vec![
                t("output", F, Some(vec![Dim::Dynamic, Dim::Fixed(1)])),
                t(
                    "stateN",
                    F,
                    Some(vec![Dim::Dynamic, Dim::Dynamic, Dim::Dynamic]),
                ),
            ],
            ..Default::default()
        }
    }

    fn fields(p: &Plan) -> Vec<&str> {
        p.dims.iter().map(|d| d.field.as_str()).collect()
    }

    #[test]
    fn open_state_output_takes_the_state_input_shape() {
        let p = plan(&silero()).unwrap();
        assert_eq!(fields(&p), ["input_dim0", "input_dim1", "state_dim1"]);
        // `output` [?, 1]: nothing says what `?` is, so ONNX Runtime allocates it.
        assert_eq!(p.outputs[0].storage, Storage::Allocated);
        // `stateN` [?, ?, ?] pairs with `state` [2, ?, 128] and takes its shape.
        assert_eq!(p.feed_back.len(), 1);
        assert_eq!((p.feed_back[0].output, p.feed_back[0].input), (1, 1));
        assert_eq!(p.outputs[1].storage, p.inputs[1].storage);
    }

    #[test]
    fn naming_dims_makes_outputs_preallocated() {
        let opts = ModelOptions::new()
            .dim("input", 0, "batch")
            .dim("input", 1, "samples")
            .dim("state", 1, "batch")
            .dim("output", 0, "batch");
        let p = plan_with(&silero(), &opts).unwrap();
        assert_eq!(fields(&p), ["batch", "samples"]);
        assert_eq!(
            p.outputs[0].storage,
            Storage::Owned(vec![AxisSize::Field(0), AxisSize::Fixed(1)])
        );
        assert_eq!(
            p.outputs[1].storage,
            Storage::Owned(vec![
                AxisSize::Fixed(2),
                AxisSize::Field(0),
                AxisSize::Fixed(128)
            ])
        );
        assert_eq!(
            p.dims[0].used_by,
            [
                ("input".to_string(), 0),
                ("state".to_string(), 1),
                ("output".to_string(), 0),
                ("stateN".to_string(), 1)
            ]
        );
    }

    #[test]
    fn placeholder_names() {
        for p in [
            "?",
            "",
            "-1",
            "None",
            "unk__123",
            "p2o.DynamicDimension.0",
            "DynamicDimension_3",
        ] {
            assert!(is_placeholder_name(p), "{p}");
        }
        for n in ["batch", "N", "seq_len", "height", "unk", "p2o_batch"] {
            assert!(!is_placeholder_name(n), "{n}");
        }
    }

    /// The real models in `tests/fixtures/signatures` (PP-OCRv4 det, Silero VAD).
    fn real(name: &str) -> ModelSignature {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../ort-bind-tests/tests/fixtures/signatures")
            .join(name);
        crate::read_signature(path).unwrap()
    }

    /// PP-OCRv4's detector with the output's dims renamed to the input's and dim 0
    /// called `batch_name`.
    fn det_options(batch_name: &str) -> ModelOptions {
        ModelOptions::new()
            .rename_dim("p2o.DynamicDimension.0", batch_name)
            .rename_dim("p2o.DynamicDimension.3", batch_name)
            .rename_dim("p2o.DynamicDimension.4", "p2o.DynamicDimension.1")
            .rename_dim("p2o.DynamicDimension.5", "p2o.DynamicDimension.2")
    }

    #[test]
    fn a_dim_named_batch_on_axis_0_of_every_value_is_the_batch_dim() {
        let p = plan_with(&real("ppocr_det.onnx"), &det_options("batch")).unwrap();
        assert_eq!(p.batch.map(|b| p.dims[b].field.as_str()), Some("batch"));
        // Named otherwise, it is not guessed ...
        let p = plan_with(&real("ppocr_det.onnx"), &det_options("images")).unwrap();
        assert_eq!(p.batch, None);
        // ... unless declared, by dim name or by dims field name.
        let p = plan_with(
            &real("ppocr_det.onnx"),
            &det_options("images").batch_dim("images"),
        );
        assert_eq!(p.unwrap().batch, Some(0));
        let p = plan_with(
            &real("ppocr_det.onnx"),
            &det_options("n").batch_dim("x_dim2"),
        );
        assert!(
            matches!(&p, Err(PlanError::BatchDim { reason, .. }) if reason.contains("axis 0")),
            "{p:?}"
        );
    }

    #[test]
    fn a_batch_dim_off_axis_0_is_no_batch_dim_and_declaring_it_is_an_error() {
        // Silero's `batch` is axis 1 of `state`: items cannot be rows.
        let opts = ModelOptions::new()
            .dim("input", 0, "batch")
            .dim("state", 1, "batch")
            .dim("output", 0, "batch");
        assert_eq!(plan_with(&silero(), &opts).unwrap().batch, None);
        let err = plan_with(&silero(), &opts.clone().batch_dim("batch")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "batch_dim(`batch`): input `state` is [2, batch, 128]: the batch dim must be its \
             axis 0 and no other"
        );
        let err = plan_with(&silero(), &opts.batch_dim("rows")).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("batch_dim(`rows`): the model has no dim of that name"),
            "{err}"
        );
    }

    #[test]
    fn exporter_placeholders_become_fields_named_where_they_are_used() {
        // x [p2o.DynamicDimension.0, 3, .1, .2] -> sigmoid_0.tmp_0 [.3, 1, .4, .5]
        let det = real("ppocr_det.onnx");
        let p = plan(&det).unwrap();
        assert_eq!(fields(&p), ["x_dim0", "x_dim2", "x_dim3"]);
        let note = p.dims[0].note.as_deref().unwrap();
        assert!(note.contains("`p2o.DynamicDimension.0`"), "{note}");
        // Named apart on the output: ONNX Runtime allocates it, unless renamed.
        assert_eq!(p.outputs[0].storage, Storage::Allocated);
        let opts = ModelOptions::new()
            .rename_dim("p2o.DynamicDimension.3", "batch")
            .rename_dim("p2o.DynamicDimension.0", "batch")
            .dim("x", 2, "height")
            .dim("x", 3, "width")
            .dim("sigmoid_0.tmp_0", 2, "height")
            .dim("sigmoid_0.tmp_0", 3, "width");
        let p = plan_with(&det, &opts).unwrap();
        assert_eq!(fields(&p), ["batch", "height", "width"]);
        assert!(matches!(p.outputs[0].storage, Storage::Owned(_)));
        // Silero VAD: unnamed axes keep `<value>_dim<axis>`; `stateN` pairs with `state`.
        let p = plan(&real("silero_vad.onnx")).unwrap();
        assert_eq!(fields(&p), ["input_dim0", "input_dim1", "state_dim1"]);
        let a = axes(&real("silero_vad.onnx"), &ModelOptions::new()).unwrap();
        let state1 = a
            .iter()
            .find(|a| a.value == "state" && a.axis == 1)
            .unwrap();
        assert_eq!(state1.binding, AxisBinding::Field("state_dim1".into()));
        assert_eq!(state1.rename.as_deref(), Some(r#"dim("state", 1, "NAME")"#));
        let out0 = a
            .iter()
            .find(|a| a.value == "output" && a.axis == 0)
            .unwrap();
        assert_eq!(out0.binding, AxisBinding::Runtime);
    }

    fn use_(field: &str, role: Role, index: usize, pins: &[Option<u64>]) -> FieldUse {
        FieldUse {
            field: field.into(),
            role,
            index,
            allocated: false,
            pins: Some(pins.to_vec()),
        }
    }

    #[test]
    fn struct_dims_are_what_no_field_type_fixes() {
        let sig = silero();
        let f = |state0: Option<u64>| {
            vec![
                use_("input", Role::Input, 0, &[Some(1), Some(512)]),
                use_("state", Role::Input, 1, &[Some(2), None, Some(128)]),
                use_("sr", Role::Input, 2, &[]),
                use_("next", Role::Output, 1, &[state0, None, None]),
            ]
        };
        // Everything pinned but `state` axis 1 (which `stateN` shares through the pair).
        let p = plan_struct(&sig, &ModelOptions::new(), &f(None)).unwrap();
        assert_eq!(fields(&p.plan), ["state_dim1"]);
        assert_eq!(p.plan.feed_back.len(), 1);
        // `output` is not bound: it is not planned.
        assert_eq!(p.output_index, [1]);
        // Pinning it too leaves nothing.
        let mut all = f(None);
        all[1].pins = Some(vec![Some(2), Some(1), Some(128)]);
        let p = plan_struct(&sig, &ModelOptions::new(), &all).unwrap();
        assert!(p.plan.dims.is_empty());
        assert_eq!(
            p.plan.outputs[0].storage,
            Storage::Owned(vec![
                AxisSize::Fixed(2),
                AxisSize::Fixed(1),
                AxisSize::Fixed(128)
            ])
        );
        // The pair sizes `stateN` axis 0 as `state`'s 2.
        let err = plan_struct(&sig, &ModelOptions::new(), &f(Some(3))).unwrap_err();
        assert!(
            matches!(&err[0], PlanError::PinContradicts(p) if p.at == 3 && p.want == 2),
            "{err:?}"
        );
        // Two fields pin one dim apart.
        let opts = ModelOptions::new()
            .dim("input", 0, "batch")
            .dim("state", 1, "batch");
        let mut apart = f(None);
        apart[1].pins = Some(vec![Some(2), Some(2), Some(128)]);
        let err = plan_struct(&sig, &opts, &apart).unwrap_err();
        assert_eq!(
            err[0].to_string(),
            "dim `batch` is 2 in field `state` (axis 1: `Fix<2>`) but 1 in field `input` (axis 0: \
             `Fix<1>`): one binding cannot have both"
        );
    }

    #[test]
    fn rename_unifies_differently_named_dims() {
        let sig = ModelSignature {
            inputs: vec![t("x", F, Some(vec![named("batch"), Dim::Fixed(4)]))],
            outputs: vec![t("z", F, Some(vec![named("N"), Dim::Fixed(3)]))],
            ..Default::default()
        };
        assert_eq!(plan(&sig).unwrap().outputs[0].storage, Storage::Allocated);
        let p = plan_with(&sig, &ModelOptions::new().rename_dim("N", "batch")).unwrap();
        assert_eq!(
            p.outputs[0].storage,
            Storage::Owned(vec![AxisSize::Field(0), AxisSize::Fixed(3)])
        );
        let err = plan_with(&sig, &ModelOptions::new().rename_dim("M", "batch")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "rename_dim(`M`, ..): no value of the model has a dim named `M` (named dims: `batch`, `N`)"
        );
    }

    #[test]
    fn dim_options_that_contradict_the_model_are_errors() {
        let err = plan_with(&silero(), &ModelOptions::new().dim("state", 0, "batch")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "dim(`state`, 0, `batch`): the model fixes that axis to 2"
        );
        let err = plan_with(&silero(), &ModelOptions::new().dim("state", 3, "b")).unwrap_err();
        assert!(err.to_string().contains("it has rank 3"), "{err}");
        let err = plan_with(&silero(), &ModelOptions::new().dim("stat", 1, "b")).unwrap_err();
        assert!(
            err.to_string().contains(
                "no input or output `stat` (it has `input`, `state`, `sr`, `output`, `stateN`)"
            ),
            "{err}"
        );
    }

    #[test]
    fn declared_feed_back_is_checked() {
        let opts = ModelOptions::new().no_auto_feed_back();
        assert!(plan_with(&silero(), &opts).unwrap().feed_back.is_empty());
        let opts = ModelOptions::new()
            .no_auto_feed_back()
            .feed_back("stateN", "state");
        let p = plan_with(&silero(), &opts).unwrap();
        assert_eq!((p.feed_back[0].output, p.feed_back[0].input), (1, 1));
        assert_eq!(p.outputs[1].storage, p.inputs[1].storage);
        // `output` [?, 1] cannot take the shape of `input` [?, ?]: its axis 1 is fixed.
        let err =
            plan_with(&silero(), &ModelOptions::new().feed_back("output", "input")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "feed_back(`output`, `input`): axis 1 is `1` on the output but `?` on the input"
        );
        let err =
            plan_with(&silero(), &ModelOptions::new().feed_back("output", "state")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "feed_back(`output`, `state`): the output has rank 2 and the input rank 3"
        );
        let err = plan_with(&silero(), &ModelOptions::new().feed_back("stateN", "sr")).unwrap_err();
        assert!(
            err.to_string().contains("is float32 and the input int64"),
            "{err}"
        );
    }

    #[test]
    fn ambiguous_or_contradicting_candidates_are_not_unified() {
        // Two open outputs related to `h`: neither is unified.
        let sig = ModelSignature {
            inputs: vec![t("h", F, Some(vec![Dim::Fixed(1), Dim::Fixed(8)]))],
            outputs: vec![
                t("h_out", F, Some(vec![Dim::Dynamic, Dim::Dynamic])),
                t("hidden", F, Some(vec![Dim::Dynamic, Dim::Dynamic])),
            ],
            ..Default::default()
        };
        let p = plan(&sig).unwrap();
        assert!(p.feed_back.is_empty());
        assert_eq!(p.outputs[0].storage, Storage::Allocated);
        // A fixed axis that differs rules a pair out.
        let sig = ModelSignature {
            inputs: vec![t("h", F, Some(vec![Dim::Fixed(1), Dim::Fixed(8)]))],
            outputs: vec![t("h_out", F, Some(vec![Dim::Dynamic, Dim::Fixed(9)]))],
            ..Default::default()
        };
        assert!(plan(&sig).unwrap().feed_back.is_empty());
    }

    #[test]
    fn equal_candidates_pair_each_value_once_closest_names_first() {
        // `state_c_out` is related to both `state` and `state_c`, `state` to both
        // outputs: the longest shared prefix wins, and no value is in two pairs.
        let d = || Some(vec![named("batch"), Dim::Fixed(4)]);
        let sig = ModelSignature {
            inputs: vec![t("state", F, d()), t("state_c", F, d())],
            outputs: vec![t("state_out", F, d()), t("state_c_out", F, d())],
            ..Default::default()
        };
        let p = plan(&sig).unwrap();
        let pairs: Vec<(usize, usize)> = p.feed_back.iter().map(|f| (f.output, f.input)).collect();
        assert_eq!(pairs, [(0, 0), (1, 1)]);
        // Many related names stay a matching: at most min(outputs, inputs) pairs.
        let sig = ModelSignature {
            inputs: (1..=50).map(|k| t(&"s".repeat(k), F, d())).collect(),
            outputs: (0..80)
                .map(|k| t(&format!("{}_{k}", "s".repeat(50)), F, d()))
                .collect(),
            ..Default::default()
        };
        let p = plan(&sig).unwrap();
        assert_eq!(p.feed_back.len(), 50);
    }
}
