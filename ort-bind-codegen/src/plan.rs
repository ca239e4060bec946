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

use crate::dtype::ElementType;
use crate::ident::IdentAllocator;
use crate::signature::{Dim, ModelSignature, ValueKind, ValueSig, format_dims};

/// Why a model cannot get generated bindings.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    /// A graph input or output has a type ort-bind does not bind.
    #[error(
        "{role} `{name}` is {kind}: ort-bind binds dense tensors of numeric or bool elements only"
    )]
    Unsupported {
        /// `input` or `output`.
        role: &'static str,
        /// ONNX name.
        name: String,
        /// What the value is.
        kind: String,
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
        ValueKind::Unsupported(_) => None,
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
    /// Allocated by ONNX Runtime at run time (data-dependent or unknown dims).
    Allocated,
}

/// One graph input or output, planned.
#[derive(Debug, Clone)]
pub struct PlannedValue {
    /// ONNX name.
    pub name: String,
    /// Rust field name (sanitised, unique in its struct; without `r#`).
    pub field: String,
    /// Element type.
    pub elem: ElementType,
    /// Declared dims (`None`: unknown rank).
    pub dims: Option<Vec<Dim>>,
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
}

impl Plan {
    /// Whether every dims field is a plain `usize` (the dims struct can be `Copy`).
    pub fn dims_are_copy(&self) -> bool {
        !self
            .dims
            .iter()
            .any(|d| matches!(d.source, DimSource::Shape { .. }))
    }
}

fn tensor_of<'a>(
    v: &'a ValueSig,
    role: &'static str,
) -> Result<(ElementType, Option<&'a [Dim]>), PlanError> {
    match &v.kind {
        ValueKind::Tensor { elem, dims } if elem.is_bindable() => Ok((*elem, dims.as_deref())),
        ValueKind::Tensor { elem, dims } => Err(PlanError::Unsupported {
            role,
            name: v.name.clone(),
            kind: format!("a {elem} tensor {}", format_dims(dims.as_deref())),
        }),
        ValueKind::Unsupported(kind) => Err(PlanError::Unsupported {
            role,
            name: v.name.clone(),
            kind: kind.clone(),
        }),
    }
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
    let sig = apply_dim_options(sig, options)?;
    let mut dim_idents = IdentAllocator::new();
    let mut dims: Vec<DimField> = Vec::new();
    let mut named: HashMap<String, usize> = HashMap::new();

    let mut input_idents = IdentAllocator::new();
    let mut inputs = Vec::with_capacity(sig.inputs.len());
    for v in &sig.inputs {
        let (elem, vdims) = tensor_of(v, "input")?;
        let field = input_idents.allocate(&v.name);
        let storage = match vdims {
            None => {
                let idx = dims.len();
                dims.push(DimField {
                    field: dim_idents.allocate(&format!("{field}_shape")),
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
                            let idx = *named.entry(name.clone()).or_insert_with(|| {
                                dims.push(DimField {
                                    field: dim_idents.allocate(name),
                                    source: DimSource::Named(name.clone()),
                                    used_by: vec![],
                                    note: None,
                                });
                                dims.len() - 1
                            });
                            dims[idx].used_by.push((v.name.clone(), axis));
                            AxisSize::Field(idx)
                        }
                        Dim::Dynamic => {
                            dims.push(DimField {
                                field: dim_idents.allocate(&format!("{field}_dim{axis}")),
                                source: DimSource::Axis {
                                    input: v.name.clone(),
                                    axis,
                                },
                                used_by: vec![(v.name.clone(), axis)],
                                note: None,
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
            elem,
            dims: vdims.map(<[Dim]>::to_vec),
            doc: v.doc_string.clone(),
            storage,
        });
    }

    let mut output_idents = IdentAllocator::new();
    let mut outputs = Vec::with_capacity(sig.outputs.len());
    for v in &sig.outputs {
        let (elem, vdims) = tensor_of(v, "output")?;
        let field = output_idents.allocate(&v.name);
        // Pre-allocate only when every axis is fixed or a named dim some input carries:
        // then the size is known before the run.
        let storage = vdims
            .and_then(|ds| {
                ds.iter()
                    .map(|d| match d {
                        Dim::Fixed(n) => Some(AxisSize::Fixed(*n)),
                        Dim::Named(name) => named.get(name).map(|&i| AxisSize::Field(i)),
                        Dim::Dynamic => None,
                    })
                    .collect::<Option<Vec<_>>>()
            })
            .map_or(Storage::Allocated, Storage::Owned);
        outputs.push(PlannedValue {
            name: v.name.clone(),
            field,
            elem,
            dims: vdims.map(<[Dim]>::to_vec),
            doc: v.doc_string.clone(),
            storage,
        });
    }

    let feed_back = feed_back_pairs(&inputs, &mut outputs, &named, &dims, options)?;

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
            Storage::Allocated => {}
        }
    }
    Ok(Plan {
        inputs,
        outputs,
        dims,
        feed_back,
    })
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
        let (o, i) = (&outputs[oi], &inputs[ii]);
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
    let mut out_taken = vec![false; outputs.len()];
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
            if in_taken[ii] || o.elem != i.elem {
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
