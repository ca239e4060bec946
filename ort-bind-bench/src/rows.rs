//! Continuous batching's throughput (issue 33): `decode::Rows` against the same requests
//! decoded one after another, side by side in each round, on the speculative pair's
//! target (`ort-bind-tests/tests/fixtures/decoders/speculative/target`: 8 GQA layers,
//! hidden 128), shared-buffer cache, one intra-op thread.
//!
//! ```text
//! ort-bind-bench rows [--rounds N] [--requests 1,4,8,16] [--new N] [--join-prompt N] [--model target|gqa_f32]
//! ```
//!
//! Each round serves `requests` requests of `new` tokens each after prompts of 4 to 19
//! tokens: one after another (`Decoder::generate` per request on one decoder of batch 1),
//! and all at once (`Rows` over a decoder of batch `requests`), joining token by token
//! (prompts fed a token per run alongside the others) and by prefill (each prompt in one
//! run of batch 1 into its row). The figures are medians over rounds of all requests'
//! tokens per second; every way must give every request the same tokens (checked every
//! round). Then the time to first token of a `--join-prompt`-token prompt (48) that joins
//! beside `requests - 1` rows (at least one) already decoding, both ways, side by side.

use std::ops::ControlFlow;
use std::time::Instant;

use ort_bind_runtime::decode::{GenerateOptions, Joining, RowEvent, Rows};
use ort_bind_runtime::{Session, SessionOptions};

use crate::Result;
use crate::decode::median;

fn session(model: &str) -> Result<Session> {
    let folder = match model {
        "target" => "speculative/target",
        "gqa_f32" => "gqa_f32",
        other => return Err(format!("no model {other} (target, gqa_f32)").into()),
    };
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../ort-bind-tests/tests/fixtures/decoders")
        .join(folder)
        .join("model.onnx");
    Ok(Session::from_file(
        path,
        &SessionOptions::new().intra_threads(1),
    )?)
}

/// Request `i`'s prompt: 4 to 19 tokens (the same in `scripts/bench_rows_peer.py`).
fn prompt(i: usize) -> Vec<i64> {
    let len = 4 + (i * 7) % 16;
    (0..len)
        .map(|j| ((5 + 37 * i + 53 * j) % 500) as i64)
        .collect()
}

/// A prompt of `len` tokens for the time-to-first-token measure.
fn long_prompt(len: usize) -> Vec<i64> {
    (0..len).map(|j| ((11 + 53 * j) % 500) as i64).collect()
}

/// One round's figures.
struct Round {
    /// Tokens/s: one after another, `Rows` joining token by token, `Rows` prefilling.
    one_by_one: f64,
    token_by_token: f64,
    prefill: f64,
    /// Seconds from a join of a `join_len`-token prompt beside busy rows to its first
    /// token: token by token, prefilling.
    ttft_token_by_token: f64,
    ttft_prefill: f64,
}

/// One round of every way for a model module; errors when they disagree on a token.
macro_rules! round_of {
    ($name:ident, $model:ty) => {
        fn $name(model: &$model, requests: usize, new: usize, join_len: usize) -> Result<Round> {
            // Every request alone, one after another, on one decoder of batch 1.
            let mut decoder = model.shared_decoder(1, 20 + new)?;
            let options = GenerateOptions::new(new);
            let start = Instant::now();
            let mut alone = Vec::with_capacity(requests);
            for i in 0..requests {
                let mut tokens = Vec::with_capacity(new);
                decoder.generate(&prompt(i), &options, |t| {
                    tokens.push(t[0]);
                    ControlFlow::Continue(())
                })?;
                alone.push(tokens);
            }
            let one_by_one = start.elapsed().as_secs_f64();
            // Every request at once, a row each, joining one way then the other.
            let mut batched = [0.0; 2];
            for (seconds, joining) in batched
                .iter_mut()
                .zip([Joining::TokenByToken, Joining::Prefill])
            {
                let mut rows = Rows::new(model.shared_decoder(requests, 20 + new)?)?;
                rows.set_joining(joining)?;
                let start = Instant::now();
                let mut row_of = Vec::with_capacity(requests);
                for i in 0..requests {
                    row_of.push(rows.join(&prompt(i), new, None)?);
                }
                let mut out = vec![Vec::with_capacity(new); requests];
                while rows.busy() > 0 {
                    for (row, event) in rows.step()?.iter().enumerate() {
                        if let RowEvent::Token(t) | RowEvent::Last(t) = *event {
                            let request = row_of.iter().position(|&r| r == row).expect("a row");
                            out[request].push(t);
                        }
                    }
                }
                *seconds = start.elapsed().as_secs_f64();
                if out != alone {
                    return Err(format!(
                        "{requests} requests, {joining:?}: other tokens than one by one"
                    )
                    .into());
                }
            }
            // Time to first token: `requests - 1` rows decoding (at least one), then a
            // prompt of `join_len` joins; from `join` to its first token.
            let mut ttft = [0.0; 2];
            let mut firsts = [0; 2];
            let long = long_prompt(join_len);
            for ((seconds, first), joining) in ttft
                .iter_mut()
                .zip(&mut firsts)
                .zip([Joining::TokenByToken, Joining::Prefill])
            {
                let batch = requests.max(2);
                let mut rows = Rows::new(model.shared_decoder(batch, join_len + new + 20)?)?;
                rows.set_joining(joining)?;
                for i in 0..batch - 1 {
                    rows.join(&prompt(i), new + join_len, None)?;
                }
                for _ in 0..25 {
                    rows.step()?;
                }
                let start = Instant::now();
                let row = rows.join(&long, new, None)?;
                *first = loop {
                    if let RowEvent::Token(t) | RowEvent::Last(t) = rows.step()?[row] {
                        break t;
                    }
                };
                *seconds = start.elapsed().as_secs_f64();
            }
            if firsts[0] != firsts[1] {
                return Err(format!("a joining prompt: first tokens {firsts:?}").into());
            }
            let tokens = (requests * new) as f64;
            Ok(Round {
                one_by_one: tokens / one_by_one,
                token_by_token: tokens / batched[0],
                prefill: tokens / batched[1],
                ttft_token_by_token: ttft[0],
                ttft_prefill: ttft[1],
            })
        }
    };
}
round_of!(round_target, crate::speculative::spec_target::Model);
round_of!(round_gqa, crate::decode::gqa_f32::Model);

pub(crate) fn main(mut argv: impl Iterator<Item = String>) -> Result<()> {
    let (mut rounds, mut counts, mut new) = (5usize, vec![1usize, 4, 8, 16], 64usize);
    let mut join_len = 48usize;
    let mut which = "target".to_owned();
    while let Some(flag) = argv.next() {
        if flag == "--help" || flag == "-h" {
            println!(
                "ort-bind-bench rows [--rounds N] [--requests 1,4,8,16] [--new N] [--join-prompt N] [--model target|gqa_f32]"
            );
            return Ok(());
        }
        let value = argv.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--rounds" => rounds = value.parse()?,
            "--new" => new = value.parse()?,
            "--join-prompt" => join_len = value.parse()?,
            "--model" => which = value,
            "--requests" => {
                counts = value
                    .split(',')
                    .map(str::parse)
                    .collect::<std::result::Result<_, _>>()?
            }
            other => return Err(format!("unknown flag {other}").into()),
        }
    }
    if rounds == 0 || new == 0 || join_len == 0 || counts.contains(&0) {
        return Err(
            "--rounds, --new, --join-prompt and --requests need values of 1 or more".into(),
        );
    }
    let session = session(&which)?;
    let mut round: Box<dyn FnMut(usize) -> Result<Round>> = if which == "target" {
        let model = crate::speculative::spec_target::Model::from_session(session)?;
        Box::new(move |requests| round_target(&model, requests, new, join_len))
    } else {
        let model = crate::decode::gqa_f32::Model::from_session(session)?;
        Box::new(move |requests| round_gqa(&model, requests, new, join_len))
    };
    println!(
        "model {which}, {new} new tokens per request, {rounds} rounds (medians); time to first token: a {join_len}-token prompt joining beside busy rows"
    );
    println!(
        "| requests | one after another (tokens/s) | rows, token by token (tokens/s) | rows, prefill (tokens/s) | prefill / token by token | first token, token by token (ms) | first token, prefill (ms) |"
    );
    println!("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for &requests in &counts {
        let mut figures: [Vec<u64>; 5] = Default::default();
        for _ in 0..rounds {
            let r = round(requests)?;
            figures[0].push(r.one_by_one as u64);
            figures[1].push(r.token_by_token as u64);
            figures[2].push(r.prefill as u64);
            // Microseconds.
            figures[3].push((r.ttft_token_by_token * 1e6) as u64);
            figures[4].push((r.ttft_prefill * 1e6) as u64);
        }
        let [s, t, p, tt, tp] = figures.map(|mut f| median(&mut f));
        println!(
            "| {requests} | {s:.0} | {t:.0} | {p:.0} | {:.2}x | {:.2} | {:.2} |",
            p / t,
            tt / 1e3,
            tp / 1e3
        );
    }
    Ok(())
}
