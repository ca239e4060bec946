//! Why a model cannot be planned: [`PlanError`] and its parts, and [`Role`].

use std::fmt;

#[cfg(doc)]
use super::{ModelOptions, plan_struct};

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
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PlanError {
    /// A graph input or output has a type generated code does not bind.
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
    NoOutputs,
    /// A [`ModelOptions`] entry names a value the model does not have.
    UnknownValue {
        /// Which option.
        what: String,
        /// The name given.
        name: String,
        /// The model's value names, for the message.
        known: String,
    },
    /// A [`ModelOptions::rename_dim`] entry names a dim no value carries.
    UnknownDim {
        /// The name given.
        name: String,
        /// The model's named dims, for the message.
        known: String,
    },
    /// A [`ModelOptions::dim`] entry contradicts the model.
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
    /// An option names an output axis with a dim no input carries, in a generated module:
    /// nothing could size the output from it, so the option would change nothing.
    HintIgnored {
        /// ONNX name of the output.
        value: String,
        /// Axis index.
        axis: usize,
        /// The dim name the option gives it.
        dim: String,
        /// What sizes the axis instead.
        reason: String,
    },
    /// The dim named by [`ModelOptions::batch_dim`] cannot batch the model.
    BatchDim {
        /// The dim name given.
        dim: String,
        /// Why not.
        reason: String,
    },
    /// An output declared (with [`ModelOptions::feed_back`]) to feed an input cannot.
    FeedBack {
        /// ONNX name of the output.
        output: String,
        /// ONNX name of the input.
        input: String,
        /// Why not.
        reason: String,
    },
    /// Two fields of a user's struct ([`plan_struct`]) fix one dim to different sizes.
    PinsDisagree(Box<PinsDisagree>),
    /// A field of a user's struct fixes an axis that the model (through a recurrent
    /// pair) sizes otherwise.
    PinContradicts(Box<PinContradicts>),
    /// The model is (or was declared) a decoder, but its signature does not fit a decode
    /// loop: the reason is in the model's terms.
    Decoder(String),
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanError::Unsupported {
                role,
                name,
                kind,
                reason,
            } => write!(f, "{role} `{name}` is {kind}: {reason}"),
            PlanError::NoOutputs => f.write_str("the model declares no outputs"),
            PlanError::UnknownValue { what, name, known } => write!(
                f,
                "{what}: the model has no input or output `{name}` (it has {known})"
            ),
            PlanError::UnknownDim { name, known } => write!(
                f,
                "rename_dim(`{name}`, ..): no value of the model has a dim named `{name}` (named dims: {known})"
            ),
            PlanError::DimContradicts {
                value,
                axis,
                dim,
                reason,
            } => write!(f, "dim(`{value}`, {axis}, `{dim}`): {reason}"),
            PlanError::HintIgnored {
                value,
                axis,
                dim,
                reason,
            } => write!(
                f,
                "an option names axis {axis} of output `{value}` `{dim}`, which no input \
                 carries, so it cannot size the output and would change nothing: {reason}; \
                 name it after an input's dim (`rename_dim`/`dim`), or drop the option"
            ),
            PlanError::BatchDim { dim, reason } => write!(f, "batch_dim(`{dim}`): {reason}"),
            PlanError::FeedBack {
                output,
                input,
                reason,
            } => write!(f, "feed_back(`{output}`, `{input}`): {reason}"),
            PlanError::PinsDisagree(f0) => write!(f, "{f0}"),
            PlanError::PinContradicts(f0) => write!(f, "{f0}"),
            PlanError::Decoder(f0) => write!(f, "decoder: {f0}"),
        }
    }
}

impl std::error::Error for PlanError {}

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
#[derive(Debug, Clone, PartialEq, Eq)]
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

impl fmt::Display for PinsDisagree {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let PinsDisagree {
            dim,
            field,
            axis,
            size,
            other_field,
            other_axis,
            other_size,
            ..
        } = self;
        write!(
            f,
            "{dim} is {size} in field `{field}` (axis {axis}: `Fix<{size}>`) but {other_size} in \
     field `{other_field}` (axis {other_axis}: `Fix<{other_size}>`): one binding cannot have both"
        )
    }
}

impl std::error::Error for PinsDisagree {}

/// A field fixes an axis the plan sizes otherwise ([`PlanError::PinContradicts`]).
#[derive(Debug, Clone, PartialEq, Eq)]
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

impl fmt::Display for PinContradicts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let PinContradicts {
            field,
            axis,
            size,
            want,
            why,
            ..
        } = self;
        write!(
            f,
            "axis {axis} of field `{field}` is `Fix<{size}>`, but the binding sizes it {want}: {why}"
        )
    }
}

impl std::error::Error for PinContradicts {}
