//! Continuous batching (`decode::Rows`) on the GQA decoder fixture in the shared-buffer
//! mode: requests of different prompt lengths and budgets join and leave at random
//! between runs, and each gets exactly the tokens it gets decoded alone; a request that
//! leaves early changes nothing for the others; bad requests fail alone.

use std::collections::HashMap;
use std::ops::ControlFlow;

use ort_bind::decode::{DecodeError, GenerateOptions, RowEvent, Rows};
use ort_bind::{Error, Result};

mod gqa_f32 {
    ort_bind::bindings!("tests/fixtures/decoders/gqa_f32/model.onnx");
}

const CAPACITY: usize = 256;

/// A deterministic pseudo-random sequence (the test needs no dependency for it).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// Request `i`: its prompt and budget.
fn request(i: u64, rng: &mut Lcg) -> (Vec<i64>, usize) {
    let len = 1 + rng.below(20) as usize;
    let prompt = (0..len as i64)
        .map(|j| 1 + (i as i64 * 37 + j * 53) % 500)
        .collect();
    (prompt, 1 + rng.below(40) as usize)
}

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
    let mut rows = Rows::new(model.shared_decoder(4, CAPACITY)?)?;
    let mut rng = Lcg(20261204);
    let requests: Vec<(Vec<i64>, usize)> = (0..24).map(|i| request(i, &mut rng)).collect();
    let mut next = 0;
    let mut in_row: HashMap<usize, usize> = HashMap::new(); // row -> request
    let mut got: Vec<Vec<i64>> = vec![Vec::new(); requests.len()];
    let mut left_early = Vec::new();
    let mut runs = 0;
    while next < requests.len() || rows.busy() > 0 {
        // Arrivals: up to two a run, while rows are free.
        for _ in 0..rng.below(3) {
            if next < requests.len() && rows.busy() < rows.rows() {
                let (prompt, max_new) = &requests[next];
                let row = rows.join(prompt, *max_new, None)?;
                in_row.insert(row, next);
                next += 1;
            }
        }
        // Now and then a client leaves: its row frees, the others go on.
        if rng.below(40) == 0
            && let Some((&row, &req)) = in_row.iter().next()
        {
            rows.leave(row);
            in_row.remove(&row);
            left_early.push(req);
        }
        let events = rows.step()?.to_vec();
        runs += 1;
        for (row, event) in events.into_iter().enumerate() {
            match event {
                RowEvent::Idle => {}
                RowEvent::Token(t) => got[in_row[&row]].push(t),
                RowEvent::Last(t) => {
                    got[in_row[&row]].push(t);
                    in_row.remove(&row);
                }
            }
        }
    }
    for (i, (prompt, max_new)) in requests.iter().enumerate() {
        let want = alone(&model, prompt, *max_new)?;
        if left_early.contains(&i) {
            assert_eq!(got[i], want[..got[i].len()], "request {i} (left early)");
        } else {
            assert_eq!(got[i], want, "request {i}");
        }
    }
    // Fewer runs than the requests one after another.
    let one_by_one: usize = requests.iter().map(|(p, n)| p.len() + n - 1).sum();
    assert!(
        runs < one_by_one,
        "{runs} runs, {one_by_one} one after another"
    );
    Ok(())
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
    use ort_bind::decode::Scheduler;
    let model = gqa_f32::Model::load()?;
    let scheduler = std::sync::Arc::new(Scheduler::new(Rows::new(
        model.shared_decoder(3, CAPACITY)?,
    )?));
    let mut rng = Lcg(7);
    let requests: Vec<(Vec<i64>, usize)> = (0..9).map(|i| request(i, &mut rng)).collect();
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
