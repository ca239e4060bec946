//! What each operator makes of its inputs' shapes: one function per family, dispatched by
//! domain and operator type. An operator listed nowhere is [`StopReason::NotCovered`].

mod control;
mod elementwise;
mod ml;
mod nn;
mod reshape;

use super::StopReason;
use super::expr::DimExpr;
use super::infer::{NodeCx, OpResult};

/// Dims as facts hold them: `None` where an axis is not settled.
pub(crate) type Dims = Vec<Option<DimExpr>>;

/// Infers the facts of `cx.node`'s outputs.
pub(crate) fn infer_node(cx: &NodeCx<'_>) -> OpResult {
    let op = cx.node.op_type.as_str();
    match cx.node.domain.as_str() {
        "" | "ai.onnx" => default_domain(cx, op),
        "com.microsoft" => nn::microsoft(cx, op),
        "ai.onnx.ml" => ml::infer(cx, op),
        _ => Err(StopReason::NotCovered),
    }
}

fn default_domain(cx: &NodeCx<'_>, op: &str) -> OpResult {
    if let Some(r) = elementwise::infer(cx, op) {
        return r;
    }
    if let Some(r) = reshape::infer(cx, op) {
        return r;
    }
    if let Some(r) = nn::infer(cx, op) {
        return r;
    }
    if let Some(r) = control::infer(cx, op) {
        return r;
    }
    match op {
        // Sizes read from values: ONNX Runtime allocates what follows.
        "NonZero" | "NonMaxSuppression" | "Unique" | "Compress" | "StringSplit"
        | "RegexFullMatch" | "Multinomial" | "RandomNormal" | "RandomUniform" => {
            Err(StopReason::DataDependent)
        }
        _ => Err(StopReason::NotCovered),
    }
}

/// An axis index made non-negative for rank `rank`.
pub(crate) fn axis(axis: i64, rank: usize) -> Result<usize, StopReason> {
    let r = i64::try_from(rank).map_err(|_| bad("rank too large"))?;
    let a = if axis < 0 { axis + r } else { axis };
    if (0..r).contains(&a) {
        Ok(a as usize)
    } else {
        Err(bad(&format!("axis {axis} is outside rank {rank}")))
    }
}

/// A reason in words.
pub(crate) fn bad(why: &str) -> StopReason {
    StopReason::Other(why.to_owned())
}

/// The input's dims, or the reason they are not known.
pub(crate) fn need_dims<'a>(
    cx: &'a NodeCx<'_>,
    i: usize,
) -> Result<&'a [Option<DimExpr>], StopReason> {
    cx.dims(i)
        .ok_or_else(|| bad(&format!("the rank of input {i} is not known")))
}

/// The product of some dims (`None` if one is not settled or it overflows).
pub(crate) fn product<'a>(dims: impl IntoIterator<Item = &'a Option<DimExpr>>) -> Option<DimExpr> {
    dims.into_iter()
        .try_fold(DimExpr::int(1), |acc, d| acc.mul(d.as_ref()?))
}

/// A constant dim.
pub(crate) fn int(n: i64) -> Option<DimExpr> {
    Some(DimExpr::int(n))
}

/// Numpy broadcasting of two shapes: a `1` takes the other's size; an axis one side does
/// not settle takes the other's when that is a constant other than 1 (the only size a
/// valid model can broadcast to).
pub(crate) fn broadcast(a: &[Option<DimExpr>], b: &[Option<DimExpr>]) -> Dims {
    let rank = a.len().max(b.len());
    let get = |d: &[Option<DimExpr>], k: usize| -> Option<Option<DimExpr>> {
        (k + d.len()).checked_sub(rank).map(|i| d[i].clone())
    };
    (0..rank)
        .map(|k| match (get(a, k), get(b, k)) {
            (Some(x), None) | (None, Some(x)) => x,
            (Some(x), Some(y)) => {
                let is_one = |d: &Option<DimExpr>| d.as_ref().and_then(DimExpr::as_int) == Some(1);
                let is_big = |d: &Option<DimExpr>| {
                    d.as_ref().and_then(DimExpr::as_int).is_some_and(|n| n != 1)
                };
                if is_one(&x) {
                    y
                } else if is_one(&y) || x == y || is_big(&x) {
                    x
                } else if is_big(&y) {
                    y
                } else {
                    None
                }
            }
            (None, None) => None,
        })
        .collect()
}
