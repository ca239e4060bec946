//! A long mixed soak of continuous batching (issue 33): four client threads send requests
//! to one `Scheduler` over four rows, most of them good, some with an id outside the
//! vocabulary, some over the capacity, some abandoned after a few tokens, over a shared
//! buffer and then over a paged pool smaller than the rows' capacity. Every good
//! request gets exactly its single-sequence greedy tokens, every bad one fails alone, and
//! memory does not grow from one wave of requests to the next: neither ort-bind's heap
//! (the counting allocator's live bytes) nor the process's resident memory (ONNX Runtime's
//! C++ heap included).
//!
//! This file is its own test binary: a binary has one global allocator.

use std::collections::HashMap;
use std::sync::Arc;

use ort_bind::decode::{CacheMode, Decoder, DecoderModel, Rows, Scheduler};
use ort_bind::{Error, Result};
use ort_bind_testkit::alloc::{Counting, live_bytes};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

mod gqa_f32 {
    ort_bind::bindings!("tests/fixtures/decoders/gqa_f32/model.onnx");
}

mod gqa_paged {
    ort_bind::bindings!("tests/fixtures/decoders/gqa_paged/model.onnx");
}

const CAPACITY: usize = 160;
const ROWS: usize = 4;
const CLIENTS: usize = 4;

/// Request `i` of a wave: what it sends and what it expects.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Good = 0,
    OutOfVocabulary = 1,
    OverCapacity = 2,
    Abandoned = 3,
}

fn kind(i: usize) -> Kind {
    match i % 9 {
        3 => Kind::OutOfVocabulary,
        5 => Kind::Abandoned,
        7 => Kind::OverCapacity,
        _ => Kind::Good,
    }
}

/// A prompt of `len` ids from a fixed sequence (a few distinct prompts, reused).
fn prompt(variant: usize) -> Vec<i64> {
    let len = 3 + 7 * variant;
    (0..len)
        .map(|j| ((j * 37 + variant * 11) % 500 + 1) as i64)
        .collect()
}

/// Resident memory of the process, in bytes (Linux `/proc/self/statm`).
fn resident_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: usize = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

/// One wave: `per_client` requests from each of the client threads; returns how many of
/// each kind ended as they should.
fn wave(
    scheduler: &Scheduler,
    greedy: &HashMap<usize, Vec<i64>>,
    per_client: usize,
) -> Result<[usize; 4]> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..CLIENTS)
            .map(|c| {
                scope.spawn(move || -> Result<[usize; 4]> {
                    let mut done = [0; 4];
                    for r in 0..per_client {
                        let i = c * per_client + r;
                        let variant = i % greedy.len();
                        let max_new = 8 + (i * 5) % 24;
                        match kind(i) {
                            Kind::Good => {
                                let tokens: Vec<i64> = scheduler
                                    .submit(&prompt(variant), max_new, None)
                                    .collect::<Result<_>>()?;
                                assert_eq!(tokens, greedy[&variant][..max_new], "request {i}");
                                done[0] += 1;
                            }
                            Kind::OutOfVocabulary | Kind::OverCapacity => {
                                let bad = match kind(i) {
                                    Kind::OverCapacity => vec![7; CAPACITY + 1],
                                    _ => {
                                        let mut p = prompt(variant);
                                        p[1] = 1 << 40;
                                        p
                                    }
                                };
                                let items: Vec<Result<i64>> =
                                    scheduler.submit(&bad, max_new, None).collect();
                                assert!(
                                    matches!(items[..], [Err(Error::Decode(_))]),
                                    "request {i}: {items:?}"
                                );
                                done[kind(i) as usize] += 1;
                            }
                            Kind::Abandoned => {
                                let mut tokens = scheduler.submit(&prompt(variant), 100, None);
                                let first: Vec<i64> =
                                    tokens.by_ref().take(2).collect::<Result<_>>()?;
                                assert_eq!(first, greedy[&variant][..2], "request {i}");
                                drop(tokens);
                                done[3] += 1;
                            }
                        }
                    }
                    Ok(done)
                })
            })
            .collect();
        let mut total = [0; 4];
        for h in handles {
            let done = h.join().expect("client thread")?;
            for (t, d) in total.iter_mut().zip(done) {
                *t += d;
            }
        }
        Ok(total)
    })
}

/// Each prompt's greedy tokens alone, from a decoder of one row.
fn greedy_alone<T: DecoderModel, M: CacheMode>(
    mut alone: Decoder<T, M>,
) -> Result<HashMap<usize, Vec<i64>>> {
    (0..5)
        .map(|v| {
            let tokens = alone
                .stream(&prompt(v), ort_bind::decode::GenerateOptions::new(32))?
                .collect::<Result<Vec<i64>>>()?;
            Ok((v, tokens))
        })
        .collect()
}

/// One test, the two soaks one after the other: the heap and resident memory each measures
/// are the process's, which a soak running beside it would move.
#[test]
fn a_long_mixed_soak_gives_every_request_its_tokens_and_does_not_grow() -> Result<()> {
    let model = gqa_f32::Model::load()?;
    let greedy = greedy_alone(model.shared_decoder(1, CAPACITY)?)?;
    soak(
        Scheduler::new(Rows::new(model.shared_decoder(ROWS, CAPACITY)?)?),
        &greedy,
    )?;
    // Over a paged pool of 24 blocks (384 positions, where four rows of the capacity hold
    // 640): requests also wait for blocks, and lanes move as requests end.
    let model = gqa_paged::Model::load()?;
    let greedy = greedy_alone(model.paged_decoder(1, CAPACITY, CAPACITY / 16)?)?;
    soak(
        Scheduler::new(Rows::new(model.paged_decoder(ROWS, CAPACITY, 24)?)?),
        &greedy,
    )
}

/// A warm wave, then four waves whose heap and resident memory must not grow.
fn soak(scheduler: Scheduler, greedy: &HashMap<usize, Vec<i64>>) -> Result<()> {
    let greedy = Arc::new(greedy.clone());
    // Warm: the rows, the channels, ONNX Runtime's arena reach their sizes.
    wave(&scheduler, &greedy, 18)?;
    let (heap, resident) = (live_bytes(), resident_bytes());
    let mut counts = [0; 4];
    for _ in 0..4 {
        let done = wave(&scheduler, &greedy, 18)?;
        for (c, d) in counts.iter_mut().zip(done) {
            *c += d;
        }
    }
    let (heap_after, resident_after) = (live_bytes(), resident_bytes());
    // 288 requests after the warm wave, of each kind.
    assert_eq!(counts.iter().sum::<usize>(), 4 * CLIENTS * 18);
    assert!(counts.iter().all(|&c| c > 0), "{counts:?}");
    // Heap: the same bytes live after four waves as after the first (a few KiB of slack
    // for queues whose capacity a busier moment grew).
    assert!(
        heap_after <= heap + 64 * 1024,
        "ort-bind's heap grew by {} bytes over 4 waves",
        heap_after as i64 - heap as i64
    );
    // Resident memory: no growth beyond allocator noise (a leaked run's buffers would add
    // at least a cache's 100 KiB per request).
    assert!(
        resident_after <= resident + 4 * 1024 * 1024,
        "resident memory grew by {} KiB over 4 waves",
        (resident_after as i64 - resident as i64) / 1024
    );
    Ok(())
}
