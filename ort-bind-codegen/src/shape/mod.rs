//! Shape inference at build time: the size of every graph output as an expression of the
//! inputs' dims, computed from the graph's nodes without ONNX Runtime.
//!
//! Exporters often declare an output axis as `?` or as a fresh symbol (`unk__12`,
//! `p2o.DynamicDimension.4`) although the graph computes it from the inputs: a
//! recognizer's sequence axis is `floor((w - 1) / 8) + 1`, a detector's map is the input's
//! `H x W` again. Inference walks the nodes in order with
//! their attributes and the small constant tensors shapes depend on (shape tensors, axes,
//! pads, scales), propagating shapes and, for small integer tensors, their values
//! ([`DimExpr`] each). Weights are never read: only their dims.
//!
//! An output whose size depends on values (`NonZero`, a `Reshape` to a shape read from an
//! input) is data-dependent; an operator inference does not cover leaves what it makes
//! unknown. Either way [`InferredShape::stop`] names the node. Nothing here can fail the
//! build: what inference cannot settle is left open, and the declaration stands.

pub mod expr;
pub(crate) mod infer;
mod ops;
#[cfg(test)]
mod tests;

use std::fmt;

pub use expr::{DimExpr, EvalError, Op};

/// What inference computed for one graph output.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InferredShape {
    /// Each axis's size (`None`: not settled), or `None` when the rank is not known.
    pub dims: Option<Vec<Option<DimExpr>>>,
    /// Why a part is not settled: the first node that stopped inference on the way.
    pub stop: Option<Stop>,
}

/// The node where inference stopped, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stop {
    /// The node: its name, or its operator and position when it has none.
    pub node: String,
    /// The operator (`domain:` first outside the default domain).
    pub op: String,
    /// Why.
    pub reason: StopReason,
}

/// Why inference left a size open.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopReason {
    /// The size depends on the values the model reads at run time (`NonZero`, a shape
    /// read from an input): ONNX Runtime allocates such an output.
    DataDependent,
    /// Inference does not cover this operator.
    NotCovered,
    /// The operator's inputs or attributes do not give a size (said why).
    Other(String),
}

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Stop { node, op, reason } = self;
        match reason {
            StopReason::DataDependent => {
                write!(
                    f,
                    "data-dependent: node `{node}` ({op}) sizes it from values"
                )
            }
            StopReason::NotCovered => {
                write!(f, "node `{node}` ({op}) is not covered by shape inference")
            }
            StopReason::Other(why) => write!(f, "node `{node}` ({op}): {why}"),
        }
    }
}

impl InferredShape {
    /// Whether every axis is settled.
    pub fn is_complete(&self) -> bool {
        self.dims
            .as_ref()
            .is_some_and(|d| d.iter().all(Option::is_some))
    }
}

/// The symbol inference gives axis `axis` of input `input` when the model leaves it
/// unnamed: `input[axis]`.
pub fn axis_symbol(input: &str, axis: usize) -> String {
    format!("{input}[{axis}]")
}
