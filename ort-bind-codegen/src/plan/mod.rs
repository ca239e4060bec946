//! From a model signature to a binding plan: every decision codegen makes
//! (identifiers, which dims the user sets, which outputs are pre-allocated,
//! which outputs feed back into inputs), validated in one place so expansion can
//! assume valid input.
//!
//! What the user states about dims and recurrent pairs, and how the plan unifies dims,
//! is documented on [`ModelOptions`].

use std::collections::HashMap;

pub mod adapters;
pub mod chain;
pub mod decoder;
pub mod pipeline;

pub use decoder::{
    CacheAxis, CachePlan, ContextPlan, DecoderNames, DecoderPlan, DecoderRole, EmbedsPlan,
    PositionAxis, ScalarPlan, ScalarRole, plan_decoder,
};

use crate::element::ElementType;
use crate::ident::IdentAllocator;
use crate::sig::{Dim, ModelSignature, ValueInfo, ValueType, format_dims};

mod axes;
mod dims;
mod error;
mod feed_back;
mod fields;
mod inferred;
mod options;
mod overridable;
mod serving;
#[cfg(test)]
mod tests;
mod values;

pub use axes::*;
pub use dims::*;
pub use error::*;
use feed_back::*;
pub use fields::*;
pub use options::*;
pub use overridable::overridable_inputs;
use overridable::*;
use serving::*;
pub use values::*;

/// How one axis of a tensor is sized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AxisSize {
    /// Fixed by the model.
    Fixed(u64),
    /// Taken from field `dims[index]` of the dims struct.
    Field(usize),
    /// Computed from the dims struct: an expression of its fields (by field name), as
    /// shape inference derived it from the graph (an output axis only).
    Expr(crate::shapes::DimExpr),
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
    /// The rank the model declares (what a session reports); `dims` may differ where
    /// shape inference found the graph computes another rank.
    pub declared_rank: Option<usize>,
    /// What shape inference changed from the declaration, in words (for docs).
    pub inference: Option<String>,
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
    /// Overridable inputs (graph inputs with an initializer as default, IR version 4 and
    /// later), in model order: numeric tensors, each bound only while the caller sets it,
    /// never sized by the dims struct.
    pub overridable: Vec<PlannedValue>,
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
    /// One sentence per output the bindings type as the graph computes it rather than as
    /// the model declares it: `` output `y`: The model declares [n, 4, 1], ... `` (what
    /// `Builder::compile` prints as cargo warnings and `ort-bind inspect` lists).
    pub fn inference_notes(&self) -> Vec<String> {
        self.outputs
            .iter()
            .filter_map(|o| Some(format!("output `{}`: {}", o.name, o.inference.as_ref()?)))
            .collect()
    }

    /// Whether every dims field is a plain `usize` (the dims struct can be `Copy`).
    pub fn dims_are_copy(&self) -> bool {
        !self.dims.iter().any(|d| d.source.is_shape())
    }

    /// The dims fields that no input's axes size: without any, the shapes of the inputs
    /// determine every dim (`Dims::from_input_shapes` solves them).
    pub fn dims_unsized_by_inputs(&self) -> impl Iterator<Item = &DimField> {
        self.dims.iter().enumerate().filter_map(|(i, d)| {
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
    if !options.no_overrides {
        plan.overridable = plan_overridable(sig, &plan.inputs);
    }
    plan.batch = batch_field(&plan, options.batch_dim.as_deref())?;
    plan.decoder = plan_decoder(sig, options.decoder.as_ref())?;
    Ok(plan)
}
