//! Continuous batching's throughput (issue 33): `decode::Rows` against the same requests
//! decoded one after another, side by side in each round, on the speculative pair's
//! target (`ort-bind-tests/tests/fixtures/decoders/speculative/target`: 8 GQA layers,
//! hidden 128), shared-buffer cache, one intra-op thread.
//!
//! ```text
//! ort-bind-bench rows [--rounds N] [--requests 1,4,8,16] [--new N] [--model target|gqa_f32]
//!                     [--python PY]
//! ```
//!
//! Each round serves `requests` requests of `new` tokens each after prompts of 4 to 19
//! tokens: one after another (`Decoder::generate` per request on one decoder of batch 1),
//! and all at once (`Rows` over a decoder of batch `requests`; prompts fed a token per run
//! alongside the others). The figure is the median over rounds of all requests' tokens per
//! second; both ways must give every request the same tokens (checked every round).
//!
//! With `--python PY` (and `--model gqa_f32`, whose folder has a `genai_config.json`),
//! each round then runs `scripts/bench_rows_peer.py` on the same requests: onnxruntime-genai
//! with a generator per request and with its continuous-batching `Engine`, and Python
//! onnxruntime one request after another; their tokens must equal ort-bind's. The ratios
//! are medians of each round's ratio.

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

/// One round of ort-bind's two ways.
struct Round {
    /// Tokens per second, one request after another.
    sequential: f64,
    /// Tokens per second, all at once in `Rows`.
    batched: f64,
    /// Each request's tokens (the same both ways).
    tokens: Vec<Vec<i64>>,
}

/// One round of both ways for a model module; errors when they disagree on a token.
macro_rules! round_of {
    ($name:ident, $model:ty) => {
        fn $name(model: &$model, requests: usize, new: usize) -> Result<Round> {
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
            Ok(Round {
                sequential: tokens / one_by_one,
                batched: tokens / batched,
                tokens: alone,
            })
        }
    };
}
round_of!(round_target, crate::speculative::spec_target::Model);
round_of!(round_gqa, crate::decode::gqa_f32::Model);

/// The Python peers' rates of one round (`scripts/bench_rows_peer.py --json`), checked to
/// give every request ort-bind's tokens.
fn python_round(
    python: &str,
    requests: usize,
    new: usize,
    tokens: &[Vec<i64>],
) -> Result<[f64; 3]> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = std::env::temp_dir().join(format!("ort-bind-rows-peer-{}.json", std::process::id()));
    let status = std::process::Command::new(python)
        .arg(root.join("scripts/bench_rows_peer.py"))
        .arg("--folder")
        .arg(root.join("ort-bind-tests/tests/fixtures/decoders/gqa_f32"))
        .args(["--requests", &requests.to_string(), "--rounds", "1"])
        .args(["--new", &new.to_string()])
        .arg("--json")
        .arg(&out)
        .status()?;
    if !status.success() {
        return Err(format!("the Python peers failed: {status}").into());
    }
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out)?)?;
    let _ = std::fs::remove_file(&out);
    let row = &json[0];
    let theirs: Vec<Vec<i64>> = serde_json::from_value(row["tokens"].clone())?;
    if theirs != tokens {
        return Err(format!("{requests} requests: the Python peers gave other tokens").into());
    }
    let rate = |k: &str| row["rates"][k][0].as_f64().unwrap_or(f64::NAN);
    Ok([
        rate("genai_sequential"),
        rate("genai_engine"),
        rate("python_sequential"),
    ])
}

pub(crate) fn main(mut argv: impl Iterator<Item = String>) -> Result<()> {
    let (mut rounds, mut counts, mut new) = (5usize, vec![1usize, 4, 8, 16], 64usize);
    let mut which = "target".to_owned();
    let mut python = None;
    while let Some(flag) = argv.next() {
        let value = argv.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--rounds" => rounds = value.parse()?,
            "--new" => new = value.parse()?,
            "--model" => which = value,
            "--python" => python = Some(value),
            "--requests" => {
                counts = value
                    .split(',')
                    .map(str::parse)
                    .collect::<std::result::Result<_, _>>()?
            }
            other => return Err(format!("unknown flag {other}").into()),
        }
    }
    if python.is_some() && which != "gqa_f32" {
        return Err(
            "the Python peers run on gqa_f32 (it has a genai_config.json): add --model gqa_f32"
                .into(),
        );
    }
    let session = session(&which)?;
    let mut round: Box<dyn FnMut(usize) -> Result<Round>> = if which == "target" {
        let model = crate::speculative::spec_target::Model::from_session(session)?;
        Box::new(move |requests| round_target(&model, requests, new))
    } else {
        let model = crate::decode::gqa_f32::Model::from_session(session)?;
        Box::new(move |requests| round_gqa(&model, requests, new))
    };
    // An untimed round first: ONNX Runtime's arena grows on a fresh session's first runs,
    // which would bill whichever way ran first.
    round(counts.iter().copied().max().unwrap_or(1))?;
    println!(
        "model {which}, {new} new tokens per request, {rounds} rounds, {}",
        crate::loadavg_note()
    );
    println!(
        "| requests | ort-bind one after another | ort-bind `Rows` | genai, a generator per request \
         | genai `Engine` | Python onnxruntime, one after another | `Rows` / one after another \
         | `Rows` / genai `Engine` |"
    );
    println!("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for &requests in &counts {
        // Per contender, each round's tokens/s; and per round the two ratios.
        let mut rates: [Vec<u64>; 5] = Default::default();
        let (mut over_seq, mut over_engine) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            let r = round(requests)?;
            rates[0].push(r.sequential as u64);
            rates[1].push(r.batched as u64);
            over_seq.push((1000.0 * r.batched / r.sequential) as u64);
            if let Some(py) = &python {
                let peers = python_round(py, requests, new, &r.tokens)?;
                for (k, rate) in peers.into_iter().enumerate() {
                    rates[2 + k].push(rate as u64);
                }
                over_engine.push((1000.0 * r.batched / peers[1]) as u64);
            }
        }
        let cell = |v: &mut Vec<u64>| {
            if v.is_empty() {
                "–".to_owned()
            } else {
                format!("{:.0}", median(v))
            }
        };
        let ratio = |v: &mut Vec<u64>| {
            if v.is_empty() {
                "–".to_owned()
            } else {
                format!("{:.2}x", median(v) / 1000.0)
            }
        };
        let cells: Vec<String> = rates.iter_mut().map(cell).collect();
        println!(
            "| {requests} | {} | {} | {} |",
            cells.join(" | "),
            ratio(&mut over_seq),
            ratio(&mut over_engine)
        );
    }
    Ok(())
}
