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
//! - recurrent state named `<name>_prev` -> `<name>` (Marian-style translation decoders),
//!   with the batch on any axis, or every dim fixed.
//!
//! Encoder-decoder models add inputs the decoder holds for a whole sequence (its
//! *context*): `encoder_hidden_states`, `encoder_attention_mask`, and cross-attention
//! caches (`past_key_cross_N`, computed by the encoder; or `past_key_values.N.encoder.*`,
//! which a merged decoder computes on its first run and returns as `present.N.encoder.*`:
//! held, never fed back as a growing cache). Scalars the loop knows are written by it:
//! `past_sequence_length`, `total_sequence_length`, `use_cache_branch` (false on a
//! sequence's first run, true after). Position ids may carry an extra axis
//! (`[3, batch, sequence]`, `[batch, sequence, 3]`): every entry along it gets the position.
//!
//! [`DecoderNames`] names the roles where a model uses other names. The sequence axis of a
//! cache is the one whose dim differs between past (`past_sequence_length`) and present
//! (`total_sequence_length`): the planner knows that total = past + new, so no user ever
//! sets a length; in the shared-buffer mode the same axis holds the capacity on both
//! sides while the mask holds the real length, which the plan expresses by role rather
//! than by dim name.

use crate::element::ElementType;
use crate::sig::{Dim, ModelSignature, ValueInfo, format_dims};

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
    /// The encoder's hidden states input (default `encoder_hidden_states`, if the model has it).
    pub encoder_hidden_states: Option<String>,
    /// The encoder's attention mask input (default `encoder_attention_mask`, if any).
    pub encoder_attention_mask: Option<String>,
    /// The past length scalar (default `past_sequence_length`, if any).
    pub past_sequence_length: Option<String>,
    /// The merged decoder's branch flag (default `use_cache_branch`, if any).
    pub use_cache_branch: Option<String>,
    /// Further inputs the decoder holds for a whole sequence, set from the encoder or by
    /// the user (cross-attention caches under other names).
    pub context: Vec<String>,
    /// A paged cache's block table input (default `block_tables`, if the model has it).
    pub block_tables: Option<String>,
    /// A paged cache's slot mapping input (default `slot_mapping`, if the model has it).
    pub slot_mapping: Option<String>,
}

impl DecoderNames {
    /// Names the value that plays `role`.
    pub fn set_role(&mut self, role: DecoderRole, name: String) {
        let slot = match role {
            DecoderRole::InputIds => &mut self.input_ids,
            DecoderRole::AttentionMask => &mut self.attention_mask,
            DecoderRole::PositionIds => &mut self.position_ids,
            DecoderRole::Logits => &mut self.logits,
            DecoderRole::EncoderHiddenStates => &mut self.encoder_hidden_states,
            DecoderRole::EncoderAttentionMask => &mut self.encoder_attention_mask,
            DecoderRole::PastSequenceLength => &mut self.past_sequence_length,
            DecoderRole::UseCacheBranch => &mut self.use_cache_branch,
            DecoderRole::BlockTables => &mut self.block_tables,
            DecoderRole::SlotMapping => &mut self.slot_mapping,
        };
        *slot = Some(name);
    }
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
    /// The encoder's hidden states (`encoder_hidden_states`).
    EncoderHiddenStates,
    /// The encoder's attention mask (`encoder_attention_mask`).
    EncoderAttentionMask,
    /// The past length, a scalar (`past_sequence_length`).
    PastSequenceLength,
    /// A merged decoder's branch flag (`use_cache_branch`).
    UseCacheBranch,
    /// A paged cache's block table (`block_tables`).
    BlockTables,
    /// A paged cache's slot mapping (`slot_mapping`).
    SlotMapping,
}

impl DecoderRole {
    /// Every role, in the order messages list them.
    pub const ALL: [DecoderRole; 10] = [
        DecoderRole::InputIds,
        DecoderRole::AttentionMask,
        DecoderRole::PositionIds,
        DecoderRole::Logits,
        DecoderRole::EncoderHiddenStates,
        DecoderRole::EncoderAttentionMask,
        DecoderRole::PastSequenceLength,
        DecoderRole::UseCacheBranch,
        DecoderRole::BlockTables,
        DecoderRole::SlotMapping,
    ];

    /// The role named as in options and macros (`input_ids`, `attention_mask`,
    /// `position_ids`, `logits`, `encoder_hidden_states`, `encoder_attention_mask`,
    /// `past_sequence_length`, `use_cache_branch`, `block_tables`, `slot_mapping`): the
    /// conventional name of its value.
    pub fn from_name(name: &str) -> Option<DecoderRole> {
        DecoderRole::ALL.into_iter().find(|r| r.name() == name)
    }

    /// The role's name, which is also the conventional name of its value.
    pub fn name(self) -> &'static str {
        match self {
            DecoderRole::InputIds => "input_ids",
            DecoderRole::AttentionMask => "attention_mask",
            DecoderRole::PositionIds => "position_ids",
            DecoderRole::Logits => "logits",
            DecoderRole::EncoderHiddenStates => "encoder_hidden_states",
            DecoderRole::EncoderAttentionMask => "encoder_attention_mask",
            DecoderRole::PastSequenceLength => "past_sequence_length",
            DecoderRole::UseCacheBranch => "use_cache_branch",
            DecoderRole::BlockTables => "block_tables",
            DecoderRole::SlotMapping => "slot_mapping",
        }
    }

    /// The roles' names, for messages (`input_ids`, `attention_mask`, ...).
    pub fn names_list() -> String {
        DecoderRole::ALL
            .iter()
            .map(|r| format!("`{}`", r.name()))
            .collect::<Vec<_>>()
            .join(", ")
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
    /// Why the shared-buffer mode is not offered, in the model's terms (`None` when it is).
    pub unshared_reason: Option<String>,
    /// What the position ids' axes hold (`[batch, sequence]` unless an extra axis).
    pub position_axes: Vec<PositionAxis>,
    /// Inputs held for a whole sequence (encoder states and mask, cross-attention caches).
    pub context: Vec<ContextPlan>,
    /// Scalars the decode loop writes.
    pub scalars: Vec<ScalarPlan>,
    /// The batch, when the model fixes it (the token ids' axis 0).
    pub fixed_batch: Option<u64>,
    /// New positions per run, when the model fixes them (the token ids' axis 1; a prompt
    /// then runs in steps of this many).
    pub fixed_new: Option<u64>,
    /// Whether the token ids and logits have a sequence axis (`[batch, sequence]`,
    /// `[batch, sequence, vocabulary]`); without it they are `[batch]` and
    /// `[batch, vocabulary]`, one token per run.
    pub sequence_axis: bool,
    /// The embeddings input, for a decoder fed `inputs_embeds` instead of ids: an
    /// embedding model (in a pipeline) makes them from the ids, and `input_ids` names
    /// that model's ids.
    pub embeds: Option<EmbedsPlan>,
    /// For a model whose cache is a pool of blocks (paged attention): its block inputs.
    pub paged: Option<PagedPlan>,
}

/// A paged cache's block inputs: every cache is `[blocks, block_size, ..]`, one pool
/// shared by the rows, written in place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PagedPlan {
    /// Each row's blocks, `[batch, blocks per row]`.
    pub block_tables: (String, ElementType),
    /// Each new position's pool slot, `[batch, sequence]`.
    pub slot_mapping: (String, ElementType),
    /// Positions per block: the caches' fixed axis 1.
    pub block_size: u64,
}

/// A decoder's embeddings input (`inputs_embeds [batch, sequence, hidden]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbedsPlan {
    /// The input.
    pub name: String,
    /// Its element type.
    pub elem: ElementType,
    /// The hidden size (its fixed last axis).
    pub hidden: u64,
}

/// What one axis of the position ids holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PositionAxis {
    /// The batch.
    Batch,
    /// The new positions.
    Sequence,
    /// An extra axis of this size (multimodal rotary sections): each entry gets the
    /// position.
    Extra(u64),
}

/// An input the decoder holds for a whole sequence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextPlan {
    /// The input.
    pub name: String,
    /// Its element type.
    pub elem: ElementType,
    /// What each axis holds: the batch, the encoder's sequence ([`CacheAxis::Sequence`]),
    /// or a fixed size.
    pub axes: Vec<CacheAxis>,
    /// The output that returns it, for a cross-attention cache the decoder computes on a
    /// sequence's first run (merged decoders): held from then on, never fed back as a
    /// growing cache. `None`: set from the encoder or by the user.
    pub present: Option<String>,
}

/// A scalar the decode loop writes before each run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScalarPlan {
    /// The input.
    pub name: String,
    /// Its element type (an integer type, or bool for a branch flag).
    pub elem: ElementType,
    /// Its dims: `[]` or `[1]`.
    pub dims: Vec<u64>,
    /// What it holds.
    pub role: ScalarRole,
}

/// What a scalar input holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalarRole {
    /// The positions held before the run.
    PastSequenceLength,
    /// The positions held after the run (past + new).
    TotalSequenceLength,
    /// `false` on a sequence's first run (no cache yet), `true` after.
    UseCacheBranch,
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
    /// The blocks of a paged cache's pool.
    Blocks,
}

impl CachePlan {
    /// Whether the cache grows with the sequence (a key/value cache, paged or not).
    pub fn grows(&self) -> bool {
        self.axes
            .iter()
            .any(|a| matches!(a, CacheAxis::Sequence | CacheAxis::Blocks))
    }
}

/// An input's name and element type.
type NamedInput = (String, ElementType);

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
    if let Some(stem) = past.strip_suffix("_prev") {
        out.push(stem.to_owned());
    }
    out
}

/// Whether an input is a cross-attention cache by the exporters' names
/// (`past_key_cross_0`, `past_key_values.0.encoder.key`).
fn is_cross(name: &str) -> bool {
    name.contains("cross") || name.contains(".encoder.")
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
    if dims.len() != 2 && !(role == "token ids" && dims.len() == 1) {
        return Err(error(format!(
            "{role} `{name}` is {elem}{}; the decoder expects [batch, sequence]{}",
            format_dims(Some(dims)),
            if role == "token ids" {
                " (or [batch]: one token per run)"
            } else {
                ""
            }
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
    // Cache pairs and cross-attention pairs (a merged decoder's `past_key_values.N.encoder.*`
    // -> `present.N.encoder.*`: held, not grown), by the exporters' names.
    let mut pairs: Vec<(String, String)> = names.caches.clone();
    let mut cross_pairs: Vec<(String, String)> = Vec::new();
    for input in &sig.inputs {
        if pairs.iter().any(|(p, _)| *p == input.name) || names.context.contains(&input.name) {
            continue;
        }
        if let Some(present) = present_candidates(&input.name)
            .into_iter()
            .find(|c| sig.output(c).is_some())
        {
            if is_cross(&input.name) {
                cross_pairs.push((input.name.clone(), present));
            } else {
                pairs.push((input.name.clone(), present));
            }
        }
    }
    // A decoder fed embeddings (`inputs_embeds`, made by an embedding model from the ids)
    // where it has no token ids input.
    let embeds_input = (names.input_ids.is_none() && sig.input(ids_name).is_none())
        .then(|| sig.input("inputs_embeds"))
        .flatten();
    let looks_like_one = (sig.input(ids_name).is_some() || embeds_input.is_some())
        && sig.output(logits_name).is_some()
        && !pairs.is_empty();
    if !asked && !looks_like_one {
        return Ok(None);
    }
    if pairs.is_empty() {
        return Err(error(
            "no cache pair found (an input `past...` with an output `present...`, or `<name>_prev` with `<name>`; pairs under other names: `decoder_cache` in `bindings!` or `ModelOptions`)",
        ));
    }
    for (i, (past, present)) in pairs.iter().enumerate() {
        if let Some((other, _)) = pairs[..i].iter().find(|(_, p)| p == present) {
            return Err(error(format!(
                "output `{present}` would feed both `{other}` and `{past}`; each cache output feeds one input"
            )));
        }
    }
    let (ids_dims, input_ids, embeds) = match embeds_input {
        Some(v) => {
            let (elem, dims) = tensor(v, "input embeddings")?;
            let hidden = match dims {
                [_, _, Dim::Fixed(h)]
                    if matches!(
                        elem,
                        ElementType::F32 | ElementType::F16 | ElementType::BF16 | ElementType::F64
                    ) =>
                {
                    *h
                }
                _ => {
                    return Err(error(format!(
                        "input embeddings `{}` are {elem}{}; the decoder expects floats of [batch, sequence, hidden] with a fixed hidden size",
                        v.name,
                        format_dims(Some(dims))
                    )));
                }
            };
            // The ids are the embedding model's; `input_ids` int64 until a pipeline names them.
            (
                &dims[..2],
                ("input_ids".to_owned(), ElementType::I64),
                Some(EmbedsPlan {
                    name: v.name.clone(),
                    elem,
                    hidden,
                }),
            )
        }
        None => {
            let ids_v = sig
                .input(ids_name)
                .ok_or_else(|| error(format!("the model has no token ids input `{ids_name}`")))?;
            let (_, ids_dims) = tensor(ids_v, "token ids")?;
            (ids_dims, index_input(sig, ids_name, "token ids")?, None)
        }
    };
    let attention_mask = optional_index(
        sig,
        &names.attention_mask,
        "attention_mask",
        "attention mask",
    )?;
    let (position_ids, position_axes) = positions(sig, &names, ids_dims)?;

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
    // Token ids of [batch] take one token per run, and their logits are [batch, vocabulary].
    let sequence_axis = ids_dims.len() == 2;
    let vocab = match (logits_dims, sequence_axis) {
        ([_, _, Dim::Fixed(v)], true) | ([_, Dim::Fixed(v)], false) => *v,
        _ => {
            return Err(error(format!(
                "logits `{logits_name}` are {logits_elem}{}; the decoder expects {} with a fixed vocabulary",
                format_dims(Some(logits_dims)),
                if sequence_axis {
                    "[batch, sequence, vocabulary]"
                } else {
                    "[batch, vocabulary] (the token ids are [batch])"
                }
            )));
        }
    };

    // The batch: axis 0 of the token ids, named or fixed.
    let batch_name = match &ids_dims[0] {
        Dim::Named(n) => Some(n.as_str()),
        _ => None,
    };
    let fixed_batch = match ids_dims[0] {
        Dim::Fixed(n) => Some(n),
        _ => None,
    };
    let fixed_new = match ids_dims.get(1) {
        Some(Dim::Fixed(n)) => Some(*n),
        Some(_) => None,
        None => Some(1),
    };
    if fixed_new == Some(0) || fixed_batch == Some(0) {
        return Err(error(format!(
            "token ids `{ids_name}` are {}: an axis of size 0 holds no token",
            format_dims(Some(ids_dims))
        )));
    }
    let paged = paged_inputs(sig, &names)?;
    let mut caches = Vec::new();
    for (past, present) in &pairs {
        caches.push(match &paged {
            Some(_) => plan_paged_cache(sig, past, present)?,
            None => plan_cache(sig, past, present, batch_name, fixed_batch)?,
        });
    }
    let paged = match paged {
        Some((block_tables, slot_mapping)) => {
            Some(paged_plan(sig, &caches, block_tables, slot_mapping)?)
        }
        None => None,
    };

    let mut context = Vec::new();
    let given = |name: &str, present: Option<String>, why: &str| {
        let v = sig
            .input(name)
            .ok_or_else(|| error(format!("the model has no {why} input `{name}`")))?;
        let (elem, dims) = tensor(v, why)?;
        Ok::<_, PlanError>(ContextPlan {
            name: name.to_owned(),
            elem,
            axes: context_axes(dims, batch_name),
            present,
        })
    };
    for (role, given_name, default) in [
        (
            "encoder hidden states",
            &names.encoder_hidden_states,
            "encoder_hidden_states",
        ),
        (
            "encoder attention mask",
            &names.encoder_attention_mask,
            "encoder_attention_mask",
        ),
    ] {
        match given_name {
            Some(name) => context.push(given(name, None, role)?),
            None if sig.input(default).is_some() => context.push(given(default, None, role)?),
            None => {}
        }
    }
    for (past, present) in &cross_pairs {
        context.push(given(past, Some(present.clone()), "cross-attention cache")?);
    }
    for name in &names.context {
        context.push(given(name, None, "context")?);
    }
    // Cross-attention caches the encoder computes (`past_key_cross_N`: no present).
    let placed_so_far: Vec<String> = context.iter().map(|c| c.name.clone()).collect();
    for input in &sig.inputs {
        if is_cross(&input.name)
            && !placed_so_far.contains(&input.name)
            && !pairs.iter().any(|(p, _)| *p == input.name)
        {
            context.push(given(&input.name, None, "cross-attention cache")?);
        }
    }

    let mut scalars = Vec::new();
    for (given_name, default, role) in [
        (
            &names.past_sequence_length,
            if sig.input("past_key_values_length").is_some() {
                "past_key_values_length"
            } else {
                "past_sequence_length"
            },
            ScalarRole::PastSequenceLength,
        ),
        (
            &None,
            "total_sequence_length",
            ScalarRole::TotalSequenceLength,
        ),
        (
            &names.use_cache_branch,
            "use_cache_branch",
            ScalarRole::UseCacheBranch,
        ),
    ] {
        let name = match given_name {
            Some(name) => name.as_str(),
            None if sig.input(default).is_some() => default,
            None => continue,
        };
        scalars.push(scalar(sig, name, role)?);
    }

    // Every input has exactly one role.
    let token_input = embeds
        .as_ref()
        .map_or(input_ids.0.as_str(), |e| e.name.as_str());
    let mut roles: Vec<(&str, &str)> = vec![(token_input, "token ids")];
    roles.extend(
        attention_mask
            .iter()
            .map(|(n, _)| (n.as_str(), "attention mask")),
    );
    roles.extend(
        position_ids
            .iter()
            .map(|(n, _)| (n.as_str(), "position ids")),
    );
    roles.extend(caches.iter().map(|c| (c.past.as_str(), "cache")));
    roles.extend(context.iter().map(|c| (c.name.as_str(), "context")));
    roles.extend(scalars.iter().map(|c| (c.name.as_str(), "scalar")));
    if let Some(p) = &paged {
        roles.push((p.block_tables.0.as_str(), "block table"));
        roles.push((p.slot_mapping.0.as_str(), "slot mapping"));
    }
    for (i, (name, role)) in roles.iter().enumerate() {
        if let Some((_, other)) = roles[..i].iter().find(|(n, _)| n == name) {
            return Err(error(format!(
                "input `{name}` is named for two roles ({other} and {role}); each input plays one"
            )));
        }
    }
    if let Some(extra) = sig
        .inputs
        .iter()
        .find(|v| !roles.iter().any(|(n, _)| *n == v.name))
    {
        return Err(error(format!(
            "input `{}` has no role in a decode loop (roles: {}, a `past` cache, or context held for a sequence); name its role with `decoder_role(\"<role>\", \"{}\")`, a cache pair with `decoder_cache`, or an input held for a sequence with `decoder_context(\"{}\")`",
            extra.name,
            DecoderRole::names_list(),
            extra.name,
            extra.name
        )));
    }
    let other_outputs = sig
        .outputs
        .iter()
        .filter(|o| {
            o.name != logits_name
                && !caches.iter().any(|c| c.present == o.name)
                && !context
                    .iter()
                    .any(|c| c.present.as_deref() == Some(&o.name))
        })
        .map(|o| o.name.clone())
        .collect();
    let shared_buffer = paged.is_none()
        && caches.iter().any(CachePlan::grows)
        && caches.iter().filter(|c| c.grows()).all(|c| {
            sig.in_place
                .iter()
                .any(|(i, o)| *i == c.past && *o == c.present)
        });
    let unshared_reason = if shared_buffer {
        None
    } else if paged.is_some() {
        Some("its cache is a pool of blocks read through `block_tables` (paged attention), which only the paged mode keeps".to_owned())
    } else {
        Some(match caches.iter().find(|c| {
            c.grows()
                && !sig
                    .in_place
                    .iter()
                    .any(|(i, o)| *i == c.past && *o == c.present)
        }) {
            Some(c) => format!(
                "`{}` -> `{}` is not written in place: the graph makes the present a new value (a `Concat`, say), where ONNX Runtime's `GroupQueryAttention` would write the new positions into a buffer bound as both",
                c.past, c.present
            ),
            None => "the model has no cache that grows with the sequence, only fixed-shape recurrent state".to_owned(),
        })
    };
    Ok(Some(DecoderPlan {
        unshared_reason,
        input_ids,
        attention_mask,
        position_ids,
        logits: logits_name.to_owned(),
        logits_elem,
        vocab,
        caches,
        other_outputs,
        shared_buffer,
        position_axes,
        context,
        scalars,
        fixed_batch,
        fixed_new,
        sequence_axis,
        embeds,
        paged,
    }))
}

/// An integer input that plays `role`: the one named `given`, or else `default` if the
/// model has it, or else none.
fn optional_index(
    sig: &ModelSignature,
    given: &Option<String>,
    default: &str,
    role: &str,
) -> Result<Option<NamedInput>, PlanError> {
    match given {
        Some(name) => index_input(sig, name, role).map(Some),
        None if sig.input(default).is_some() => index_input(sig, default, role).map(Some),
        None => Ok(None),
    }
}

/// A paged model's block table and slot mapping inputs, by name or by role; `None` when
/// the model has neither. One without the other is an error.
fn paged_inputs(
    sig: &ModelSignature,
    names: &DecoderNames,
) -> Result<Option<(NamedInput, NamedInput)>, PlanError> {
    let tables = optional_index(sig, &names.block_tables, "block_tables", "block table")?;
    let slots = optional_index(sig, &names.slot_mapping, "slot_mapping", "slot mapping")?;
    match (tables, slots) {
        (Some(t), Some(s)) => Ok(Some((t, s))),
        (None, None) => Ok(None),
        (Some((name, _)), None) | (None, Some((name, _))) => Err(error(format!(
            "input `{name}` looks like a paged cache's, but a paged cache takes both `block_tables` and `slot_mapping` (name the other with `decoder_role`)"
        ))),
    }
}

/// A tensor value's element type and dims.
type TensorOf<'a> = (ElementType, &'a [Dim]);

/// A cache pair's input and output tensors (element type and dims each); `pair` names
/// the pair in errors.
fn cache_tensors<'a>(
    sig: &'a ModelSignature,
    past: &str,
    present: &str,
    pair: &str,
) -> Result<(TensorOf<'a>, TensorOf<'a>), PlanError> {
    let past_v = sig
        .input(past)
        .ok_or_else(|| error(format!("{pair}: the model has no input `{past}`")))?;
    let present_v = sig
        .output(present)
        .ok_or_else(|| error(format!("{pair}: the model has no output `{present}`")))?;
    Ok((
        tensor(past_v, "cache input")?,
        tensor(present_v, "cache output")?,
    ))
}

/// A paged cache pair: `[blocks, block_size, ..]` on both sides, the blocks open and the
/// rest fixed.
fn plan_paged_cache(
    sig: &ModelSignature,
    past: &str,
    present: &str,
) -> Result<CachePlan, PlanError> {
    let pair = format!("paged cache `{past}` -> `{present}`");
    let ((pe, pd), (qe, qd)) = cache_tensors(sig, past, present, &pair)?;
    let layout = || {
        format!(
            "{pair}: the input is {pe}{} and the output {qe}{}; a paged cache is one pool [blocks, block_size, ..] on both sides, its blocks open and the other axes fixed",
            format_dims(Some(pd)),
            format_dims(Some(qd))
        )
    };
    if pe != qe || pd.len() != qd.len() || pd.len() < 2 {
        return Err(error(layout()));
    }
    let mut axes = vec![CacheAxis::Blocks];
    for (p, q) in pd[1..].iter().zip(&qd[1..]) {
        match (p, q) {
            (Dim::Fixed(a), Dim::Fixed(b)) if a == b && *a > 0 => axes.push(CacheAxis::Fixed(*a)),
            _ => return Err(error(layout())),
        }
    }
    let blocks_open = |d: &Dim| !matches!(d, Dim::Fixed(_));
    if !blocks_open(&pd[0]) || !blocks_open(&qd[0]) {
        return Err(error(layout()));
    }
    Ok(CachePlan {
        past: past.to_owned(),
        present: present.to_owned(),
        elem: pe,
        axes,
    })
}

/// The paged plan: one block size for every cache, each written in place.
fn paged_plan(
    sig: &ModelSignature,
    caches: &[CachePlan],
    block_tables: NamedInput,
    slot_mapping: NamedInput,
) -> Result<PagedPlan, PlanError> {
    let mut block_size = None;
    for c in caches {
        let Some(CacheAxis::Fixed(bs)) = c.axes.get(1).copied() else {
            continue;
        };
        if *block_size.get_or_insert(bs) != bs {
            return Err(error(format!(
                "paged cache `{}` has blocks of {bs} positions, another cache {}; the pool's blocks are one size",
                c.past,
                block_size.unwrap_or_default()
            )));
        }
        if !sig
            .in_place
            .iter()
            .any(|(i, o)| *i == c.past && *o == c.present)
        {
            return Err(error(format!(
                "paged cache `{}` -> `{}` is not written in place: the pool is bound as both, so the model must write only the new positions into its input (ONNX `ScatterND` from the input to the output, or `GroupQueryAttention`)",
                c.past, c.present
            )));
        }
    }
    Ok(PagedPlan {
        block_tables,
        slot_mapping,
        block_size: block_size.ok_or_else(|| error("a paged model needs a cache"))?,
    })
}

/// The position ids and what their axes hold: `[batch, sequence]`, or with one extra axis
/// before or after (`[3, batch, sequence]`, `[batch, sequence, 3]`).
fn positions(
    sig: &ModelSignature,
    names: &DecoderNames,
    ids_dims: &[Dim],
) -> Result<(Option<NamedInput>, Vec<PositionAxis>), PlanError> {
    let name = match &names.position_ids {
        Some(name) => name.as_str(),
        None if sig.input("position_ids").is_some() => "position_ids",
        None => return Ok((None, Vec::new())),
    };
    let v = sig
        .input(name)
        .ok_or_else(|| error(format!("the model has no position ids input `{name}`")))?;
    let (elem, dims) = tensor(v, "position ids")?;
    if !matches!(elem, ElementType::I64 | ElementType::I32) {
        return Err(error(format!(
            "position ids `{name}` are {elem}; the decoder writes int64 or int32 there"
        )));
    }
    let axes = match dims {
        [_, _] => vec![PositionAxis::Batch, PositionAxis::Sequence],
        [Dim::Fixed(n), b, _] if *b == ids_dims[0] || !matches!(b, Dim::Fixed(_)) => {
            vec![
                PositionAxis::Extra(*n),
                PositionAxis::Batch,
                PositionAxis::Sequence,
            ]
        }
        [_, _, Dim::Fixed(n)] => vec![
            PositionAxis::Batch,
            PositionAxis::Sequence,
            PositionAxis::Extra(*n),
        ],
        _ => {
            return Err(error(format!(
                "position ids `{name}` are {elem}{}; the decoder expects [batch, sequence], or one fixed extra axis first or last ([3, batch, sequence])",
                format_dims(Some(dims))
            )));
        }
    };
    Ok((Some((name.to_owned(), elem)), axes))
}

/// What a context input's axes hold: the batch (named as the token ids' axis 0, or axis 0
/// when the batch is not named), fixed sizes, and the encoder's sequence (any other axis).
pub(crate) fn context_axes(dims: &[Dim], batch_name: Option<&str>) -> Vec<CacheAxis> {
    dims.iter()
        .enumerate()
        .map(|(axis, d)| match d {
            Dim::Fixed(n) => CacheAxis::Fixed(*n),
            Dim::Named(n) if Some(n.as_str()) == batch_name => CacheAxis::Batch,
            _ if axis == 0 && batch_name.is_none() => CacheAxis::Batch,
            _ => CacheAxis::Sequence,
        })
        .collect()
}

/// A scalar input the loop writes: an integer (lengths) or a bool (the branch flag), of
/// dims `[]` or `[1]`.
fn scalar(sig: &ModelSignature, name: &str, role: ScalarRole) -> Result<ScalarPlan, PlanError> {
    let what = match role {
        ScalarRole::PastSequenceLength => "past length",
        ScalarRole::TotalSequenceLength => "total length",
        ScalarRole::UseCacheBranch => "cache branch flag",
    };
    let v = sig
        .input(name)
        .ok_or_else(|| error(format!("the model has no {what} input `{name}`")))?;
    let (elem, dims) = tensor(v, what)?;
    let elem_ok = match role {
        ScalarRole::UseCacheBranch => elem == ElementType::Bool,
        _ => matches!(elem, ElementType::I64 | ElementType::I32),
    };
    let dims = match dims {
        [] => Vec::new(),
        [Dim::Fixed(1)] => vec![1],
        _ => Vec::from([u64::MAX]),
    };
    if !elem_ok || dims == [u64::MAX] {
        let want = match role {
            ScalarRole::UseCacheBranch => "bool",
            _ => "int64 or int32",
        };
        return Err(error(format!(
            "{what} `{name}` is {elem}{}; the decoder writes one {want} there (dims [] or [1])",
            format_dims(v.tensor().and_then(|(_, d)| d))
        )));
    }
    Ok(ScalarPlan {
        name: name.to_owned(),
        elem,
        dims,
        role,
    })
}

fn plan_cache(
    sig: &ModelSignature,
    past: &str,
    present: &str,
    batch_name: Option<&str>,
    fixed_batch: Option<u64>,
) -> Result<CachePlan, PlanError> {
    let pair = format!("cache `{past}` -> `{present}`");
    let ((pe, pd), (qe, qd)) = cache_tensors(sig, past, present, &pair)?;
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
    // A model that fixes the batch may fix every cache axis (Marian's `rnn_states_prev`).
    if !axes.contains(&CacheAxis::Batch) && fixed_batch.is_none() {
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
