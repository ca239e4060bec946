//! Speculative greedy decoding on the project's target/draft pair
//! (`tests/fixtures/decoders/speculative/`, written by `make_speculative.py`: an 8-layer
//! target and its first layer as the draft, which agree on about 70 % of greedy tokens):
//! the tokens equal the target's plain greedy tokens and Python onnxruntime's
//! (`greedy.json`) for every k, in both cache modes; the counts add up; and what the
//! generator refuses.

use ort_bind::Result;
use ort_bind::decode::{DecodeError, Decoder, DecoderModel, Speculative};
use ort_bind_tests::decoders::expected;

mod target {
    ort_bind::bindings!("tests/fixtures/decoders/speculative/target/model.onnx");
}
mod draft {
    ort_bind::bindings!("tests/fixtures/decoders/speculative/draft/model.onnx");
}

/// A decoder with recurrent state (a causal conv layer), as a target.
mod hybrid_conv {
    ort_bind::bindings!("tests/fixtures/decoders/hybrid_conv/model.onnx");
}
/// Another model of the same vocabulary (512 ids of int64), as its draft.
mod gqa_f32 {
    ort_bind::bindings!("tests/fixtures/decoders/gqa_f32/model.onnx");
}

const CAPACITY: usize = 512;

#[test]
fn a_target_with_recurrent_state_gives_its_greedy_tokens() -> Result<()> {
    let want = expected("hybrid_conv", "greedy.json");
    let (prompt, want) = (&want.prompts[0], &want.tokens[0]);
    let (target, draft) = (hybrid_conv::Model::load()?, gqa_f32::Model::load()?);
    for k in [1, 3] {
        let mut g = Speculative::new(target.decoder(1, CAPACITY)?, draft.decoder(1, CAPACITY)?, k)?;
        assert_eq!(g.generate(prompt, want.len())?, *want, "k = {k}");
        let s = g.stats();
        assert!(
            s.proposed > s.accepted,
            "k = {k}: some proposals rejected: {s:?}"
        );
    }
    // The other way round: a draft with recurrent state cannot rewind across its runs.
    let refused = Speculative::new(draft.decoder(1, CAPACITY)?, target.decoder(1, CAPACITY)?, 2);
    assert!(
        matches!(
            refused.map(drop).unwrap_err(),
            ort_bind::Error::Decode(DecodeError::RecurrentState { .. })
        ),
        "a recurrent draft is refused"
    );
    Ok(())
}

fn reference() -> (Vec<i64>, Vec<i64>) {
    let e = expected("speculative", "greedy.json");
    (e.prompts[0].clone(), e.tokens[0].clone())
}

/// The target's plain greedy tokens (`step_greedy`, one run per token).
fn plain<T: DecoderModel, M: ort_bind::decode::CacheMode>(
    decoder: &mut Decoder<T, M>,
    prompt: &[i64],
    n: usize,
) -> Result<Vec<i64>> {
    decoder.prefill(prompt)?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n - 1 {
        out.push(decoder.step_greedy()?[0]);
    }
    out.push(decoder.pick_greedy()?[0]);
    Ok(out)
}

#[test]
fn the_tokens_are_the_targets_greedy_tokens_for_every_k() -> Result<()> {
    let (prompt, want) = reference();
    let (t, d) = (target::Model::load()?, draft::Model::load()?);
    assert_eq!(
        plain(&mut t.decoder(1, CAPACITY)?, &prompt, want.len())?,
        want,
        "plain greedy == Python onnxruntime"
    );
    for k in [1, 2, 4, 6] {
        let mut g = Speculative::new(t.decoder(1, CAPACITY)?, d.decoder(1, CAPACITY)?, k)?;
        let got = g.generate(&prompt, want.len())?;
        assert_eq!(got, want, "growing, k = {k}");
        let s = g.stats();
        assert_eq!(s.tokens, want.len() as u64);
        // The prompt's run, then one per round; each round gives accepted + 1 tokens.
        assert_eq!(s.target_runs, s.rounds + 1);
        assert_eq!(s.tokens, 1 + s.rounds + s.accepted);
        assert!(s.proposed <= k as u64 * s.rounds && s.accepted <= s.proposed);
        assert!(s.draft_runs <= 1 + k as u64 * s.rounds);
        // The draft agrees on about 70 % of positions: rounds accept a good share.
        assert!(
            s.acceptance_rate() > 0.35,
            "k = {k}: acceptance {:.2}",
            s.acceptance_rate()
        );
        assert!(s.tokens_per_target_run() > 1.3, "k = {k}: {s:?}");
        // The target holds every token but the last.
        assert_eq!(g.target().len(), prompt.len() + want.len() - 1);

        let mut g = Speculative::new(
            t.shared_decoder(1, CAPACITY)?,
            d.shared_decoder(1, CAPACITY)?,
            k,
        )?;
        assert_eq!(g.generate(&prompt, want.len())?, want, "shared, k = {k}");
    }
    Ok(())
}

#[test]
fn mixed_modes_untyped_decoders_and_a_second_generation() -> Result<()> {
    let (prompt, want) = reference();
    let (t, d) = (target::Model::load()?, draft::Model::load()?);
    // A shared-buffer target with a growing draft.
    let mut g = Speculative::new(t.shared_decoder(1, CAPACITY)?, d.decoder(1, CAPACITY)?, 3)?;
    assert_eq!(g.generate(&prompt, want.len())?, want);
    // Again, and shorter: each generation starts over; stats add up.
    let first = g.stats();
    assert_eq!(g.generate(&prompt, 17)?, want[..17]);
    assert_eq!(g.stats().tokens, first.tokens + 17);
    g.reset_stats();
    assert_eq!(g.stats(), Default::default());

    // Untyped decoders over the same specs (checked at run time).
    let target = Decoder::<f32>::new(t.session(), &target::DECODER, 1, CAPACITY)?;
    let draft = Decoder::<f32>::new(d.session(), &draft::DECODER, 1, CAPACITY)?;
    let mut g = Speculative::new(target, draft, 5)?;
    assert_eq!(g.generate(&prompt, 64)?, want[..64]);
    Ok(())
}

#[test]
fn on_token_streams_and_stops() -> Result<()> {
    let (prompt, want) = reference();
    let (t, d) = (target::Model::load()?, draft::Model::load()?);
    let mut g = Speculative::new(t.decoder(1, CAPACITY)?, d.decoder(1, CAPACITY)?, 4)?;
    let mut seen = Vec::new();
    let stop = want[40];
    let given = g.generate_with(&prompt, 200, |token| {
        seen.push(token);
        token != stop
    })?;
    let at = want.iter().position(|&t| t == stop).unwrap();
    assert_eq!(seen, want[..=at]);
    assert_eq!(given, at + 1);
    // Short generations: 0, 1 and 2 tokens (the last rounds propose fewer).
    assert_eq!(g.generate(&prompt, 0)?, Vec::<i64>::new());
    assert_eq!(g.generate(&prompt, 1)?, want[..1]);
    assert_eq!(g.generate(&prompt, 2)?, want[..2]);
    Ok(())
}

fn decode_error<T>(r: Result<T>) -> DecodeError {
    match r {
        Err(ort_bind::Error::Decode(e)) => e,
        Err(e) => panic!("another error: {e}"),
        Ok(_) => panic!("accepted"),
    }
}

#[test]
fn refusals_are_errors() -> Result<()> {
    let (prompt, want) = reference();
    let (t, d) = (target::Model::load()?, draft::Model::load()?);
    let e = decode_error(Speculative::new(t.decoder(1, 64)?, d.decoder(1, 64)?, 0));
    assert_eq!(e, DecodeError::NoDraftTokens);
    assert!(e.to_string().contains("k >= 1"), "{e}");
    let e = decode_error(Speculative::new(t.decoder(2, 64)?, d.decoder(2, 64)?, 2));
    assert_eq!(e, DecodeError::SpeculativeBatch { batch: 2 });

    // Untyped decoders of two vocabularies: refused when the pair is made.
    let other = other_vocab::Model::load()?;
    let target = Decoder::<f32>::new(t.session(), &target::DECODER, 1, 64)?;
    let draft = Decoder::<f32>::new(other.session(), &other_vocab::DECODER, 1, 64)?;
    let e = decode_error(Speculative::new(target, draft, 2));
    assert_eq!(
        e,
        DecodeError::VocabMismatch {
            target: 512,
            draft: 256
        }
    );
    assert!(e.to_string().contains("256"), "{e}");

    // Too little room: refused before anything runs; a generation that fits still works.
    let mut g = Speculative::new(t.decoder(1, 40)?, d.decoder(1, 64)?, 4)?;
    let e = decode_error(g.generate(&prompt, 30));
    assert_eq!(
        e,
        DecodeError::CapacityExceeded {
            len: prompt.len(),
            adding: 29,
            capacity: 40
        }
    );
    // prompt 12 + 29 new = 40 positions held: exactly the capacity.
    assert_eq!(g.generate(&prompt, 29)?, want[..29]);
    assert_eq!(g.target().len(), 40);
    g.set_k(1)?;
    assert_eq!(decode_error(g.set_k(0)), DecodeError::NoDraftTokens);
    assert_eq!(g.k(), 1);
    Ok(())
}

mod other_vocab {
    ort_bind::bindings!("tests/fixtures/decoders/speculative/other_vocab/model.onnx");
}
