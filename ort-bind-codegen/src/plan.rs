//! From a model signature to a binding plan: every decision codegen makes
//! (identifiers, which dims the user sets, which outputs are pre-allocated),
//! validated in one place so expansion can assume valid input.

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

/// Plans bindings for `sig`.
pub fn plan(sig: &ModelSignature) -> Result<Plan, PlanError> {
    if sig.outputs.is_empty() {
        return Err(PlanError::NoOutputs);
    }
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
        if let (Storage::Owned(axes), Some(ds)) = (&storage, vdims) {
            for (axis, (a, _)) in axes.iter().zip(ds).enumerate() {
                if let AxisSize::Field(i) = a {
                    dims[*i].used_by.push((v.name.clone(), axis));
                }
            }
        }
        outputs.push(PlannedValue {
            name: v.name.clone(),
            field,
            elem,
            dims: vdims.map(<[Dim]>::to_vec),
            doc: v.doc_string.clone(),
            storage,
        });
    }

    let feed_back = feed_back_pairs(&inputs, &outputs);
    Ok(Plan {
        inputs,
        outputs,
        dims,
        feed_back,
    })
}

/// Output/input pairs of equal type and shape whose names say they belong together
/// (one is a prefix of the other, e.g. `state` / `stateN`, `h` / `h_out`).
fn feed_back_pairs(inputs: &[PlannedValue], outputs: &[PlannedValue]) -> Vec<FeedBack> {
    let mut pairs = Vec::new();
    for (oi, o) in outputs.iter().enumerate() {
        let Storage::Owned(oaxes) = &o.storage else {
            continue;
        };
        for (ii, i) in inputs.iter().enumerate() {
            let Storage::Owned(iaxes) = &i.storage else {
                continue;
            };
            let related =
                o.name != i.name && (o.name.starts_with(&i.name) || i.name.starts_with(&o.name));
            if related && o.elem == i.elem && oaxes == iaxes {
                pairs.push(FeedBack {
                    output: oi,
                    input: ii,
                });
            }
        }
    }
    pairs
}
