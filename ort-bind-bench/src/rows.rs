//! Continuous batching's throughput (issue 33): `decode::Rows` against the same requests
//! decoded one after another, side by side in each round, on the speculative pair's
//! target (`ort-bind-tests/tests/fixtures/decoders/speculative/target`: 8 GQA layers,
//! hidden 128), shared-buffer cache, one intra-op thread.
//!
//! ```text
//! ort-bind-bench rows [--rounds N] [--requests 1,4,8,16] [--new N] [--model target|gqa_f32]
//! ```
//!
//! Each round serves `requests` requests of `new` tokens each after prompts of 4 to 19
//! tokens: one after another (`Decoder::generate` per request on one decoder of batch 1),
//! and all at once (`Rows` over a decoder of batch `requests`; prompts fed a token per run
//! alongside the others). The figure is the median over rounds of all requests' tokens per
//! second; both ways must give every request the same tokens (checked every round).

use std::ops::ControlFlow;
use std::time::Instant;

use ort_bind_runtime::decode::{GenerateOptions, RowEvent, Rows};
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

/// One round of both ways for a model module: (tokens/s one after another, tokens/s
/// batched); errors when they disagree on a token.
macro_rules! round_of {
    ($name:ident, $model:ty) => {
        fn $name(model: &$model, requests: usize, new: usize) -> Result<(f64, f64)> {
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
            // Every request at once, a row each.
            let mut rows = Rows::new(model.shared_decoder(requests, 20 + new)?)?;
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
            let batched = start.elapsed().as_secs_f64();
            if out != alone {
                return Err(format!("{requests} requests: the two ways gave other tokens").into());
            }
            let tokens = (requests * new) as f64;
            Ok((tokens / one_by_one, tokens / batched))
        }
    };
}
round_of!(round_target, crate::speculative::spec_target::Model);
round_of!(round_gqa, crate::decode::gqa_f32::Model);

pub(crate) fn main(mut argv: impl Iterator<Item = String>) -> Result<()> {
    let (mut rounds, mut counts, mut new) = (5usize, vec![1usize, 4, 8, 16], 64usize);
    let mut which = "target".to_owned();
    while let Some(flag) = argv.next() {
        let value = argv.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--rounds" => rounds = value.parse()?,
            "--new" => new = value.parse()?,
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
    let session = session(&which)?;
    let mut round: Box<dyn FnMut(usize) -> Result<(f64, f64)>> = if which == "target" {
        let model = crate::speculative::spec_target::Model::from_session(session)?;
        Box::new(move |requests| round_target(&model, requests, new))
    } else {
        let model = crate::decode::gqa_f32::Model::from_session(session)?;
        Box::new(move |requests| round_gqa(&model, requests, new))
    };
    println!("model {which}, {new} new tokens per request, {rounds} rounds");
    println!(
        "| requests | one after another (tokens/s) | continuous batching (tokens/s) | ratio |"
    );
    println!("| ---: | ---: | ---: | ---: |");
    for &requests in &counts {
        let (mut seq, mut rows) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            let (a, b) = round(requests)?;
            seq.push(a as u64);
            rows.push(b as u64);
        }
        let (s, r) = (median(&mut seq), median(&mut rows));
        println!("| {requests} | {s:.0} | {r:.0} | {:.2}x |", r / s);
    }
    Ok(())
}
