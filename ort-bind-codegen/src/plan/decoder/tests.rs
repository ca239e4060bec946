use super::*;
use crate::sig::ValueType;

fn t(name: &str, elem: ElementType, dims: &[&str]) -> ValueInfo {
    let dims = dims
        .iter()
        .map(|d| match d.parse::<u64>() {
            Ok(n) => Dim::Fixed(n),
            Err(_) if *d == "?" => Dim::Dynamic,
            Err(_) => Dim::Named((*d).to_owned()),
        })
        .collect();
    ValueInfo {
        name: name.into(),
        kind: ValueType::Tensor {
            elem,
            dims: Some(dims),
        },
        doc_string: String::new(),
    }
}

const F: ElementType = ElementType::F32;
const I: ElementType = ElementType::I64;

/// The genai builder's / optimum's signature: `past_key_values.N.*` -> `present.N.*`.
fn kv_model(elem: ElementType, in_place: bool) -> ModelSignature {
    let mut inputs = vec![
        t("input_ids", I, &["batch_size", "sequence_length"]),
        t(
            "attention_mask",
            I,
            &["batch_size", "total_sequence_length"],
        ),
        t("position_ids", I, &["batch_size", "sequence_length"]),
    ];
    let mut outputs = vec![t("logits", elem, &["batch_size", "sequence_length", "512"])];
    let mut pairs = Vec::new();
    for l in 0..2 {
        for kv in ["key", "value"] {
            let past = format!("past_key_values.{l}.{kv}");
            let present = format!("present.{l}.{kv}");
            inputs.push(t(
                &past,
                elem,
                &["batch_size", "2", "past_sequence_length", "16"],
            ));
            outputs.push(t(
                &present,
                elem,
                &["batch_size", "2", "total_sequence_length", "16"],
            ));
            pairs.push((past, present));
        }
    }
    ModelSignature {
        inputs,
        outputs,
        in_place: if in_place { pairs } else { Vec::new() },
        ..Default::default()
    }
}

#[test]
fn key_value_pairs_by_the_builders_names() {
    let d = plan_decoder(&kv_model(F, true), None).unwrap().unwrap();
    assert_eq!(d.input_ids, ("input_ids".into(), I));
    assert_eq!(d.attention_mask.as_ref().unwrap().0, "attention_mask");
    assert_eq!(d.position_ids.as_ref().unwrap().0, "position_ids");
    assert_eq!((d.logits.as_str(), d.vocab), ("logits", 512));
    assert_eq!(d.caches.len(), 4);
    assert_eq!(d.caches[1].past, "past_key_values.0.value");
    assert_eq!(d.caches[1].present, "present.0.value");
    assert_eq!(
        d.caches[0].axes,
        [
            CacheAxis::Batch,
            CacheAxis::Fixed(2),
            CacheAxis::Sequence,
            CacheAxis::Fixed(16)
        ]
    );
    assert!(d.shared_buffer);
    // Without an operator that writes in place, only the growing mode.
    let d = plan_decoder(&kv_model(F, false), None).unwrap().unwrap();
    assert!(!d.shared_buffer);
}

#[test]
fn stacked_gpt2_pairs_and_conv_state() {
    let sig = ModelSignature {
        inputs: vec![
            t("input_ids", I, &["batch_size", "seq_len"]),
            t("position_ids", I, &["batch_size", "seq_len"]),
            t("attention_mask", I, &["batch_size", "total_seq_len"]),
            t("past_0", F, &["2", "batch_size", "4", "past_seq_len", "16"]),
            t("past_conv.1", F, &["batch_size", "64", "3"]),
            t("past_key_2", F, &["batch_size", "4", "past_seq_len", "16"]),
            t(
                "past_value_2",
                F,
                &["batch_size", "4", "past_seq_len", "16"],
            ),
        ],
        outputs: vec![
            t("logits", F, &["batch_size", "seq_len", "512"]),
            t(
                "present_0",
                F,
                &["2", "batch_size", "4", "total_seq_len", "16"],
            ),
            t("present_conv.1", F, &["batch_size", "64", "3"]),
            t(
                "present_key_2",
                F,
                &["batch_size", "4", "total_seq_len", "16"],
            ),
            t(
                "present_value_2",
                F,
                &["batch_size", "4", "total_seq_len", "16"],
            ),
            t("hidden", F, &["batch_size", "seq_len", "64"]),
        ],
        ..Default::default()
    };
    let d = plan_decoder(&sig, None).unwrap().unwrap();
    let pairs: Vec<_> = d
        .caches
        .iter()
        .map(|c| (&*c.past, &*c.present, c.grows()))
        .collect();
    assert_eq!(
        pairs,
        [
            ("past_0", "present_0", true),
            ("past_conv.1", "present_conv.1", false),
            ("past_key_2", "present_key_2", true),
            ("past_value_2", "present_value_2", true),
        ]
    );
    assert_eq!(
        d.caches[0].axes[..2],
        [CacheAxis::Fixed(2), CacheAxis::Batch]
    );
    assert_eq!(d.caches[0].axes[3], CacheAxis::Sequence);
    assert_eq!(d.other_outputs, ["hidden"]);
    assert!(!d.shared_buffer);
}

#[test]
fn unnamed_axes_batch_then_sequence() {
    let sig = ModelSignature {
        inputs: vec![
            t("input_ids", I, &["?", "?"]),
            t("past_0", F, &["?", "4", "?", "16"]),
        ],
        outputs: vec![
            t("logits", F, &["?", "?", "100"]),
            t("present_0", F, &["?", "4", "?", "16"]),
        ],
        ..Default::default()
    };
    let d = plan_decoder(&sig, None).unwrap().unwrap();
    assert_eq!(
        d.caches[0].axes,
        [
            CacheAxis::Batch,
            CacheAxis::Fixed(4),
            CacheAxis::Sequence,
            CacheAxis::Fixed(16)
        ]
    );
    assert!(d.attention_mask.is_none() && d.position_ids.is_none());
}

#[test]
fn not_a_decoder_unless_asked() {
    let sig = ModelSignature {
        inputs: vec![t("x", F, &["n", "4"])],
        outputs: vec![t("y", F, &["n", "3"])],
        ..Default::default()
    };
    assert_eq!(plan_decoder(&sig, None).unwrap(), None);
    let e = plan_decoder(&sig, Some(&DecoderNames::default())).unwrap_err();
    assert!(e.to_string().contains("no cache pair"), "{e}");
}

#[test]
fn mismatched_pairs_are_errors_in_the_models_terms() {
    let mut sig = kv_model(F, false);
    sig.outputs[1] = t(
        "present.0.key",
        ElementType::F16,
        &["batch_size", "2", "total_sequence_length", "16"],
    );
    let e = plan_decoder(&sig, None).unwrap_err().to_string();
    assert_eq!(
        e,
        "decoder: cache `past_key_values.0.key` -> `present.0.key`: the input is \
         float32[batch_size, 2, past_sequence_length, 16] but the output is \
         float16[batch_size, 2, total_sequence_length, 16]; a cache fed back must keep its element type"
    );
    let mut sig = kv_model(F, false);
    sig.outputs[1] = t(
        "present.0.key",
        F,
        &["batch_size", "4", "total_sequence_length", "16"],
    );
    let e = plan_decoder(&sig, None).unwrap_err().to_string();
    assert!(
        e.contains("axis 1 is 2 on the input but 4 on the output"),
        "{e}"
    );
}

#[test]
fn inputs_without_a_role_and_bad_logits() {
    let mut sig = kv_model(F, false);
    sig.inputs
        .push(t("token_type_ids", I, &["batch_size", "sequence_length"]));
    let e = plan_decoder(&sig, None).unwrap_err().to_string();
    assert!(e.contains("input `token_type_ids` has no role"), "{e}");

    let mut sig = kv_model(F, false);
    sig.outputs[0] = t("logits", F, &["batch_size", "sequence_length", "vocab"]);
    let e = plan_decoder(&sig, None).unwrap_err().to_string();
    assert!(e.contains("with a fixed vocabulary"), "{e}");
}

#[test]
fn other_names_by_options() {
    let mut sig = kv_model(F, false);
    sig.inputs[0].name = "tokens".into();
    sig.outputs[0].name = "lm_logits".into();
    sig.inputs.push(t("cache_in", F, &["batch_size", "8"]));
    sig.outputs.push(t("cache_out", F, &["batch_size", "8"]));
    // Not recognised by convention...
    assert_eq!(plan_decoder(&sig, None).unwrap(), None);
    // ...but by name.
    let names = DecoderNames {
        input_ids: Some("tokens".into()),
        logits: Some("lm_logits".into()),
        caches: vec![("cache_in".into(), "cache_out".into())],
        ..Default::default()
    };
    let d = plan_decoder(&sig, Some(&names)).unwrap().unwrap();
    assert_eq!(d.input_ids.0, "tokens");
    assert_eq!(d.caches.len(), 5);
    assert!(!d.caches[0].grows());
}

const B: ElementType = ElementType::Bool;

/// Optimum's merged seq2seq decoder: self-attention caches grow; `past_key_values.N.encoder.*`
/// -> `present.N.encoder.*` are cross-attention caches the first run computes (context, not
/// cache); `use_cache_branch` is a scalar the loop writes.
#[test]
fn a_merged_seq2seq_decoder_holds_its_cross_caches() {
    let mut inputs = vec![
        t(
            "encoder_attention_mask",
            I,
            &["batch_size", "encoder_sequence_length"],
        ),
        t("input_ids", I, &["batch_size", "decoder_sequence_length"]),
        t(
            "encoder_hidden_states",
            F,
            &["batch_size", "encoder_sequence_length", "64"],
        ),
    ];
    let mut outputs = vec![t(
        "logits",
        F,
        &["batch_size", "decoder_sequence_length", "512"],
    )];
    for part in ["decoder", "encoder"] {
        for kv in ["key", "value"] {
            let (past, present) = if part == "decoder" {
                (
                    "past_decoder_sequence_length",
                    "past_decoder_sequence_length + 1",
                )
            } else {
                ("encoder_sequence_length_out", "encoder_sequence_length_out")
            };
            inputs.push(t(
                &format!("past_key_values.0.{part}.{kv}"),
                F,
                &["batch_size", "4", past, "16"],
            ));
            outputs.push(t(
                &format!("present.0.{part}.{kv}"),
                F,
                &["batch_size", "4", present, "16"],
            ));
        }
    }
    inputs.push(t("use_cache_branch", B, &["1"]));
    let sig = ModelSignature {
        inputs,
        outputs,
        ..Default::default()
    };
    let d = plan_decoder(&sig, None).unwrap().unwrap();
    assert_eq!(d.caches.len(), 2);
    assert!(
        d.caches
            .iter()
            .all(|c| c.past.contains(".decoder.") && c.grows())
    );
    let context: Vec<(&str, Option<&str>)> = d
        .context
        .iter()
        .map(|c| (c.name.as_str(), c.present.as_deref()))
        .collect();
    assert_eq!(
        context,
        [
            ("encoder_hidden_states", None),
            ("encoder_attention_mask", None),
            (
                "past_key_values.0.encoder.key",
                Some("present.0.encoder.key")
            ),
            (
                "past_key_values.0.encoder.value",
                Some("present.0.encoder.value")
            ),
        ]
    );
    assert_eq!(
        d.context[2].axes,
        [
            CacheAxis::Batch,
            CacheAxis::Fixed(4),
            CacheAxis::Sequence,
            CacheAxis::Fixed(16)
        ]
    );
    assert_eq!(d.scalars.len(), 1);
    assert_eq!(
        (d.scalars[0].role, d.scalars[0].dims.as_slice()),
        (ScalarRole::UseCacheBranch, &[1][..])
    );
    assert!(d.other_outputs.is_empty(), "{:?}", d.other_outputs);
}

/// Marian's decoder (onnxruntime-genai's `marian-ssru`): every dim fixed, one token per run
/// (`input_ids [1]`, `logits [1, 512]`), recurrent state `rnn_states_prev -> rnn_states`
/// with the batch on axis 1, and the past length as a scalar.
#[test]
fn a_fixed_size_decoder_with_recurrent_state() {
    let sig = ModelSignature {
        inputs: vec![
            t("input_ids", I, &["1"]),
            t("encoder_hidden_states", F, &["1", "16", "64"]),
            t("encoder_attention_mask", I, &["1", "16"]),
            t("rnn_states_prev", F, &["3", "1", "64"]),
            t("past_key_values_length", I, &["1"]),
        ],
        outputs: vec![
            t("logits", F, &["1", "512"]),
            t("rnn_states", F, &["3", "1", "64"]),
        ],
        ..Default::default()
    };
    let d = plan_decoder(&sig, None).unwrap().unwrap();
    assert_eq!(
        (d.fixed_batch, d.fixed_new, d.sequence_axis),
        (Some(1), Some(1), false)
    );
    assert_eq!(d.caches[0].past, "rnn_states_prev");
    assert!(!d.caches[0].grows());
    assert_eq!(d.scalars[0].role, ScalarRole::PastSequenceLength);
    assert_eq!(d.context.len(), 2);
}

/// Position ids with an extra axis (multimodal rotary sections), and an input named for
/// two roles.
#[test]
fn position_layouts_and_one_input_for_two_roles() {
    let mut sig = kv_model(F, false);
    sig.inputs[2] = t("position_ids", I, &["3", "batch_size", "sequence_length"]);
    let d = plan_decoder(&sig, None).unwrap().unwrap();
    assert_eq!(
        d.position_axes,
        [
            PositionAxis::Extra(3),
            PositionAxis::Batch,
            PositionAxis::Sequence
        ]
    );
    sig.inputs[2] = t("position_ids", I, &["batch_size", "sequence_length", "3"]);
    let d = plan_decoder(&sig, None).unwrap().unwrap();
    assert_eq!(
        d.position_axes,
        [
            PositionAxis::Batch,
            PositionAxis::Sequence,
            PositionAxis::Extra(3)
        ]
    );

    let sig = kv_model(F, false);
    let names = DecoderNames {
        position_ids: Some("attention_mask".into()),
        ..Default::default()
    };
    let e = plan_decoder(&sig, Some(&names)).unwrap_err().to_string();
    assert!(
        e.contains(
            "input `attention_mask` is named for two roles (attention mask and position ids)"
        ),
        "{e}"
    );
}

/// An input no convention places: the error names the option that would.
#[test]
fn an_unplaced_input_names_the_options() {
    let mut sig = kv_model(F, false);
    sig.inputs.push(t("memory", F, &["batch_size", "7", "64"]));
    let e = plan_decoder(&sig, None).unwrap_err().to_string();
    assert!(e.contains("decoder_context(\"memory\")"), "{e}");
    let names = DecoderNames {
        context: vec!["memory".into()],
        ..Default::default()
    };
    let d = plan_decoder(&sig, Some(&names)).unwrap().unwrap();
    assert_eq!(
        d.context[0].axes,
        [CacheAxis::Batch, CacheAxis::Fixed(7), CacheAxis::Fixed(64)]
    );
}

/// A paged-attention export: `block_tables`, `slot_mapping`, and every cache one pool
/// `[num_blocks, 16, 2, 16]` written in place.
fn paged_model(block_sizes: [&str; 2], in_place: bool) -> ModelSignature {
    let mut inputs = vec![
        t("input_ids", I, &["batch_size", "sequence_length"]),
        t("position_ids", I, &["batch_size", "sequence_length"]),
        t("block_tables", I, &["batch_size", "max_blocks"]),
        t("slot_mapping", I, &["batch_size", "sequence_length"]),
    ];
    let mut outputs = vec![t("logits", F, &["batch_size", "sequence_length", "512"])];
    let mut pairs = Vec::new();
    for (l, bs) in block_sizes.iter().enumerate() {
        let past = format!("past_key_values.{l}.key");
        let present = format!("present.{l}.key");
        inputs.push(t(&past, F, &["num_blocks", bs, "2", "16"]));
        outputs.push(t(&present, F, &["num_blocks", bs, "2", "16"]));
        pairs.push((past, present));
    }
    ModelSignature {
        inputs,
        outputs,
        in_place: if in_place { pairs } else { Vec::new() },
        ..Default::default()
    }
}

#[test]
fn a_paged_cache_by_its_block_inputs() {
    let d = plan_decoder(&paged_model(["16", "16"], true), None)
        .unwrap()
        .unwrap();
    let p = d.paged.as_ref().expect("paged");
    assert_eq!(p.block_tables, ("block_tables".into(), I));
    assert_eq!(p.slot_mapping, ("slot_mapping".into(), I));
    assert_eq!(p.block_size, 16);
    assert_eq!(
        d.caches[0].axes,
        [
            CacheAxis::Blocks,
            CacheAxis::Fixed(16),
            CacheAxis::Fixed(2),
            CacheAxis::Fixed(16)
        ]
    );
    assert!(d.caches[0].grows());
    assert!(!d.shared_buffer, "a pool is not a per-row shared buffer");
    assert!(d.unshared_reason.unwrap().contains("paged"));
    assert!(d.attention_mask.is_none());
}

#[test]
fn a_paged_cache_refused_in_the_models_terms() {
    let err = |sig: &ModelSignature| plan_decoder(sig, None).unwrap_err().to_string();
    let e = err(&paged_model(["16", "8"], true));
    assert!(e.contains("blocks of 8 positions, another cache 16"), "{e}");
    let e = err(&paged_model(["16", "16"], false));
    assert!(e.contains("is not written in place"), "{e}");
    let e = err(&paged_model(["16", "block_size"], true));
    assert!(
        e.contains("a paged cache is one pool [blocks, block_size, ..]"),
        "{e}"
    );
    let mut one_input = paged_model(["16", "16"], true);
    one_input.inputs.retain(|v| v.name != "slot_mapping");
    let e = err(&one_input);
    assert!(
        e.contains("takes both `block_tables` and `slot_mapping`"),
        "{e}"
    );
    // By role under other names.
    let mut renamed = paged_model(["16", "16"], true);
    renamed.inputs[2].name = "tables".into();
    renamed.inputs[3].name = "slots".into();
    let mut names = DecoderNames::default();
    names.set_role(
        DecoderRole::from_name("block_tables").unwrap(),
        "tables".into(),
    );
    names.set_role(
        DecoderRole::from_name("slot_mapping").unwrap(),
        "slots".into(),
    );
    let d = plan_decoder(&renamed, Some(&names)).unwrap().unwrap();
    assert_eq!(d.paged.unwrap().block_tables.0, "tables");
}
