//! Edges between the models of a pipeline, checked before any code is generated: an
//! upstream model's output (or an input both models read, such as a source mask) is the
//! downstream model's input, so the two must agree on element type, rank and every size
//! either fixes, and a named size of one is the other's (shown in the generated docs).
//!
//! Edges are declared by name or found where the names say so (see [`infer_source`]); a
//! decoder's inputs held for a sequence must each be fed.

use crate::check::closest;
use crate::element::ElementType;
use crate::shapes::DimExpr;
use crate::sig::{Dim, ModelSignature};

use super::DecoderPlan;

/// One model of a pipeline.
#[derive(Debug, Clone, Copy)]
pub struct PipelineModel<'a> {
    /// Its name in the pipeline (the generated module's name).
    pub name: &'a str,
    /// Its signature.
    pub sig: &'a ModelSignature,
    /// Its decoder roles, when it is a decoder (alone, or with a head model: `head`).
    pub decoder: Option<&'a DecoderPlan>,
    /// The head model that turns its hidden states into logits, for a decoder split
    /// before its language-model head.
    pub head: Option<&'a HeadPlan>,
}

/// The pipeline's models from each one's name, signature and decoder plan, with the split
/// decoders [`split_decoders`] found (`joined`) in place of their bodies' missing plans.
pub fn pipeline_models<'a>(
    names: &'a [String],
    sigs: &[&'a ModelSignature],
    plans: &[Option<&'a DecoderPlan>],
    joined: &'a [Option<(DecoderPlan, HeadPlan)>],
) -> Vec<PipelineModel<'a>> {
    (0..names.len())
        .map(|i| PipelineModel {
            name: &names[i],
            sig: sigs[i],
            decoder: plans[i].or(joined[i].as_ref().map(|(d, _)| d)),
            head: joined[i].as_ref().map(|(_, h)| h),
        })
        .collect()
}

/// The head of a decoder split before its language-model head: a later model that takes
/// the body's hidden states and returns the logits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeadPlan {
    /// The head model's position in the pipeline.
    pub model: usize,
    /// The body's output the head reads (`hidden_states`).
    pub from: String,
    /// The head's input (the same name).
    pub input: String,
    /// The hidden states' element type.
    pub elem: ElementType,
    /// Their hidden size (the fixed last axis).
    pub hidden: u64,
    /// The head's logits output.
    pub logits: String,
}

/// For each model that is not a decoder alone: the decoder it is with a later model as
/// its head (that model takes one of its outputs, `[batch, sequence, hidden]`, and returns
/// `logits`), planned as one decoder whose logits the head computes.
pub fn split_decoders(
    sigs: &[&ModelSignature],
    plans: &[Option<&DecoderPlan>],
) -> Vec<Option<(DecoderPlan, HeadPlan)>> {
    let mut out = vec![None; sigs.len()];
    for (b, body) in sigs.iter().enumerate() {
        if plans[b].is_some() {
            continue;
        }
        for (h, head) in sigs.iter().enumerate().skip(b + 1) {
            let (Some(logits), [input]) = (head.output("logits"), head.inputs.as_slice()) else {
                continue;
            };
            let Some(from) = body.output(&input.name) else {
                continue;
            };
            let Some((elem, Some([_, _, Dim::Fixed(hidden)]))) = from.tensor() else {
                continue;
            };
            let mut joined = (*body).clone();
            joined.outputs.retain(|o| o.name != from.name);
            joined.outputs.insert(0, logits.clone());
            joined.inferred.clear();
            if let Ok(Some(plan)) = super::plan_decoder(&joined, None) {
                out[b] = Some((
                    plan,
                    HeadPlan {
                        model: h,
                        from: from.name.clone(),
                        input: input.name.clone(),
                        elem,
                        hidden: *hidden,
                        logits: logits.name.clone(),
                    },
                ));
                break;
            }
        }
    }
    out
}

/// An edge as declared: `from_model.from -> to_model.to`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EdgeDecl {
    /// The upstream model.
    pub from_model: String,
    /// Its output (or input).
    pub from: String,
    /// The downstream model.
    pub to_model: String,
    /// Its input.
    pub to: String,
    /// Declared `as view`: the input reads the source's elements in its own shape (the
    /// same element type and count; axes are not matched).
    pub view: bool,
}

/// A checked edge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedEdge {
    /// The upstream model's position in the pipeline.
    pub from_model: usize,
    /// Its output (or input).
    pub from: String,
    /// Whether `from` is an output (else an input the upstream model reads too).
    pub from_output: bool,
    /// The downstream model's position.
    pub to_model: usize,
    /// Its input.
    pub to: String,
    /// Whether the names made it (no declaration).
    pub inferred: bool,
    /// Declared `as view` (see [`EdgeDecl::view`]).
    pub view: bool,
    /// Each axis of `to` as the upstream model sizes it (`floor((num_frames + 1) / 2)`),
    /// for the docs.
    pub sizes: String,
}

/// Why a pipeline cannot be made; `edge` is the declared edge at fault, if one is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PipelineError {
    /// The declared edge the error is about (its index), if any.
    pub edge: Option<usize>,
    /// What is wrong, in the models' terms.
    pub message: String,
}

impl std::fmt::Display for PipelineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for PipelineError {}

fn fail(edge: Option<usize>, message: String) -> PipelineError {
    PipelineError { edge, message }
}

/// An axis as one side of an edge sees it: fixed, named, or an expression of the model's
/// input dims (an output shape inference sized).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Size {
    Fixed(u64),
    Named(String),
    Expr(DimExpr),
    Open,
}

impl std::fmt::Display for Size {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Size::Fixed(n) => write!(f, "{n}"),
            Size::Named(n) => f.write_str(n),
            Size::Expr(e) => write!(f, "{e}"),
            Size::Open => f.write_str("?"),
        }
    }
}

/// Element type and sizes of `name` in `m` (an output's sizes as shape inference computed
/// them where it did).
fn value(m: &PipelineModel<'_>, name: &str, output: bool) -> Option<(ElementType, Vec<Size>)> {
    let (list, index) = if output {
        (
            &m.sig.outputs,
            m.sig.outputs.iter().position(|v| v.name == name)?,
        )
    } else {
        (
            &m.sig.inputs,
            m.sig.inputs.iter().position(|v| v.name == name)?,
        )
    };
    let (elem, dims) = list[index].tensor()?;
    let dims = dims?;
    let inferred = if output {
        m.sig.inferred.get(index).and_then(|s| s.dims.as_ref())
    } else {
        None
    };
    let sizes = dims
        .iter()
        .enumerate()
        .map(
            |(axis, d)| match (d, inferred.and_then(|i| i.get(axis)).cloned().flatten()) {
                (Dim::Fixed(n), _) => Size::Fixed(*n),
                (_, Some(e)) => match (e.as_int(), e.as_sym()) {
                    (Some(n), _) if n >= 0 => Size::Fixed(n as u64),
                    (_, Some(s)) => Size::Named(s.to_owned()),
                    _ => Size::Expr(e),
                },
                (Dim::Named(n), None) => Size::Named(n.clone()),
                _ => Size::Open,
            },
        )
        .collect();
    Some((elem, sizes))
}

/// Checks one edge; returns the sizes note.
fn check_edge(
    models: &[PipelineModel<'_>],
    decl: &EdgeDecl,
    at: Option<usize>,
) -> Result<PlannedEdge, PipelineError> {
    let find = |name: &str| {
        models.iter().position(|m| m.name == name).ok_or_else(|| {
            let mut message = format!("the pipeline has no model `{name}`");
            if let Some(best) = closest(name, models.iter().map(|m| m.name)) {
                message.push_str(&format!("; did you mean `{best}`?"));
            }
            fail(at, message)
        })
    };
    let (a, b) = (find(&decl.from_model)?, find(&decl.to_model)?);
    let (up, down) = (&models[a], &models[b]);
    let edge = format!(
        "`{}.{}` -> `{}.{}`",
        decl.from_model, decl.from, decl.to_model, decl.to
    );
    if a == b {
        return Err(fail(
            at,
            format!(
                "{edge} joins model `{}` to itself; an edge goes from one model to another (a model's own recurrent state is `feed_back`)",
                up.name
            ),
        ));
    }
    if down.sig.input(&decl.to).is_none() {
        let message = if down.sig.output(&decl.to).is_some() {
            format!(
                "{edge} goes the wrong way: `{}` is an output of `{}`; an edge goes from an output of one model to an input of another",
                decl.to, down.name
            )
        } else {
            let mut m = format!("model `{}` has no input `{}`", down.name, decl.to);
            if let Some(best) = closest(&decl.to, down.sig.inputs.iter().map(|v| v.name.as_str())) {
                m.push_str(&format!("; did you mean `{best}`?"));
            }
            m
        };
        return Err(fail(at, message));
    }
    let from_output = up.sig.output(&decl.from).is_some();
    if !from_output && up.sig.input(&decl.from).is_none() {
        let mut m = format!("model `{}` has no output `{}`", up.name, decl.from);
        let names = up
            .sig
            .outputs
            .iter()
            .chain(&up.sig.inputs)
            .map(|v| v.name.as_str());
        if let Some(best) = closest(&decl.from, names) {
            m.push_str(&format!("; did you mean `{best}`?"));
        }
        return Err(fail(at, m));
    }
    let (Some((fe, fs)), Some((te, ts))) = (
        value(up, &decl.from, from_output),
        value(down, &decl.to, false),
    ) else {
        return Err(fail(
            at,
            format!("{edge}: both ends must be tensors with a declared shape"),
        ));
    };
    let show = |s: &[Size]| {
        format!(
            "[{}]",
            s.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    if fe != te {
        return Err(fail(
            at,
            format!(
                "{edge}: `{}` is {fe}{} but `{}` takes {te}{}",
                decl.from,
                show(&fs),
                decl.to,
                show(&ts)
            ),
        ));
    }
    let planned = |sizes: String| PlannedEdge {
        from_model: a,
        from: decl.from.clone(),
        from_output,
        to_model: b,
        to: decl.to.clone(),
        inferred: at.is_none(),
        view: decl.view,
        sizes,
    };
    if decl.view {
        let count = |s: &[Size]| {
            s.iter().try_fold(1u64, |n, d| match d {
                Size::Fixed(x) => n.checked_mul(*x),
                _ => None,
            })
        };
        if let (Some(x), Some(y)) = (count(&fs), count(&ts))
            && x != y
        {
            return Err(fail(
                at,
                format!(
                    "{edge}: a view holds the same elements, but `{}` has {x} ({fe}{}) and `{}` takes {y} ({te}{})",
                    decl.from,
                    show(&fs),
                    decl.to,
                    show(&ts)
                ),
            ));
        }
        return Ok(planned(format!(
            "a view: {} read as {}",
            show(&fs),
            show(&ts)
        )));
    }
    if fs.len() != ts.len() {
        return Err(fail(
            at,
            format!(
                "{edge}: ranks differ: `{}` is {fe}{} but `{}` takes {te}{}",
                decl.from,
                show(&fs),
                decl.to,
                show(&ts)
            ),
        ));
    }
    for (axis, (f, t)) in fs.iter().zip(&ts).enumerate() {
        if let (Size::Fixed(x), Size::Fixed(y)) = (f, t)
            && x != y
        {
            return Err(fail(
                at,
                format!(
                    "{edge}: axis {axis} is {x} on `{}` but {y} on `{}` ({} vs {})",
                    decl.from,
                    decl.to,
                    show(&fs),
                    show(&ts)
                ),
            ));
        }
    }
    let sizes = ts
        .iter()
        .zip(&fs)
        .filter(|(t, f)| t != f)
        .map(|(t, f)| format!("`{t}` = `{f}`"))
        .collect::<Vec<_>>()
        .join(", ");
    Ok(planned(sizes))
}

/// The upstream value the names say feeds input `to` of a downstream model: an output of
/// the same name; `present...` for `past...` (`present_key_cross_0` feeds
/// `past_key_cross_0`); an encoder's hidden states under its exporters' names
/// (`last_hidden_state`, `encoder_outputs`) for `encoder_hidden_states`; and an input of
/// the same name without `encoder_` (`attention_mask` for `encoder_attention_mask`).
pub fn infer_source(up: &ModelSignature, to: &str) -> Option<(String, bool)> {
    let mut outputs = vec![to.to_owned()];
    if let Some(rest) = to.strip_prefix("past") {
        outputs.push(format!("present{rest}"));
    }
    if to == "encoder_hidden_states" {
        outputs.extend(["last_hidden_state", "encoder_outputs", "hidden_states"].map(String::from));
    }
    if let Some(found) = outputs.into_iter().find(|n| up.output(n).is_some()) {
        return Some((found, true));
    }
    let stem = to.strip_prefix("encoder_")?;
    up.input(stem).map(|_| (stem.to_owned(), false))
}

/// Checks the declared edges, then adds the edges the names imply for every input of a
/// later model that no declared edge feeds (from the nearest earlier model that has a
/// source for it), and checks that every input a decoder holds for a sequence is fed and
/// that the models form no cycle.
pub fn plan_pipeline(
    models: &[PipelineModel<'_>],
    declared: &[EdgeDecl],
) -> Result<Vec<PlannedEdge>, PipelineError> {
    let mut names: Vec<&str> = Vec::new();
    for m in models {
        if names.contains(&m.name) {
            return Err(fail(None, format!("two models are named `{}`", m.name)));
        }
        names.push(m.name);
    }
    let mut edges = Vec::new();
    for (i, decl) in declared.iter().enumerate() {
        let edge = check_edge(models, decl, Some(i))?;
        if let Some(other) = edges
            .iter()
            .find(|e: &&PlannedEdge| e.to_model == edge.to_model && e.to == edge.to)
        {
            return Err(fail(
                Some(i),
                format!(
                    "`{}.{}` is fed twice (by `{}.{}` and `{}.{}`); an input takes one value",
                    decl.to_model,
                    decl.to,
                    models[other.from_model].name,
                    other.from,
                    decl.from_model,
                    decl.from
                ),
            ));
        }
        edges.push(edge);
    }
    inferred_edges(models, &mut edges)?;
    if let Some((a, b)) = cycle(models.len(), &edges) {
        return Err(fail(
            None,
            format!(
                "the edges make a cycle through `{}` and `{}`: data flows one way, from earlier models to later ones",
                models[a].name, models[b].name
            ),
        ));
    }
    for (b, m) in models.iter().enumerate() {
        let Some(d) = m.decoder else { continue };
        for c in d.context.iter().filter(|c| c.present.is_none()) {
            if !edges.iter().any(|e| e.to_model == b && e.to == c.name) {
                return Err(fail(
                    None,
                    format!(
                        "decoder `{}` holds `{}` for a sequence, but no edge feeds it; declare one: `<model>.<output> -> {}.{}`",
                        m.name, c.name, m.name, c.name
                    ),
                ));
            }
        }
    }
    Ok(edges)
}

/// Adds the edges the names imply (see [`infer_source`]) for inputs of later models that
/// no edge feeds yet; a decoder's own roles (ids, mask, positions, cache, scalars) are its
/// loop's business and are never fed.
fn inferred_edges(
    models: &[PipelineModel<'_>],
    edges: &mut Vec<PlannedEdge>,
) -> Result<(), PipelineError> {
    for (b, down) in models.iter().enumerate().skip(1) {
        for input in &down.sig.inputs {
            if edges.iter().any(|e| e.to_model == b && e.to == input.name) {
                continue;
            }
            if let Some(d) = down.decoder
                && !d
                    .context
                    .iter()
                    .any(|c| c.name == input.name && c.present.is_none())
            {
                continue;
            }
            let Some((a, (from, _))) = (0..b)
                .rev()
                .find_map(|a| infer_source(models[a].sig, &input.name).map(|s| (a, s)))
            else {
                continue;
            };
            let decl = EdgeDecl {
                from_model: models[a].name.to_owned(),
                from,
                to_model: down.name.to_owned(),
                to: input.name.clone(),
                view: false,
            };
            edges.push(check_edge(models, &decl, None)?);
        }
    }
    Ok(())
}

/// Two models on a cycle of edges, if there is one.
fn cycle(n: usize, edges: &[PlannedEdge]) -> Option<(usize, usize)> {
    // Depth-first search with colours; 1: on the stack, 2: done.
    fn visit(v: usize, edges: &[PlannedEdge], colour: &mut [u8]) -> Option<(usize, usize)> {
        colour[v] = 1;
        for e in edges.iter().filter(|e| e.from_model == v) {
            match colour[e.to_model] {
                1 => return Some((v, e.to_model)),
                0 => {
                    if let Some(c) = visit(e.to_model, edges, colour) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        colour[v] = 2;
        None
    }
    let mut colour = vec![0u8; n];
    (0..n).find_map(|v| {
        (colour[v] == 0)
            .then(|| visit(v, edges, &mut colour))
            .flatten()
    })
}

#[cfg(test)]
mod tests;
