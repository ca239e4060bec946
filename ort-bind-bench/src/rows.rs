//! Continuous batching's throughput (issue 33): `decode::Rows` against the same requests
//! decoded one after another, side by side in each round, on the speculative pair's
//! target (`ort-bind-tests/tests/fixtures/decoders/speculative/target`: 8 GQA layers,
//! hidden 128), shared-buffer cache, one intra-op thread.
//!
//! ```text
//! ort-bind-bench rows [--rounds N] [--requests 1,4,8,16] [--new N] [--join-prompt N]
//!                     [--model target|gqa_f32|mha_concat] [--python PY]
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
//!
//! `--model mha_concat` measures continuous batching over a growing cache instead (left-padded
//! rows joining token by token, `Rows` over `Model::decoder`) against one request after
//! another.
//!
//! With `--python PY` (and `--model gqa_f32`, whose folder has a `genai_config.json`),
//! each round then runs `scripts/bench_rows_peer.py` on the same requests: onnxruntime-genai
//! with a generator per request and with its continuous-batching `Engine`, and Python
//! onnxruntime one request after another; their tokens must equal ort-bind's. Ratios are
//! medians of each round's ratio. An untimed round comes first: ONNX Runtime's arena grows
//! on a fresh session's first runs, which would bill whichever way ran first.

use std::ops::ControlFlow;
use std::time::Instant;

use ort_bind_runtime::Session;
use ort_bind_runtime::decode::{
    CacheMode, Decoder, DecoderModel, GenerateOptions, Joining, RowEvent, Rows, RowsCache,
};

use crate::Result;
use crate::decode::median;

fn session(model: &str) -> Result<Session> {
    let folder = match model {
        "target" => "speculative/target",
        "gqa_f32" => "gqa_f32",
        "mha_concat" => "mha_concat",
        other => return Err(format!("no model {other} (target, gqa_f32, mha_concat)").into()),
    };
    crate::decode::session(folder)
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
    /// Each request's tokens (the same every way).
    tokens: Vec<Vec<i64>>,
}

/// Every request alone, one after another, on `decoder` (batch 1): each request's tokens,
/// and the seconds they took.
fn one_after_another<T: DecoderModel, M: CacheMode>(
    mut decoder: Decoder<T, M>,
    requests: usize,
    new: usize,
) -> Result<(Vec<Vec<i64>>, f64)> {
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
    Ok((alone, start.elapsed().as_secs_f64()))
}

/// Every request at once through `rows`, a row each: each request's tokens, and the
/// seconds from the first join to the last token.
fn all_at_once<T: DecoderModel, M: RowsCache>(
    mut rows: Rows<T, ort_bind_runtime::Cpu, M>,
    requests: usize,
    new: usize,
) -> Result<(Vec<Vec<i64>>, f64)> {
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
    Ok((out, start.elapsed().as_secs_f64()))
}

/// One round of every way for a model module; errors when they disagree on a token.
macro_rules! round_of {
    ($name:ident, $model:ty) => {
        fn $name(model: &$model, requests: usize, new: usize, join_len: usize) -> Result<Round> {
            let (alone, one_by_one) =
                one_after_another(model.shared_decoder(1, 20 + new)?, requests, new)?;
            // Every request at once, a row each, joining one way then the other.
            let mut batched = [0.0; 2];
            for (seconds, joining) in batched
                .iter_mut()
                .zip([Joining::TokenByToken, Joining::Prefill])
            {
                let mut rows = Rows::new(model.shared_decoder(requests, 20 + new)?)?;
                rows.set_joining(joining)?;
                let out;
                (out, *seconds) = all_at_once(rows, requests, new)?;
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
                tokens: alone,
            })
        }
    };
}
round_of!(round_target, crate::speculative::spec_target::Model);
round_of!(round_gqa, crate::decode::gqa_f32::Model);

/// One round over a growing cache (`mha_concat`, left-padded rows joining token by token):
/// tokens/s one after another and with `Rows`; errors when they disagree on a token.
fn growing_round(
    model: &crate::decode::mha_concat::Model,
    requests: usize,
    new: usize,
) -> Result<(f64, f64)> {
    let capacity = 20 + new;
    let (alone, one_by_one) = one_after_another(model.decoder(1, capacity)?, requests, new)?;
    let (out, batched) = all_at_once(
        Rows::new(model.decoder(requests, capacity)?)?,
        requests,
        new,
    )?;
    if out != alone {
        return Err(format!("{requests} requests over a growing cache: other tokens").into());
    }
    let tokens = (requests * new) as f64;
    Ok((tokens / one_by_one, tokens / batched))
}

/// `--model mha_concat`: continuous batching over a growing cache against one request
/// after another, side by side in each round.
fn growing_table(counts: &[usize], new: usize, rounds: usize) -> Result<()> {
    let model = crate::decode::mha_concat::Model::from_session(session("mha_concat")?)?;
    growing_round(&model, counts.iter().copied().max().unwrap_or(1), new)?;
    println!(
        "model mha_concat (growing cache, left-padded rows joining token by token), {new} new tokens per request, {rounds} rounds (medians), {}",
        crate::loadavg_note()
    );
    println!(
        "| requests | ort-bind one after another | `Rows`, token by token | `Rows` / one after another |"
    );
    println!("| ---: | ---: | ---: | ---: |");
    for &requests in counts {
        let (mut seq, mut rows, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..rounds {
            let (a, b) = growing_round(&model, requests, new)?;
            seq.push(a as u64);
            rows.push(b as u64);
            ratio.push((1000.0 * b / a) as u64);
        }
        println!(
            "| {requests} | {:.0} | {:.0} | {:.2}x |",
            median(&mut seq),
            median(&mut rows),
            median(&mut ratio) / 1000.0
        );
    }
    Ok(())
}

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
    let mut join_len = 48usize;
    let mut python = None;
    let mut which = "target".to_owned();
    while let Some(flag) = argv.next() {
        if flag == "--help" || flag == "-h" {
            println!(
                "ort-bind-bench rows [--rounds N] [--requests 1,4,8,16] [--new N] [--join-prompt N] [--model target|gqa_f32|mha_concat] [--python PY]"
            );
            return Ok(());
        }
        let value = argv.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--rounds" => rounds = value.parse()?,
            "--new" => new = value.parse()?,
            "--join-prompt" => join_len = value.parse()?,
            "--python" => python = Some(value),
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
    if which == "mha_concat" {
        return growing_table(&counts, new, rounds);
    }
    let session = session(&which)?;
    if python.is_some() && which != "gqa_f32" {
        return Err(
            "the Python peers run on gqa_f32 (it has a genai_config.json): add --model gqa_f32"
                .into(),
        );
    }
    let mut round: Box<dyn FnMut(usize) -> Result<Round>> = if which == "target" {
        let model = crate::speculative::spec_target::Model::from_session(session)?;
        Box::new(move |requests| round_target(&model, requests, new, join_len))
    } else {
        let model = crate::decode::gqa_f32::Model::from_session(session)?;
        Box::new(move |requests| round_gqa(&model, requests, new, join_len))
    };
    // An untimed round first: ONNX Runtime's arena grows on a fresh session's first runs,
    // which would bill whichever way ran first.
    round(counts.iter().copied().max().unwrap_or(1))?;
    println!(
        "model {which}, {new} new tokens per request, {rounds} rounds (medians), {}",
        crate::loadavg_note()
    );
    println!(
        "| requests | ort-bind one after another | `Rows`, token by token | `Rows`, prefill \
         | genai, a generator per request | genai `Engine` | Python onnxruntime, one after \
         another | prefill / one after another | prefill / genai `Engine` | first token, token \
         by token (ms) | first token, prefill (ms) |"
    );
    println!("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for &requests in &counts {
        // Tokens/s of each way (ort-bind's three, the three peers), first-token times in
        // µs, and per round the two ratios (in thousandths).
        let mut rates: [Vec<u64>; 6] = Default::default();
        let mut ttft: [Vec<u64>; 2] = Default::default();
        let (mut over_seq, mut over_engine) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            let r = round(requests)?;
            rates[0].push(r.one_by_one as u64);
            rates[1].push(r.token_by_token as u64);
            rates[2].push(r.prefill as u64);
            ttft[0].push((r.ttft_token_by_token * 1e6) as u64);
            ttft[1].push((r.ttft_prefill * 1e6) as u64);
            over_seq.push((1000.0 * r.prefill / r.one_by_one) as u64);
            if let Some(py) = &python {
                let peers = python_round(py, requests, new, &r.tokens)?;
                for (k, rate) in peers.into_iter().enumerate() {
                    rates[3 + k].push(rate as u64);
                }
                over_engine.push((1000.0 * r.prefill / peers[1]) as u64);
            }
        }
        let cell = |v: &mut Vec<u64>, scale: f64, digits: usize| {
            if v.is_empty() {
                "–".to_owned()
            } else {
                format!("{:.*}", digits, median(v) / scale)
            }
        };
        let cells: Vec<String> = rates.iter_mut().map(|v| cell(v, 1.0, 0)).collect();
        println!(
            "| {requests} | {} | {}x | {}x | {} | {} |",
            cells.join(" | "),
            cell(&mut over_seq, 1000.0, 2),
            cell(&mut over_engine, 1000.0, 2),
            cell(&mut ttft[0], 1000.0, 2),
            cell(&mut ttft[1], 1000.0, 2),
        );
    }
    Ok(())
}
