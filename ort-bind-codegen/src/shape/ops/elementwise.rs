//! Operators whose output has the shape of an input (activations, casts, normalisations
//! over an axis) or of the inputs broadcast together (arithmetic, comparisons, `Where`),
//! with the arithmetic of small integer tensors (shape computations) carried along.

use super::super::StopReason;
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
        | "CumProd"
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
        // The cache with the update written into it.
        | "TensorScatter" => same(cx, cx.same_elem()),
        // Without stop words no string is removed.
        "StringNormalizer" => match cx.attr("stopwords") {
            None => same(cx, cx.same_elem()),
            Some(_) => Err(StopReason::DataDependent),
        },
        "BitCast" => bit_cast(cx),
        "StringConcat" => broadcast_all(cx, 0..2, cx.same_elem()),
        "Neg" => same_with(cx, cx.same_elem(), |v| v.neg()),
        "Identity" | "Optional" | "OptionalGetElement" => {
            same_with(cx, cx.same_elem(), |v| Some(v.clone()))
        }
        "IsInf" | "IsNaN" => same(cx, BOOL),
        "Not" => same_with(cx, BOOL, |v| Some(DimExpr::int(i64::from(v.as_int()? == 0)))),
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
        "BatchNormalization" => batch_normalization(cx),
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
            broadcast_all(cx, 0..cx.inputs.len(), BOOL).map(|mut out| {
                out[0].ints = values(cx, &out[0], &[0, 1], |v| compare(v[0], v[1], op));
                out
            })
        }
        "Where" => broadcast_all(cx, 0..3, cx.elem(1)).map(|mut out| {
            out[0].ints = values(cx, &out[0], &[0, 1, 2], |v| {
                Some(if v[0].as_int()? != 0 { v[1] } else { v[2] }.clone())
            });
            out
        }),
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
    out[0].ints = match to {
        // Whole floats convert exactly.
        _ if integer && out[0].ints.is_none() => out[0].floats.as_ref().and_then(|f| {
            f.iter()
                .map(|&x| (x.fract() == 0.0 && x.abs() < 1e15).then(|| DimExpr::int(x as i64)))
                .collect()
        }),
        _ if integer => out[0].ints.take(),
        BOOL => out[0].ints.take().and_then(|v| {
            v.iter()
                .map(|x| Some(DimExpr::int(i64::from(x.as_int()? != 0))))
                .collect()
        }),
        _ => None,
    };
    if !matches!(to, FLOAT | 10 | 11 | 16) {
        out[0].floats = None;
    }
    Ok(out)
}

/// The byte width of an element type (`TensorProto.DataType` code), where it has one.
fn elem_width(code: i32) -> Option<usize> {
    Some(match code {
        2 | 3 | 9 | 17..=20 => 1,
        4 | 5 | 10 | 16 => 2,
        1 | 6 | 12 => 4,
        7 | 11 | 13 | 14 => 8,
        15 => 16,
        _ => return None,
    })
}

/// `BitCast`: the input's shape between types of one width (other widths add or remove
/// an axis; not covered).
fn bit_cast(cx: &NodeCx<'_>) -> OpResult {
    let to = cx
        .attr_i("to")
        .and_then(|t| i32::try_from(t).ok())
        .ok_or_else(|| bad("no `to`"))?;
    match (elem_width(cx.elem(0)), elem_width(to)) {
        (Some(a), Some(b)) if a == b => same(cx, to),
        _ => Err(bad(
            "a bit cast between types of different (or unknown) widths",
        )),
    }
}

/// `BatchNormalization`: `Y` of the input's shape; the statistics (running or saved mean
/// and variance, in training mode or before opset 10) of the scale's.
fn batch_normalization(cx: &NodeCx<'_>) -> OpResult {
    let mut out = same(cx, cx.same_elem())?;
    if cx.node.output.len() > 1 {
        let stat = need_dims(cx, 1)?.to_vec();
        let elem = if cx.has_input(3) {
            cx.elem(3)
        } else {
            cx.elem(1)
        };
        for _ in 1..cx.node.output.len() {
            out.push(Fact::shaped(stat.clone(), elem));
        }
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
    if cx.inputs.len() == 2 {
        out[0].ints = values(cx, &out[0], &[0, 1], |v| combine(v[0], v[1], op));
        if out[0].ints.is_some() && cx.same_elem() == 0 {
            out[0].elem = INT64;
        }
    }
    Ok(out)
}

/// The elements of `out`, computed element by element from the known elements of the
/// inputs `of` by `f`, when `out` has as many elements as the longest of them and each
/// has that many or one (which broadcasts), and every result is known.
fn values(
    cx: &NodeCx<'_>,
    out: &Fact,
    of: &[usize],
    f: impl Fn(&[&DimExpr]) -> Option<DimExpr>,
) -> Option<Vec<DimExpr>> {
    let lists: Vec<&[DimExpr]> = of.iter().map(|&i| cx.ints(i)).collect::<Option<_>>()?;
    let n = lists.iter().map(|l| l.len()).max()?;
    if out.const_len() != Some(n) || lists.iter().any(|l| l.len() != n && l.len() != 1) {
        return None;
    }
    (0..n)
        .map(|k| {
            let args: Vec<&DimExpr> = lists.iter().map(|l| &l[k.min(l.len() - 1)]).collect();
            f(&args)
        })
        .collect()
}

/// One element of broadcasting arithmetic.
fn combine(x: &DimExpr, y: &DimExpr, op: &str) -> Option<DimExpr> {
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
}

/// One element of a comparison or a logical operator, as 0 or 1: known for constants,
/// and for equal expressions (which have equal values).
fn compare(x: &DimExpr, y: &DimExpr, op: &str) -> Option<DimExpr> {
    let truth = match (x.as_int(), y.as_int()) {
        (Some(a), Some(b)) => match op {
            "Equal" => a == b,
            "Greater" => a > b,
            "Less" => a < b,
            "GreaterOrEqual" => a >= b,
            "LessOrEqual" => a <= b,
            "And" => a != 0 && b != 0,
            "Or" => a != 0 || b != 0,
            "Xor" => (a != 0) != (b != 0),
            _ => return None,
        },
        _ if x == y => match op {
            "Equal" | "GreaterOrEqual" | "LessOrEqual" => true,
            "Greater" | "Less" => false,
            _ => return None,
        },
        _ => return None,
    };
    Some(DimExpr::int(i64::from(truth)))
}
