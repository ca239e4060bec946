//! Continuous batching (`decode::Rows`) on the GQA decoder fixture in the shared-buffer
//! mode: requests of different prompt lengths and budgets join (by a batch-1 prefill into
//! their row, or token by token) and leave at random between runs, and each gets exactly
//! the tokens it gets decoded alone; a request that joins with a long prompt or leaves
//! early changes nothing for the others; bad requests fail alone; a terminated step
//! leaves every row as it was; a `Scheduler` request times out alone, and dropping the
//! scheduler ends its requests at once.

use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use ort_bind::decode::{
    DecodeError, GenerateOptions, Joining, RowEvent, Rows, Scheduler, SubmitOptions,
};
use ort_bind::{Error, Result};
use ort_bind_tests::decoders::{Lcg, Served, random_request};

mod gqa_f32 {
    ort_bind::bindings!("tests/fixtures/decoders/gqa_f32/model.onnx");
}

const CAPACITY: usize = 256;

/// Greedy tokens of `prompt` decoded alone.
fn alone(model: &gqa_f32::Model, prompt: &[i64], max_new: usize) -> Result<Vec<i64>> {
    let mut decoder = model.shared_decoder(1, CAPACITY)?;
    let mut out = Vec::new();
    decoder.generate(prompt, &GenerateOptions::new(max_new), |t| {
        out.push(t[0]);
        ControlFlow::Continue(())
    })?;
    Ok(out)
}

#[test]
fn requests_joining_and_leaving_at_random_get_their_own_tokens() -> Result<()> {
    let model = gqa_f32::Model::load()?;
    let prefill_runs = random_joins_and_leaves(&model, Joining::Prefill)?;
    let token_runs = random_joins_and_leaves(&model, Joining::TokenByToken)?;
    // A prompt of n tokens costs one step instead of n.
    assert!(
        prefill_runs < token_runs,
        "{prefill_runs} steps prefilling, {token_runs} token by token"
    );
    Ok(())
}

/// 24 requests joining and leaving 4 rows at random, joining by `joining`: each gets its
/// tokens alone. Returns the steps.
fn random_joins_and_leaves(model: &gqa_f32::Model, joining: Joining) -> Result<usize> {
    let mut rows = Rows::new(model.shared_decoder(4, CAPACITY)?)?;
    assert_eq!(
        rows.joining(),
        Joining::Prefill,
        "the default where it works"
    );
    rows.set_joining(joining)?;
    let mut rng = Lcg(20261204);
    let requests: Vec<(Vec<i64>, usize)> = (0..24).map(|i| random_request(i, &mut rng)).collect();
    let mut next = 0;
    let mut served = Served::new(requests.len());
    let mut runs = 0;
    while next < requests.len() || rows.busy() > 0 {
        // Arrivals: up to two a run, while rows are free.
        for _ in 0..rng.below(3) {
            if next < requests.len() && rows.busy() < rows.rows() {
                let (prompt, max_new) = &requests[next];
                served.joined(rows.join(prompt, *max_new, None)?, next);
                next += 1;
            }
        }
        served.maybe_leave(&mut rows, &mut rng, 40);
        served.record(rows.step()?);
        runs += 1;
    }
    served.check(
        &requests,
        |prompt, max_new| alone(model, prompt, max_new),
        &format!(", {joining:?}"),
    )?;
    // Fewer runs than the requests one after another.
    let one_by_one: usize = requests.iter().map(|(p, n)| p.len() + n - 1).sum();
    assert!(
        runs < one_by_one,
        "{runs} runs, {one_by_one} one after another ({joining:?})"
    );
    Ok(runs)
}

#[test]
fn bad_requests_fail_alone() -> Result<()> {
    let model = gqa_f32::Model::load()?;
    let mut rows = Rows::new(model.shared_decoder(2, 64)?)?;
    let a = rows.join(&[5, 42, 79], 8, None)?;
    let refused = |r: Result<usize>| match r {
        Err(Error::Decode(e)) => e,
        other => panic!("expected a refusal, got {other:?}"),
    };
    assert!(matches!(
        refused(rows.join(&[5, 9999], 4, None)),
        DecodeError::TokenOutOfRange { token: 9999, .. }
    ));
    assert!(matches!(
        refused(rows.join(&[1; 60], 10, None)),
        DecodeError::CapacityExceeded { .. }
    ));
    let b = rows.join(&[7, 9], 3, None)?;
    assert!(matches!(
        refused(rows.join(&[1], 1, None)),
        DecodeError::RowsFull { rows: 2 }
    ));
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    while rows.busy() > 0 {
        for (row, e) in rows.step()?.iter().enumerate() {
            if let RowEvent::Token(t) | RowEvent::Last(t) = *e {
                if row == a {
                    ta.push(t)
                } else if row == b {
                    tb.push(t)
                }
            }
        }
    }
    assert_eq!(ta, alone(&model, &[5, 42, 79], 8)?);
    assert_eq!(tb, alone(&model, &[7, 9], 3)?);
    // Back to a plain decoder.
    let mut decoder = rows.into_decoder()?;
    decoder.prefill(&[5, 42, 79, 5, 42, 79])?;
    Ok(())
}

#[test]
fn a_scheduler_serves_requests_from_several_threads() -> Result<()> {
    let model = gqa_f32::Model::load()?;
    let scheduler = std::sync::Arc::new(Scheduler::new(Rows::new(
        model.shared_decoder(3, CAPACITY)?,
    )?));
    let mut rng = Lcg(7);
    let requests: Vec<(Vec<i64>, usize)> = (0..9).map(|i| random_request(i, &mut rng)).collect();
    // Three client threads, three requests each, more than the rows at once.
    let handles: Vec<_> = (0..3)
        .map(|c| {
            let scheduler = std::sync::Arc::clone(&scheduler);
            let mine: Vec<(Vec<i64>, usize)> = requests[c * 3..c * 3 + 3].to_vec();
            std::thread::spawn(move || {
                let streams: Vec<_> = mine
                    .iter()
                    .map(|(p, n)| scheduler.submit(p, *n, None))
                    .collect();
                streams
                    .into_iter()
                    .map(|s| s.collect::<Result<Vec<i64>>>())
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    // Meanwhile: a bad request fails alone, and a client that leaves after 2 tokens.
    let bad: Vec<Result<i64>> = scheduler.submit(&[5, 9999], 4, None).collect();
    assert!(
        matches!(
            bad.as_slice(),
            [Err(Error::Decode(DecodeError::TokenOutOfRange {
                token: 9999,
                ..
            }))]
        ),
        "{bad:?}"
    );
    let early: Vec<i64> = scheduler
        .submit(&requests[0].0, 200, None)
        .take(2)
        .collect::<Result<_>>()?;
    assert_eq!(early, alone(&model, &requests[0].0, 2)?);
    for (c, handle) in handles.into_iter().enumerate() {
        let got = handle.join().expect("client thread");
        for (k, tokens) in got.into_iter().enumerate() {
            let (prompt, n) = &requests[c * 3 + k];
            assert_eq!(
                tokens?,
                alone(&model, prompt, *n)?,
                "client {c}, request {k}"
            );
        }
    }
    Ok(())
}

/// Steps `rows` until `row` gets its last token; every row's tokens are appended to
/// `got[row]`. Returns the steps.
fn run_out(rows: &mut Rows<gqa_f32::Model>, got: &mut [Vec<i64>], row: usize) -> Result<usize> {
    let mut steps = 0;
    loop {
        let events = rows.step()?.to_vec();
        steps += 1;
        let mut done = false;
        for (r, event) in events.into_iter().enumerate() {
            if let RowEvent::Token(t) | RowEvent::Last(t) = event {
                got[r].push(t);
            }
            done |= r == row && matches!(event, RowEvent::Last(_));
        }
        if done {
            return Ok(steps);
        }
    }
}

#[test]
fn a_long_prompt_joins_in_one_step_and_the_other_rows_are_unchanged() -> Result<()> {
    let model = gqa_f32::Model::load()?;
    let mut rows = Rows::new(model.shared_decoder(3, CAPACITY)?)?;
    let (a, b) = (vec![5, 42, 79, 11], vec![7, 9]);
    let long: Vec<i64> = (0..150).map(|j| 1 + (j * 53 + 17) % 500).collect();
    let ra = rows.join(&a, 60, None)?;
    let rb = rows.join(&b, 60, None)?;
    let mut got = vec![Vec::new(); 3];
    // The first step prefills both: each row's first token, at once.
    let events = rows.step()?.to_vec();
    assert!(matches!(events[ra], RowEvent::Token(_)), "{events:?}");
    assert!(matches!(events[rb], RowEvent::Token(_)), "{events:?}");
    for (r, e) in events.iter().enumerate() {
        if let RowEvent::Token(t) = *e {
            got[r].push(t);
        }
    }
    for _ in 0..10 {
        for (r, e) in rows.step()?.iter().enumerate() {
            if let RowEvent::Token(t) = *e {
                got[r].push(t);
            }
        }
    }
    // A prompt of 150 joins beside them: one step (its prefill) to its first token, in
    // which the others sit out; their caches are untouched.
    let rc = rows.join(&long, 20, None)?;
    let events = rows.step()?.to_vec();
    assert!(matches!(events[rc], RowEvent::Token(_)), "{events:?}");
    assert_eq!(events[ra], RowEvent::Idle);
    assert_eq!(events[rb], RowEvent::Idle);
    if let RowEvent::Token(t) = events[rc] {
        got[rc].push(t);
    }
    run_out(&mut rows, &mut got, ra)?;
    assert_eq!(got[ra], alone(&model, &a, 60)?);
    assert_eq!(got[rb], alone(&model, &b, 60)?);
    assert_eq!(got[rc], alone(&model, &long, 20)?);

    // Token by token, the same prompt takes 150 steps to its first token, and gives the
    // same tokens.
    let mut rows = Rows::new(model.shared_decoder(3, CAPACITY)?)?;
    rows.set_joining(Joining::TokenByToken)?;
    let mut got = vec![Vec::new(); 3];
    let rc = rows.join(&long, 20, None)?;
    let steps = run_out(&mut rows, &mut got, rc)?;
    assert_eq!(steps, 150 + 20 - 1);
    assert_eq!(got[rc], alone(&model, &long, 20)?);
    Ok(())
}

#[test]
fn a_terminated_step_leaves_every_row_as_it_was() -> Result<()> {
    let model = gqa_f32::Model::load()?;
    let mut rows = Rows::new(model.shared_decoder(2, 64)?)?;
    let (a, b) = (vec![5, 42, 79], vec![7, 9, 11, 13]);
    let ra = rows.join(&a, 12, None)?;
    // A stop taken before the step stops it: here the step of prefills.
    rows.terminator().terminate()?;
    assert!(matches!(rows.step(), Err(Error::Terminated)));
    assert_eq!(rows.busy(), 1);
    let mut got = vec![Vec::new(); 2];
    for _ in 0..3 {
        for (r, e) in rows.step()?.iter().enumerate() {
            if let RowEvent::Token(t) = *e {
                got[r].push(t);
            }
        }
    }
    let rb = rows.join(&b, 12, None)?;
    // And a decoding step (after the prefill of `b`).
    for (r, e) in rows.step()?.iter().enumerate() {
        if let RowEvent::Token(t) = *e {
            got[r].push(t);
        }
    }
    let stop = rows.terminator();
    stop.terminate()?;
    assert!(matches!(rows.step(), Err(Error::Terminated)));
    stop.terminate()?; // that step is over: this stops nothing
    run_out(&mut rows, &mut got, rb)?;
    assert_eq!(got[ra], alone(&model, &a, 12)?);
    assert_eq!(got[rb], alone(&model, &b, 12)?);
    assert_eq!(rows.busy(), 0);
    // New requests are served.
    let rc = rows.join(&b, 5, None)?;
    got[rc].clear();
    run_out(&mut rows, &mut got, rc)?;
    assert_eq!(got[rc], alone(&model, &b, 5)?);
    Ok(())
}

#[test]
fn a_request_past_its_timeout_ends_alone() -> Result<()> {
    let model = gqa_f32::Model::load()?;
    let scheduler = Scheduler::new(Rows::new(model.shared_decoder(2, 1024)?)?);
    let prompt = vec![5, 42, 79];
    // Timed out before it could join.
    let late: Vec<Result<i64>> = scheduler
        .submit_with(&prompt, &SubmitOptions::new(8).timeout(Duration::ZERO))
        .collect();
    assert!(
        matches!(late.as_slice(), [Err(Error::TimedOut { timeout })] if timeout.is_zero()),
        "{late:?}"
    );
    // One of 1,000 tokens (1,000 runs) with 2 ms, beside one without a limit: the first
    // ends with `TimedOut` after a prefix of its tokens, the other gets all of its own.
    let timeout = Duration::from_millis(2);
    let slow = scheduler.submit_with(&prompt, &SubmitOptions::new(1000).timeout(timeout));
    let other = scheduler.submit(&[7, 9], 200, None);
    let slow: Vec<Result<i64>> = slow.collect();
    let (last, tokens) = slow.split_last().expect("at least its error");
    assert!(
        matches!(last, Err(Error::TimedOut { timeout: t }) if *t == timeout),
        "{last:?}"
    );
    let tokens: Vec<i64> = tokens
        .iter()
        .map(|t| *t.as_ref().expect("a token"))
        .collect();
    assert!(tokens.len() < 1000, "{} tokens in 2 ms", tokens.len());
    let k = tokens.len().min(200);
    if k > 0 {
        assert_eq!(tokens[..k], alone(&model, &prompt, k)?);
    }
    assert_eq!(
        other.collect::<Result<Vec<_>>>()?,
        alone(&model, &[7, 9], 200)?
    );
    // `finish` lets a request finish.
    let last = scheduler.submit(&prompt, 30, None);
    scheduler.finish();
    assert_eq!(
        last.collect::<Result<Vec<_>>>()?,
        alone(&model, &prompt, 30)?
    );
    Ok(())
}

#[test]
fn dropping_a_scheduler_ends_its_requests_at_once() -> Result<()> {
    let model = gqa_f32::Model::load()?;
    let scheduler = Scheduler::new(Rows::new(model.shared_decoder(1, CAPACITY)?)?);
    let mut running = scheduler.submit(&[5, 42, 79], 250, None);
    let waiting = scheduler.submit(&[7, 9], 10, None);
    assert!(running.next().expect("a first token").is_ok());
    let start = Instant::now();
    drop(scheduler);
    let dropped_in = start.elapsed();
    let rest: Vec<Result<i64>> = running.collect();
    let (last, tokens) = rest.split_last().expect("its end");
    assert!(matches!(last, Err(Error::Terminated)), "{last:?}");
    assert!(tokens.iter().all(Result::is_ok));
    assert!(tokens.len() < 249, "{} tokens after the drop", tokens.len());
    let waited: Vec<Result<i64>> = waiting.collect();
    assert!(
        matches!(waited.as_slice(), [Err(Error::Terminated)]),
        "{waited:?}"
    );
    assert!(dropped_in < Duration::from_secs(5), "{dropped_in:?}");
    Ok(())
}

mod mha_concat {
    ort_bind::bindings!("tests/fixtures/decoders/mha_concat/model.onnx");
}

/// Continuous batching over a growing cache (`mha_concat`: `Concat` appends, an additive
/// mask): rows are left-padded to the run's positions, requests join token by token at
/// random and leave, and each gets its tokens alone; a capacity of 96 makes the decoder
/// drop the padding all busy rows have (positions moved down in place) many times, and a
/// request that does not fit beside the busy rows waits; a scheduler serves it too. A GQA
/// model, whose attention wants right padding, is refused over a growing cache.
#[test]
fn rows_over_a_growing_cache_are_left_padded() -> Result<()> {
    let model = mha_concat::Model::load()?;
    let alone = |prompt: &[i64], max_new: usize| -> Result<Vec<i64>> {
        let mut decoder = model.decoder(1, 256)?;
        let mut out = Vec::new();
        decoder.generate(prompt, &GenerateOptions::new(max_new), |t| {
            out.push(t[0]);
            ControlFlow::Continue(())
        })?;
        Ok(out)
    };
    let mut rows = Rows::new(model.decoder(4, 96)?)?;
    assert_eq!(rows.joining(), Joining::TokenByToken);
    assert!(matches!(
        rows.set_joining(Joining::Prefill),
        Err(Error::Decode(DecodeError::RowsUnsupported { .. }))
    ));
    let mut rng = Lcg(99);
    let requests: Vec<(Vec<i64>, usize)> = (0..24).map(|i| random_request(i, &mut rng)).collect();
    let (mut next, mut waited) = (0, 0);
    let mut served = Served::new(requests.len());
    while next < requests.len() || rows.busy() > 0 {
        if next < requests.len() && rows.busy() < rows.rows() && rng.below(2) == 0 {
            let (prompt, max_new) = &requests[next];
            match rows.join(prompt, *max_new, None) {
                Ok(row) => {
                    served.joined(row, next);
                    next += 1;
                }
                // The busy rows still need the positions: it waits.
                Err(Error::Decode(DecodeError::CapacityExceeded { len, .. })) if len > 0 => {
                    waited += 1
                }
                Err(e) => return Err(e),
            }
        }
        served.maybe_leave(&mut rows, &mut rng, 40);
        served.record(rows.step()?);
    }
    let moved = rows.into_decoder()?.stats().cache_bytes_moved;
    assert!(moved > 0, "the padding was dropped");
    assert!(waited > 0, "a request waited for room");
    served.check(&requests, alone, "")?;

    let scheduler = Scheduler::new(Rows::new(model.decoder(3, 96)?)?);
    let streams: Vec<_> = requests[..9]
        .iter()
        .map(|(p, n)| scheduler.submit(p, *n, None))
        .collect();
    for ((prompt, max_new), stream) in requests.iter().zip(streams) {
        let tokens: Vec<i64> = stream.collect::<Result<_>>()?;
        assert_eq!(tokens, alone(prompt, *max_new)?);
    }
    scheduler.finish();

    let gqa = gqa_f32::Model::load()?;
    assert!(matches!(
        Rows::new(gqa.decoder(2, 64)?),
        Err(Error::Decode(DecodeError::RowsUnsupported { .. }))
    ));
    Ok(())
}
