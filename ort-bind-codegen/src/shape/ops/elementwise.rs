//! Operators whose output has the shape of an input (activations, casts, normalisations
//! over an axis) or of the inputs broadcast together (arithmetic, comparisons, `Where`),
//! with the arithmetic of small integer tensors (shape computations) carried along.

use super::super::expr::DimExpr;
use super::super::infer::{BOOL, FLOAT, Fact, INT64, NodeCx, OpResult};
use super::{Dims, axis, bad, broadcast, int, need_dims};

/// `Some` when `op` is one of this family's.
pub(super) fn infer(cx: &NodeCx<'_>, op: &str) -> Option<OpResult> {
    Some(match op {
        "Abs"
        | "Acos"
        | "Acosh"
        | "Asin"
        | "Asinh"
        | "Atan"
        | "Atanh"
        | "Ceil"
        | "Cos"
        | "Cosh"
        | "Elu"
        | "Erf"
        | "Exp"
        | "Floor"
        | "HardSigmoid"
        | "HardSwish"
        | "Hardmax"
        | "Log"
        | "LogSoftmax"
        | "LpNormalization"
        | "Mish"
        | "Reciprocal"
        | "Relu"
        | "Round"
        | "Selu"
        | "Shrink"
        | "Sigmoid"
        | "Sign"
        | "Sin"
        | "Sinh"
        | "Softmax"
        | "Softplus"
        | "Softsign"
        | "Sqrt"
        | "Tan"
        | "Tanh"
        | "ThresholdedRelu"
        | "Celu"
        | "Gelu"
        | "LeakyRelu"
        | "PRelu"
        | "Clip"
        | "CumSum"
        | "Trilu"
        | "ReverseSequence"
        | "BitwiseNot"
        | "MeanVarianceNormalization"
        | "InstanceNormalization"
        | "LRN"
        | "EyeLike"
        | "Swish"
        | "Scatter"
        | "ScatterND"
        | "ScatterElements"
        | "Binarizer"
        | "Normalizer"
        | "Imputer"
        | "Scaler" => same(cx, cx.same_elem()),
        "Neg" => same_with(cx, cx.same_elem(), |v| v.neg()),
        "Identity" | "Optional" | "OptionalGetElement" => {
            same_with(cx, cx.same_elem(), |v| Some(v.clone()))
        }
        "IsInf" | "IsNaN" | "Not" => same(cx, BOOL),
        "Cast" => {
            let to = cx
                .attr_i("to")
                .and_then(|t| i32::try_from(t).ok())
                .unwrap_or(0);
            cast(cx, to)
        }
        "CastLike" => cast(cx, cx.elem(1)),
        "Dropout" => {
            let out = need_dims(cx, 0).map(<[_]>::to_vec);
            out.map(|d| {
                vec![
                    Fact::shaped(d.clone(), cx.same_elem()),
                    Fact::shaped(d, BOOL),
                ]
            })
        }
        "BatchNormalization" => same(cx, cx.same_elem()),
        "LayerNormalization" | "GroupNormalization" | "RMSNormalization" => normalization(cx),
        "QuantizeLinear" => {
            let elem = if cx.has_input(2) { cx.elem(2) } else { 2 };
            same(cx, elem)
        }
        "DequantizeLinear" => same(cx, FLOAT),
        "DynamicQuantizeLinear" => need_dims(cx, 0).map(|d| {
            vec![
                Fact::shaped(d.to_vec(), 2),
                Fact::shaped(vec![], FLOAT),
                Fact::shaped(vec![], 2),
            ]
        }),
        "Add" | "Sub" | "Mul" | "Div" | "Pow" | "Mod" | "Max" | "Min" | "Mean" | "Sum"
        | "BitShift" | "BitwiseAnd" | "BitwiseOr" | "BitwiseXor" => arithmetic(cx, op),
        "And" | "Or" | "Xor" | "Equal" | "Greater" | "Less" | "GreaterOrEqual" | "LessOrEqual" => {
            broadcast_all(cx, 0..cx.inputs.len(), BOOL)
        }
        "Where" => broadcast_all(cx, 0..3, cx.elem(1)),
        _ => return None,
    })
}

/// One output of the first input's shape.
fn same(cx: &NodeCx<'_>, elem: i32) -> OpResult {
    Ok(vec![Fact::shaped(need_dims(cx, 0)?.to_vec(), elem)])
}

/// [`same`], mapping known integer elements through `f`.
fn same_with(cx: &NodeCx<'_>, elem: i32, f: impl Fn(&DimExpr) -> Option<DimExpr>) -> OpResult {
    let mut out = same(cx, elem)?;
    out[0].ints = cx.ints(0).and_then(|v| v.iter().map(&f).collect());
    out[0].floats = cx.input(0).and_then(|i| i.floats.clone());
    Ok(out)
}

fn cast(cx: &NodeCx<'_>, to: i32) -> OpResult {
    let integer = matches!(to, 2..=7 | 12 | 13);
    let mut out = same_with(cx, to, |v| Some(v.clone()))?;
    if !integer {
        out[0].ints = None;
    }
    Ok(out)
}

/// `LayerNormalization` and friends: the output is the input's shape; the mean and
/// inverse deviation keep the axes before `axis` and are 1 from it on.
fn normalization(cx: &NodeCx<'_>) -> OpResult {
    let d = need_dims(cx, 0)?;
    let a = axis(cx.attr_i("axis").unwrap_or(-1), d.len())?;
    let stat: Dims = d
        .iter()
        .enumerate()
        .map(|(k, x)| if k < a { x.clone() } else { int(1) })
        .collect();
    Ok(vec![
        Fact::shaped(d.to_vec(), cx.same_elem()),
        Fact::shaped(stat.clone(), FLOAT),
        Fact::shaped(stat, FLOAT),
    ])
}

/// The inputs `range` broadcast together.
fn broadcast_all(cx: &NodeCx<'_>, range: std::ops::Range<usize>, elem: i32) -> OpResult {
    let mut dims: Option<Dims> = None;
    for i in range {
        let d = need_dims(cx, i)?;
        dims = Some(match dims {
            None => d.to_vec(),
            Some(prev) => broadcast(&prev, d),
        });
    }
    Ok(vec![Fact::shaped(
        dims.ok_or_else(|| bad("no inputs"))?,
        elem,
    )])
}

/// Broadcasting arithmetic; on small integer tensors with known elements, the elements too.
fn arithmetic(cx: &NodeCx<'_>, op: &str) -> OpResult {
    let mut out = broadcast_all(cx, 0..cx.inputs.len(), cx.same_elem())?;
    if cx.inputs.len() == 2
        && let (Some(a), Some(b)) = (cx.ints(0), cx.ints(1))
    {
        out[0].ints = combine(a, b, op);
        out[0].elem = if cx.same_elem() == 0 {
            INT64
        } else {
            cx.same_elem()
        };
    }
    Ok(out)
}

/// Element by element (one side may be a single element), when every result is known.
fn combine(a: &[DimExpr], b: &[DimExpr], op: &str) -> Option<Vec<DimExpr>> {
    let n = a.len().max(b.len());
    if !(a.len() == n || a.len() == 1) || !(b.len() == n || b.len() == 1) {
        return None;
    }
    (0..n)
        .map(|k| {
            let (x, y) = (&a[k.min(a.len() - 1)], &b[k.min(b.len() - 1)]);
            match op {
                "Add" | "Sum" => x.add(y),
                "Sub" => x.sub(y),
                "Mul" => x.mul(y),
                // Sizes are not negative, where truncation and floor agree.
                "Div" => x.floor_div(y),
                "Mod" => x.modulo(y),
                "Max" => x.max_with(y),
                "Min" => x.min_with(y),
                _ => None,
            }
        })
        .collect()
}
