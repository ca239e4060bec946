//! Control flow: `If`, `Loop` and `Scan`, whose nested graphs are walked in a scope over
//! the graph around them. An output is settled where every branch (or every iteration)
//! agrees on it.

use super::super::StopReason;
use super::super::expr::DimExpr;
use super::super::infer::{Fact, INT64, NodeCx, OpResult, Scope, constant_fact, walk};
use super::{Dims, axis, bad};
use crate::onnx::proto::GraphProto;

/// `Some` when `op` is one of this family's.
pub(super) fn infer(cx: &NodeCx<'_>, op: &str) -> Option<OpResult> {
    Some(match op {
        "If" => if_(cx),
        "Loop" => loop_(cx),
        "Scan" => scan(cx),
        _ => return None,
    })
}

/// The facts of `graph`'s outputs, its inputs given `inputs` (by position).
fn run_graph(cx: &NodeCx<'_>, graph: &GraphProto, inputs: Vec<Fact>) -> Vec<Fact> {
    let mut scope = Scope::new(Some(cx.scope));
    for t in &graph.initializer {
        scope.set(&t.name, constant_fact(t));
    }
    for (v, f) in graph.input.iter().zip(inputs) {
        scope.set(&v.name, f);
    }
    walk(graph, &mut scope, cx.opset, cx.nesting + 1);
    graph
        .output
        .iter()
        .map(|o| scope.get(&o.name).cloned().unwrap_or_default())
        .collect()
}

/// What two facts agree on: equal axes stay, others open; different ranks: unknown rank.
fn agree(a: &Fact, b: &Fact) -> Fact {
    let dims = match (&a.dims, &b.dims) {
        (Some(x), Some(y)) if x.len() == y.len() => Some(
            x.iter()
                .zip(y)
                .map(|(p, q)| if p == q { p.clone() } else { None })
                .collect(),
        ),
        _ => None,
    };
    Fact {
        dims,
        ints: (a.ints == b.ints).then(|| a.ints.clone()).flatten(),
        floats: None,
        elem: a.elem,
        stop: a.stop.clone().or_else(|| b.stop.clone()),
        data: a.data || b.data,
    }
}

fn graph_attr<'a>(cx: &'a NodeCx<'_>, name: &str) -> Result<&'a GraphProto, StopReason> {
    cx.attr(name)
        .and_then(|a| a.g.as_deref())
        .ok_or_else(|| bad(&format!("no `{name}` graph")))
}

fn if_(cx: &NodeCx<'_>) -> OpResult {
    let then = run_graph(cx, graph_attr(cx, "then_branch")?, Vec::new());
    let other = run_graph(cx, graph_attr(cx, "else_branch")?, Vec::new());
    // A constant condition picks its branch.
    if let Some(c) = cx.const_ints(0).and_then(|v| v.first().copied()) {
        return Ok(if c != 0 { then } else { other });
    }
    if then.len() != other.len() {
        return Err(bad("branches with different numbers of outputs"));
    }
    Ok(then.iter().zip(&other).map(|(a, b)| agree(a, b)).collect())
}

/// A scalar of type `elem`.
fn scalar(elem: i32) -> Fact {
    Fact::shaped(Vec::new(), elem)
}

fn loop_(cx: &NodeCx<'_>) -> OpResult {
    let body = graph_attr(cx, "body")?;
    let carried: Vec<Fact> = (2..cx.inputs.len())
        .map(|i| cx.input(i).cloned().unwrap_or_default())
        .collect();
    // The iteration number and the condition change from one iteration to the next:
    // sizes read from them are data-dependent.
    let mut inputs = vec![
        Fact {
            data: true,
            ..scalar(INT64)
        },
        Fact {
            data: true,
            ..scalar(9)
        },
    ];
    inputs.extend(carried.iter().cloned());
    let outs = run_graph(cx, body, inputs);
    let n = carried.len();
    if outs.len() < n + 1 {
        return Err(bad("a body with fewer outputs than carried values"));
    }
    // A carried value keeps what the first iteration and the body agree on.
    let mut facts: Vec<Fact> = carried
        .iter()
        .zip(&outs[1..=n])
        .map(|(a, b)| agree(a, b))
        .collect();
    for f in &mut facts {
        f.ints = None;
    }
    // Scan outputs stack one value per iteration: as many as the loop runs.
    for o in &outs[n + 1..] {
        let dims = o.dims.as_ref().map(|d| {
            let mut v: Dims = vec![None];
            v.extend(d.iter().cloned());
            v
        });
        facts.push(restacked(o, dims));
    }
    Ok(facts)
}

/// A body's output as the loop or scan gives it: `dims` (the body's with the iteration or
/// batch axes added), its type, stop and provenance; no elements (they differ per step).
fn restacked(o: &Fact, dims: Option<Dims>) -> Fact {
    Fact {
        dims,
        elem: o.elem,
        stop: o.stop.clone(),
        data: o.data,
        ..Fact::default()
    }
}

/// `num_scan_inputs`.
fn scan_inputs(cx: &NodeCx<'_>) -> Result<usize, StopReason> {
    usize::try_from(
        cx.attr_i("num_scan_inputs")
            .ok_or_else(|| bad("no num_scan_inputs"))?,
    )
    .map_err(|_| bad("num_scan_inputs"))
}

/// `Scan` before opset 9: every state and scan input has a batch axis first, and the
/// scan inputs their sequence axis second (after an optional first input, the sequence
/// lengths); the body sees one batch entry of each state, and one step of each scan
/// input. Final states have the batch axis again, scan outputs `[batch, sequence, ...]`.
fn scan8(cx: &NodeCx<'_>) -> OpResult {
    let body = graph_attr(cx, "body")?;
    let scans = scan_inputs(cx)?;
    let states = cx
        .inputs
        .len()
        .checked_sub(1 + scans)
        .ok_or_else(|| bad("fewer inputs than scan inputs"))?;
    // Input `i` without its first `n` axes, and those axes.
    let split = |i: usize, n: usize| -> (Fact, Option<Dims>) {
        let f = cx.input(i).cloned().unwrap_or_default();
        match &f.dims {
            Some(d) if d.len() >= n => {
                (Fact::shaped(d[n..].to_vec(), f.elem), Some(d[..n].to_vec()))
            }
            _ => (Fact::default(), None),
        }
    };
    let mut inputs = Vec::new();
    let mut batches = Vec::new();
    for i in 1..=states {
        let (f, lead) = split(i, 1);
        inputs.push(f);
        batches.push(lead);
    }
    let mut lead: Option<Dims> = None;
    for i in 1 + states..1 + states + scans {
        let (f, l) = split(i, 2);
        inputs.push(f);
        lead = lead.or(l);
    }
    let outs = run_graph(cx, body, inputs.clone());
    if outs.len() < states {
        return Err(bad("a body with fewer outputs than states"));
    }
    let prefixed = |lead: Option<&Dims>, f: Fact| -> Fact {
        let dims = match (lead, &f.dims) {
            (Some(l), Some(d)) => Some(l.iter().chain(d).cloned().collect()),
            _ => None,
        };
        restacked(&f, dims)
    };
    let mut facts: Vec<Fact> = (0..states)
        .map(|k| prefixed(batches[k].as_ref(), agree(&inputs[k], &outs[k])))
        .collect();
    for o in &outs[states..] {
        facts.push(prefixed(lead.as_ref(), o.clone()));
    }
    Ok(facts)
}

fn scan(cx: &NodeCx<'_>) -> OpResult {
    if cx.opset < 9 {
        return scan8(cx);
    }
    let body = graph_attr(cx, "body")?;
    let scans = scan_inputs(cx)?;
    let total = cx.inputs.len();
    let states = total
        .checked_sub(scans)
        .ok_or_else(|| bad("fewer inputs than scan inputs"))?;
    let axes_of = |name: &str, n: usize| -> Vec<i64> {
        match cx.attr_ints(name) {
            Some(a) if a.len() == n => a.to_vec(),
            _ => vec![0; n],
        }
    };
    let in_axes = axes_of("scan_input_axes", scans);
    let mut inputs: Vec<Fact> = (0..states)
        .map(|i| cx.input(i).cloned().unwrap_or_default())
        .collect();
    let mut length: Option<DimExpr> = None;
    for (k, &a) in in_axes.iter().enumerate() {
        let f = cx.input(states + k).cloned().unwrap_or_default();
        let slice = match &f.dims {
            Some(d) => {
                let at = axis(a, d.len())?;
                if length.is_none() {
                    length = d[at].clone();
                }
                let mut d = d.clone();
                d.remove(at);
                Fact::shaped(d, f.elem)
            }
            None => Fact::default(),
        };
        inputs.push(slice);
    }
    let outs = run_graph(cx, body, inputs.clone());
    if outs.len() < states {
        return Err(bad("a body with fewer outputs than states"));
    }
    let mut facts: Vec<Fact> = inputs[..states]
        .iter()
        .zip(&outs[..states])
        .map(|(a, b)| agree(a, b))
        .collect();
    let out_axes = axes_of("scan_output_axes", outs.len() - states);
    for (o, &a) in outs[states..].iter().zip(&out_axes) {
        let dims = match &o.dims {
            Some(d) => {
                let at = axis(a, d.len() + 1)?;
                let mut d = d.clone();
                d.insert(at, length.clone());
                Some(d)
            }
            None => None,
        };
        facts.push(restacked(o, dims));
    }
    Ok(facts)
}
