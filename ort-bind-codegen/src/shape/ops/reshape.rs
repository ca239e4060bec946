//! Operators that compute or rearrange shapes: `Shape`, `Gather`, `Slice`, `Concat`,
//! `Reshape`, `Squeeze`/`Unsqueeze`, `Expand`, `Tile`, `Pad`, `Transpose`, `Flatten`,
//! `Split`, `Range`, `ConstantOfShape`, `Constant` and their kin. Small integer tensors
//! carry their elements, so a shape computed in the graph (`Shape -> Gather -> Concat ->
//! Reshape`) is a shape inference can read.

use super::super::StopReason;
use super::super::expr::DimExpr;
use super::super::infer::{Fact, INT64, MAX_VALUES, NodeCx, OpResult, constant_fact};
use super::{Dims, axis, bad, broadcast, int, need_dims, product};

/// `Some` when `op` is one of this family's.
pub(super) fn infer(cx: &NodeCx<'_>, op: &str) -> Option<OpResult> {
    Some(match op {
        "Constant" => constant(cx),
        "Shape" => shape(cx),
        "Size" => {
            let d = need_dims(cx, 0);
            d.map(|d| {
                let mut f = Fact::shaped(vec![], INT64);
                f.ints = product(d).map(|p| vec![p]);
                vec![f]
            })
        }
        "Gather" => gather(cx),
        "GatherElements" => {
            need_dims(cx, 1).map(|d| vec![Fact::shaped(d.to_vec(), cx.same_elem())])
        }
        "GatherND" => gather_nd(cx),
        "Slice" => slice(cx),
        "Concat" => concat(cx),
        "Reshape" => reshape(cx),
        "Squeeze" => squeeze(cx),
        "Unsqueeze" => unsqueeze(cx),
        "Flatten" => flatten(cx),
        "Transpose" => transpose(cx),
        "Expand" => {
            let d = need_dims(cx, 0);
            d.and_then(|d| {
                let to = shape_input(cx, 1)?;
                Ok(vec![Fact::shaped(broadcast(d, &to), cx.same_elem())])
            })
        }
        "Tile" => tile(cx),
        "Pad" => pad(cx),
        "Split" => split(cx),
        "ConstantOfShape" => constant_of_shape(cx),
        "Range" => range(cx),
        "OneHot" => one_hot(cx),
        "DepthToSpace" | "SpaceToDepth" => depth_space(cx, op == "DepthToSpace"),
        "CenterCropPad" => center_crop_pad(cx),
        "Col2Im" => col2im(cx),
        "AffineGrid" => affine_grid(cx),
        "HannWindow" | "HammingWindow" | "BlackmanWindow" => {
            let size = cx
                .ints(0)
                .and_then(|v| v.first().cloned())
                .ok_or_else(|| cx.unknown_values(0));
            size.map(|n| vec![Fact::shaped(vec![Some(n)], output_datatype(cx))])
        }
        "MelWeightMatrix" => mel_weight_matrix(cx),
        _ => return None,
    })
}

/// The elements of input `i` as dims: a shape read from the graph (data-dependent when
/// they are values the model reads at run time).
fn shape_input(cx: &NodeCx<'_>, i: usize) -> Result<Dims, StopReason> {
    cx.ints(i)
        .map(|v| v.iter().cloned().map(Some).collect())
        .ok_or_else(|| cx.unknown_values(i))
}

fn constant(cx: &NodeCx<'_>) -> OpResult {
    let a = cx.node.attribute.first().ok_or_else(|| bad("no value"))?;
    let fact = match a.name.as_str() {
        "value" => constant_fact(a.t.as_ref().ok_or_else(|| bad("no tensor"))?),
        "value_int" => Fact::ints(vec![DimExpr::int(a.i)], true),
        "value_ints" if a.ints.len() <= MAX_VALUES => {
            Fact::ints(a.ints.iter().map(|&v| DimExpr::int(v)).collect(), false)
        }
        "value_float" => Fact {
            floats: Some(vec![f64::from(a.f)]),
            ..Fact::shaped(vec![], super::super::infer::FLOAT)
        },
        "value_floats" => Fact {
            floats: Some(a.floats.iter().map(|&f| f64::from(f)).collect()),
            ..Fact::shaped(vec![int(a.floats.len() as i64)], super::super::infer::FLOAT)
        },
        _ => return Err(StopReason::Other(format!("value given as `{}`", a.name))),
    };
    Ok(vec![fact])
}

/// Clamps a `start`/`end` pair the way `Shape` and `Slice` do, for a constant length.
fn clamp(i: i64, len: i64) -> i64 {
    if i < 0 { (i + len).max(0) } else { i.min(len) }
}

fn shape(cx: &NodeCx<'_>) -> OpResult {
    let d = need_dims(cx, 0)?;
    let len = d.len() as i64;
    let start = clamp(cx.attr_i("start").unwrap_or(0), len) as usize;
    let end = clamp(cx.attr_i("end").unwrap_or(len), len) as usize;
    let part = &d[start..end.max(start)];
    let mut f = Fact::shaped(vec![int(part.len() as i64)], INT64);
    f.ints = part.iter().cloned().collect();
    Ok(vec![f])
}

fn gather(cx: &NodeCx<'_>) -> OpResult {
    let data = need_dims(cx, 0)?;
    let idx = need_dims(cx, 1)?;
    let a = axis(cx.attr_i("axis").unwrap_or(0), data.len())?;
    let mut dims: Dims = data[..a].to_vec();
    dims.extend(idx.iter().cloned());
    dims.extend(data[a + 1..].iter().cloned());
    let mut f = Fact::shaped(dims, cx.same_elem());
    // Elements picked out of a shape tensor.
    if let (Some(values), Some(picks)) = (cx.ints(0), cx.const_ints(1))
        && data.len() == 1
    {
        let n = values.len() as i64;
        f.ints = picks
            .iter()
            .map(|&p| {
                let p = if p < 0 { p + n } else { p };
                usize::try_from(p).ok().and_then(|p| values.get(p).cloned())
            })
            .collect();
    }
    Ok(vec![f])
}

fn gather_nd(cx: &NodeCx<'_>) -> OpResult {
    let data = need_dims(cx, 0)?;
    let idx = need_dims(cx, 1)?;
    let b = usize::try_from(cx.attr_i("batch_dims").unwrap_or(0)).map_err(|_| bad("batch_dims"))?;
    let last = idx
        .last()
        .and_then(|d| d.as_ref()?.as_int())
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| bad("the last axis of the indices is not known"))?;
    if b + last > data.len() || idx.is_empty() {
        return Err(bad("indices longer than the data's rank"));
    }
    let mut dims: Dims = idx[..idx.len() - 1].to_vec();
    dims.extend(data[b + last..].iter().cloned());
    Ok(vec![Fact::shaped(dims, cx.same_elem())])
}

/// `Slice` (inputs since opset 10, attributes before).
fn slice(cx: &NodeCx<'_>) -> OpResult {
    let d = need_dims(cx, 0)?;
    let (starts, ends, axes, steps) = if cx.opset >= 10 || cx.has_input(1) {
        (
            cx.ints_from(1, "starts")?,
            cx.ints_from(2, "ends")?,
            cx.ints_from(3, "axes")?,
            cx.ints_from(4, "steps")?,
        )
    } else {
        (
            cx.attr_ints("starts").map(<[_]>::to_vec),
            cx.attr_ints("ends").map(<[_]>::to_vec),
            cx.attr_ints("axes").map(<[_]>::to_vec),
            None,
        )
    };
    let starts = starts.ok_or_else(|| bad("no starts"))?;
    let ends = ends.ok_or_else(|| bad("no ends"))?;
    let axes = axes.unwrap_or_else(|| (0..starts.len() as i64).collect());
    let steps = steps.unwrap_or_else(|| vec![1; starts.len()]);
    if ends.len() != starts.len() || axes.len() != starts.len() || steps.len() != starts.len() {
        return Err(bad("starts, ends, axes and steps differ in length"));
    }
    let mut dims = d.to_vec();
    let mut values = cx.ints(0).filter(|_| d.len() == 1).map(<[_]>::to_vec);
    for k in 0..starts.len() {
        let a = axis(axes[k], d.len())?;
        let step = steps[k];
        if step == 0 {
            return Err(bad("step 0"));
        }
        dims[a] = d[a]
            .as_ref()
            .and_then(|len| sliced_len(len, starts[k], ends[k], step));
        if let Some(v) = &values {
            let len = v.len() as i64;
            let picked: Option<Vec<DimExpr>> = slice_indices(starts[k], ends[k], step, len)
                .map(|ix| ix.into_iter().map(|i| v[i].clone()).collect());
            values = picked;
        }
    }
    let mut f = Fact::shaped(dims, cx.same_elem());
    f.ints = values;
    Ok(vec![f])
}

/// The indices a slice takes of a constant-length axis.
fn slice_indices(start: i64, end: i64, step: i64, len: i64) -> Option<Vec<usize>> {
    let (mut i, end) = if step > 0 {
        (clamp(start, len), clamp(end, len))
    } else {
        let c = |x: i64| {
            if x < 0 {
                (x + len).max(-1)
            } else {
                x.min(len - 1)
            }
        };
        (c(start), c(end))
    };
    let mut out = Vec::new();
    while (step > 0 && i < end) || (step < 0 && i > end) {
        out.push(usize::try_from(i).ok()?);
        i += step;
        if out.len() > MAX_VALUES {
            return None;
        }
    }
    Some(out)
}

/// How many elements a slice takes of an axis of length `len`; named lengths are at least 1.
fn sliced_len(len: &DimExpr, start: i64, end: i64, step: i64) -> Option<DimExpr> {
    if let Some(n) = len.as_int() {
        return slice_indices(start, end, step, n).map(|v| DimExpr::int(v.len() as i64));
    }
    if step < 0 {
        // Backwards over the whole axis (a reversal) is the only symbolic case taken.
        return (start == -1 || start >= i64::MAX / 2)
            .then_some(())
            .filter(|_| end <= i64::MIN / 2 && step == -1)
            .map(|_| len.clone());
    }
    let bound = |i: i64| -> Option<DimExpr> {
        if i >= i64::MAX / 2 {
            Some(len.clone())
        } else if i < 0 {
            len.add(&DimExpr::int(i))?.max_with(&DimExpr::int(0))
        } else {
            DimExpr::int(i).min_with(len)
        }
    };
    let span = bound(end)?.sub(&bound(start)?)?;
    span.ceil_div(&DimExpr::int(step))?
        .max_with(&DimExpr::int(0))
}

fn concat(cx: &NodeCx<'_>) -> OpResult {
    let first = need_dims(cx, 0)?;
    let a = axis(cx.attr_i("axis").unwrap_or(0), first.len())?;
    let mut dims = first.to_vec();
    let mut values: Option<Vec<DimExpr>> = Some(Vec::new());
    for i in 0..cx.inputs.len() {
        let d = need_dims(cx, i)?;
        if d.len() != first.len() {
            return Err(bad("inputs of different ranks"));
        }
        if i > 0 {
            dims[a] = match (&dims[a], &d[a]) {
                (Some(x), Some(y)) => x.add(y),
                _ => None,
            };
            for k in 0..dims.len() {
                if k != a && dims[k].is_none() {
                    dims[k] = d[k].clone();
                }
            }
        }
        values = match (values, cx.ints(i)) {
            (Some(mut acc), Some(v)) if first.len() == 1 => {
                acc.extend(v.iter().cloned());
                Some(acc)
            }
            _ => None,
        };
    }
    let mut f = Fact::shaped(dims, cx.same_elem());
    f.ints = values.filter(|v| v.len() <= MAX_VALUES);
    Ok(vec![f])
}

fn reshape(cx: &NodeCx<'_>) -> OpResult {
    let d = need_dims(cx, 0)?;
    let target: Dims = if cx.has_input(1) {
        shape_input(cx, 1)?
    } else {
        cx.attr_ints("shape")
            .ok_or_else(|| bad("no shape"))?
            .iter()
            .map(|&v| int(v))
            .collect()
    };
    let allow_zero = cx.attr_i("allowzero").unwrap_or(0) == 1;
    let mut out: Dims = Vec::with_capacity(target.len());
    let mut infer_at = None;
    for (k, t) in target.iter().enumerate() {
        match t.as_ref().and_then(DimExpr::as_int) {
            Some(0) if !allow_zero => out.push(d.get(k).cloned().flatten()),
            Some(-1) => {
                if infer_at.replace(k).is_some() {
                    return Err(bad("two -1 in the shape"));
                }
                out.push(None);
            }
            Some(n) if n < -1 => return Err(bad("a negative size in the shape")),
            _ => out.push(t.clone()),
        }
    }
    if let Some(k) = infer_at {
        let known = product(
            out.iter()
                .enumerate()
                .filter(|(j, _)| *j != k)
                .map(|(_, x)| x),
        );
        out[k] = match (product(d), known) {
            (Some(total), Some(known)) => total.floor_div(&known),
            _ => None,
        };
    }
    let mut f = Fact::shaped(out, cx.same_elem());
    f.ints = cx.input(0).and_then(|i| i.ints.clone());
    Ok(vec![f])
}

/// The axes given as input 1 (opset 13 on) or attribute `axes`.
fn axes_of(cx: &NodeCx<'_>) -> Result<Option<Vec<i64>>, StopReason> {
    cx.ints_from(1, "axes")
}

fn squeeze(cx: &NodeCx<'_>) -> OpResult {
    let d = need_dims(cx, 0)?;
    let keep: Vec<bool> = match axes_of(cx)? {
        Some(axes) => {
            let mut keep = vec![true; d.len()];
            for a in axes {
                keep[axis(a, d.len())?] = false;
            }
            keep
        }
        None => d
            .iter()
            .map(|x| match x.as_ref().and_then(DimExpr::as_int) {
                Some(1) => Ok(false),
                Some(_) => Ok(true),
                None => Err(bad(
                    "squeezing without axes an axis whose size is not known",
                )),
            })
            .collect::<Result<_, _>>()?,
    };
    let dims = d
        .iter()
        .zip(&keep)
        .filter(|(_, k)| **k)
        .map(|(x, _)| x.clone())
        .collect();
    let mut f = Fact::shaped(dims, cx.same_elem());
    f.ints = cx.input(0).and_then(|i| i.ints.clone());
    Ok(vec![f])
}

fn unsqueeze(cx: &NodeCx<'_>) -> OpResult {
    let d = need_dims(cx, 0)?;
    let axes = axes_of(cx)?.ok_or_else(|| bad("no axes"))?;
    let rank = d.len() + axes.len();
    let mut ones = vec![false; rank];
    for a in axes {
        ones[axis(a, rank)?] = true;
    }
    let mut rest = d.iter();
    let dims = ones
        .iter()
        .map(|&one| {
            if one {
                int(1)
            } else {
                rest.next().cloned().flatten()
            }
        })
        .collect();
    let mut f = Fact::shaped(dims, cx.same_elem());
    f.ints = cx.input(0).and_then(|i| i.ints.clone());
    Ok(vec![f])
}

fn flatten(cx: &NodeCx<'_>) -> OpResult {
    let d = need_dims(cx, 0)?;
    let a = cx.attr_i("axis").unwrap_or(1);
    let a = if a == d.len() as i64 {
        d.len()
    } else {
        axis(a, d.len().max(1))?
    };
    Ok(vec![Fact::shaped(
        vec![product(&d[..a]), product(&d[a..])],
        cx.same_elem(),
    )])
}

fn transpose(cx: &NodeCx<'_>) -> OpResult {
    let d = need_dims(cx, 0)?;
    let perm: Vec<i64> = match cx.attr_ints("perm") {
        Some(p) if !p.is_empty() => p.to_vec(),
        _ => (0..d.len() as i64).rev().collect(),
    };
    if perm.len() != d.len() {
        return Err(bad("perm of another rank"));
    }
    let dims = perm
        .iter()
        .map(|&p| axis(p, d.len()).map(|p| d[p].clone()))
        .collect::<Result<_, _>>()?;
    Ok(vec![Fact::shaped(dims, cx.same_elem())])
}

fn tile(cx: &NodeCx<'_>) -> OpResult {
    let d = need_dims(cx, 0)?;
    let reps = shape_input(cx, 1)?;
    if reps.len() != d.len() {
        return Err(bad("repeats of another rank"));
    }
    let dims = d
        .iter()
        .zip(&reps)
        .map(|(x, r)| x.as_ref()?.mul(r.as_ref()?))
        .collect();
    Ok(vec![Fact::shaped(dims, cx.same_elem())])
}

fn pad(cx: &NodeCx<'_>) -> OpResult {
    let d = need_dims(cx, 0)?;
    let pads: Vec<DimExpr> = if cx.has_input(1) {
        cx.ints(1).ok_or_else(|| cx.unknown_values(1))?.to_vec()
    } else {
        cx.attr_ints("pads")
            .ok_or_else(|| bad("no pads"))?
            .iter()
            .map(|&p| DimExpr::int(p))
            .collect()
    };
    let axes: Vec<usize> = match cx.ints_from(3, "")? {
        Some(a) if cx.has_input(3) => a
            .iter()
            .map(|&x| axis(x, d.len()))
            .collect::<Result<_, _>>()?,
        _ => (0..d.len()).collect(),
    };
    if pads.len() != 2 * axes.len() {
        return Err(bad("pads of another length"));
    }
    let mut dims = d.to_vec();
    for (k, &a) in axes.iter().enumerate() {
        dims[a] = dims[a]
            .as_ref()
            .and_then(|x| x.add(&pads[k])?.add(&pads[k + axes.len()]));
    }
    Ok(vec![Fact::shaped(dims, cx.same_elem())])
}

fn split(cx: &NodeCx<'_>) -> OpResult {
    let d = need_dims(cx, 0)?;
    let a = axis(cx.attr_i("axis").unwrap_or(0), d.len())?;
    let n = cx.node.output.len();
    let sizes: Vec<Option<DimExpr>> = match cx.ints_from(1, "split")? {
        Some(s) if !s.is_empty() => s.iter().map(|&v| int(v)).collect(),
        _ => {
            let len = d[a].as_ref();
            let parts = cx.attr_i("num_outputs").unwrap_or(n as i64).max(1);
            let whole = |len: &DimExpr| len.ceil_div(&DimExpr::int(parts));
            if cx.attr_i("num_outputs").is_some() {
                // Equal chunks of ceil(len / n), the last what is left.
                (0..n)
                    .map(|k| {
                        let len = len?;
                        let chunk = whole(len)?;
                        if k + 1 < n {
                            Some(chunk)
                        } else {
                            len.sub(&chunk.scale(parts - 1)?)
                        }
                    })
                    .collect()
            } else {
                (0..n)
                    .map(|_| len?.floor_div(&DimExpr::int(parts)))
                    .collect()
            }
        }
    };
    Ok(sizes
        .into_iter()
        .map(|s| {
            let mut dims = d.to_vec();
            dims[a] = s;
            Fact::shaped(dims, cx.same_elem())
        })
        .collect())
}

fn constant_of_shape(cx: &NodeCx<'_>) -> OpResult {
    let dims = shape_input(cx, 0)?;
    let value = cx.attr("value").and_then(|a| a.t.as_ref());
    let elem = value.map_or(1, |t| t.data_type);
    let mut f = Fact::shaped(dims.clone(), elem);
    // Small integer fills are shape material too (`ConstantOfShape([n]) -> Range`).
    if let Some(fill) = value
        .map(constant_fact)
        .and_then(|v| v.ints?.first().cloned())
        && let Some(len) = f.const_len().filter(|&n| n <= MAX_VALUES)
    {
        f.ints = Some(vec![fill; len]);
    }
    Ok(vec![f])
}

fn range(cx: &NodeCx<'_>) -> OpResult {
    let one = |i: usize| cx.ints(i).and_then(|v| v.first().cloned());
    let (Some(start), Some(limit), Some(delta)) = (one(0), one(1), one(2)) else {
        // Data-dependent when an input whose values are not known is.
        let unknown = (0..3)
            .filter(|&i| one(i).is_none())
            .map(|i| cx.unknown_values(i));
        let mut reasons = unknown.collect::<Vec<_>>();
        let dd = reasons.iter().position(|r| *r == StopReason::DataDependent);
        return Err(reasons.swap_remove(dd.unwrap_or(0)));
    };
    let step = delta
        .as_int()
        .ok_or_else(|| bad("a step that is not a constant"))?;
    if step == 0 {
        return Err(bad("step 0"));
    }
    let n = limit
        .sub(&start)
        .and_then(|s| s.ceil_div(&DimExpr::int(step)))
        .and_then(|n| n.max_with(&DimExpr::int(0)));
    let mut f = Fact::shaped(vec![n.clone()], cx.same_elem());
    if let Some(count) = n
        .and_then(|n| n.as_int())
        .filter(|&c| c <= MAX_VALUES as i64)
    {
        f.ints = (0..count).map(|k| start.add(&delta.scale(k)?)).collect();
    }
    Ok(vec![f])
}

fn one_hot(cx: &NodeCx<'_>) -> OpResult {
    let idx = need_dims(cx, 0)?;
    let depth = cx
        .ints(1)
        .and_then(|v| v.first().cloned())
        .ok_or_else(|| cx.unknown_values(1))?;
    let rank = idx.len() + 1;
    let a = axis(cx.attr_i("axis").unwrap_or(-1), rank)?;
    let mut dims = idx.to_vec();
    dims.insert(a, Some(depth));
    Ok(vec![Fact::shaped(dims, cx.elem(2))])
}

/// The `output_datatype` attribute of the signal operators (float by default).
fn output_datatype(cx: &NodeCx<'_>) -> i32 {
    cx.attr_i("output_datatype")
        .and_then(|t| i32::try_from(t).ok())
        .unwrap_or(super::super::infer::FLOAT)
}

/// `MelWeightMatrix`: `[floor(dft_length / 2) + 1, num_mel_bins]`.
fn mel_weight_matrix(cx: &NodeCx<'_>) -> OpResult {
    let one = |i: usize| {
        cx.ints(i)
            .and_then(|v| v.first().cloned())
            .ok_or_else(|| cx.unknown_values(i))
    };
    let bins = one(0)?;
    let dft = one(1)?;
    let rows = dft
        .floor_div(&DimExpr::int(2))
        .and_then(|h| h.add(&DimExpr::int(1)));
    Ok(vec![Fact::shaped(
        vec![rows, Some(bins)],
        output_datatype(cx),
    )])
}

/// `CenterCropPad`: the input's shape with `axes` (all by default) of the sizes `shape`
/// gives.
fn center_crop_pad(cx: &NodeCx<'_>) -> OpResult {
    let d = need_dims(cx, 0)?;
    let sizes = shape_input(cx, 1)?;
    let axes: Vec<usize> = match cx.attr_ints("axes") {
        Some(a) if !a.is_empty() => a
            .iter()
            .map(|&x| axis(x, d.len()))
            .collect::<Result<_, _>>()?,
        _ => (0..d.len()).collect(),
    };
    if sizes.len() != axes.len() {
        return Err(bad("a shape of another length than the axes"));
    }
    let mut dims = d.to_vec();
    for (&a, s) in axes.iter().zip(sizes) {
        dims[a] = s;
    }
    Ok(vec![Fact::shaped(dims, cx.same_elem())])
}

/// `Col2Im`: `[N, C, *image_shape]` from `[N, C * prod(block_shape), L]`.
fn col2im(cx: &NodeCx<'_>) -> OpResult {
    let d = need_dims(cx, 0)?;
    if d.len() != 3 {
        return Err(bad("input not of rank 3"));
    }
    let image = shape_input(cx, 1)?;
    let block = shape_input(cx, 2)?;
    let channels = match (&d[1], product(&block)) {
        (Some(c), Some(b)) => c.floor_div(&b),
        _ => None,
    };
    let mut dims = vec![d[0].clone(), channels];
    dims.extend(image);
    Ok(vec![Fact::shaped(dims, cx.same_elem())])
}

/// `AffineGrid`: `[N, H, W, 2]` for `size` `[N, C, H, W]`, `[N, D, H, W, 3]` for
/// `[N, C, D, H, W]`.
fn affine_grid(cx: &NodeCx<'_>) -> OpResult {
    let size = shape_input(cx, 1)?;
    let spatial = size.len().checked_sub(2).filter(|&n| n == 2 || n == 3);
    let n = spatial.ok_or_else(|| bad("a size of another length than 4 or 5"))?;
    let mut dims = vec![size[0].clone()];
    dims.extend(size[2..].iter().cloned());
    dims.push(int(n as i64));
    Ok(vec![Fact::shaped(dims, cx.same_elem())])
}

fn depth_space(cx: &NodeCx<'_>, to_space: bool) -> OpResult {
    let d = need_dims(cx, 0)?;
    let b = cx
        .attr_i("blocksize")
        .filter(|&b| b > 0)
        .ok_or_else(|| bad("no blocksize"))?;
    if d.len() != 4 {
        return Err(bad("not rank 4"));
    }
    let bb = DimExpr::int(b.checked_mul(b).ok_or_else(|| bad("blocksize too large"))?);
    let b = DimExpr::int(b);
    let at = |k: usize| d[k].as_ref();
    let dims = if to_space {
        vec![
            d[0].clone(),
            at(1).and_then(|c| c.floor_div(&bb)),
            at(2).and_then(|h| h.mul(&b)),
            at(3).and_then(|w| w.mul(&b)),
        ]
    } else {
        vec![
            d[0].clone(),
            at(1).and_then(|c| c.mul(&bb)),
            at(2).and_then(|h| h.floor_div(&b)),
            at(3).and_then(|w| w.floor_div(&b)),
        ]
    };
    Ok(vec![Fact::shaped(dims, cx.same_elem())])
}
