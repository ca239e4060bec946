//! The decode loop on the project's decoder fixtures (`tests/fixtures/decoders/`, written
//! by `make_decoders.py` with `onnx.helper`): greedy tokens over 160 steps equal Python
//! onnxruntime's (`greedy.json`, written by `reference.py`, which also checks them against
//! onnxruntime-genai 0.18.0), in every cache mode each model allows, batch 1 and 2; rewind
//! and reset reproduce what they replace; what a step binds; and every refusal leaves the
//! decoder usable.

use ort_bind::decode::{
    DecodeError, DecodeStats, Decoder, DecoderModel, Growing, Logit, SharedBuffer,
};
use ort_bind::{Error, Result};
use ort_bind_tests::decoders::expected;

mod gqa_f32 {
    ort_bind::bindings!("tests/fixtures/decoders/gqa_f32/model.onnx");
}
/// The build.rs route (`ort-bind-tests/build.rs`, `ModelOptions::decoder()`).
mod gqa_f16 {
    ort_bind::include_bindings!("decoder_gqa_f16");
}
mod mha_concat {
    ort_bind::bindings!("tests/fixtures/decoders/mha_concat/model.onnx");
}
mod gpt2_stacked {
    ort_bind::bindings!("tests/fixtures/decoders/gpt2_stacked/model.onnx");
}
mod hybrid_conv {
    ort_bind::bindings!("tests/fixtures/decoders/hybrid_conv/model.onnx");
}

/// The derive route: a struct without fields gets the decode loop alone.
#[derive(ort_bind::OnnxBinding)]
#[onnx(model = "tests/fixtures/decoders/gpt2_stacked/model.onnx", decoder)]
struct Gpt2Stacked;

/// The derive route with the shared-buffer mode.
#[derive(ort_bind::OnnxBinding)]
#[onnx(model = "tests/fixtures/decoders/gqa_f32/model.onnx", decoder)]
struct GqaF32 {}

/// Greedy-decodes `steps` tokens after `prompts` (rows of equal length); returns the
/// tokens of each row.
fn greedy<T: DecoderModel, M: ort_bind::decode::CacheMode>(
    decoder: &mut Decoder<T, M>,
    prompts: &[Vec<i64>],
    steps: usize,
) -> Result<Vec<Vec<i64>>> {
    let flat: Vec<i64> = prompts.concat();
    decoder.prefill(&flat)?;
    let mut out = vec![Vec::new(); prompts.len()];
    for _ in 0..steps {
        let picked = decoder.step_greedy()?;
        for (row, &t) in out.iter_mut().zip(picked) {
            row.push(t);
        }
    }
    Ok(out)
}

/// Checks one decoder against a fixture's batch-1 and batch-2 references.
fn check_fixture<T: DecoderModel, M: ort_bind::decode::CacheMode>(
    fixture: &str,
    make: impl Fn(usize) -> Result<Decoder<T, M>>,
) -> Result<()> {
    let one = expected(fixture, "greedy.json");
    let mut decoder = make(1)?;
    let steps = one.tokens[0].len();
    let got = greedy(&mut decoder, &one.prompts, steps)?;
    assert_eq!(got, one.tokens, "{fixture}: batch 1 greedy tokens");
    assert_eq!(decoder.len(), one.prompts[0].len() + steps);

    // The first logits of the prompt's last position, against Python's.
    decoder.prefill(&one.prompts[0])?;
    let logits = decoder.logits()?;
    for (i, (&got, want)) in logits.row(0).iter().zip(&one.logits_first).enumerate() {
        let got = f64::from(got.to_f32());
        assert!(
            (got - want).abs()
                <= 1e-3
                    * want.abs().max(1.0)
                    * if <T::Logits as ort_bind::Element>::NAME == "float16" {
                        20.0
                    } else {
                        1.0
                    },
            "{fixture}: logit {i}: {got} vs Python's {want}"
        );
    }

    let two = expected(fixture, "greedy_batch2.json");
    let mut decoder = make(2)?;
    let got = greedy(&mut decoder, &two.prompts, two.tokens[0].len())?;
    assert_eq!(got, two.tokens, "{fixture}: batch 2 greedy tokens");
    Ok(())
}

const CAPACITY: usize = 256;

#[test]
fn greedy_tokens_equal_python_onnxruntime_in_every_mode() -> Result<()> {
    let m = gqa_f32::Model::load()?;
    check_fixture("gqa_f32", |b| m.decoder(b, CAPACITY))?;
    check_fixture("gqa_f32", |b| m.shared_decoder(b, CAPACITY))?;
    let m = gqa_f16::Model::load()?;
    check_fixture("gqa_f16", |b| m.decoder(b, CAPACITY))?;
    check_fixture("gqa_f16", |b| m.shared_decoder(b, CAPACITY))?;
    let m = mha_concat::Model::load()?;
    check_fixture("mha_concat", |b| m.decoder(b, CAPACITY))?;
    let m = gpt2_stacked::Model::load()?;
    check_fixture("gpt2_stacked", |b| m.decoder(b, CAPACITY))?;
    let m = hybrid_conv::Model::load()?;
    check_fixture("hybrid_conv", |b| m.decoder(b, CAPACITY))?;
    Ok(())
}

#[test]
fn the_derive_route_decodes_the_same() -> Result<()> {
    let options = ort_bind::SessionOptions::new();
    let session = ort_bind::Session::from_file(Gpt2Stacked::MODEL_FILE.find()?, &options)?;
    check_fixture("gpt2_stacked", |b| {
        Gpt2Stacked::decoder(&session, b, CAPACITY)
    })?;
    let session = ort_bind::Session::from_file(GqaF32::MODEL_FILE.find()?, &options)?;
    check_fixture("gqa_f32", |b| GqaF32::shared_decoder(&session, b, CAPACITY))?;
    // The spec is the one the module route generates.
    assert_eq!(
        format!("{:?}", GqaF32::DECODER.caches),
        format!("{:?}", gqa_f32::DECODER.caches)
    );
    Ok(())
}

/// Decodes 40 tokens, rewinds 17 positions and feeds the last kept pick again: the 16
/// tokens after it are what they were (the rewound cache is exactly the earlier one).
fn rewind_reproduces<T: DecoderModel, M: ort_bind::decode::CacheMode>(
    decoder: &mut Decoder<T, M>,
    prompts: &[Vec<i64>],
) -> Result<u64> {
    let first = greedy(decoder, prompts, 40)?;
    // The cache holds the prompt and picks 0..40; keep picks 0..23.
    decoder.rewind(17)?;
    assert!(matches!(
        decoder.logits(),
        Err(Error::Decode(DecodeError::NoLogits))
    ));
    let mut again: Vec<Vec<i64>> = first.iter().map(|r| r[..24].to_vec()).collect();
    let pick_23: Vec<i64> = first.iter().map(|r| r[23]).collect();
    decoder.step(&pick_23)?;
    for _ in 24..40 {
        let picked = decoder.step_greedy()?;
        for (row, &t) in again.iter_mut().zip(picked) {
            row.push(t);
        }
    }
    assert_eq!(again, first, "decoding after a rewind");
    Ok(decoder.stats().cache_bytes_moved)
}

#[test]
fn rewind_is_free_when_shared_and_exact_in_every_mode() -> Result<()> {
    let two = expected("gqa_f32", "greedy_batch2.json");
    let m = gqa_f32::Model::load()?;
    let moved = rewind_reproduces(&mut m.shared_decoder(2, 128)?, &two.prompts)?;
    assert_eq!(
        moved, 0,
        "the shared-buffer mode rewinds without moving data"
    );
    let moved = rewind_reproduces(&mut m.decoder(2, 128)?, &two.prompts)?;
    assert!(
        moved > 0,
        "the growing mode moves the kept rows of heads down"
    );
    let m = gpt2_stacked::Model::load()?;
    rewind_reproduces(
        &mut m.decoder(2, 128)?,
        &expected("gpt2_stacked", "greedy_batch2.json").prompts,
    )?;
    let m = mha_concat::Model::load()?;
    rewind_reproduces(
        &mut m.decoder(1, 128)?,
        &expected("mha_concat", "greedy.json").prompts,
    )?;
    Ok(())
}

#[test]
fn recurrent_state_cannot_rewind_but_resets() -> Result<()> {
    let one = expected("hybrid_conv", "greedy.json");
    let m = hybrid_conv::Model::load()?;
    let mut decoder = m.decoder(1, 64)?;
    let first = greedy(&mut decoder, &one.prompts, 20)?;
    let err = decoder.rewind(3).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Decode(DecodeError::RecurrentState {
                state: "past_conv.0"
            })
        ),
        "{err}"
    );
    assert_eq!(decoder.len(), one.prompts[0].len() + 20, "unchanged");
    // `prefill` resets, recurrent state included: the same tokens again.
    assert_eq!(greedy(&mut decoder, &one.prompts, 20)?, first);
    assert_eq!(first[0], one.tokens[0][..20]);
    Ok(())
}

#[test]
fn recurrent_state_rewinds_within_the_last_run() -> Result<()> {
    let one = expected("hybrid_conv", "greedy.json");
    let (prompt, want) = (&one.prompts[0], &one.tokens[0]);
    let m = hybrid_conv::Model::load()?;
    for lazy in [false, true] {
        let mut decoder = if lazy {
            m.lazy_decoder_on(ort_bind::Cpu, 1, 256)?
        } else {
            m.decoder(1, 256)?
        };
        // Six of the greedy tokens in one run, then the last four dropped: the state goes
        // back to before that run and the first two run again.
        decoder.prefill(prompt)?;
        decoder.append(&want[..6])?;
        let runs = decoder.stats().runs;
        decoder.rewind(4)?;
        assert_eq!(decoder.len(), prompt.len() + 2);
        assert_eq!(decoder.stats().runs, runs + 1, "one run again");
        let mut got = want[..2].to_vec();
        for _ in 0..30 {
            got.push(decoder.step_greedy()?[0]);
        }
        assert_eq!(got, want[..32], "lazy: {lazy}");

        // A whole run dropped: nothing runs again, and the next run follows the ones before.
        decoder.append(&want[32..35])?;
        let runs = decoder.stats().runs;
        decoder.rewind(3)?;
        assert_eq!(decoder.stats().runs, runs);
        decoder.append(&want[32..34])?;
        assert_eq!(decoder.pick_greedy()?, &want[34..35]);

        // Further back than the last run: refused, the decoder unchanged.
        let len = decoder.len();
        let err = decoder.rewind(3).unwrap_err();
        assert!(
            matches!(err, Error::Decode(DecodeError::RecurrentState { .. })),
            "{err}"
        );
        assert_eq!(decoder.len(), len);
        assert_eq!(decoder.pick_greedy()?, &want[34..35]);
    }
    Ok(())
}

#[test]
fn bad_input_is_refused_and_the_decoder_stays_usable() -> Result<()> {
    let one = expected("gqa_f32", "greedy.json");
    let prompt = &one.prompts[0];
    let m = gqa_f32::Model::load()?;
    let mut decoder = m.shared_decoder(1, 16)?;
    let refused = |r: Result<()>| match r {
        Err(Error::Decode(e)) => e,
        other => panic!("expected a decode error, got {other:?}"),
    };
    // A prompt longer than the capacity.
    let long: Vec<i64> = (0..17).collect();
    assert_eq!(
        refused(decoder.prefill(&long)),
        DecodeError::CapacityExceeded {
            len: 0,
            adding: 17,
            capacity: 16
        }
    );
    decoder.prefill(prompt)?; // 12 of 16
    let state = decoder.logits()?.row(0).to_vec();
    // Ids outside the vocabulary, negative ids.
    assert_eq!(
        refused(decoder.step(&[512])),
        DecodeError::TokenOutOfRange {
            token: 512,
            vocab: 512
        }
    );
    assert_eq!(
        refused(decoder.step(&[-1])),
        DecodeError::TokenOutOfRange {
            token: -1,
            vocab: 512
        }
    );
    // Not one token per row.
    assert_eq!(
        refused(decoder.step(&[1, 2])),
        DecodeError::StepTokens { count: 2, batch: 1 }
    );
    assert_eq!(
        refused(decoder.append(&[])),
        DecodeError::TokenCount { count: 0, batch: 1 }
    );
    // Past the capacity.
    assert_eq!(
        refused(decoder.append(&[1, 2, 3, 4, 5])),
        DecodeError::CapacityExceeded {
            len: 12,
            adding: 5,
            capacity: 16
        }
    );
    // Rewind past the start.
    assert_eq!(
        refused(decoder.rewind(13)),
        DecodeError::RewindPastStart { by: 13, len: 12 }
    );
    // Nothing changed: same length, same logits, and decoding goes on as the reference.
    assert_eq!(decoder.len(), 12);
    assert_eq!(decoder.logits()?.row(0), &state[..]);
    let mut picked = Vec::new();
    for _ in 0..4 {
        picked.push(decoder.step_greedy()?[0]);
    }
    assert_eq!(picked, one.tokens[0][..4]);
    // Full: one more is refused, a rewind makes room.
    assert!(matches!(
        decoder.step_greedy(),
        Err(Error::Decode(DecodeError::CapacityExceeded { len: 16, .. }))
    ));
    // Picks 0..4 are held; drop pick 3 and feed it again: the next pick is pick 4.
    decoder.rewind(1)?;
    decoder.step(&[one.tokens[0][3]])?;
    assert_eq!(decoder.logits()?.argmax(0) as i64, one.tokens[0][4]);

    // Construction errors.
    assert!(matches!(
        m.decoder(0, 16),
        Err(Error::Decode(DecodeError::Empty {
            batch: 0,
            capacity: 16
        }))
    ));
    // The shared mode on a model whose cache is concatenated, through the runtime type.
    let mha = mha_concat::Model::load()?;
    let err =
        Decoder::<f32, SharedBuffer>::new(mha.session(), &mha_concat::DECODER, 1, 16).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Decode(DecodeError::NotShareable {
                cache: "past_key_values.0.key"
            })
        ),
        "{err}"
    );
    // A spec of one model on another's session.
    let err = Decoder::<f32, Growing>::new(mha.session(), &gqa_f32::DECODER, 1, 16).unwrap_err();
    assert!(matches!(err, Error::SignatureMismatch { .. }), "{err}");
    Ok(())
}

/// What one steady-state step binds: the shared-buffer mode rebinds the mask alone; the
/// growing mode the mask and, per cache pair, the past (the last present) and the new
/// present.
#[test]
fn a_step_rebinds_only_what_changed() -> Result<()> {
    let one = expected("gqa_f32", "greedy.json");
    let m = gqa_f32::Model::load()?;
    let per_step = |stats: &[DecodeStats]| -> Vec<u64> {
        stats.windows(2).map(|w| w[1].binds - w[0].binds).collect()
    };
    let mut shared = m.shared_decoder(1, 64)?;
    shared.prefill(&one.prompts[0])?;
    let mut seen = vec![shared.stats()];
    for _ in 0..5 {
        shared.step_greedy()?;
        seen.push(shared.stats());
    }
    // The first step after the prompt also rebinds ids, positions and logits (new shapes).
    assert_eq!(per_step(&seen)[1..], [1, 1, 1, 1]);
    let mut growing = m.decoder(1, 64)?;
    growing.prefill(&one.prompts[0])?;
    let mut seen = vec![growing.stats()];
    for _ in 0..5 {
        growing.step_greedy()?;
        seen.push(growing.stats());
    }
    let caches = gqa_f32::DECODER.caches.len() as u64;
    assert_eq!(per_step(&seen)[1..], [1 + 2 * caches; 4]);
    assert_eq!(growing.stats().cache_bytes_moved, 0);
    Ok(())
}

/// The last token of a generation needs no run: `pick_greedy` reads it from the last
/// run's logits, so 16 tokens after the prompt cost 15 runs, and they are the tokens
/// `step_greedy` gives.
#[test]
fn the_last_token_needs_no_run() -> Result<()> {
    let m = mha_concat::Model::load()?;
    let one = expected("mha_concat", "greedy.json");
    let mut decoder = m.decoder(1, CAPACITY)?;
    decoder.prefill(&one.prompts[0])?;
    let runs = decoder.stats().runs;
    let mut tokens = Vec::new();
    for _ in 0..15 {
        tokens.push(decoder.step_greedy()?[0]);
    }
    tokens.push(decoder.pick_greedy()?[0]);
    assert_eq!(decoder.stats().runs - runs, 15);
    assert_eq!(tokens, one.tokens[0][..16]);
    // Picking again picks the same; running it goes on as `step_greedy` would.
    assert_eq!(decoder.pick_greedy()?[0], tokens[15]);
    let last = tokens[15];
    decoder.step(&[last])?;
    assert_eq!(decoder.pick_greedy()?[0], one.tokens[0][16]);
    Ok(())
}

/// A growing-mode decoder that reserves lazily (`lazy_decoder_on`): the same tokens as
/// Python's on every growing fixture, recurrent state included; its buffers start with
/// room for 64 positions and double when a run needs more (each buffer of each pair once
/// per doubling), and a sequence that fits the room grown so far replaces none.
#[test]
fn a_lazy_decoder_grows_as_needed_and_decodes_the_same() -> Result<()> {
    use ort_bind::Cpu;
    let m = gqa_f32::Model::load()?;
    check_fixture("gqa_f32", |b| m.lazy_decoder_on(Cpu, b, CAPACITY))?;
    let m = gpt2_stacked::Model::load()?;
    check_fixture("gpt2_stacked", |b| m.lazy_decoder_on(Cpu, b, CAPACITY))?;
    let m = hybrid_conv::Model::load()?;
    check_fixture("hybrid_conv", |b| m.lazy_decoder_on(Cpu, b, CAPACITY))?;
    let m = mha_concat::Model::load()?;
    check_fixture("mha_concat", |b| m.lazy_decoder_on(Cpu, b, CAPACITY))?;

    let one = expected("mha_concat", "greedy.json");
    let mut decoder = m.lazy_decoder_on(Cpu, 1, CAPACITY)?;
    let got = greedy(&mut decoder, &one.prompts, 160)?;
    assert_eq!(got, one.tokens);
    // 12 + 160 positions: 64 -> 128 -> 256 (the capacity), both buffers of each of the
    // 4 cache pairs at each doubling.
    assert_eq!(decoder.stats().cache_growths, 4 * 2 * 2);
    decoder.rewind(100)?;
    for &token in &one.tokens[0][60..150] {
        decoder.step(&[token])?;
    }
    assert_eq!(decoder.stats().cache_growths, 16, "the room grown is kept");
    Ok(())
}
