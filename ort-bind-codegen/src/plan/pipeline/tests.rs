use super::*;
use crate::planner::plan_decoder;

fn fixture(rel: &str) -> ModelSignature {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../ort-bind-tests/tests/fixtures/pipelines")
        .join(rel);
    crate::onnx::read_signature(&path).unwrap()
}

fn edge(from: &str, to: &str) -> EdgeDecl {
    let (fm, f) = from.split_once('.').unwrap();
    let (tm, t) = to.split_once('.').unwrap();
    EdgeDecl {
        from_model: fm.into(),
        from: f.into(),
        to_model: tm.into(),
        to: t.into(),
        view: false,
    }
}

/// The speech pair: every cross-attention cache is found by name (`present_key_cross_0`
/// feeds `past_key_cross_0`), and the sizes note says what the encoder's sequence is.
#[test]
fn the_speech_pair_is_wired_by_name() {
    let (enc, dec) = (
        fixture("speech/encoder.onnx"),
        fixture("speech/decoder.onnx"),
    );
    let d = plan_decoder(&dec, None).unwrap().unwrap();
    let models = [
        PipelineModel {
            name: "encoder",
            sig: &enc,
            decoder: None,
            head: None,
        },
        PipelineModel {
            name: "decoder",
            sig: &dec,
            decoder: Some(&d),
            head: None,
        },
    ];
    let edges = plan_pipeline(&models, &[]).unwrap();
    let wired: Vec<(&str, &str)> = edges
        .iter()
        .map(|e| (e.from.as_str(), e.to.as_str()))
        .collect();
    assert_eq!(
        wired,
        [
            ("present_key_cross_0", "past_key_cross_0"),
            ("present_value_cross_0", "past_value_cross_0"),
            ("present_key_cross_1", "past_key_cross_1"),
            ("present_value_cross_1", "past_value_cross_1"),
        ]
    );
    assert!(edges.iter().all(|e| e.inferred && e.from_output));
    assert_eq!(
        edges[0].sizes,
        "`encoder_sequence_length` = `floor((num_frames + 1) / 2)`"
    );
}

/// Marian: the encoder's `encoder_outputs` feeds `encoder_hidden_states`, and the
/// encoder's own `attention_mask` input feeds the decoder's `encoder_attention_mask`.
#[test]
fn marian_shares_the_source_mask() {
    let (enc, dec) = (
        fixture("marian/encoder.onnx"),
        fixture("marian/decoder.onnx"),
    );
    let d = plan_decoder(&dec, None).unwrap().unwrap();
    let models = [
        PipelineModel {
            name: "encoder",
            sig: &enc,
            decoder: None,
            head: None,
        },
        PipelineModel {
            name: "decoder",
            sig: &dec,
            decoder: Some(&d),
            head: None,
        },
    ];
    let edges = plan_pipeline(&models, &[]).unwrap();
    let wired: Vec<(&str, bool, &str)> = edges
        .iter()
        .map(|e| (e.from.as_str(), e.from_output, e.to.as_str()))
        .collect();
    assert_eq!(
        wired,
        [
            ("encoder_outputs", true, "encoder_hidden_states"),
            ("attention_mask", false, "encoder_attention_mask"),
        ]
    );
}

/// Every mistake is refused, naming both models.
#[test]
fn edge_mistakes_are_refused() {
    let (enc, dec) = (
        fixture("speech/encoder.onnx"),
        fixture("speech/decoder.onnx"),
    );
    let d = plan_decoder(&dec, None).unwrap().unwrap();
    let models = [
        PipelineModel {
            name: "encoder",
            sig: &enc,
            decoder: None,
            head: None,
        },
        PipelineModel {
            name: "decoder",
            sig: &dec,
            decoder: Some(&d),
            head: None,
        },
    ];
    let err = |decls: &[EdgeDecl]| plan_pipeline(&models, decls).unwrap_err();
    let e = err(&[edge("encoder.present_key_cross_0", "decoder.logits")]);
    assert!(
        e.message
            .contains("goes the wrong way: `logits` is an output of `decoder`"),
        "{e}"
    );
    assert_eq!(e.edge, Some(0));
    let e = err(&[edge(
        "encodr.present_key_cross_0",
        "decoder.past_key_cross_0",
    )]);
    assert!(
        e.message
            .contains("no model `encodr`; did you mean `encoder`?"),
        "{e}"
    );
    let e = err(&[edge(
        "encoder.present_key_cros_0",
        "decoder.past_key_cross_0",
    )]);
    assert!(
        e.message
            .contains("has no output `present_key_cros_0`; did you mean `present_key_cross_0`?"),
        "{e}"
    );
    let e = err(&[edge(
        "encoder.encoder_hidden_states",
        "decoder.past_key_cross_0",
    )]);
    assert!(e.message.contains("ranks differ"), "{e}");
    let e = err(&[edge("encoder.audio_features", "decoder.input_ids")]);
    assert!(
        e.message
            .contains("is float32[batch_size, 16, num_frames] but `input_ids` takes int64"),
        "{e}"
    );
    let e = err(&[
        edge("encoder.present_key_cross_0", "decoder.past_key_cross_0"),
        edge("encoder.present_key_cross_1", "decoder.past_key_cross_0"),
    ]);
    assert!(e.message.contains("is fed twice"), "{e}");
    assert_eq!(e.edge, Some(1));
    // A cycle: the decoder's logits back into the encoder.
    let e = err(&[edge("decoder.logits", "encoder.audio_features")]);
    assert!(e.message.contains("cycle through"), "{e}");

    // A decoder input nothing feeds, and type errors between fixed-size models.
    let marian = fixture("marian/encoder.onnx");
    let md = fixture("marian/decoder.onnx");
    let mdp = plan_decoder(&md, None).unwrap().unwrap();
    let models = [
        PipelineModel {
            name: "speech",
            sig: &enc,
            decoder: None,
            head: None,
        },
        PipelineModel {
            name: "marian",
            sig: &md,
            decoder: Some(&mdp),
            head: None,
        },
    ];
    let e = plan_pipeline(&models, &[]).unwrap_err();
    assert!(
        e.message
            .contains("decoder `marian` holds `encoder_attention_mask`"),
        "{e}"
    );
    let models = [
        PipelineModel {
            name: "encoder",
            sig: &marian,
            decoder: None,
            head: None,
        },
        PipelineModel {
            name: "decoder",
            sig: &md,
            decoder: Some(&mdp),
            head: None,
        },
    ];
    let e = plan_pipeline(
        &models,
        &[edge("encoder.attention_mask", "decoder.rnn_states_prev")],
    )
    .unwrap_err();
    assert!(
        e.message.contains(
            "`attention_mask` is int64[1, 16] but `rnn_states_prev` takes float32[3, 1, 64]"
        ),
        "{e}"
    );
    let e = plan_pipeline(
        &models,
        &[edge(
            "encoder.encoder_outputs",
            "decoder.encoder_attention_mask",
        )],
    )
    .unwrap_err();
    assert!(
        e.message
            .contains("is float32[1, 16, 64] but `encoder_attention_mask` takes int64[1, 16]"),
        "{e}"
    );
}

/// A chain's one `Dims`: the vision model's image features feed the embedding model
/// (found by name), so the embedding's batch is the vision model's and its number of
/// image tokens is the 16 the vision model fixes; its sequence length stays a field. A
/// view edge (the OCR pair) equates nothing.
#[test]
fn a_chain_has_one_dims_with_what_edges_equate_left_out() {
    use crate::planner::chain::{DimValue, plan_chain_dims};
    let plan_of = |sig: &ModelSignature| crate::planner::plan(sig).unwrap();
    let (vision, embedding) = (
        fixture("vision_text/vision.onnx"),
        fixture("vision_text/embedding.onnx"),
    );
    let (vp, ep) = (plan_of(&vision), plan_of(&embedding));
    let model = |name, sig| PipelineModel {
        name,
        sig,
        decoder: None,
        head: None,
    };
    let models = [model("vision", &vision), model("embedding", &embedding)];
    let edges = plan_pipeline(&models, &[]).unwrap();
    let names = ["vision".to_owned(), "embedding".to_owned()];
    let dims = plan_chain_dims(&names, &[&vp, &ep], &edges);
    let fields: Vec<&str> = dims.fields.iter().map(|f| f.field.as_str()).collect();
    assert_eq!(fields, ["batch_size", "sequence_length"]);
    let embedding_dims: Vec<(&str, &DimValue)> = ep
        .dims
        .iter()
        .map(|d| d.field.as_str())
        .zip(&dims.models[1])
        .collect();
    assert!(embedding_dims.contains(&("batch_size", &DimValue::Field(0))));
    assert!(embedding_dims.contains(&("num_image_tokens", &DimValue::Const(16))));
    assert_eq!(dims.order, [0, 1]);

    let (det, rec) = (fixture("ocr/detector.onnx"), fixture("ocr/recognizer.onnx"));
    let (dp, rp) = (plan_of(&det), plan_of(&rec));
    let models = [model("detector", &det), model("recognizer", &rec)];
    let mut view = edge("detector.heatmap", "recognizer.crops");
    view.view = true;
    let edges = plan_pipeline(&models, &[view]).unwrap();
    assert!(edges[0].view);
    let names = ["detector".to_owned(), "recognizer".to_owned()];
    let dims = plan_chain_dims(&names, &[&dp, &rp], &edges);
    let fields: Vec<&str> = dims.fields.iter().map(|f| f.field.as_str()).collect();
    assert_eq!(fields, ["height", "width", "num_crops", "crop_width"]);
}
