//! Recognising a decoder signature: which inputs carry the token ids, the attention mask
//! and the positions, which output is the logits, which inputs and outputs form the
//! cache, and what each cache axis is (batch, sequence, or a fixed size).
//!
//! Exporters follow a few conventions, all recognised by name:
//!
//! - `past_key_values.N.key` / `.value` -> `present.N.key` / `.value` (optimum,
//!   onnxruntime-genai's builder), or `present_key_values.N.*`;
//! - stacked `past_N` `[2, batch, heads, past, head]` -> `present_N` (old GPT-2 exports);
//! - `past_key_N` / `past_value_N` -> `present_key_N` / `present_value_N`;
//! - fixed-shape recurrent state, `past_conv.N` -> `present_conv.N` (hybrid models):
//!   any input `past<rest>` with an output `present<rest>`.
//!
//! [`DecoderNames`] names the roles where a model uses other names. The sequence axis of a
//! cache is the one whose dim differs between past (`past_sequence_length`) and present
//! (`total_sequence_length`): the planner knows that total = past + new, so no user ever
//! sets a length; in the shared-buffer mode the same axis holds the capacity on both
//! sides while the mask holds the real length, which the plan expresses by role rather
//! than by dim name.

use crate::dtype::ElementType;
use crate::signature::{Dim, ModelSignature, ValueInfo, format_dims};

use super::PlanError;

/// Names of a decoder's roles, for models that do not follow the usual conventions; also
/// makes recognising the decoder mandatory (a model that does not fit is an error).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DecoderNames {
    /// The token ids input (default `input_ids`).
    pub input_ids: Option<String>,
    /// The attention mask input (default `attention_mask`, if the model has it).
    pub attention_mask: Option<String>,
    /// The position ids input (default `position_ids`, if the model has it).
    pub position_ids: Option<String>,
    /// The logits output (default `logits`).
    pub logits: Option<String>,
    /// `(past input, present output)` pairs beyond those found by name.
    pub caches: Vec<(String, String)>,
}

/// A role of a decoder's inputs and outputs that [`DecoderNames`] can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecoderRole {
    /// The token ids (`input_ids`).
    InputIds,
    /// The attention mask (`attention_mask`).
    AttentionMask,
    /// The position ids (`position_ids`).
    PositionIds,
    /// The logits (`logits`).
    Logits,
}

impl DecoderRole {
    /// The role named as in options and macros (`input_ids`, `attention_mask`,
    /// `position_ids`, `logits`).
    pub fn from_name(name: &str) -> Option<DecoderRole> {
        Some(match name {
            "input_ids" => DecoderRole::InputIds,
            "attention_mask" => DecoderRole::AttentionMask,
            "position_ids" => DecoderRole::PositionIds,
            "logits" => DecoderRole::Logits,
            _ => return None,
        })
    }
}

/// A recognised decoder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecoderPlan {
    /// The token ids input and its element type.
    pub input_ids: (String, ElementType),
    /// The attention mask input, if any.
    pub attention_mask: Option<(String, ElementType)>,
    /// The position ids input, if any.
    pub position_ids: Option<(String, ElementType)>,
    /// The logits output.
    pub logits: String,
    /// The logits' element type.
    pub logits_elem: ElementType,
    /// The vocabulary size (the logits' fixed last axis).
    pub vocab: u64,
    /// The cache pairs, in input order.
    pub caches: Vec<CachePlan>,
    /// Outputs with no role (ONNX Runtime allocates them).
    pub other_outputs: Vec<String>,
    /// Whether every growing cache is written in place (the shared-buffer mode).
    pub shared_buffer: bool,
}

/// One past/present pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachePlan {
    /// The input.
    pub past: String,
    /// The output.
    pub present: String,
    /// Element type of both.
    pub elem: ElementType,
    /// What each axis holds.
    pub axes: Vec<CacheAxis>,
}

/// What one cache axis holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheAxis {
    /// The batch.
    Batch,
    /// The sequence (past length on the input, past + new on the output).
    Sequence,
    /// A size the model fixes.
    Fixed(u64),
}

impl CachePlan {
    /// Whether the cache grows with the sequence (a key/value cache).
    pub fn grows(&self) -> bool {
        self.axes.contains(&CacheAxis::Sequence)
    }
}

fn error(reason: impl Into<String>) -> PlanError {
    PlanError::Decoder(reason.into())
}

/// The output a cache input pairs with by the exporters' conventions.
fn present_candidates(past: &str) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(rest) = past.strip_prefix("past_key_values") {
        out.push(format!("present{rest}"));
        out.push(format!("present_key_values{rest}"));
    } else if let Some(rest) = past.strip_prefix("past") {
        out.push(format!("present{rest}"));
    }
    out
}

fn tensor<'a>(v: &'a ValueInfo, role: &str) -> Result<(ElementType, &'a [Dim]), PlanError> {
    match v.tensor() {
        Some((elem, Some(dims))) => Ok((elem, dims)),
        Some((_, None)) => Err(error(format!(
            "{role} `{}` declares no shape; the decoder needs its rank",
            v.name
        ))),
        None => Err(error(format!(
            "{role} `{}` is {}, not a tensor",
            v.name, v.kind
        ))),
    }
}

fn index_input(
    sig: &ModelSignature,
    name: &str,
    role: &str,
) -> Result<(String, ElementType), PlanError> {
    let v = sig
        .input(name)
        .ok_or_else(|| error(format!("the model has no {role} input `{name}`")))?;
    let (elem, dims) = tensor(v, role)?;
    if !matches!(elem, ElementType::I64 | ElementType::I32) {
        return Err(error(format!(
            "{role} `{name}` is {elem}; the decoder writes int64 or int32 there"
        )));
    }
    if dims.len() != 2 {
        return Err(error(format!(
            "{role} `{name}` is {elem}{}; the decoder expects [batch, sequence]",
            format_dims(Some(dims))
        )));
    }
    Ok((name.to_owned(), elem))
}

/// Recognises a decoder in `sig`. `Ok(None)`: the model is not a decoder (no token ids,
/// logits and cache by the conventions) and none was asked for (`names` is `None`).
pub fn plan_decoder(
    sig: &ModelSignature,
    names: Option<&DecoderNames>,
) -> Result<Option<DecoderPlan>, PlanError> {
    let asked = names.is_some();
    let names = names.cloned().unwrap_or_default();
    let ids_name = names.input_ids.as_deref().unwrap_or("input_ids");
    let logits_name = names.logits.as_deref().unwrap_or("logits");
    let mut pairs: Vec<(String, String)> = names.caches.clone();
    for input in &sig.inputs {
        if pairs.iter().any(|(p, _)| *p == input.name) {
            continue;
        }
        if let Some(present) = present_candidates(&input.name)
            .into_iter()
            .find(|c| sig.output(c).is_some())
        {
            pairs.push((input.name.clone(), present));
        }
    }
    let looks_like_one =
        sig.input(ids_name).is_some() && sig.output(logits_name).is_some() && !pairs.is_empty();
    if !asked && !looks_like_one {
        return Ok(None);
    }
    if pairs.is_empty() {
        return Err(error(
            "no cache pair found (an input `past...` with an output `present...`; pairs under other names: `decoder_cache` in `bindings!` or `ModelOptions`)",
        ));
    }
    for (i, (past, present)) in pairs.iter().enumerate() {
        if let Some((other, _)) = pairs[..i].iter().find(|(_, p)| p == present) {
            return Err(error(format!(
                "output `{present}` would feed both `{other}` and `{past}`; each cache output feeds one input"
            )));
        }
    }
    let input_ids = index_input(sig, ids_name, "token ids")?;
    let optional = |given: &Option<String>, default: &str, role: &str| match given {
        Some(name) => index_input(sig, name, role).map(Some),
        None if sig.input(default).is_some() => index_input(sig, default, role).map(Some),
        None => Ok(None),
    };
    let attention_mask = optional(&names.attention_mask, "attention_mask", "attention mask")?;
    let position_ids = optional(&names.position_ids, "position_ids", "position ids")?;

    let logits_v = sig
        .output(logits_name)
        .ok_or_else(|| error(format!("the model has no logits output `{logits_name}`")))?;
    let (logits_elem, logits_dims) = tensor(logits_v, "logits")?;
    if !matches!(
        logits_elem,
        ElementType::F32 | ElementType::F16 | ElementType::BF16 | ElementType::F64
    ) {
        return Err(error(format!(
            "logits `{logits_name}` are {logits_elem}; the decoder reads float32, float16, bfloat16 or float64"
        )));
    }
    let vocab = match logits_dims {
        [_, _, Dim::Fixed(v)] => *v,
        _ => {
            return Err(error(format!(
                "logits `{logits_name}` are {logits_elem}{}; the decoder expects [batch, sequence, vocabulary] with a fixed vocabulary",
                format_dims(Some(logits_dims))
            )));
        }
    };

    // The batch dim: axis 0 of the token ids, when named.
    let ids_dims = tensor(sig.input(ids_name).expect("checked above"), "token ids")?.1;
    let batch_name = match &ids_dims[0] {
        Dim::Named(n) => Some(n.as_str()),
        _ => None,
    };
    let mut caches = Vec::new();
    for (past, present) in &pairs {
        caches.push(plan_cache(sig, past, present, batch_name)?);
    }

    let roles: Vec<&str> = [
        Some(&input_ids),
        attention_mask.as_ref(),
        position_ids.as_ref(),
    ]
    .into_iter()
    .flatten()
    .map(|(n, _)| n.as_str())
    .chain(caches.iter().map(|c| c.past.as_str()))
    .collect();
    if let Some(extra) = sig
        .inputs
        .iter()
        .find(|v| !roles.contains(&v.name.as_str()))
    {
        return Err(error(format!(
            "input `{}` has no role in a decode loop (token ids, attention mask, position ids, or a `past` cache)",
            extra.name
        )));
    }
    let other_outputs = sig
        .outputs
        .iter()
        .filter(|o| o.name != logits_name && !caches.iter().any(|c| c.present == o.name))
        .map(|o| o.name.clone())
        .collect();
    let shared_buffer = caches.iter().any(CachePlan::grows)
        && caches.iter().filter(|c| c.grows()).all(|c| {
            sig.in_place
                .iter()
                .any(|(i, o)| *i == c.past && *o == c.present)
        });
    Ok(Some(DecoderPlan {
        input_ids,
        attention_mask,
        position_ids,
        logits: logits_name.to_owned(),
        logits_elem,
        vocab,
        caches,
        other_outputs,
        shared_buffer,
    }))
}

fn plan_cache(
    sig: &ModelSignature,
    past: &str,
    present: &str,
    batch_name: Option<&str>,
) -> Result<CachePlan, PlanError> {
    let pair = format!("cache `{past}` -> `{present}`");
    let past_v = sig
        .input(past)
        .ok_or_else(|| error(format!("{pair}: the model has no input `{past}`")))?;
    let present_v = sig
        .output(present)
        .ok_or_else(|| error(format!("{pair}: the model has no output `{present}`")))?;
    let (pe, pd) = tensor(past_v, "cache input")?;
    let (qe, qd) = tensor(present_v, "cache output")?;
    if pe != qe {
        return Err(error(format!(
            "{pair}: the input is {pe}{} but the output is {qe}{}; a cache fed back must keep its element type",
            format_dims(Some(pd)),
            format_dims(Some(qd))
        )));
    }
    if pd.len() != qd.len() {
        return Err(error(format!(
            "{pair}: the input is {pe}{} but the output is {qe}{}: ranks differ",
            format_dims(Some(pd)),
            format_dims(Some(qd))
        )));
    }
    let mut axes = Vec::with_capacity(pd.len());
    // Without a batch name: the first open axis is the batch, the next the sequence.
    let mut open_seen = 0;
    for (axis, (p, q)) in pd.iter().zip(qd).enumerate() {
        let is_batch = |d: &Dim| matches!((d, batch_name), (Dim::Named(n), Some(b)) if n == b);
        let role = match (p, q) {
            (Dim::Fixed(a), Dim::Fixed(b)) if a == b => CacheAxis::Fixed(*a),
            (Dim::Fixed(_), Dim::Fixed(_)) => {
                return Err(error(format!(
                    "{pair}: axis {axis} is {p} on the input but {q} on the output; only the sequence axis may differ",
                )));
            }
            _ if is_batch(p) || is_batch(q) => {
                if !(is_batch(p) || matches!(p, Dim::Dynamic))
                    || !(is_batch(q) || matches!(q, Dim::Dynamic))
                {
                    return Err(error(format!(
                        "{pair}: axis {axis} is `{p}` on the input but `{q}` on the output; the batch axis must agree",
                    )));
                }
                CacheAxis::Batch
            }
            (Dim::Named(a), Dim::Named(b)) if a != b => CacheAxis::Sequence,
            (Dim::Fixed(_), _) | (_, Dim::Fixed(_)) => {
                return Err(error(format!(
                    "{pair}: axis {axis} is {p} on the input but {q} on the output; only the sequence axis may differ, and it is open on both",
                )));
            }
            _ => {
                open_seen += 1;
                match (batch_name, open_seen) {
                    (None, 1) => CacheAxis::Batch,
                    _ => CacheAxis::Sequence,
                }
            }
        };
        axes.push(role);
    }
    if axes.iter().filter(|a| **a == CacheAxis::Sequence).count() > 1 {
        return Err(error(format!(
            "{pair}: the input is {pe}{} and the output {qe}{}: more than one axis looks like the sequence",
            format_dims(Some(pd)),
            format_dims(Some(qd))
        )));
    }
    if !axes.contains(&CacheAxis::Batch) {
        return Err(error(format!(
            "{pair}: no axis is the batch (`{}`) of the token ids",
            batch_name.unwrap_or("?")
        )));
    }
    Ok(CachePlan {
        past: past.to_owned(),
        present: present.to_owned(),
        elem: pe,
        axes,
    })
}

#[cfg(test)]
mod tests;
