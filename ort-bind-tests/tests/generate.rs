//! Whole generations on a decoder (`Decoder::generate`, `Decoder::stream`): the tokens of
//! the step-by-step greedy loop (Python onnxruntime's, `greedy.json`), stop tokens,
//! budgets, a stream dropped mid-way, and generations stopped by a terminator or a timeout,
//! after which the decoder serves the next request.

use std::ops::ControlFlow;
use std::time::Duration;

use ort_bind::decode::{DecodeError, GenerateOptions};
use ort_bind::{Error, Result};
use ort_bind_tests::decoders::expected;

mod gqa_f32 {
    ort_bind::bindings!("tests/fixtures/decoders/gqa_f32/model.onnx");
}

/// The build.rs route (`ort-bind-tests/build.rs`, `ModelOptions::decoder()`), float16.
mod gqa_f16 {
    ort_bind::include_bindings!("decoder_gqa_f16");
}

/// The derive route: a struct without fields gets the decode loop alone.
#[derive(ort_bind::OnnxBinding)]
#[onnx(model = "tests/fixtures/decoders/gpt2_stacked/model.onnx", decoder)]
struct Gpt2Stacked;

const CAPACITY: usize = 4096;

#[test]
fn every_route_generates_its_greedy_tokens() -> Result<()> {
    let f16 = expected("gqa_f16", "greedy.json");
    let mut decoder = gqa_f16::Model::load()?.shared_decoder(1, CAPACITY)?;
    let options = GenerateOptions::new(f16.tokens[0].len());
    let (tokens, _) = collect(|o| decoder.generate(&f16.prompts[0], &options, o))?;
    assert_eq!(tokens, f16.tokens[0], "build.rs route, float16");

    let gpt2 = expected("gpt2_stacked", "greedy.json");
    let session = ort_bind::Session::from_file(
        Gpt2Stacked::MODEL_FILE.find()?,
        &ort_bind::SessionOptions::new().intra_threads(1),
    )?;
    let mut decoder = Gpt2Stacked::decoder(&session, 1, CAPACITY)?;
    let streamed: Vec<i64> = decoder
        .stream(&gpt2.prompts[0], GenerateOptions::new(gpt2.tokens[0].len()))?
        .collect::<Result<_>>()?;
    assert_eq!(streamed, gpt2.tokens[0], "derive route");
    Ok(())
}

#[test]
fn generate_gives_the_greedy_tokens_in_both_cache_modes() -> Result<()> {
    let one = expected("gqa_f32", "greedy.json");
    let two = expected("gqa_f32", "greedy_batch2.json");
    let m = gqa_f32::Model::load()?;
    let steps = one.tokens[0].len();
    let mut growing = m.decoder(1, CAPACITY)?;
    let mut shared = m.shared_decoder(1, CAPACITY)?;
    for tokens in [
        collect(|o| growing.generate(&one.prompts[0], &GenerateOptions::new(steps), o))?,
        collect(|o| shared.generate(&one.prompts[0], &GenerateOptions::new(steps), o))?,
    ] {
        assert_eq!(tokens.0, one.tokens[0], "batch 1");
        // The prompt's run, then one per token but the last.
        assert_eq!(tokens.1.runs, steps as u64);
        assert_eq!(tokens.1.tokens, steps);
        assert!(!tokens.1.stopped);
    }

    // Batch 2: each step hands the callback both rows' tokens.
    let mut decoder = m.decoder(2, CAPACITY)?;
    let mut rows = vec![Vec::new(), Vec::new()];
    decoder.generate(&two.prompts.concat(), &GenerateOptions::new(steps), |t| {
        rows[0].push(t[0]);
        rows[1].push(t[1]);
        ControlFlow::Continue(())
    })?;
    assert_eq!(rows, two.tokens);
    Ok(())
}

/// Runs a batch-1 generation, collecting its tokens.
fn collect(
    run: impl FnOnce(&mut dyn FnMut(&[i64]) -> ControlFlow<()>) -> Result<ort_bind::decode::Generated>,
) -> Result<(Vec<i64>, ort_bind::decode::Generated)> {
    let mut tokens = Vec::new();
    let g = run(&mut |t: &[i64]| {
        tokens.push(t[0]);
        ControlFlow::Continue(())
    })?;
    Ok((tokens, g))
}

#[test]
fn stop_tokens_and_the_callback_end_a_generation() -> Result<()> {
    let one = expected("gqa_f32", "greedy.json");
    let m = gqa_f32::Model::load()?;
    let mut decoder = m.decoder(1, CAPACITY)?;
    // The reference's 10th token as the end of sequence: reported, not run.
    let eos = one.tokens[0][9];
    let first = one.tokens[0].iter().position(|&t| t == eos).unwrap();
    let options = GenerateOptions::new(100).stop_at(eos);
    let (tokens, g) = collect(|o| decoder.generate(&one.prompts[0], &options, o))?;
    assert_eq!(tokens, one.tokens[0][..=first]);
    assert!(g.stopped);
    assert_eq!(g.runs, first as u64 + 1);

    // The callback stops after 3 tokens.
    let mut seen = 0;
    let g = decoder.generate(&one.prompts[0], &GenerateOptions::new(100), |_| {
        seen += 1;
        if seen == 3 {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    })?;
    assert_eq!((g.tokens, g.runs, g.stopped), (3, 3, false));
    Ok(())
}

#[test]
fn a_stream_yields_tokens_as_read_and_stops_when_dropped() -> Result<()> {
    let one = expected("gqa_f32", "greedy.json");
    let m = gqa_f32::Model::load()?;
    let mut decoder = m.shared_decoder(1, CAPACITY)?;
    let all: Vec<i64> = decoder
        .stream(&one.prompts[0], GenerateOptions::new(40))?
        .collect::<Result<_>>()?;
    assert_eq!(all, one.tokens[0][..40]);

    // Five tokens read, then dropped: the prompt's run and four more, nothing after.
    let runs = decoder.stats().runs;
    let five: Vec<i64> = decoder
        .stream(&one.prompts[0], GenerateOptions::new(40))?
        .take(5)
        .collect::<Result<_>>()?;
    assert_eq!(five, one.tokens[0][..5]);
    assert_eq!(decoder.stats().runs - runs, 5);
    assert_eq!(decoder.len(), one.prompts[0].len() + 4);

    // One token per item: a stream needs one row.
    let mut two = m.decoder(2, CAPACITY)?;
    let err = two.stream(&[1, 2], GenerateOptions::new(4)).unwrap_err();
    assert!(
        matches!(err, Error::Decode(DecodeError::StreamBatch { batch: 2 })),
        "{err}"
    );
    Ok(())
}

#[test]
fn a_terminator_stops_a_generation_and_the_next_one_runs() -> Result<()> {
    let one = expected("gqa_f32", "greedy.json");
    let m = gqa_f32::Model::load()?;
    let mut decoder = m.decoder(1, CAPACITY)?;

    // Stopped from the callback (as a disconnect hook on another thread would): the run
    // of the next token returns `Terminated`.
    let stop = decoder.terminator();
    let mut seen = 0;
    let err = decoder
        .generate(&one.prompts[0], &GenerateOptions::new(100), |_| {
            seen += 1;
            if seen == 3 {
                stop.terminate().expect("terminate");
            }
            ControlFlow::Continue(())
        })
        .unwrap_err();
    assert!(matches!(err, Error::Terminated), "{err}");
    assert_eq!(seen, 3);
    // The handle was for that generation: late, it stops nothing.
    stop.terminate()?;

    // From another thread, before the generation starts: it stops at once.
    let stop = decoder.terminator();
    std::thread::spawn(move || stop.terminate())
        .join()
        .unwrap()?;
    let err = decoder
        .stream(&one.prompts[0], GenerateOptions::new(10))
        .unwrap_err();
    assert!(matches!(err, Error::Terminated), "{err}");

    // The decoder serves the next request.
    let (tokens, _) = collect(|o| decoder.generate(&one.prompts[0], &GenerateOptions::new(20), o))?;
    assert_eq!(tokens, one.tokens[0][..20]);
    Ok(())
}

#[test]
fn a_generation_over_its_timeout_returns_timed_out_and_the_next_one_runs() -> Result<()> {
    let one = expected("gqa_f32", "greedy.json");
    let m = gqa_f32::Model::load()?;
    let mut decoder = m.decoder(1, CAPACITY)?;
    // 4,000 tokens take far more than a millisecond; the callback makes sure of it.
    let options = GenerateOptions::new(4000).timeout(Duration::from_millis(1));
    let err = decoder
        .generate(&one.prompts[0], &options, |_| {
            std::thread::sleep(Duration::from_micros(100));
            ControlFlow::Continue(())
        })
        .unwrap_err();
    assert!(matches!(err, Error::TimedOut { .. }), "{err}");
    // A stream with the same limit fails the same way, as an item.
    let timed: Vec<Result<i64>> = decoder
        .stream(&one.prompts[0], options.clone())
        .map(|s| {
            s.inspect(|_| std::thread::sleep(Duration::from_micros(100)))
                .collect()
        })
        .unwrap_or_else(|e| vec![Err(e)]);
    assert!(
        matches!(timed.last(), Some(Err(Error::TimedOut { .. }))),
        "{} items",
        timed.len()
    );

    // The timeout was for those generations only.
    let (tokens, _) = collect(|o| decoder.generate(&one.prompts[0], &GenerateOptions::new(30), o))?;
    assert_eq!(tokens, one.tokens[0][..30]);
    Ok(())
}
