//! Network layers: products (`MatMul`, `Gemm`, `Einsum`), convolutions and pooling,
//! `Resize`, reductions, `TopK`, recurrent layers, and the attention family of ONNX
//! Runtime's `com.microsoft` domain.

use super::super::StopReason;
use super::super::expr::DimExpr;
use super::super::infer::{FLOAT, Fact, INT64, NodeCx, OpResult};
use super::{Dims, axis, bad, broadcast, int, need_dims};

/// `Some` when `op` is one of this family's (default domain).
pub(super) fn infer(cx: &NodeCx<'_>, op: &str) -> Option<OpResult> {
    Some(match op {
        "MatMul" | "MatMulInteger" => matmul(cx, 0, 1, cx.same_elem()),
        "QLinearMatMul" => matmul(cx, 0, 3, cx.elem(7)),
        "Gemm" => gemm(cx),
        "Einsum" => einsum(cx),
        "Conv" | "ConvInteger" | "QLinearConv" => {
            let w = if op == "QLinearConv" { 3 } else { 1 };
            conv(cx, w)
        }
        "ConvTranspose" => conv_transpose(cx),
        // The output size of a convolution, the offsets sampling within each window.
        "DeformConv" => conv(cx, 1),
        "MaxUnpool" => max_unpool(cx),
        "GridSample" => grid_sample(cx),
        "MaxPool" | "AveragePool" | "LpPool" => pool(cx),
        "GlobalAveragePool" | "GlobalMaxPool" | "GlobalLpPool" => need_dims(cx, 0).map(|d| {
            let dims = d
                .iter()
                .enumerate()
                .map(|(k, x)| if k < 2 { x.clone() } else { int(1) })
                .collect();
            vec![Fact::shaped(dims, cx.same_elem())]
        }),
        "Resize" | "Upsample" => resize(cx, op == "Upsample"),
        "ReduceSum" | "ReduceMean" | "ReduceMax" | "ReduceMin" | "ReduceProd" | "ReduceL1"
        | "ReduceL2" | "ReduceLogSum" | "ReduceLogSumExp" | "ReduceSumSquare" => reduce(cx, op),
        "ArgMax" | "ArgMin" => need_dims(cx, 0).and_then(|d| {
            let a = axis(cx.attr_i("axis").unwrap_or(0), d.len())?;
            let keep = cx.attr_i("keepdims").unwrap_or(1) != 0;
            Ok(vec![Fact::shaped(reduced(d, &[a], keep), INT64)])
        }),
        "TopK" => top_k(cx),
        "Det" => need_dims(cx, 0).and_then(|d| {
            let n = d.len().checked_sub(2).ok_or_else(|| bad("not a matrix"))?;
            Ok(vec![Fact::shaped(d[..n].to_vec(), cx.same_elem())])
        }),
        "NegativeLogLikelihoodLoss" | "SoftmaxCrossEntropyLoss" => loss(cx, op),
        "TfIdfVectorizer" => tf_idf(cx),
        "LSTM" | "GRU" | "RNN" => recurrent(cx, op),
        "Attention" => onnx_attention(cx),
        "RotaryEmbedding" => {
            need_dims(cx, 0).map(|d| vec![Fact::shaped(d.to_vec(), cx.same_elem())])
        }
        _ => return None,
    })
}

/// ONNX Runtime's contrib operators (`com.microsoft`) that real exports carry.
pub(super) fn microsoft(cx: &NodeCx<'_>, op: &str) -> OpResult {
    let same = |i: usize| need_dims(cx, i).map(<[_]>::to_vec);
    match op {
        "FastGelu" | "BiasGelu" | "QuickGelu" | "Gelu" | "RotaryEmbedding" | "BiasAdd"
        | "QuantizeLinear" | "DequantizeLinear" => {
            let elem = if op == "DequantizeLinear" {
                FLOAT
            } else {
                cx.same_elem()
            };
            Ok(vec![Fact::shaped(same(0)?, elem)])
        }
        "SkipLayerNormalization" | "SkipSimplifiedLayerNormalization" => {
            let d = same(0)?;
            let stat: Dims = d
                .iter()
                .enumerate()
                .map(|(k, x)| if k + 1 < d.len() { x.clone() } else { int(1) })
                .collect();
            Ok(vec![
                Fact::shaped(d.clone(), cx.same_elem()),
                Fact::shaped(stat.clone(), FLOAT),
                Fact::shaped(stat, FLOAT),
                Fact::shaped(d, cx.same_elem()),
            ])
        }
        "SimplifiedLayerNormalization" | "LayerNormalization" => {
            let d = same(0)?;
            Ok(vec![Fact::shaped(d, cx.same_elem())])
        }
        "FusedMatMul" => {
            let (a, b) = (same(0)?, same(1)?);
            let ta = cx.attr_i("transA").unwrap_or(0) != 0;
            let tb = cx.attr_i("transB").unwrap_or(0) != 0;
            let swap = |mut d: Dims, t: bool| {
                let n = d.len();
                if t && n >= 2 {
                    d.swap(n - 1, n - 2);
                }
                d
            };
            Ok(vec![Fact::shaped(
                matmul_dims(&swap(a, ta), &swap(b, tb))?,
                cx.same_elem(),
            )])
        }
        "MatMulNBits" => {
            let a = same(0)?;
            let n = cx.attr_i("N").ok_or_else(|| bad("no N"))?;
            let mut d = a;
            let last = d.len().checked_sub(1).ok_or_else(|| bad("a scalar A"))?;
            d[last] = int(n);
            Ok(vec![Fact::shaped(d, cx.same_elem())])
        }
        "Attention" => ms_attention(cx),
        "MultiHeadAttention" => multi_head_attention(cx),
        "GroupQueryAttention" => group_query_attention(cx),
        _ => Err(StopReason::NotCovered),
    }
}

/// Numpy `matmul` of two shapes.
fn matmul_dims(a: &[Option<DimExpr>], b: &[Option<DimExpr>]) -> Result<Dims, StopReason> {
    if a.is_empty() || b.is_empty() {
        return Err(bad("a scalar operand"));
    }
    let a1 = a.len() == 1;
    let b1 = b.len() == 1;
    let a: Dims = if a1 {
        vec![int(1), a[0].clone()]
    } else {
        a.to_vec()
    };
    let b: Dims = if b1 {
        vec![b[0].clone(), int(1)]
    } else {
        b.to_vec()
    };
    let (ra, rb) = (a.len(), b.len());
    let mut out = broadcast(&a[..ra - 2], &b[..rb - 2]);
    if !a1 {
        out.push(a[ra - 2].clone());
    }
    if !b1 {
        out.push(b[rb - 1].clone());
    }
    Ok(out)
}

fn matmul(cx: &NodeCx<'_>, a: usize, b: usize, elem: i32) -> OpResult {
    let out = matmul_dims(need_dims(cx, a)?, need_dims(cx, b)?)?;
    Ok(vec![Fact::shaped(out, elem)])
}

fn gemm(cx: &NodeCx<'_>) -> OpResult {
    let (a, b) = (need_dims(cx, 0)?, need_dims(cx, 1)?);
    if a.len() != 2 || b.len() != 2 {
        return Err(bad("operands not of rank 2"));
    }
    let m = if cx.attr_i("transA").unwrap_or(0) != 0 {
        &a[1]
    } else {
        &a[0]
    };
    let n = if cx.attr_i("transB").unwrap_or(0) != 0 {
        &b[0]
    } else {
        &b[1]
    };
    Ok(vec![Fact::shaped(
        vec![m.clone(), n.clone()],
        cx.same_elem(),
    )])
}

/// `Einsum`: each output letter takes the size of that letter in an operand; `...` the
/// operands' leading axes broadcast together.
fn einsum(cx: &NodeCx<'_>) -> OpResult {
    let eq: String = cx
        .attr_s("equation")
        .ok_or_else(|| bad("no equation"))?
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let (lhs, rhs) = match eq.split_once("->") {
        Some((l, r)) => (l.to_owned(), Some(r.to_owned())),
        None => (eq.clone(), None),
    };
    let terms: Vec<&str> = lhs.split(',').collect();
    if terms.len() != cx.inputs.len() {
        return Err(bad("the equation names another number of operands"));
    }
    let mut sizes: Vec<(char, Option<DimExpr>)> = Vec::new();
    let mut counts: Vec<(char, usize)> = Vec::new();
    let mut ellipsis: Option<Dims> = None;
    for (i, term) in terms.iter().enumerate() {
        let d = need_dims(cx, i)?;
        let letters: Vec<char> = term.replace("...", ".").chars().collect();
        let dots = letters.iter().filter(|&&c| c == '.').count();
        let named = letters.len() - dots;
        if dots > 1 || named > d.len() || (dots == 0 && named != d.len()) {
            return Err(bad("the equation does not fit an operand's rank"));
        }
        let span = d.len() - named;
        let mut k = 0;
        for c in letters {
            if c == '.' {
                let part = &d[k..k + span];
                ellipsis = Some(match ellipsis {
                    None => part.to_vec(),
                    Some(e) => broadcast(&e, part),
                });
                k += span;
                continue;
            }
            match sizes.iter_mut().find(|(l, _)| *l == c) {
                Some((_, s)) => {
                    let is_one =
                        |x: &Option<DimExpr>| x.as_ref().and_then(DimExpr::as_int) == Some(1);
                    if s.is_none() || is_one(s) {
                        *s = d[k].clone();
                    }
                }
                None => sizes.push((c, d[k].clone())),
            }
            match counts.iter_mut().find(|(l, _)| *l == c) {
                Some((_, n)) => *n += 1,
                None => counts.push((c, 1)),
            }
            k += 1;
        }
    }
    let out_letters: Vec<char> = match rhs {
        Some(r) => r.replace("...", ".").chars().collect(),
        None => {
            let mut once: Vec<char> = counts
                .iter()
                .filter(|(_, n)| *n == 1)
                .map(|(c, _)| *c)
                .collect();
            once.sort_unstable();
            let mut v = if ellipsis.is_some() {
                vec!['.']
            } else {
                vec![]
            };
            v.extend(once);
            v
        }
    };
    let mut dims = Dims::new();
    for c in out_letters {
        if c == '.' {
            dims.extend(ellipsis.clone().unwrap_or_default());
        } else {
            let s = sizes
                .iter()
                .find(|(l, _)| *l == c)
                .ok_or_else(|| bad("an output letter no operand has"))?;
            dims.push(s.1.clone());
        }
    }
    Ok(vec![Fact::shaped(dims, cx.same_elem())])
}

/// The spatial attributes of a convolution or pooling over `spatial` axes.
struct Window {
    kernel: Vec<i64>,
    strides: Vec<i64>,
    dilations: Vec<i64>,
    /// Begin pads then end pads.
    pads: Vec<i64>,
    auto_pad: String,
}

/// `spatial`: how many spatial axes the input has; a kernel of another length is refused.
fn window(cx: &NodeCx<'_>, kernel: Vec<i64>, spatial: usize) -> Result<Window, StopReason> {
    let n = kernel.len();
    if n != spatial {
        return Err(bad(
            "a kernel of another rank than the input's spatial axes",
        ));
    }
    let list = |name: &str, default: i64, len: usize| -> Result<Vec<i64>, StopReason> {
        match cx.attr_ints(name) {
            Some(v) if !v.is_empty() => {
                if v.len() == len {
                    Ok(v.to_vec())
                } else {
                    Err(bad(&format!("`{name}` of another length")))
                }
            }
            _ => Ok(vec![default; len]),
        }
    };
    let w = Window {
        strides: list("strides", 1, n)?,
        dilations: list("dilations", 1, n)?,
        pads: list("pads", 0, 2 * n)?,
        auto_pad: cx.attr_s("auto_pad").unwrap_or("NOTSET").to_owned(),
        kernel,
    };
    if w.strides
        .iter()
        .chain(&w.dilations)
        .chain(&w.kernel)
        .any(|&v| v <= 0)
        || w.pads.iter().any(|&p| p < 0)
    {
        return Err(bad(
            "a kernel, stride or dilation under 1, or a negative pad",
        ));
    }
    Ok(w)
}

/// The output length of a window over `len` along spatial axis `k`.
fn windowed(len: &DimExpr, w: &Window, k: usize, ceil: bool) -> Option<DimExpr> {
    let s = DimExpr::int(w.strides[k]);
    match w.auto_pad.as_str() {
        "SAME_UPPER" | "SAME_LOWER" => return len.ceil_div(&s),
        "VALID" | "NOTSET" | "" => {}
        _ => return None,
    }
    let (pb, pe) = if w.auto_pad == "VALID" {
        (0, 0)
    } else {
        (w.pads[k], w.pads[k + w.kernel.len()])
    };
    let span = w.dilations[k]
        .checked_mul(w.kernel[k] - 1)?
        .checked_add(1)?;
    let inner = len.add(&DimExpr::int(pb.checked_add(pe)?.checked_sub(span)?))?;
    if ceil {
        // A last window that would start in the end padding is dropped; that cannot
        // happen when the stride is at most the span past the end pad, and is decided
        // for a constant length.
        if pe.checked_add(w.strides[k])? > span {
            let n = len.as_int()?;
            let inner = inner.as_int()?;
            let stride = w.strides[k];
            let mut out = inner
                .checked_add(stride - 1)?
                .div_euclid(stride)
                .checked_add(1)?;
            if (out - 1).checked_mul(stride)? >= n.checked_add(pb)? {
                out -= 1;
            }
            return Some(DimExpr::int(out));
        }
        inner.ceil_div(&s)?.add(&DimExpr::int(1))
    } else {
        inner.floor_div(&s)?.add(&DimExpr::int(1))
    }
}

fn conv(cx: &NodeCx<'_>, w_input: usize) -> OpResult {
    let x = need_dims(cx, 0)?;
    let wd = need_dims(cx, w_input)?;
    if x.len() < 3 || wd.len() != x.len() {
        return Err(bad("input and weights of different ranks"));
    }
    let kernel: Vec<i64> = match cx.attr_ints("kernel_shape") {
        Some(k) if !k.is_empty() => k.to_vec(),
        _ => wd[2..]
            .iter()
            .map(|d| d.as_ref().and_then(DimExpr::as_int))
            .collect::<Option<_>>()
            .ok_or_else(|| bad("kernel size not known"))?,
    };
    let w = window(cx, kernel, x.len() - 2)?;
    let mut dims = vec![x[0].clone(), wd[0].clone()];
    for (k, d) in x[2..].iter().enumerate() {
        dims.push(d.as_ref().and_then(|d| windowed(d, &w, k, false)));
    }
    let elem = if cx.node.op_type == "ConvInteger" {
        6
    } else {
        cx.same_elem()
    };
    Ok(vec![Fact::shaped(dims, elem)])
}

fn conv_transpose(cx: &NodeCx<'_>) -> OpResult {
    let x = need_dims(cx, 0)?;
    let wd = need_dims(cx, 1)?;
    if x.len() < 3 || wd.len() != x.len() {
        return Err(bad("input and weights of different ranks"));
    }
    let n = x.len() - 2;
    let kernel: Vec<i64> = match cx.attr_ints("kernel_shape") {
        Some(k) if !k.is_empty() => k.to_vec(),
        _ => wd[2..]
            .iter()
            .map(|d| d.as_ref().and_then(DimExpr::as_int))
            .collect::<Option<_>>()
            .ok_or_else(|| bad("kernel size not known"))?,
    };
    let w = window(cx, kernel, x.len() - 2)?;
    let group = cx.attr_i("group").unwrap_or(1);
    let channels = wd[1].as_ref().and_then(|c| c.scale(group));
    let mut dims = vec![x[0].clone(), channels];
    if let Some(shape) = cx.attr_ints("output_shape").filter(|s| !s.is_empty()) {
        let spatial = &shape[shape.len().saturating_sub(n)..];
        dims.extend(spatial.iter().map(|&v| int(v)));
        return Ok(vec![Fact::shaped(dims, cx.same_elem())]);
    }
    let out_pad = match cx.attr_ints("output_padding") {
        Some(p) if p.len() == n => p.to_vec(),
        _ => vec![0; n],
    };
    for (k, d) in x[2..].iter().enumerate() {
        let size = d.as_ref().and_then(|len| match w.auto_pad.as_str() {
            "SAME_UPPER" | "SAME_LOWER" => len.scale(w.strides[k]),
            _ => {
                let span = w.dilations[k]
                    .checked_mul(w.kernel[k] - 1)?
                    .checked_add(1)?;
                let extra = out_pad[k]
                    .checked_add(span)?
                    .checked_sub(w.pads[k])?
                    .checked_sub(w.pads[k + n])?;
                len.sub(&DimExpr::int(1))?
                    .scale(w.strides[k])?
                    .add(&DimExpr::int(extra))
            }
        });
        dims.push(size);
    }
    Ok(vec![Fact::shaped(dims, cx.same_elem())])
}

/// `MaxUnpool`: the `output_shape` input when given, else each spatial axis
/// `(in - 1) * stride + kernel - pads`.
fn max_unpool(cx: &NodeCx<'_>) -> OpResult {
    let x = need_dims(cx, 0)?;
    if cx.has_input(2) {
        let shape = cx.ints(2).ok_or_else(|| cx.unknown_values(2))?;
        return Ok(vec![Fact::shaped(
            shape.iter().cloned().map(Some).collect(),
            cx.same_elem(),
        )]);
    }
    let kernel = cx
        .attr_ints("kernel_shape")
        .filter(|k| !k.is_empty())
        .ok_or_else(|| bad("no kernel_shape"))?
        .to_vec();
    if x.len() != kernel.len() + 2 {
        return Err(bad("a kernel of another rank"));
    }
    let n = kernel.len();
    let w = window(cx, kernel, x.len() - 2)?;
    let mut dims = vec![x[0].clone(), x[1].clone()];
    for (k, d) in x[2..].iter().enumerate() {
        dims.push(d.as_ref().and_then(|len| {
            let extra = w.kernel[k]
                .checked_sub(w.pads[k])?
                .checked_sub(w.pads[k + n])?;
            len.sub(&DimExpr::int(1))?
                .scale(w.strides[k])?
                .add(&DimExpr::int(extra))
        }));
    }
    Ok(vec![Fact::shaped(dims, cx.same_elem())])
}

/// `GridSample`: the input's batch and channels, the grid's spatial axes.
fn grid_sample(cx: &NodeCx<'_>) -> OpResult {
    let x = need_dims(cx, 0)?;
    let grid = need_dims(cx, 1)?;
    if x.len() < 3 || grid.len() != x.len() {
        return Err(bad("input and grid of different ranks"));
    }
    let mut dims = vec![x[0].clone(), x[1].clone()];
    dims.extend(grid[1..grid.len() - 1].iter().cloned());
    Ok(vec![Fact::shaped(dims, cx.same_elem())])
}

/// `NegativeLogLikelihoodLoss` and `SoftmaxCrossEntropyLoss`: the loss has the target's
/// shape without reduction, else is a scalar; the log probabilities have the scores'.
fn loss(cx: &NodeCx<'_>, op: &str) -> OpResult {
    let reduction = cx.attr_s("reduction").unwrap_or("mean");
    let loss = match reduction {
        "none" => need_dims(cx, 1)?.to_vec(),
        "mean" | "sum" => Vec::new(),
        _ => return Err(bad("an unknown reduction")),
    };
    let mut out = vec![Fact::shaped(loss, cx.same_elem())];
    if op == "SoftmaxCrossEntropyLoss" {
        out.push(Fact::shaped(need_dims(cx, 0)?.to_vec(), cx.same_elem()));
    }
    Ok(out)
}

/// `TfIdfVectorizer`: `[max(ngram_indexes) + 1]` per row of the input.
fn tf_idf(cx: &NodeCx<'_>) -> OpResult {
    let x = need_dims(cx, 0)?;
    let width = cx
        .attr_ints("ngram_indexes")
        .and_then(|v| v.iter().max())
        .and_then(|m| m.checked_add(1))
        .ok_or_else(|| bad("no ngram_indexes"))?;
    let dims = match x.len() {
        1 => vec![int(width)],
        2 => vec![x[0].clone(), int(width)],
        _ => return Err(bad("input not of rank 1 or 2")),
    };
    Ok(vec![Fact::shaped(dims, FLOAT)])
}

fn pool(cx: &NodeCx<'_>) -> OpResult {
    let x = need_dims(cx, 0)?;
    let kernel = cx
        .attr_ints("kernel_shape")
        .filter(|k| !k.is_empty())
        .ok_or_else(|| bad("no kernel_shape"))?
        .to_vec();
    if x.len() != kernel.len() + 2 {
        return Err(bad("a kernel of another rank"));
    }
    let w = window(cx, kernel, x.len() - 2)?;
    let ceil = cx.attr_i("ceil_mode").unwrap_or(0) != 0;
    let mut dims = vec![x[0].clone(), x[1].clone()];
    for (k, d) in x[2..].iter().enumerate() {
        dims.push(d.as_ref().and_then(|d| windowed(d, &w, k, ceil)));
    }
    Ok(vec![
        Fact::shaped(dims.clone(), cx.same_elem()),
        Fact::shaped(dims, INT64),
    ])
}

/// `floor(len * scale)` for a scale that is a small fraction `p / q` (as `f32` holds it,
/// not below it, so the product floors the same for any practical size).
fn scaled(len: &DimExpr, scale: f64) -> Option<DimExpr> {
    if !(scale.is_finite() && scale > 0.0) {
        return None;
    }
    for q in 1..=64i64 {
        let p = (scale * q as f64).round();
        let exact = p / q as f64;
        if p >= 1.0 && (scale - exact).abs() <= 1e-6 * exact && scale >= exact {
            return len.scale(p as i64)?.floor_div(&DimExpr::int(q));
        }
    }
    None
}

/// `Resize`'s sizes under `keep_aspect_ratio_policy` `not_larger` (`smallest`) or
/// `not_smaller`: one scale for every axis, the smallest (largest) of `sizes[i] / in[i]`,
/// and each size `round(scale * in[i])`, half away from zero. Computed exactly, for
/// constant sizes only. ONNX Runtime computes in `float`: a product exactly halfway
/// between two sizes rounds up only where `float` holds the scale and the product
/// exactly (a scale whose reduced denominator is a power of two); elsewhere it is left
/// open.
fn keep_aspect_ratio(ins: &[DimExpr], sizes: &[DimExpr], smallest: bool) -> Option<Vec<i64>> {
    let ins: Vec<i64> = ins.iter().map(DimExpr::as_int).collect::<Option<_>>()?;
    let sizes: Vec<i64> = sizes.iter().map(DimExpr::as_int).collect::<Option<_>>()?;
    if ins.iter().chain(&sizes).any(|&v| v <= 0) {
        return None;
    }
    // The scale p / q.
    let (mut p, mut q) = (sizes[0], ins[0]);
    for (&s, &n) in sizes.iter().zip(&ins).skip(1) {
        let below = i128::from(s) * i128::from(q) < i128::from(p) * i128::from(n);
        if below == smallest {
            (p, q) = (s, n);
        }
    }
    ins.iter()
        .map(|&n| {
            let num = i128::from(p) * i128::from(n);
            let q = i128::from(q);
            if 2 * (num % q) == q {
                let reduced = q / gcd(i128::from(p), q);
                if !(reduced.count_ones() == 1 && num < 1 << 24) {
                    return None;
                }
            }
            i64::try_from((2 * num + q) / (2 * q)).ok()
        })
        .collect()
}

fn gcd(mut a: i128, mut b: i128) -> i128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.abs()
}

fn resize(cx: &NodeCx<'_>, upsample: bool) -> OpResult {
    let x = need_dims(cx, 0)?;
    let policy = cx.attr_s("keep_aspect_ratio_policy").unwrap_or("stretch");
    let axes: Vec<usize> = match cx.attr_ints("axes") {
        Some(a) if !a.is_empty() => a
            .iter()
            .map(|&v| axis(v, x.len()))
            .collect::<Result<_, _>>()?,
        _ => (0..x.len()).collect(),
    };
    let (scales_at, sizes_at) = if upsample { (1, usize::MAX) } else { (2, 3) };
    let mut dims = x.to_vec();
    if cx.has_input(sizes_at) && cx.input(sizes_at).and_then(Fact::const_len) != Some(0) {
        let sizes = cx
            .ints(sizes_at)
            .ok_or_else(|| cx.unknown_values(sizes_at))?;
        if sizes.len() != axes.len() {
            return Err(bad("sizes of another length"));
        }
        match policy {
            "stretch" => {
                for (&a, s) in axes.iter().zip(sizes) {
                    dims[a] = Some(s.clone());
                }
            }
            "not_larger" | "not_smaller" => {
                let ins: Option<Vec<DimExpr>> = axes.iter().map(|&a| x[a].clone()).collect();
                let sized =
                    ins.and_then(|ins| keep_aspect_ratio(&ins, sizes, policy == "not_larger"));
                for (k, &a) in axes.iter().enumerate() {
                    dims[a] = sized.as_ref().map(|s| DimExpr::int(s[k]));
                }
            }
            _ => return Err(bad("an unknown keep_aspect_ratio_policy")),
        }
        return Ok(vec![Fact::shaped(dims, cx.same_elem())]);
    }
    let scales: Vec<f64> = if upsample && !cx.has_input(1) {
        cx.attr_floats("scales")
            .ok_or_else(|| bad("no scales"))?
            .iter()
            .map(|&f| f64::from(f))
            .collect()
    } else {
        cx.input(scales_at)
            .and_then(|f| f.floats.clone())
            .ok_or_else(|| cx.unknown_values(scales_at))?
    };
    if scales.len() != axes.len() {
        return Err(bad("scales of another length"));
    }
    for (&a, &s) in axes.iter().zip(&scales) {
        dims[a] = dims[a].as_ref().and_then(|len| scaled(len, s));
    }
    Ok(vec![Fact::shaped(dims, cx.same_elem())])
}

/// Dims with `axes` reduced: kept as 1, or removed.
fn reduced(d: &[Option<DimExpr>], axes: &[usize], keep: bool) -> Dims {
    d.iter()
        .enumerate()
        .filter_map(|(k, x)| match (axes.contains(&k), keep) {
            (false, _) => Some(x.clone()),
            (true, true) => Some(int(1)),
            (true, false) => None,
        })
        .collect()
}

fn reduce(cx: &NodeCx<'_>, op: &str) -> OpResult {
    let d = need_dims(cx, 0)?;
    let keep = cx.attr_i("keepdims").unwrap_or(1) != 0;
    let axes = cx.ints_from(1, "axes")?.unwrap_or_default();
    let axes: Vec<usize> = if axes.is_empty() {
        if cx.attr_i("noop_with_empty_axes").unwrap_or(0) != 0 {
            return Ok(vec![Fact::shaped(d.to_vec(), cx.same_elem())]);
        }
        (0..d.len()).collect()
    } else {
        axes.iter()
            .map(|&a| axis(a, d.len()))
            .collect::<Result<_, _>>()?
    };
    let mut f = Fact::shaped(reduced(d, &axes, keep), cx.same_elem());
    // The product of a shape (`ReduceProd(Shape(x))`) is an element count.
    if op == "ReduceProd"
        && d.len() == 1
        && let Some(v) = cx.ints(0)
    {
        f.ints = v
            .iter()
            .try_fold(DimExpr::int(1), |acc, x| acc.mul(x))
            .map(|p| vec![p]);
    }
    Ok(vec![f])
}

fn top_k(cx: &NodeCx<'_>) -> OpResult {
    let d = need_dims(cx, 0)?;
    let a = axis(cx.attr_i("axis").unwrap_or(-1), d.len())?;
    let k = if cx.has_input(1) {
        cx.ints(1)
            .and_then(|v| v.first().cloned())
            .ok_or_else(|| cx.unknown_values(1))?
    } else {
        DimExpr::int(cx.attr_i("k").ok_or_else(|| bad("no k"))?)
    };
    let mut dims = d.to_vec();
    dims[a] = Some(k);
    Ok(vec![
        Fact::shaped(dims.clone(), cx.same_elem()),
        Fact::shaped(dims, INT64),
    ])
}

/// `LSTM`, `GRU`, `RNN`: `Y` and the last hidden (and cell) state.
fn recurrent(cx: &NodeCx<'_>, op: &str) -> OpResult {
    let x = need_dims(cx, 0)?;
    if x.len() != 3 {
        return Err(bad("X not of rank 3"));
    }
    let hidden = int(cx
        .attr_i("hidden_size")
        .ok_or_else(|| bad("no hidden_size"))?);
    let dirs = int(if cx.attr_s("direction") == Some("bidirectional") {
        2
    } else {
        1
    });
    let batch_first = cx.attr_i("layout").unwrap_or(0) == 1;
    let (seq, batch) = if batch_first {
        (&x[1], &x[0])
    } else {
        (&x[0], &x[1])
    };
    let (y, state) = if batch_first {
        (
            vec![batch.clone(), seq.clone(), dirs.clone(), hidden.clone()],
            vec![batch.clone(), dirs, hidden],
        )
    } else {
        (
            vec![seq.clone(), dirs.clone(), batch.clone(), hidden.clone()],
            vec![dirs, batch.clone(), hidden],
        )
    };
    let elem = cx.same_elem();
    let mut out = vec![Fact::shaped(y, elem), Fact::shaped(state.clone(), elem)];
    if op == "LSTM" {
        out.push(Fact::shaped(state, elem));
    }
    Ok(out)
}

/// ONNX's `Attention` (opset 23): `Y` of the query's layout, with the value's head size;
/// the present key and value (always 4-D) append the new positions to the past ones, and
/// the `Q K^T` output is `[batch, q_heads, q_sequence, past + kv_sequence]`.
fn onnx_attention(cx: &NodeCx<'_>) -> OpResult {
    let q = need_dims(cx, 0)?;
    let k = need_dims(cx, 1)?;
    let v = need_dims(cx, 2)?;
    // An operand as `[batch, heads, sequence, head]`: 4-D as it is, 3-D
    // `[batch, sequence, heads * head]` with the heads an attribute gives.
    let per_head = |d: &[Option<DimExpr>], heads: &str| -> Result<Dims, StopReason> {
        match d.len() {
            4 => Ok(d.to_vec()),
            3 => {
                let h = cx
                    .attr_i(heads)
                    .filter(|&h| h > 0)
                    .ok_or_else(|| bad(&format!("no {heads}")))?;
                let head = d[2].as_ref().and_then(|x| x.floor_div(&DimExpr::int(h)));
                Ok(vec![d[0].clone(), int(h), d[1].clone(), head])
            }
            _ => Err(bad("an operand not of rank 3 or 4")),
        }
    };
    let (q4, k4, v4) = (
        per_head(q, "q_num_heads")?,
        per_head(k, "kv_num_heads")?,
        per_head(v, "kv_num_heads")?,
    );
    let y: Dims = if q.len() == 4 {
        vec![q4[0].clone(), q4[1].clone(), q4[2].clone(), v4[3].clone()]
    } else {
        let hidden = q4[1]
            .as_ref()
            .zip(v4[3].as_ref())
            .and_then(|(h, d)| h.mul(d));
        vec![q4[0].clone(), q4[2].clone(), hidden]
    };
    // The past and the new positions, when a past is given; the new ones otherwise.
    let total = match cx.dims(4) {
        Some(p) if p.len() == 4 => p[2]
            .as_ref()
            .zip(k4[2].as_ref())
            .and_then(|(a, b)| a.add(b)),
        Some(_) => None,
        None if cx.has_input(4) => None,
        None => k4[2].clone(),
    };
    let elem = cx.same_elem();
    Ok(vec![
        Fact::shaped(y, elem),
        Fact::shaped(
            vec![k4[0].clone(), k4[1].clone(), total.clone(), k4[3].clone()],
            elem,
        ),
        Fact::shaped(
            vec![v4[0].clone(), v4[1].clone(), total.clone(), v4[3].clone()],
            elem,
        ),
        Fact::shaped(
            vec![q4[0].clone(), q4[1].clone(), q4[2].clone(), total],
            elem,
        ),
    ])
}

/// `com.microsoft:Attention`: `[batch, sequence, v_hidden]`, and the present state
/// `[2, batch, heads, past + sequence, head]` when a past is given.
fn ms_attention(cx: &NodeCx<'_>) -> OpResult {
    let x = need_dims(cx, 0)?;
    let w = need_dims(cx, 1)?;
    if x.len() != 3 || w.len() != 2 {
        return Err(bad("input not of rank 3 or weights not of rank 2"));
    }
    let v_hidden = match cx.attr_ints("qkv_hidden_sizes") {
        Some(s) if s.len() == 3 => int(s[2]),
        _ => w[1].as_ref().and_then(|h| h.floor_div(&DimExpr::int(3))),
    };
    let mut out = vec![Fact::shaped(
        vec![x[0].clone(), x[1].clone(), v_hidden],
        cx.same_elem(),
    )];
    if let Some(p) = cx.dims(4).filter(|p| p.len() == 5) {
        let len = p[3].as_ref().zip(x[1].as_ref()).and_then(|(a, b)| a.add(b));
        out.push(Fact::shaped(
            vec![p[0].clone(), p[1].clone(), p[2].clone(), len, p[4].clone()],
            cx.same_elem(),
        ));
    }
    Ok(out)
}

/// `com.microsoft:MultiHeadAttention`: `[batch, sequence, v_hidden]`, and present key and
/// value `[batch, heads, past + kv_sequence, head]`.
fn multi_head_attention(cx: &NodeCx<'_>) -> OpResult {
    let q = need_dims(cx, 0)?;
    if q.len() != 3 {
        return Err(bad("a packed query layout"));
    }
    let heads = cx.attr_i("num_heads").ok_or_else(|| bad("no num_heads"))?;
    let v_hidden = match cx.dims(2) {
        Some(v) if v.len() == 3 => v[2].clone(),
        Some(v) if v.len() == 4 => v[1].as_ref().zip(v[3].as_ref()).and_then(|(a, b)| a.mul(b)),
        _ => q[2].clone(),
    };
    let mut out = vec![Fact::shaped(
        vec![q[0].clone(), q[1].clone(), v_hidden],
        cx.same_elem(),
    )];
    let kv_len = match cx.dims(1) {
        Some(k) if k.len() == 3 => k[1].clone(),
        Some(k) if k.len() == 4 => k[2].clone(),
        _ => None,
    };
    let head = q[2]
        .as_ref()
        .and_then(|d| d.floor_div(&DimExpr::int(heads)));
    for past_at in [6, 7] {
        let past = cx.dims(past_at).filter(|p| p.len() == 4);
        let len = match past {
            Some(p) => p[2]
                .as_ref()
                .zip(kv_len.as_ref())
                .and_then(|(a, b)| a.add(b)),
            None => kv_len.clone(),
        };
        out.push(Fact::shaped(
            vec![q[0].clone(), int(heads), len, head.clone()],
            cx.same_elem(),
        ));
    }
    Ok(out)
}

/// `com.microsoft:GroupQueryAttention`: `[batch, sequence, heads * head]`; the present key
/// and value keep the past buffer's length when it is shared with them (their length is
/// read from `total_sequence_length`, a value, otherwise).
fn group_query_attention(cx: &NodeCx<'_>) -> OpResult {
    let q = need_dims(cx, 0)?;
    if q.len() != 3 {
        return Err(bad("query not of rank 3"));
    }
    let heads = cx.attr_i("num_heads").ok_or_else(|| bad("no num_heads"))?;
    let kv_heads = cx
        .attr_i("kv_num_heads")
        .ok_or_else(|| bad("no kv_num_heads"))?;
    let packed = !cx.has_input(1);
    let parts = if packed { heads + 2 * kv_heads } else { heads };
    let head = q[2]
        .as_ref()
        .and_then(|d| d.floor_div(&DimExpr::int(parts)));
    let hidden = head.as_ref().and_then(|h| h.scale(heads));
    let mut out = vec![Fact::shaped(
        vec![q[0].clone(), q[1].clone(), hidden],
        cx.same_elem(),
    )];
    for past_at in [3, 4] {
        // The present length is max(past, total_sequence_length), a value.
        let len = match (
            cx.dims(past_at),
            cx.ints(6).and_then(|v| v.first().cloned()),
        ) {
            (Some(p), Some(total)) if p.len() == 4 => {
                p[2].as_ref().and_then(|p| p.max_with(&total))
            }
            _ => None,
        };
        out.push(Fact::shaped(
            vec![q[0].clone(), int(kv_heads), len, head.clone()],
            cx.same_elem(),
        ));
    }
    Ok(out)
}
