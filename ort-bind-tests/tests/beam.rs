//! Beam search (`decode::BeamSearch`) against onnxruntime-genai 0.18.0's on the `gqa_f32`
//! fixture: for every case of `gqa_f32/beam.json` (written by `beam_reference.py`: 2 to 5
//! beams, length penalties 1, 2, 0.5 and -0.5, early stopping on and off, one to all
//! sequences returned, eos ids the model never ranks high and ones it emits) the
//! sequences equal genai's exactly and the scores are within 1e-4 (relative, beyond 1) of
//! the ones recomputed by teacher forcing, in both cache modes and through the build.rs, `bindings!` and
//! derive routes. Also: `Decoder::reorder_rows` against decoders fed the reordered
//! sequences (KV caches in both modes, a stacked cache whose batch axis is not the first,
//! recurrent state), what it moves, and every refusal.

use ort_bind::decode::{
    Beam, BeamOptions, BeamSearch, CacheMode, DecodeError, Decoder, DecoderModel,
};
use ort_bind::{Error, Result};

/// The build.rs route (`ModelOptions::decoder()` in `ort-bind-tests/build.rs`).
mod decoder_gqa_f32 {
    ort_bind::include_bindings!("decoder_gqa_f32");
}
/// The `bindings!` route.
mod gqa_f32 {
    ort_bind::bindings!("tests/fixtures/decoders/gqa_f32/model.onnx");
}
mod gpt2_stacked {
    ort_bind::bindings!("tests/fixtures/decoders/gpt2_stacked/model.onnx");
}
mod hybrid_conv {
    ort_bind::bindings!("tests/fixtures/decoders/hybrid_conv/model.onnx");
}

/// `gqa_f32` with a paged cache (`make_paged.py`: the same weights).
mod gqa_paged {
    ort_bind::bindings!("tests/fixtures/decoders/gqa_paged/model.onnx");
}

/// The derive route.
#[derive(ort_bind::OnnxBinding)]
#[onnx(model = "tests/fixtures/decoders/gqa_f32/model.onnx", decoder)]
struct GqaF32 {}

const CAPACITY: usize = 64;
const SCORE_TOL: f32 = 1e-4;

/// One case of `beam.json`.
#[derive(Debug)]
struct Case {
    name: String,
    prompt: Vec<i64>,
    options: BeamOptions,
    sequences: Vec<Vec<i64>>,
    ended: Vec<bool>,
    scores: Vec<f32>,
}

fn cases() -> Vec<Case> {
    let path = ort_bind_tests::decoders::file("gqa_f32", "beam.json");
    let json = ort_bind_tests::decoders::read_json(&path);
    let ids = ort_bind_tests::decoders::ids;
    let num = |v: &serde_json::Value| v.as_u64().expect("a count") as usize;
    let cases: Vec<Case> = json["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|c| Case {
            name: c["name"].as_str().expect("a name").to_owned(),
            prompt: ids(&c["prompt"]),
            options: BeamOptions::new(num(&c["num_beams"]), num(&c["max_length"]))
                .length_penalty(c["length_penalty"].as_f64().expect("a penalty") as f32)
                .early_stopping(c["early_stopping"].as_bool().expect("a flag"))
                .return_sequences(num(&c["num_return_sequences"]))
                .eos(c["eos_token_id"].as_i64().expect("an id"))
                .pad(c["pad_token_id"].as_i64().expect("an id")),
            sequences: c["sequences"]
                .as_array()
                .expect("sequences")
                .iter()
                .map(ids)
                .collect(),
            ended: c["eos"]
                .as_array()
                .expect("eos flags")
                .iter()
                .map(|e| e.as_bool().expect("a flag"))
                .collect(),
            scores: c["scores"]
                .as_array()
                .expect("scores")
                .iter()
                .map(|s| s.as_f64().expect("a score") as f32)
                .collect(),
        })
        .collect();
    assert!(
        cases.len() >= 8,
        "{}: {} cases",
        path.display(),
        cases.len()
    );
    cases
}

fn check(case: &Case, got: &[Beam], route: &str) {
    let what = format!("{} ({route})", case.name);
    let tokens: Vec<&Vec<i64>> = got.iter().map(|b| &b.tokens).collect();
    let want: Vec<&Vec<i64>> = case.sequences.iter().collect();
    assert_eq!(tokens, want, "{what}: sequences");
    let ended: Vec<bool> = got.iter().map(|b| b.ended).collect();
    assert_eq!(ended, case.ended, "{what}: which ended on eos");
    for (i, (b, want)) in got.iter().zip(&case.scores).enumerate() {
        // Relative beyond 1: a score is a float32 sum over up to 36 tokens, scaled by
        // len^-length_penalty (6.3 for -0.5 over 40), against a float64 recomputation.
        assert!(
            (b.score - want).abs() <= SCORE_TOL * want.abs().max(1.0),
            "{what}: score {i} is {}, genai's sequence scores {want}",
            b.score
        );
    }
}

/// Runs every case whose beams fit a decoder made by `make(num_beams)`, one search per
/// decoder batch reused across the cases of that batch.
fn check_all<T: DecoderModel, M: CacheMode>(
    route: &str,
    make: impl Fn(usize) -> Result<Decoder<T, M>>,
) -> Result<()> {
    let cases = cases();
    let mut beams: Vec<usize> = cases.iter().map(|c| c.options.num_beams).collect();
    beams.sort_unstable();
    beams.dedup();
    for k in beams {
        let mut search = BeamSearch::new(make(k)?)?;
        for case in cases.iter().filter(|c| c.options.num_beams == k) {
            let got = search.run(&case.prompt, &case.options)?;
            check(case, &got, route);
        }
    }
    Ok(())
}

#[test]
fn the_build_rs_route_equals_genai_in_both_cache_modes() -> Result<()> {
    let model = decoder_gqa_f32::Model::load()?;
    check_all("build.rs, shared buffer", |k| {
        model.shared_decoder(k, CAPACITY)
    })?;
    check_all("build.rs, growing", |k| model.decoder(k, CAPACITY))?;
    check_all("build.rs, lazy growing", |k| {
        model.lazy_decoder_on(ort_bind::Cpu, k, CAPACITY)
    })?;
    // Past 64 positions a lazily reserved cache grows (new buffers, with the room to
    // reorder in) while the beams reorder: the same beams as the shared buffer's.
    let options = BeamOptions::new(3, 100).return_sequences(3);
    let prompt: Vec<i64> = (0..12).map(|i| (5 + 37 * i) % 500).collect();
    let mut lazy = BeamSearch::new(model.lazy_decoder_on(ort_bind::Cpu, 3, 128)?)?;
    let mut shared = BeamSearch::new(model.shared_decoder(3, 128)?)?;
    let got = lazy.run(&prompt, &options)?;
    assert_eq!(got, shared.run(&prompt, &options)?);
    assert!(lazy.decoder().stats().cache_growths > 0);
    assert!(got.iter().all(|b| b.tokens.len() == 88));
    Ok(())
}

/// Over a paged pool the beams share blocks: reordering trades block lists, and a run
/// copies only a shared block it writes into (the last, partly filled one).
#[test]
fn a_paged_cache_equals_genai_and_shares_the_beams_blocks() -> Result<()> {
    let model = gqa_paged::Model::load()?;
    // Room for every beam's own 64 positions (4 blocks), and as many again for copies.
    check_all("bindings!, paged", |k| {
        model.paged_decoder(k, CAPACITY, 8 * k)
    })?;
    // Bytes moved per search: the shared buffer copies every moved row's positions, the
    // paged pool at most a block per beam per step.
    let options = BeamOptions::new(4, 60).return_sequences(4);
    let prompt: Vec<i64> = (0..12).map(|i| (5 + 37 * i) % 500).collect();
    let mut paged = BeamSearch::new(model.paged_decoder(4, CAPACITY, 32)?)?;
    let per_row = gqa_f32::Model::load()?;
    let mut shared = BeamSearch::new(per_row.shared_decoder(4, CAPACITY)?)?;
    let got = paged.run(&prompt, &options)?;
    // The same beams; scores to float32 rounding (the two models sum attention apart).
    for (a, b) in got.iter().zip(&shared.run(&prompt, &options)?) {
        assert_eq!((&a.tokens, a.ended), (&b.tokens, b.ended));
        assert!(
            (a.score - b.score).abs() <= SCORE_TOL,
            "{} vs {}",
            a.score,
            b.score
        );
    }
    let (p, s) = (
        paged.decoder().stats().cache_bytes_moved,
        shared.decoder().stats().cache_bytes_moved,
    );
    assert!(p * 2 < s, "paged moved {p} bytes, shared buffer {s}");
    // The 12-token prompt's block is shared by the four beams: fewer blocks in use than
    // four beams of 59 positions alone (4 x 4).
    let used = paged.decoder().pool_blocks() - paged.decoder().free_blocks();
    assert!(used < 16, "{used} blocks in use");
    Ok(())
}

#[test]
fn the_bindings_macro_route_equals_genai_in_both_cache_modes() -> Result<()> {
    let model = gqa_f32::Model::load()?;
    check_all("bindings!, shared buffer", |k| {
        model.shared_decoder(k, CAPACITY)
    })?;
    check_all("bindings!, growing", |k| model.decoder(k, CAPACITY))
}

#[test]
fn the_derive_route_equals_genai() -> Result<()> {
    let options = ort_bind::SessionOptions::new();
    let session = ort_bind::Session::from_file(GqaF32::MODEL_FILE.find()?, &options)?;
    check_all("derive, shared buffer", |k| {
        GqaF32::shared_decoder(&session, k, CAPACITY)
    })?;
    check_all("derive, growing", |k| {
        GqaF32::decoder(&session, k, CAPACITY)
    })
}

/// More decoder rows than beams: the rows beyond them run the padding id and change
/// nothing; an untyped decoder runs the same search.
#[test]
fn extra_rows_and_untyped_decoders_search_the_same() -> Result<()> {
    let model = gqa_f32::Model::load()?;
    let cases = cases();
    let mut search = BeamSearch::new(model.shared_decoder(6, CAPACITY)?)?;
    for case in &cases {
        check(
            case,
            &search.run(&case.prompt, &case.options)?,
            "6 rows, shared",
        );
    }
    let untyped = Decoder::<f32>::new(model.session(), &gqa_f32::DECODER, 5, CAPACITY)?;
    let mut search = BeamSearch::new(untyped)?;
    for case in cases.iter().filter(|c| c.options.num_beams <= 5) {
        check(
            case,
            &search.run(&case.prompt, &case.options)?,
            "untyped, growing",
        );
    }
    Ok(())
}

/// The logits of each row after `src` reordering and a step equal those of a decoder fed
/// the reordered prompts and the same step: the cache moved with its row.
fn check_reorder<T: DecoderModel, M: CacheMode>(
    what: &str,
    make: impl Fn() -> Result<Decoder<T, M>>,
    prompts: &[Vec<i64>],
    src: &[usize],
) -> Result<u64> {
    let step: Vec<i64> = (0..prompts.len() as i64).map(|i| 40 + 3 * i).collect();
    let mut reordered = make()?;
    reordered.prefill(&prompts.concat())?;
    reordered.step(&[9, 8, 7, 6][..prompts.len()])?;
    let before = reordered.stats().cache_bytes_moved;
    reordered.reorder_rows(src)?;
    let moved = reordered.stats().cache_bytes_moved - before;
    assert!(
        matches!(
            reordered.logits(),
            Err(Error::Decode(DecodeError::NoLogits))
        ),
        "{what}: the logits of the rows before reordering are gone"
    );
    reordered.step(&step)?;
    let mut fresh = make()?;
    let moved_prompts: Vec<i64> = src.iter().flat_map(|&j| prompts[j].clone()).collect();
    fresh.prefill(&moved_prompts)?;
    let firsts: Vec<i64> = src.iter().map(|&j| [9, 8, 7, 6][j]).collect();
    fresh.step(&firsts)?;
    fresh.step(&step)?;
    let (a, b) = (reordered.logits()?, fresh.logits()?);
    for row in 0..prompts.len() {
        for (x, y) in a.row(row).iter().zip(b.row(row)) {
            let (x, y) = (f64::from(x.to_f32()), f64::from(y.to_f32()));
            assert!((x - y).abs() <= 1e-4, "{what}: row {row}: {x} vs {y}");
        }
    }
    Ok(moved)
}

use ort_bind::decode::Logit;

#[test]
fn reordered_rows_carry_their_caches() -> Result<()> {
    let prompts: Vec<Vec<i64>> = (0..4)
        .map(|r| (0..6).map(|i| (11 + 37 * r + 5 * i) % 500).collect())
        .collect();
    // A cycle (0 -> 1 -> 2 -> 0), a row copied twice, a row kept.
    let src = [1, 2, 0, 0];
    let gqa = gqa_f32::Model::load()?;
    let shared = check_reorder(
        "gqa shared",
        || gqa.shared_decoder(4, CAPACITY),
        &prompts,
        &src,
    )?;
    // 4 rows written (one of them twice: saved and restored), 7 positions held, 4 caches of
    // 2 heads x 16 f32.
    let row_bytes = 4 * 2 * 7 * 16 * 4;
    assert_eq!(
        shared,
        5 * row_bytes as u64,
        "bytes a shared-buffer reorder moves"
    );
    let growing = check_reorder("gqa growing", || gqa.decoder(4, CAPACITY), &prompts, &src)?;
    assert_eq!(growing, shared);
    let gpt2 = gpt2_stacked::Model::load()?;
    check_reorder(
        "gpt2 stacked [2, batch, ...]",
        || gpt2.decoder(4, CAPACITY),
        &prompts,
        &src,
    )?;
    let hybrid = hybrid_conv::Model::load()?;
    check_reorder(
        "hybrid conv state + KV",
        || hybrid.decoder(4, CAPACITY),
        &prompts,
        &src,
    )?;
    check_reorder(
        "gqa shared, one source",
        || gqa.shared_decoder(4, CAPACITY),
        &prompts,
        &[3, 3, 3, 3],
    )?;

    // Reordering onto itself moves nothing.
    let mut decoder = gqa.shared_decoder(4, CAPACITY)?;
    decoder.prefill(&prompts.concat())?;
    decoder.reorder_rows(&[0, 1, 2, 3])?;
    assert_eq!(decoder.stats().cache_bytes_moved, 0);
    Ok(())
}

fn decode_error<T: std::fmt::Debug>(r: Result<T>) -> DecodeError {
    match r {
        Err(Error::Decode(e)) => e,
        other => panic!("expected a decode error, got {other:?}"),
    }
}

#[test]
fn refusals_are_errors_and_leave_the_search_usable() -> Result<()> {
    let model = gqa_f32::Model::load()?;
    let mut search = BeamSearch::new(model.shared_decoder(4, 32)?)?;
    let prompt = [5, 42, 79];
    let ok = BeamOptions::new(4, 20).eos(0);
    assert_eq!(
        decode_error(search.run(&[], &ok)),
        DecodeError::TokenCount { count: 0, batch: 1 }
    );
    assert_eq!(
        decode_error(search.run(&[5, 512], &ok)),
        DecodeError::TokenOutOfRange {
            token: 512,
            vocab: 512
        }
    );
    assert_eq!(
        decode_error(search.run(&[5, -1], &ok)),
        DecodeError::TokenOutOfRange {
            token: -1,
            vocab: 512
        }
    );
    assert_eq!(
        decode_error(search.run(&prompt, &BeamOptions::new(5, 20))),
        DecodeError::BeamCount {
            num_beams: 5,
            batch: 4
        }
    );
    assert_eq!(
        decode_error(search.run(&prompt, &BeamOptions::new(0, 20))),
        DecodeError::BeamCount {
            num_beams: 0,
            batch: 4
        }
    );
    assert_eq!(
        decode_error(search.run(&prompt, &BeamOptions::new(4, 40))),
        DecodeError::CapacityExceeded {
            len: 3,
            adding: 36,
            capacity: 32
        }
    );
    for bad in [
        BeamOptions::new(4, 3),
        BeamOptions::new(4, 20).return_sequences(5),
        BeamOptions::new(4, 20).return_sequences(0),
        BeamOptions::new(4, 20).length_penalty(f32::NAN),
        BeamOptions::new(4, 20).eos(512),
        BeamOptions::new(4, 20).pad(-3),
    ] {
        let e = decode_error(search.run(&prompt, &bad));
        assert!(
            matches!(e, DecodeError::BeamOptions { .. }),
            "{bad:?}: {e:?}"
        );
        assert!(!e.to_string().is_empty());
    }
    // Still usable, and a capacity of max_length - 1 is enough.
    let got = search.run(&prompt, &BeamOptions::new(4, 33).return_sequences(4))?;
    assert_eq!(got.len(), 4);
    assert!(got.iter().all(|b| b.tokens.len() == 30 && !b.ended));
    assert!(
        got.windows(2).all(|w| w[0].score >= w[1].score),
        "best first"
    );

    let mut decoder = search.into_decoder();
    assert_eq!(
        decode_error(decoder.reorder_rows(&[0, 1, 2])),
        DecodeError::RowIndex {
            given: 3,
            index: 4,
            batch: 4
        }
    );
    assert_eq!(
        decode_error(decoder.reorder_rows(&[0, 1, 2, 4])),
        DecodeError::RowIndex {
            given: 4,
            index: 4,
            batch: 4
        }
    );
    Ok(())
}
