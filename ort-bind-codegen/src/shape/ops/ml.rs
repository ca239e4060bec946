//! The `ai.onnx.ml` domain: classical machine-learning operators (scikit-learn exports).

use super::super::StopReason;
use super::super::infer::{FLOAT, Fact, NodeCx, OpResult};
use super::{bad, int, need_dims, product};

/// The `ai.onnx.ml` operators inference covers.
pub(super) fn infer(cx: &NodeCx<'_>, op: &str) -> OpResult {
    match op {
        // Element by element.
        "Binarizer" | "Imputer" => same(cx, cx.same_elem()),
        "Normalizer" | "Scaler" => same(cx, FLOAT),
        // The element type follows the mapping's values (not tracked).
        "LabelEncoder" => same(cx, 0),
        // The indices pick along the last axis.
        "ArrayFeatureExtractor" => {
            let x = need_dims(cx, 0)?;
            let picks = product(need_dims(cx, 1)?);
            if x.len() < 2 {
                return Err(bad("input not of rank 2 or more"));
            }
            let mut dims = x.to_vec();
            *dims.last_mut().expect("rank 2 or more") = picks;
            Ok(vec![Fact::shaped(dims, cx.same_elem())])
        }
        // One row of `n_targets` per input row.
        "TreeEnsemble" => {
            let x = need_dims(cx, 0)?;
            let targets = cx.attr_i("n_targets").ok_or_else(|| bad("no n_targets"))?;
            if x.len() != 2 {
                return Err(bad("input not of rank 2"));
            }
            Ok(vec![Fact::shaped(
                vec![x[0].clone(), int(targets)],
                cx.same_elem(),
            )])
        }
        _ => Err(StopReason::NotCovered),
    }
}

/// One output of the first input's shape.
fn same(cx: &NodeCx<'_>, elem: i32) -> OpResult {
    Ok(vec![Fact::shaped(need_dims(cx, 0)?.to_vec(), elem)])
}
