use super::*;
use crate::signature::ValueType;

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
