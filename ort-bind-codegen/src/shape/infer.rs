//! The walk: facts about every value (shape, small integer values), node by node in graph
//! order, nested graphs (`If`, `Loop`, `Scan`) in scopes over the graph around them.

use std::collections::HashMap;
use std::sync::Arc;

use super::expr::DimExpr;
use super::ops;
use super::{InferredShape, Stop, StopReason, axis_symbol};
use crate::onnx::proto::{AttributeProto, GraphProto, NodeProto, SmallTensor};
use crate::sig::{Dim, ValueInfo, ValueType};

/// Values with more elements than this keep no values (only shape tensors need them).
pub(crate) const MAX_VALUES: usize = 64;

/// Nested graphs deeper than this are not walked (their outputs stay open).
const MAX_NESTING: usize = 8;

/// What is known of one value.
#[derive(Debug, Clone, Default)]
pub(crate) struct Fact {
    /// Each axis's size, `None` where not settled; `None` for unknown rank.
    pub(crate) dims: Option<Vec<Option<DimExpr>>>,
    /// The elements, flattened, when the value is a small integer tensor whose elements
    /// are known (shape tensors).
    pub(crate) ints: Option<Vec<DimExpr>>,
    /// The elements of a small floating-point constant (scales).
    pub(crate) floats: Option<Vec<f64>>,
    /// `TensorProto.DataType` code, 0 when not known.
    pub(crate) elem: i32,
    /// Why a part is not settled.
    pub(crate) stop: Option<Arc<Stop>>,
    /// Whether the elements may depend on values the model reads at run time (a graph
    /// input's, or computed from one): a size read from such elements is data-dependent.
    /// Elements computed from shapes and constants alone are not, even where inference
    /// does not follow them.
    pub(crate) data: bool,
}

impl Fact {
    /// A value of known shape.
    pub(crate) fn shaped(dims: Vec<Option<DimExpr>>, elem: i32) -> Fact {
        Fact {
            dims: Some(dims),
            elem,
            ..Fact::default()
        }
    }

    /// A small integer tensor of rank 1 (or 0 with `scalar`) with these elements.
    pub(crate) fn ints(values: Vec<DimExpr>, scalar: bool) -> Fact {
        let dims = if scalar {
            Vec::new()
        } else {
            vec![Some(DimExpr::int(values.len() as i64))]
        };
        Fact {
            dims: Some(dims),
            ints: Some(values),
            elem: INT64,
            ..Fact::default()
        }
    }

    /// The number of elements, when every axis is a constant.
    pub(crate) fn const_len(&self) -> Option<usize> {
        self.dims.as_ref()?.iter().try_fold(1usize, |acc, d| {
            acc.checked_mul(usize::try_from(d.as_ref()?.as_int()?).ok()?)
        })
    }
}

/// `TensorProto.DataType` codes inference tells apart.
pub(crate) const FLOAT: i32 = 1;
pub(crate) const INT32: i32 = 6;
pub(crate) const INT64: i32 = 7;
pub(crate) const BOOL: i32 = 9;

/// One node as an operator sees it: its attributes, and the facts of its inputs.
pub(crate) struct NodeCx<'a> {
    pub(crate) node: &'a NodeProto,
    /// One per input name (`None` for an omitted optional input, `""`), borrowed from the
    /// scope: an operator copies only what it keeps.
    pub(crate) inputs: Vec<Option<&'a Fact>>,
    /// The default-domain opset.
    pub(crate) opset: i64,
    /// The scope the node sits in, for nested graphs.
    pub(crate) scope: &'a Scope<'a>,
    pub(crate) nesting: usize,
}

/// What an operator makes of a node: one fact per output, or why it cannot say.
pub(crate) type OpResult = Result<Vec<Fact>, StopReason>;

impl NodeCx<'_> {
    /// Input `i`'s fact (absent or unknown: a default fact).
    pub(crate) fn input(&self, i: usize) -> Option<&Fact> {
        self.inputs.get(i).copied().flatten()
    }

    /// Whether input `i` is given.
    pub(crate) fn has_input(&self, i: usize) -> bool {
        self.node.input.get(i).is_some_and(|n| !n.is_empty())
    }

    /// Input `i`'s dims, when its rank is known.
    pub(crate) fn dims(&self, i: usize) -> Option<&[Option<DimExpr>]> {
        self.input(i)?.dims.as_deref()
    }

    /// Input `i`'s known integer elements.
    pub(crate) fn ints(&self, i: usize) -> Option<&[DimExpr]> {
        self.input(i)?.ints.as_deref()
    }

    /// Input `i`'s elements as constants.
    pub(crate) fn const_ints(&self, i: usize) -> Option<Vec<i64>> {
        self.ints(i)?.iter().map(DimExpr::as_int).collect()
    }

    /// Input `i`'s element type.
    pub(crate) fn elem(&self, i: usize) -> i32 {
        self.input(i).map_or(0, |f| f.elem)
    }

    /// The attribute `name`.
    pub(crate) fn attr(&self, name: &str) -> Option<&AttributeProto> {
        self.node.attribute.iter().find(|a| a.name == name)
    }

    /// An `int` attribute.
    pub(crate) fn attr_i(&self, name: &str) -> Option<i64> {
        self.attr(name).map(|a| a.i)
    }

    /// An `ints` attribute.
    pub(crate) fn attr_ints(&self, name: &str) -> Option<&[i64]> {
        self.attr(name).map(|a| a.ints.as_slice())
    }

    /// A `floats` attribute.
    pub(crate) fn attr_floats(&self, name: &str) -> Option<&[f32]> {
        self.attr(name).map(|a| a.floats.as_slice())
    }

    /// A `string` attribute.
    pub(crate) fn attr_s(&self, name: &str) -> Option<&str> {
        self.attr(name).and_then(|a| std::str::from_utf8(&a.s).ok())
    }

    /// The values of the ints given either as input `i` (newer opsets) or as attribute
    /// `name` (older ones); `Err` when the input is given but its values are not known.
    pub(crate) fn ints_from(&self, i: usize, name: &str) -> Result<Option<Vec<i64>>, StopReason> {
        if self.has_input(i) {
            return self
                .const_ints(i)
                .map(Some)
                .ok_or_else(|| self.unknown_values(i));
        }
        Ok(self.attr_ints(name).map(<[i64]>::to_vec))
    }

    /// Why input `i`'s values are not known: they are the model's to give at run time
    /// (a graph input's, or computed from one), or inference does not follow the
    /// operator that computes them from shapes and constants. (A stop upstream, when an
    /// input has one, takes precedence over either: see [`walk`].)
    pub(crate) fn unknown_values(&self, i: usize) -> StopReason {
        match self.input(i) {
            Some(f) if !f.data => StopReason::Other(format!(
                "the values of input {i} are computed from shapes and constants by an \
                 operator whose values inference does not follow"
            )),
            _ => StopReason::DataDependent,
        }
    }

    /// The element type of the node's output `k` when it is the first input's.
    pub(crate) fn same_elem(&self) -> i32 {
        self.elem(0)
    }
}

/// The facts of one graph, over those of the graphs around it (a nested graph reads the
/// values of its enclosing graphs by name).
pub(crate) struct Scope<'a> {
    facts: HashMap<String, Fact>,
    parent: Option<&'a Scope<'a>>,
}

impl<'a> Scope<'a> {
    pub(crate) fn new(parent: Option<&'a Scope<'a>>) -> Self {
        Scope {
            facts: HashMap::new(),
            parent,
        }
    }

    pub(crate) fn get(&self, name: &str) -> Option<&Fact> {
        self.facts
            .get(name)
            .or_else(|| self.parent.and_then(|p| p.get(name)))
    }

    pub(crate) fn set(&mut self, name: &str, fact: Fact) {
        self.facts.insert(name.to_owned(), fact);
    }
}

/// Infers the shape of each of `outputs` of the main graph `graph`, whose real inputs are
/// `inputs` (as the model declares them), under default-domain opset `opset`.
pub(crate) fn infer_graph(
    graph: &GraphProto,
    inputs: &[ValueInfo],
    outputs: &[ValueInfo],
    opset: i64,
) -> Vec<InferredShape> {
    let mut scope = Scope::new(None);
    for t in &graph.initializer {
        scope.set(&t.name, constant_fact(t));
    }
    for v in inputs {
        scope.set(&v.name, input_fact(v));
    }
    walk(graph, &mut scope, opset, 0);
    outputs
        .iter()
        .map(|o| match scope.get(&o.name) {
            Some(f) => InferredShape {
                dims: f.dims.clone(),
                stop: f.stop.as_deref().cloned(),
            },
            None => InferredShape::default(),
        })
        .collect()
}

/// The fact of a graph input as the model declares it: a named dim is that symbol, an
/// unnamed one `input[axis]`.
fn input_fact(v: &ValueInfo) -> Fact {
    match &v.kind {
        ValueType::Tensor { elem, dims } => Fact {
            dims: dims.as_ref().map(|ds| {
                ds.iter()
                    .enumerate()
                    .map(|(axis, d)| {
                        Some(match d {
                            Dim::Fixed(n) => DimExpr::int(i64::try_from(*n).unwrap_or(i64::MAX)),
                            Dim::Named(s) => DimExpr::sym(s),
                            Dim::Dynamic => DimExpr::sym(&axis_symbol(&v.name, axis)),
                        })
                    })
                    .collect()
            }),
            elem: elem.onnx_code(),
            data: true,
            ..Fact::default()
        },
        _ => Fact {
            data: true,
            ..Fact::default()
        },
    }
}

/// The fact of a constant tensor (an initializer, a `Constant`'s value): its dims, and its
/// elements when few and numeric.
pub(crate) fn constant_fact(t: &SmallTensor) -> Fact {
    let dims: Vec<Option<DimExpr>> = t.dims.iter().map(|&d| Some(DimExpr::int(d))).collect();
    let len = t
        .dims
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(usize::try_from(d).ok()?));
    let mut fact = Fact::shaped(dims, t.data_type);
    let Some(len) = len.filter(|&n| n <= MAX_VALUES && !t.large) else {
        return fact;
    };
    let ints = |raw: &[u8], width: usize, read: fn(&[u8]) -> i64| -> Option<Vec<i64>> {
        (raw.len() == len * width).then(|| raw.chunks_exact(width).map(read).collect())
    };
    let from_raw = !t.raw_data.is_empty();
    let values: Option<Vec<i64>> = match t.data_type {
        INT64 if from_raw => ints(&t.raw_data, 8, |c| {
            i64::from_le_bytes(c.try_into().expect("8 bytes"))
        }),
        INT32 if from_raw => ints(&t.raw_data, 4, |c| {
            i64::from(i32::from_le_bytes(c.try_into().expect("4 bytes")))
        }),
        INT64 => (t.int64_data.len() == len).then(|| t.int64_data.clone()),
        INT32 | BOOL => (t.int32_data.len() == len).then(|| t.int32_data.clone()),
        _ => None,
    };
    if let Some(v) = values {
        fact.ints = Some(v.into_iter().map(DimExpr::int).collect());
    }
    let floats: Option<Vec<f64>> = match t.data_type {
        FLOAT if from_raw => (t.raw_data.len() == len * 4).then(|| {
            t.raw_data
                .chunks_exact(4)
                .map(|c| f64::from(f32::from_le_bytes(c.try_into().expect("4 bytes"))))
                .collect()
        }),
        FLOAT => (t.float_data.len() == len)
            .then(|| t.float_data.iter().map(|&f| f64::from(f)).collect()),
        11 if from_raw => (t.raw_data.len() == len * 8).then(|| {
            t.raw_data
                .chunks_exact(8)
                .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
                .collect()
        }),
        11 => (t.double_data.len() == len).then(|| t.double_data.clone()),
        _ => None,
    };
    fact.floats = floats;
    fact
}

/// Walks the nodes of `graph` in order, recording each output's fact in `scope`.
pub(crate) fn walk(graph: &GraphProto, scope: &mut Scope<'_>, opset: i64, nesting: usize) {
    for (index, node) in graph.node.iter().enumerate() {
        // What the node's inputs say, read before the scope takes its outputs: the first
        // stop upstream, and whether any input's elements are values the model reads.
        let (result, upstream, data_in) = {
            let inputs: Vec<Option<&Fact>> = node
                .input
                .iter()
                .map(|n| (!n.is_empty()).then(|| scope.get(n)).flatten())
                .collect();
            let upstream = inputs.iter().flatten().find_map(|f| f.stop.clone());
            let data_in = inputs.iter().flatten().any(|f| f.data);
            let cx = NodeCx {
                node,
                inputs,
                opset,
                scope,
                nesting,
            };
            let result = if nesting > MAX_NESTING {
                Err(StopReason::Other("nested graphs too deep".into()))
            } else {
                ops::infer_node(&cx)
            };
            (result, upstream, data_in)
        };
        let stop = |reason: StopReason| {
            Arc::new(Stop {
                node: if node.name.is_empty() {
                    format!("{} #{index}", node.op_type)
                } else {
                    node.name.clone()
                },
                op: if node.domain.is_empty() || node.domain == "ai.onnx" {
                    node.op_type.clone()
                } else {
                    format!("{}:{}", node.domain, node.op_type)
                },
                reason,
            })
        };
        match result {
            Ok(mut facts) => {
                // Elements computed from a value the model reads are data too, except
                // where the operator reads only its inputs' shapes.
                let data = data_in && !reads_shapes_only(node);
                for (k, name) in node.output.iter().enumerate() {
                    if name.is_empty() {
                        continue;
                    }
                    let mut fact = facts.get_mut(k).map(std::mem::take).unwrap_or_default();
                    fact.data |= data;
                    let open = fact
                        .dims
                        .as_ref()
                        .is_none_or(|d| d.iter().any(Option::is_none));
                    // A part left open inherits the first stop upstream, or names this node.
                    if open && fact.stop.is_none() {
                        fact.stop = Some(upstream.clone().unwrap_or_else(|| {
                            stop(StopReason::Other(
                                "the operator leaves the size open".into(),
                            ))
                        }));
                    }
                    scope.set(name, fact);
                }
            }
            Err(reason) => {
                // An operator not covered is named itself; otherwise a part left open
                // upstream is the cause, when there is one.
                let why = match (reason, upstream) {
                    (StopReason::NotCovered, _) => stop(StopReason::NotCovered),
                    (_, Some(up)) => up,
                    (reason, None) => stop(reason),
                };
                for name in node.output.iter().filter(|n| !n.is_empty()) {
                    scope.set(
                        name,
                        Fact {
                            stop: Some(why.clone()),
                            ..Fact::default()
                        },
                    );
                }
            }
        }
    }
}

/// Whether the node's output elements depend on its inputs' shapes alone (not on their
/// elements).
fn reads_shapes_only(node: &NodeProto) -> bool {
    (node.domain.is_empty() || node.domain == "ai.onnx")
        && matches!(
            node.op_type.as_str(),
            "Shape" | "Size" | "ConstantOfShape" | "EyeLike"
        )
}
