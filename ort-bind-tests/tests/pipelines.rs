//! Encoder-decoder generation on the project's pipeline fixtures
//! (`tests/fixtures/pipelines/`, written by `make_seq2seq.py` with `onnx.helper`): greedy
//! tokens equal Python onnxruntime's (`greedy*.json`, written by `reference_seq2seq.py`),
//! batch 1 and 2, with the encoder's output buffers bound into the decoder (their
//! addresses are the same: 0 bytes copied between the models).

use ort_bind::Result;
use ort_bind::decode::{Decoder, DecoderModel, Edge, EncoderDecoder};
use ort_bind_tests::decoders::{Expected, read};

mod speech_encoder {
    ort_bind::bindings!("tests/fixtures/pipelines/speech/encoder.onnx");
}
mod speech_decoder {
    ort_bind::bindings!("tests/fixtures/pipelines/speech/decoder.onnx");
}
mod merged_encoder {
    ort_bind::bindings!("tests/fixtures/pipelines/merged/encoder_model.onnx");
}
mod merged_decoder {
    ort_bind::bindings!("tests/fixtures/pipelines/merged/decoder_model_merged.onnx");
}
mod marian_encoder {
    ort_bind::bindings!("tests/fixtures/pipelines/marian/encoder.onnx");
}
mod marian_decoder {
    ort_bind::bindings!("tests/fixtures/pipelines/marian/decoder.onnx");
}

fn expected(fixture: &str, file: &str) -> (Expected, serde_json::Value) {
    read(
        &ort_bind_tests::paths::fixture("pipelines")
            .join(fixture)
            .join(file),
    )
}

/// Greedy-decodes as many tokens as `want` holds after the prompts; checks them and the
/// first logits.
fn greedy<T: DecoderModel>(generator: &mut Decoder<T>, want: &Expected, what: &str) -> Result<()> {
    generator.prefill(&want.prompts.concat())?;
    let first = generator.logits()?;
    for (i, (&got, w)) in first.row(0).iter().zip(&want.logits_first).enumerate() {
        let got = f64::from(ort_bind::decode::Logit::to_f32(got));
        assert!(
            (got - w).abs() <= 1e-3 * w.abs().max(1.0),
            "{what}: logit {i}: {got} vs Python's {w}"
        );
    }
    let steps = want.tokens[0].len();
    let mut rows = vec![Vec::new(); want.prompts.len()];
    for _ in 0..steps {
        let picked = generator.step_greedy()?;
        for (row, &t) in rows.iter_mut().zip(picked) {
            row.push(t);
        }
    }
    assert_eq!(rows, want.tokens, "{what}: greedy tokens");
    Ok(())
}

/// `audio_features[b, c, t] = sin(0.01 (t + 1)(c + 1) + 0.5 b)`, as `reference_seq2seq.py`.
fn audio(batch: usize, frames: usize) -> Vec<f32> {
    let mut out = Vec::with_capacity(batch * 16 * frames);
    for b in 0..batch {
        for c in 0..16 {
            for t in 0..frames {
                let x = 0.01 * (t as f64 + 1.0) * (c as f64 + 1.0) + 0.5 * b as f64;
                out.push(x.sin() as f32);
            }
        }
    }
    out
}

#[test]
fn speech_encoder_decoder_matches_python() -> Result<()> {
    let encoder = speech_encoder::Model::load()?;
    let decoder = speech_decoder::Model::load()?;
    let edges: Vec<Edge> = (0..2)
        .flat_map(|l| ["key", "value"].map(move |kv| (l, kv)))
        .map(|(l, kv)| {
            let from: &'static str = format!("present_{kv}_cross_{l}").leak();
            let to: &'static str = format!("past_{kv}_cross_{l}").leak();
            Edge { from, to }
        })
        .collect();
    for (file, batch) in [("greedy.json", 1), ("greedy_batch2.json", 2)] {
        let (want, json) = expected("speech", file);
        let frames = json["source"]["num_frames"].as_u64().unwrap() as usize;
        let dims = speech_encoder::Dims::from_input_shapes(&[batch, 16, frames])?;
        let mut generator =
            EncoderDecoder::new(encoder.bind(dims)?, decoder.decoder(batch, 128)?, &edges)?;
        generator
            .encoder_inputs()
            .audio_features
            .copy_from_slice(&audio(batch, frames))?;
        generator.encode()?;
        // The decoder reads the encoder's buffers: the same memory, nothing copied.
        let cross = generator
            .encoder_outputs()
            .present_key_cross_0
            .as_slice()
            .as_ptr();
        assert_eq!(
            generator.context_address("past_key_cross_0"),
            Some(cross.addr())
        );
        greedy(&mut generator, &want, &format!("speech {file}"))?;
    }
    Ok(())
}

/// The source ids and mask of a fixture's reference, flat (rows one after another).
fn source(json: &serde_json::Value) -> (Vec<i64>, Vec<i64>, [usize; 2]) {
    let rows = |key: &str| -> Vec<Vec<i64>> {
        json[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                r.as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_i64().unwrap())
                    .collect()
            })
            .collect()
    };
    let (ids, mask) = (rows("source"), rows("source_mask"));
    let dims = [ids.len(), ids[0].len()];
    (ids.concat(), mask.concat(), dims)
}

#[test]
fn an_optimum_merged_decoder_computes_its_cross_cache_once_and_matches_python() -> Result<()> {
    let encoder = merged_encoder::Model::load()?;
    let decoder = merged_decoder::Model::load()?;
    let edges = [
        Edge {
            from: "last_hidden_state",
            to: "encoder_hidden_states",
        },
        // An encoder input both models read: the decoder binds the encoder's buffer.
        Edge {
            from: "attention_mask",
            to: "encoder_attention_mask",
        },
    ];
    for file in ["greedy.json", "greedy_batch2.json"] {
        let (want, json) = expected("merged", file);
        let (ids, mask, [batch, len]) = source(&json);
        let dims = merged_encoder::Dims::from_input_shapes(&[batch, len], &[batch, len])?;
        let mut generator =
            EncoderDecoder::new(encoder.bind(dims)?, decoder.decoder(batch, 128)?, &edges)?;
        {
            let mut inputs = generator.encoder_inputs();
            inputs.input_ids.copy_from_slice(&ids)?;
            inputs.attention_mask.copy_from_slice(&mask)?;
        }
        generator.encode()?;
        let hidden = generator
            .encoder_outputs()
            .last_hidden_state
            .as_slice()
            .as_ptr();
        assert_eq!(
            generator.context_address("encoder_hidden_states"),
            Some(hidden.addr())
        );
        greedy(&mut generator, &want, &format!("merged {file}"))?;
        // A second sequence over the same source starts over (the cross cache is
        // computed again by its first run) and decodes the same.
        greedy(&mut generator, &want, &format!("merged {file}, again"))?;
    }
    Ok(())
}

#[test]
fn a_marian_decoder_carries_its_recurrent_state_and_matches_python() -> Result<()> {
    let encoder = marian_encoder::Model::load()?;
    let decoder = marian_decoder::Model::load()?;
    let edges = [
        Edge {
            from: "encoder_outputs",
            to: "encoder_hidden_states",
        },
        Edge {
            from: "attention_mask",
            to: "encoder_attention_mask",
        },
    ];
    let (want, json) = expected("marian", "greedy.json");
    let (ids, mask, _) = source(&json);
    let mut generator = EncoderDecoder::new(
        encoder.bind(marian_encoder::Dims::default())?,
        decoder.decoder(1, 128)?,
        &edges,
    )?;
    {
        let mut inputs = generator.encoder_inputs();
        inputs.input_ids.copy_from_slice(&ids)?;
        inputs.attention_mask.copy_from_slice(&mask)?;
    }
    generator.encode()?;
    greedy(&mut generator, &want, "marian")?;
    Ok(())
}

/// The macro route: `pipeline!` reads both files, finds every edge by name (the cross
/// caches) and checks it, and generates `Pipeline` and `Generator`.
mod speech {
    ort_bind::pipeline!(
        encoder = "tests/fixtures/pipelines/speech/encoder.onnx",
        decoder = "tests/fixtures/pipelines/speech/decoder.onnx",
    );
}

/// Marian through the macro: one edge declared, the mask found by name.
mod marian {
    ort_bind::pipeline!(
        encoder = "tests/fixtures/pipelines/marian/encoder.onnx",
        decoder = ("tests/fixtures/pipelines/marian/decoder.onnx", decoder),
        encoder.encoder_outputs -> decoder.encoder_hidden_states,
    );
}

/// The build.rs route (`Builder::pipeline` in `ort-bind-tests/build.rs`): the same items.
mod merged_pipeline {
    ort_bind::include_bindings!("merged_pipeline");
}

#[test]
fn the_build_rs_pipeline_decodes_the_same() -> Result<()> {
    let pipeline = merged_pipeline::Pipeline::load()?;
    let (want, json) = expected("merged", "greedy_batch2.json");
    let (ids, mask, [batch, len]) = source(&json);
    let dims = merged_pipeline::encoder::Dims {
        batch_size: batch,
        encoder_sequence_length: len,
    };
    let mut generator = pipeline.generator(dims, batch, 128)?;
    {
        let mut inputs = generator.encoder_inputs();
        inputs.input_ids.copy_from_slice(&ids)?;
        inputs.attention_mask.copy_from_slice(&mask)?;
    }
    generator.encode()?;
    greedy(&mut generator, &want, "merged through build.rs")?;
    assert_eq!(merged_pipeline::EDGES.len(), 2);
    Ok(())
}

#[test]
fn the_pipeline_macro_wires_and_decodes_the_same() -> Result<()> {
    assert_eq!(speech::EDGES.len(), 4);
    let pipeline = speech::Pipeline::load()?;
    let (want, json) = expected("speech", "greedy_batch2.json");
    let frames = json["source"]["num_frames"].as_u64().unwrap() as usize;
    let mut generator = pipeline.generator(
        speech::encoder::Dims {
            batch_size: 2,
            num_frames: frames,
        },
        2,
        128,
    )?;
    generator
        .encoder_inputs()
        .audio_features
        .copy_from_slice(&audio(2, frames))?;
    generator.encode()?;
    greedy(&mut generator, &want, "speech through pipeline!")?;

    let pipeline = marian::Pipeline::load()?;
    let (want, json) = expected("marian", "greedy.json");
    let (ids, mask, _) = source(&json);
    // `generator_on`: both models' buffers on one device (here the host).
    let mut generator =
        pipeline.generator_on(ort_bind::Cpu, marian::encoder::Dims::default(), 1, 128)?;
    {
        let mut inputs = generator.encoder_inputs();
        inputs.input_ids.copy_from_slice(&ids)?;
        inputs.attention_mask.copy_from_slice(&mask)?;
    }
    generator.encode()?;
    greedy(&mut generator, &want, "marian through pipeline!")?;
    Ok(())
}

/// The derive route: Marian's decoder on a struct, one role named by option (the past
/// length scalar under Marian's name, which is also found without it).
#[derive(ort_bind::OnnxBinding)]
#[onnx(
    model = "tests/fixtures/pipelines/marian/decoder.onnx",
    decoder_role("past_sequence_length", "past_key_values_length")
)]
struct MarianDecoder;

#[test]
fn the_derive_route_decodes_the_same() -> Result<()> {
    let session = ort_bind::Session::from_file(
        MarianDecoder::MODEL_FILE.find()?,
        &ort_bind::SessionOptions::new(),
    )?;
    let decoder: ort_bind::decode::Decoder<MarianDecoder> =
        MarianDecoder::decoder(&session, 1, 128)?;
    let edges = [
        Edge {
            from: "encoder_outputs",
            to: "encoder_hidden_states",
        },
        Edge {
            from: "attention_mask",
            to: "encoder_attention_mask",
        },
    ];
    let encoder = marian_encoder::Model::load()?;
    let mut generator = EncoderDecoder::new(
        encoder.bind(marian_encoder::Dims::default())?,
        decoder,
        &edges,
    )?;
    let (want, json) = expected("marian", "greedy.json");
    let (ids, mask, _) = source(&json);
    {
        let mut inputs = generator.encoder_inputs();
        inputs.input_ids.copy_from_slice(&ids)?;
        inputs.attention_mask.copy_from_slice(&mask)?;
    }
    generator.encode()?;
    greedy(&mut generator, &want, "marian through the derive")?;
    assert_eq!(
        MarianDecoder::DECODER.scalars[0].name,
        "past_key_values_length"
    );
    Ok(())
}

/// A multimodal prompt: vision -> embedding -> text. `pipeline!` finds that the text
/// model is fed embeddings by the embedding model (its output `inputs_embeds`) and that
/// the vision model feeds the embedding model's `image_features`; the text model's
/// position ids carry an extra axis (`[3, batch, sequence]`).
mod vision_text {
    ort_bind::pipeline!(
        vision = "tests/fixtures/pipelines/vision_text/vision.onnx",
        embedding = "tests/fixtures/pipelines/vision_text/embedding.onnx",
        text = "tests/fixtures/pipelines/vision_text/text.onnx",
    );
}

/// `pixel_values[b, c, y, x] = sin(0.05 (32 y + x + 1)(c + 1) + 0.3 b)` (in f64, then f32),
/// as `reference_chains.py`.
fn pixels(batch: usize) -> Vec<f32> {
    let mut out = Vec::with_capacity(batch * 3 * 32 * 32);
    for b in 0..batch {
        for c in 0..3 {
            for y in 0..32 {
                for x in 0..32 {
                    let v = 0.05 * (y * 32 + x + 1) as f64 * (c + 1) as f64 + 0.3 * b as f64;
                    out.push(v.sin() as f32);
                }
            }
        }
    }
    out
}

#[test]
fn a_multimodal_prompt_decodes_as_python_does() -> Result<()> {
    let pipeline = vision_text::Pipeline::load()?;
    for (file, batch) in [("greedy.json", 1), ("greedy_batch2.json", 2)] {
        let path = ort_bind_tests::paths::fixture("pipelines").join("vision_text");
        let (want, _) = read(&path.join(file));
        let mut generator =
            pipeline.generator(vision_text::vision::Dims { batch_size: batch }, batch, 256)?;
        generator
            .encoder_inputs()
            .pixel_values
            .copy_from_slice(&pixels(batch))?;
        generator.encode()?;
        // The embedding model reads the vision model's features in place, and writes the
        // embeddings into the buffer the text model reads.
        let features = generator
            .encoder_outputs()
            .image_features
            .as_slice()
            .as_ptr();
        assert_eq!(
            generator.context_address("image_features"),
            Some(features.addr())
        );
        assert!(generator.embeds_address().is_some());
        greedy(&mut generator, &want, &format!("vision_text {file}"))?;
    }
    Ok(())
}

/// Misuse is a clear error that leaves everything usable: decoding before the encoder ran,
/// a context of the wrong shape or type, edges that name nothing, a batch the model
/// fixes otherwise, a decoder fed embeddings made without its embedding model.
#[test]
fn misuse_is_refused_and_leaves_everything_usable() -> Result<()> {
    let encoder = speech_encoder::Model::load()?;
    let decoder = speech_decoder::Model::load()?;
    let dims = speech_encoder::Dims::from_input_shapes(&[1, 16, 30])?;
    let edges = speech::EDGES;

    // Decoding before `encode`: the cross caches are missing, named.
    let mut generator = EncoderDecoder::new(encoder.bind(dims)?, decoder.decoder(1, 64)?, &edges)?;
    let e = generator.prefill(&[3]).unwrap_err();
    assert!(
        e.to_string()
            .contains("has no `past_key_cross_0` for this sequence yet"),
        "{e}"
    );
    generator.encoder_inputs().audio_features.fill(0.5);
    generator.encode()?;
    generator.prefill(&[3, 17])?;
    generator.step_greedy()?;
    // Touching the encoder's inputs forgets the decoder's view of its buffers.
    generator.encoder_inputs().audio_features.fill(0.25);
    assert!(generator.step(&[5]).is_err());
    generator.encode()?;
    generator.prefill(&[3])?;

    // Edges that name nothing, or leave a cross cache unfed.
    let bad = [Edge {
        from: "present_key_cros_0",
        to: "past_key_cross_0",
    }];
    let e = EncoderDecoder::new(encoder.bind(dims)?, decoder.decoder(1, 64)?, &bad).unwrap_err();
    assert!(
        e.to_string()
            .contains("no output or input `present_key_cros_0`"),
        "{e}"
    );
    let e =
        EncoderDecoder::new(encoder.bind(dims)?, decoder.decoder(1, 64)?, &edges[..3]).unwrap_err();
    assert!(
        e.to_string()
            .contains("no edge feeds the decoder's `past_value_cross_1`"),
        "{e}"
    );

    // `set_context` checks what it is given against the model.
    let mut lone = decoder.decoder(2, 64)?;
    let wrong_batch = ort_bind::Tensor::<f32, ort_bind::AnyRank>::new("k", &[1, 4, 15, 16])?;
    let e = lone
        .set_context("past_key_cross_0", wrong_batch)
        .unwrap_err();
    assert!(e.to_string().contains("axis 0 is the batch, 2 rows"), "{e}");
    let wrong_type = ort_bind::Tensor::<i64, ort_bind::AnyRank>::new("k", &[2, 4, 15, 16])?;
    let e = lone
        .set_context("past_key_cross_0", wrong_type)
        .unwrap_err();
    assert!(e.to_string().contains("float32"), "{e}");
    let e = lone
        .set_context(
            "input_ids",
            ort_bind::Tensor::<i64, ort_bind::AnyRank>::new("k", &[2, 1])?,
        )
        .unwrap_err();
    assert!(
        e.to_string().contains("not an input this decoder holds"),
        "{e}"
    );

    // Marian fixes the batch at 1.
    let marian = marian_decoder::Model::load()?;
    let e = marian.decoder(2, 64).unwrap_err();
    assert!(e.to_string().contains("fixes the batch at 1"), "{e}");

    // A decoder fed embeddings needs its embedding model.
    let vision_text = vision_text::Pipeline::load()?;
    let e = ort_bind::decode::Decoder::<vision_text::text::Model>::new(
        vision_text.text.session(),
        &vision_text::DECODER,
        1,
        64,
    )
    .unwrap_err();
    assert!(e.to_string().contains("needs its other parts"), "{e}");
    Ok(())
}

/// A decoder split in three files: embeddings -> transformer (the cache) -> language-model
/// head. `pipeline!` joins them into one decoder: each run, the embedding model writes into
/// the buffer the transformer reads, and the head reads the transformer's hidden states in
/// place and writes the logits.
mod split {
    ort_bind::pipeline!(
        embed = "tests/fixtures/pipelines/split/embed.onnx",
        body = "tests/fixtures/pipelines/split/body.onnx",
        lm_head = "tests/fixtures/pipelines/split/lm_head.onnx",
    );
}

#[test]
fn a_split_decoder_decodes_as_python_does() -> Result<()> {
    let pipeline = split::Pipeline::load()?;
    for (file, batch) in [("greedy.json", 1), ("greedy_batch2.json", 2)] {
        let (want, _) = expected("split", file);
        let mut decoder = pipeline.decoder(batch, 256)?;
        greedy(&mut decoder, &want, &format!("split {file}"))?;
    }
    Ok(())
}
