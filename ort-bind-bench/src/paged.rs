//! Paged caches (issue 33): continuous batching in the same cache memory, a pool of blocks
//! shared by the rows (`gqa_paged`) against a capacity per row (`gqa_f32`'s shared
//! buffer), side by side in each round on the same requests. Both models have the same
//! weights (`make_paged.py` builds one from the other).
//!
//! ```text
//! ort-bind-bench paged [--rounds N] [--requests N] [--memory POSITIONS] [--capacity N]
//! ```
//!
//! A server sizes its cache for the longest request it accepts (`--capacity`, 512), and
//! has `--memory` positions of cache per layer and key/value (2048: four such requests).
//! The shared-buffer mode reserves the capacity for each row, so it serves `memory /
//! capacity` requests at a time; the paged mode holds `memory / 16` blocks and serves as
//! many at a time as their real lengths fit (up to 32 rows here), each admitted when the
//! pool can hold its prompt and budget. Each round sends `--requests` requests (32) of
//! prompts of 4 to 19 tokens and budgets of 16 to 136 tokens through each, joining as rows
//! and blocks free up (by prefill), and reports all requests' tokens per second, the most
//! requests served at once and the blocks in use at most. The two models compute attention
//! differently (a fused kernel, a gather over blocks), so the bench counts the requests
//! whose tokens the two modes agree on rather than requiring all (the tests check each
//! mode against its reference). An untimed round comes first: ONNX Runtime's arena grows
//! on a fresh session's first runs.
//!
//! Then a paged decoder's greedy step (batch 1, contexts 16, 256, 2048) against the C API
//! floor of the paged mode (`decode_floor.rs`), as `ort-bind-bench decode` does for the
//! other modes.

use std::time::Instant;

use ort_bind_runtime::Error;
use ort_bind_runtime::decode::{
    DecodeError, Decoder, DecoderModel, Paged, RowEvent, Rows, RowsCache,
};

use crate::Result;
use crate::decode::{gqa_f32, median, session};

pub(crate) mod gqa_paged {
    include!(concat!(env!("OUT_DIR"), "/ort-bind/gqa_paged.rs"));
}

/// Positions per block of `gqa_paged`.
const BLOCK: usize = 16;
/// Rows of the paged mode: more than the pool ever holds at once here.
const PAGED_ROWS: usize = 32;

/// Request `i`: a prompt of 4 to 19 tokens and a budget of 16 to 136.
fn request(i: usize) -> (Vec<i64>, usize) {
    let len = 4 + (i * 7) % 16;
    let prompt = (0..len)
        .map(|j| ((5 + 37 * i + 53 * j) % 500) as i64)
        .collect();
    (prompt, 16 + (i * 29) % 121)
}

/// One mode's figures for a round.
struct Served {
    seconds: f64,
    tokens: Vec<Vec<i64>>,
    most_rows: usize,
}

/// Serves every request through `rows`: joins while a row (and, paged, the pool) has room,
/// steps, and collects each request's tokens.
fn serve<T: DecoderModel, M: RowsCache>(
    mut rows: Rows<T, ort_bind_runtime::Cpu, M>,
    requests: &[(Vec<i64>, usize)],
    mut peak_blocks: impl FnMut(&Rows<T, ort_bind_runtime::Cpu, M>),
) -> Result<Served> {
    let start = Instant::now();
    let mut next = 0;
    let mut request_in = vec![usize::MAX; rows.rows()];
    let mut tokens = vec![Vec::new(); requests.len()];
    let mut most_rows = 0;
    while next < requests.len() || rows.busy() > 0 {
        while next < requests.len() && rows.busy() < rows.rows() {
            let (prompt, budget) = &requests[next];
            match rows.join(prompt, *budget, None) {
                Ok(row) => {
                    request_in[row] = next;
                    next += 1;
                }
                Err(Error::Decode(DecodeError::OutOfBlocks { .. })) => break,
                Err(e) => return Err(e.into()),
            }
        }
        most_rows = most_rows.max(rows.busy());
        peak_blocks(&rows);
        for (row, event) in rows.step()?.iter().enumerate() {
            if let RowEvent::Token(t) | RowEvent::Last(t) = *event {
                tokens[request_in[row]].push(t);
            }
        }
    }
    Ok(Served {
        seconds: start.elapsed().as_secs_f64(),
        tokens,
        most_rows,
    })
}

/// Cache bytes of a decoder's pool or buffers: every cache's elements times 4 (float32).
fn cache_bytes<T: DecoderModel, M: ort_bind_runtime::decode::CacheMode>(
    decoder: &Decoder<T, M>,
    positions: usize,
) -> usize {
    let per_position: usize = decoder
        .spec()
        .caches
        .iter()
        .map(|c| {
            c.axes
                .iter()
                .map(|a| match a {
                    ort_bind_runtime::decode::CacheAxis::Fixed(n) => *n,
                    _ => 1,
                })
                .product::<usize>()
        })
        .sum();
    // A paged cache's fixed axes include the block size: per block, not per position.
    let per_position = if M::PAGED {
        per_position / BLOCK
    } else {
        per_position
    };
    per_position * positions * 4
}

/// ort-bind's paged step over the C API floor's (`decode_floor.rs`, its paged mode), batch
/// 1 at each context, the two one right after the other (the floor first in odd rounds)
/// after an untimed pass; the tokens must agree. Returns the table.
fn floor_table(contexts: &[usize], rounds: usize) -> Result<String> {
    use crate::decode::{Protocol, median as med, time_floor, time_ort_bind};
    let s = session("gqa_paged")?;
    let spec = &gqa_paged::DECODER;
    let p = Protocol {
        warmup: 8,
        steps: 64,
        floor_run_options: false,
    };
    let mut md = String::from(
        "| context | ort-bind paged step (µs) | floor (µs) | ort-bind / floor | allocations per step |\n| ---: | ---: | ---: | ---: | ---: |\n",
    );
    for &context in contexts {
        time_ort_bind::<f32, Paged>(&s, spec, context, p)?;
        let (mut ours, mut floor, mut allocations) = (Vec::new(), Vec::new(), 0);
        for round in 0..rounds {
            let f = || -> Result<_> {
                time_floor::<f32>(&s, spec, true, context, p)?
                    .ok_or_else(|| "the floor does not cover gqa_paged".into())
            };
            let (o, f) = if round % 2 == 1 {
                let f = f()?;
                (time_ort_bind::<f32, Paged>(&s, spec, context, p)?, f)
            } else {
                let o = time_ort_bind::<f32, Paged>(&s, spec, context, p)?;
                (o, f()?)
            };
            if o.tokens != f.tokens {
                return Err(format!("context {context}: the floor picked other tokens").into());
            }
            allocations += o.allocations;
            ours.push(med(&mut o.step_ns.clone()) as u64);
            floor.push(med(&mut f.step_ns.clone()) as u64);
        }
        let (o, f) = (med(&mut ours), med(&mut floor));
        md.push_str(&format!(
            "| {context} | {:.1} | {:.1} | {:.3}x ({:+.1} µs) | {} |\n",
            o / 1e3,
            f / 1e3,
            o / f,
            (o - f) / 1e3,
            allocations / (rounds * p.steps) as u64
        ));
    }
    Ok(md)
}

/// `ort-bind-bench paged`: see the module docs.
pub(crate) fn main(mut argv: impl Iterator<Item = String>) -> Result<()> {
    let (mut rounds, mut count, mut memory, mut capacity) = (5usize, 32usize, 2048, 512);
    while let Some(flag) = argv.next() {
        if flag == "--help" || flag == "-h" {
            println!(
                "ort-bind-bench paged [--rounds N] [--requests N] [--memory POSITIONS] [--capacity N]"
            );
            return Ok(());
        }
        let value: usize = argv
            .next()
            .ok_or(format!("{flag} needs a value"))?
            .parse()?;
        match flag.as_str() {
            "--rounds" => rounds = value,
            "--requests" => count = value,
            "--memory" => memory = value,
            "--capacity" => capacity = value,
            other => return Err(format!("unknown flag {other}").into()),
        }
    }
    let shared_rows = memory / capacity;
    if rounds == 0 || count == 0 || shared_rows == 0 || capacity < 156 {
        return Err("--rounds and --requests need 1 or more, --capacity 156 or more (the longest request), --memory at least the capacity".into());
    }
    let blocks = memory / BLOCK - 1; // one block is the sink of free rows
    let per_row = gqa_f32::Model::from_session(session("gqa_f32")?)?;
    let pooled = gqa_paged::Model::from_session(session("gqa_paged")?)?;
    let requests: Vec<(Vec<i64>, usize)> = (0..count).map(request).collect();
    let shared_bytes = cache_bytes(
        &per_row.shared_decoder(shared_rows, capacity)?,
        shared_rows * capacity,
    );
    let paged_bytes = cache_bytes(
        &pooled.paged_decoder(1, capacity, blocks)?,
        (blocks + 1) * BLOCK,
    );
    let round = || -> Result<([Served; 2], usize)> {
        let shared = serve(
            Rows::new(per_row.shared_decoder(shared_rows, capacity)?)?,
            &requests,
            |_| {},
        )?;
        let mut peak = 0;
        let paged = serve(
            Rows::new(pooled.paged_decoder(PAGED_ROWS, capacity, blocks)?)?,
            &requests,
            |rows| peak = peak.max(blocks - rows.free_blocks()),
        )?;
        Ok(([shared, paged], peak))
    };
    round()?;
    println!(
        "{count} requests (prompts 4-19 tokens, budgets 16-136), capacity {capacity}, cache memory {memory} positions: shared buffer {shared_rows} rows ({shared_bytes} B), paged {blocks} blocks of {BLOCK} + 1 ({paged_bytes} B) under up to {PAGED_ROWS} rows; {rounds} rounds (medians), {}",
        crate::loadavg_note()
    );
    let (mut rates, mut ratio) = ([Vec::new(), Vec::new()], Vec::new());
    let (mut most, mut agree, mut peak_blocks) = ([0, 0], usize::MAX, 0);
    let generated: usize = requests.iter().map(|(_, n)| n).sum();
    for _ in 0..rounds {
        let (served, peak) = round()?;
        peak_blocks = peak_blocks.max(peak);
        for (k, s) in served.iter().enumerate() {
            rates[k].push((generated as f64 / s.seconds) as u64);
            most[k] = most[k].max(s.most_rows);
        }
        ratio.push((1000.0 * served[0].seconds / served[1].seconds) as u64);
        let same = served[0]
            .tokens
            .iter()
            .zip(&served[1].tokens)
            .filter(|(a, b)| a == b)
            .count();
        agree = agree.min(same);
    }
    println!("| cache | requests at once (most) | tokens/s |");
    println!("| --- | ---: | ---: |");
    println!(
        "| shared buffer, {shared_rows} rows | {} | {:.0} |",
        most[0],
        median(&mut rates[0])
    );
    println!(
        "| paged, {blocks} blocks (at most {peak_blocks} in use) | {} | {:.0} |",
        most[1],
        median(&mut rates[1])
    );
    println!(
        "paged / shared buffer: {:.2}x; requests whose tokens the two modes agree on: {agree} of {count} (the fewest in a round)",
        median(&mut ratio) / 1000.0
    );
    println!();
    println!(
        "A paged step (batch 1) over the C API floor of the paged mode (`decode_floor.rs`), medians of {rounds} rounds of 64 steps:"
    );
    println!();
    print!("{}", floor_table(&[16, 256, 2048], rounds)?);
    Ok(())
}
