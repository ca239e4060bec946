//! The decode-loop figures (issue 21): per-token time of greedy decoding on the project's
//! decoder fixtures at contexts 16, 256 and 2048, batch 1, one intra-op thread, for
//!
//! - `ort-bind growing` / `ort-bind shared`: the generated `Decoder` / `SharedDecoder`
//!   (`step_greedy`: argmax, append, run);
//! - `floor growing` / `floor shared` (`decode_floor.rs`): the same loop written straight
//!   against the C API on the same session, making only the calls a step cannot avoid; the
//!   report's last table is ort-bind over it. Each round times ort-bind and the floor of a
//!   mode one right after the other (the floor first in odd rounds), after an untimed pass
//!   that lets ONNX Runtime's arena grow on the fresh session;
//! - `ort (examples)`: the `ort` crate as its examples write a decode loop: `Session::run`
//!   with the inputs as views of host arrays, and every `present` copied into the host
//!   array the next step reads as `past`;
//! - the Python peers of `scripts/bench_decode_peer.py`, run as a subprocess in each round
//!   right after the Rust contenders of the same fixture:
//!   onnxruntime with I/O binding (growing and, for GroupQueryAttention, shared buffers)
//!   and onnxruntime-genai 0.18.0 on the same model folder.
//!
//! Protocol (the same in the Python script): a prompt of `context - warmup` tokens is
//! prefilled, `warmup` greedy steps run, then `steps` single-token steps are timed one by
//! one; the timed steps run at past lengths `context ..`. Each round measures every
//! contender once; the figure is the median over all rounds' steps. Also reported, for
//! ort-bind: Rust heap allocations per timed step and cache bytes it moved.

use std::path::{Path, PathBuf};
use std::time::Instant;

use ort::session::{Session as OrtSession, SessionInputValue};
use ort::value::TensorRef;
use ort_bind_runtime::decode::{CacheAxis, CacheMode, Decoder, DecoderSpec, Logit, argmax};
use ort_bind_runtime::{Session, SessionOptions, f16};
use serde_json::{Value, json};

use crate::Result;
use crate::contenders::ort_session;

pub(crate) mod gqa_f32 {
    include!(concat!(env!("OUT_DIR"), "/ort-bind/gqa_f32.rs"));
}
mod gqa_f16 {
    include!(concat!(env!("OUT_DIR"), "/ort-bind/gqa_f16.rs"));
}
pub(crate) mod mha_concat {
    include!(concat!(env!("OUT_DIR"), "/ort-bind/mha_concat.rs"));
}
mod gpt2_stacked {
    include!(concat!(env!("OUT_DIR"), "/ort-bind/gpt2_stacked.rs"));
}
mod hybrid_conv {
    include!(concat!(env!("OUT_DIR"), "/ort-bind/hybrid_conv.rs"));
}

/// The fixtures, in report order (folders of `ort-bind-tests/tests/fixtures/decoders`).
const FIXTURES: &[&str] = &[
    "gqa_f32",
    "gqa_f16",
    "mha_concat",
    "gpt2_stacked",
    "hybrid_conv",
];

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../ort-bind-tests/tests/fixtures/decoders")
}

/// The prompt the Python script uses too (and the seq2seq figures' filler).
pub(crate) fn prompt_ids(n: usize) -> Vec<i64> {
    (0..n as i64).map(|i| 1 + (7 + 13 * i) % 511).collect()
}

/// What one contender measured at one context in one round.
#[derive(Debug, Default, Clone)]
pub(crate) struct Sample {
    pub(crate) step_ns: Vec<u64>,
    pub(crate) allocations: u64,
    cache_bytes_moved: u64,
    pub(crate) tokens: Vec<i64>,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Protocol {
    pub(crate) warmup: usize,
    pub(crate) steps: usize,
    /// `--floor-run-options`: the floor passes run options of its own to every run, as
    /// ort-bind does (they carry the terminate flag of its terminators and timeouts),
    /// instead of null (the defaults).
    pub(crate) floor_run_options: bool,
}

/// A session on decoder fixture `fixture` (`speculative/target` for a nested one), one
/// intra-op thread.
pub(crate) fn session(fixture: &str) -> Result<Session> {
    let path = fixtures_dir().join(fixture).join("model.onnx");
    Ok(Session::from_file(
        path,
        &SessionOptions::new().intra_threads(1),
    )?)
}

/// ort-bind's generated decoder, timed.
pub(crate) fn time_ort_bind<L: Logit, M: CacheMode>(
    session: &Session,
    spec: &'static DecoderSpec,
    context: usize,
    p: Protocol,
) -> Result<Sample> {
    let mut decoder = Decoder::<L, M>::new(session, spec, 1, context + p.steps + 1)?;
    decoder.prefill(&prompt_ids(context - p.warmup))?;
    // The tokens fed, one per step (each the argmax of the step before).
    let mut tokens = Vec::with_capacity(p.warmup + p.steps);
    for _ in 0..p.warmup {
        tokens.push(decoder.step_greedy()?[0]);
    }
    let moved = decoder.stats().cache_bytes_moved;
    let mut step_ns = Vec::with_capacity(p.steps);
    let allocations = crate::alloc::count();
    for _ in 0..p.steps {
        let t = Instant::now();
        let token = decoder.step_greedy()?[0];
        step_ns.push(t.elapsed().as_nanos() as u64);
        tokens.push(token);
    }
    Ok(Sample {
        allocations: crate::alloc::count() - allocations,
        step_ns,
        cache_bytes_moved: decoder.stats().cache_bytes_moved - moved,
        tokens,
    })
}

/// The C API floor (`decode_floor.rs`) on the same session, timed as ort-bind is; `None`
/// for a fixture the floor does not cover.
pub(crate) fn time_floor<L: Logit>(
    session: &Session,
    spec: &'static DecoderSpec,
    shared: bool,
    context: usize,
    p: Protocol,
) -> Result<Option<Sample>> {
    let capacity = context + p.steps + 1;
    let Some(mut floor) =
        crate::decode_floor::Floor::<L>::new(session, spec, capacity, shared, p.floor_run_options)?
    else {
        return Ok(None);
    };
    let mut token = floor.prefill(&prompt_ids(context - p.warmup))?;
    let mut tokens = Vec::with_capacity(p.warmup + p.steps);
    for _ in 0..p.warmup {
        tokens.push(token);
        token = floor.step(token)?;
    }
    let mut step_ns = Vec::with_capacity(p.steps);
    let allocations = crate::alloc::count();
    for _ in 0..p.steps {
        tokens.push(token);
        let t = Instant::now();
        token = floor.step(token)?;
        step_ns.push(t.elapsed().as_nanos() as u64);
    }
    Ok(Some(Sample {
        allocations: crate::alloc::count() - allocations,
        step_ns,
        cache_bytes_moved: 0,
        tokens,
    }))
}

/// The `ort` crate as its examples write a decode loop: inputs as views of host arrays,
/// every present copied into the host array the next step reads as past.
struct OrtLoop<T> {
    session: OrtSession,
    spec: &'static DecoderSpec,
    caches: Vec<Vec<T>>,
    len: usize,
}

impl<T> OrtLoop<T>
where
    T: Logit + ort::value::PrimitiveTensorElementType + std::fmt::Debug,
{
    fn new(fixture: &str, spec: &'static DecoderSpec) -> Result<Self> {
        let path = fixtures_dir().join(fixture).join("model.onnx");
        let session = ort_session(path.to_str().ok_or("path")?)?;
        let caches = spec
            .caches
            .iter()
            .map(|c| {
                let fixed: usize = c
                    .axes
                    .iter()
                    .map(|a| match a {
                        CacheAxis::Fixed(n) => *n,
                        _ => 1,
                    })
                    .product();
                // Recurrent state starts at zero; a key/value cache starts empty.
                vec![T::default(); if c.grows() { 0 } else { fixed }]
            })
            .collect();
        Ok(OrtLoop {
            session,
            spec,
            caches,
            len: 0,
        })
    }

    /// Runs `tokens` (batch 1) and returns the argmax of the last position's logits.
    fn run(&mut self, tokens: &[i64]) -> Result<i64> {
        let new = tokens.len();
        let total = self.len + new;
        let mask = vec![1i64; total];
        let positions: Vec<i64> = (self.len as i64..total as i64).collect();
        let err = |e: ort::Error| -> Box<dyn std::error::Error> { e.to_string().into() };
        let mut inputs: Vec<(&str, SessionInputValue<'_>)> = vec![(
            self.spec.input_ids.name,
            TensorRef::from_array_view(([1usize, new], tokens))
                .map_err(err)?
                .into(),
        )];
        if let Some(m) = &self.spec.attention_mask {
            inputs.push((
                m.name,
                TensorRef::from_array_view(([1usize, total], &mask[..]))
                    .map_err(err)?
                    .into(),
            ));
        }
        if let Some(p) = &self.spec.position_ids {
            inputs.push((
                p.name,
                TensorRef::from_array_view(([1usize, new], &positions[..]))
                    .map_err(err)?
                    .into(),
            ));
        }
        for (cache, data) in self.spec.caches.iter().zip(&self.caches) {
            let shape: Vec<usize> = cache
                .axes
                .iter()
                .map(|a| match a {
                    CacheAxis::Batch => 1,
                    CacheAxis::Sequence | CacheAxis::Blocks => self.len,
                    CacheAxis::Fixed(n) => *n,
                })
                .collect();
            inputs.push((
                cache.past,
                TensorRef::from_array_view((shape, &data[..]))
                    .map_err(err)?
                    .into(),
            ));
        }
        let outputs = self.session.run(inputs).map_err(err)?;
        let (_, logits) = outputs[self.spec.logits]
            .try_extract_tensor::<T>()
            .map_err(err)?;
        let vocab = self.spec.vocab.unwrap_or(logits.len());
        let token = argmax(&logits[logits.len() - vocab..]) as i64;
        for (cache, data) in self.spec.caches.iter().zip(&mut self.caches) {
            let (_, present) = outputs[cache.present]
                .try_extract_tensor::<T>()
                .map_err(err)?;
            data.clear();
            data.extend_from_slice(present);
        }
        self.len = total;
        Ok(token)
    }
}

fn time_ort<T>(
    fixture: &str,
    spec: &'static DecoderSpec,
    context: usize,
    p: Protocol,
) -> Result<Sample>
where
    T: Logit + ort::value::PrimitiveTensorElementType + std::fmt::Debug,
{
    let mut run = OrtLoop::<T>::new(fixture, spec)?;
    let mut token = run.run(&prompt_ids(context - p.warmup))?;
    // The tokens fed, one per step, as ort-bind's `step_greedy` returns them.
    let mut tokens = Vec::with_capacity(p.warmup + p.steps);
    for _ in 0..p.warmup {
        tokens.push(token);
        token = run.run(&[token])?;
    }
    let mut step_ns = Vec::with_capacity(p.steps);
    let allocations = crate::alloc::count();
    for _ in 0..p.steps {
        tokens.push(token);
        let t = Instant::now();
        token = run.run(&[token])?;
        step_ns.push(t.elapsed().as_nanos() as u64);
    }
    Ok(Sample {
        allocations: crate::alloc::count() - allocations,
        step_ns,
        cache_bytes_moved: 0,
        tokens,
    })
}

/// One round of the Rust contenders for `fixture` at `context`: (contender, sample).
fn rust_round(
    fixture: &str,
    context: usize,
    p: Protocol,
    floor_first: bool,
) -> Result<Vec<(&'static str, Sample)>> {
    use ort_bind_runtime::decode::{Growing, SharedBuffer};
    let s = session(fixture)?;
    macro_rules! run {
        ($module:ident, $t:ty, $shared:expr) => {{
            let spec = &$module::DECODER;
            // A pass that is not timed: ONNX Runtime's arena and caches grow on a fresh
            // session's first runs of each shape, which would bill whoever runs first.
            time_ort_bind::<$t, Growing>(&s, spec, context, p)?;
            // ort-bind and the floor of each mode one right after the other, the floor
            // first in odd rounds: neither always gets the caches the other left.
            let mut out = Vec::new();
            let mut pair = |name, floor_name, shared: bool| -> Result<()> {
                let ours = || match shared {
                    true => time_ort_bind::<$t, SharedBuffer>(&s, spec, context, p),
                    false => time_ort_bind::<$t, Growing>(&s, spec, context, p),
                };
                let floor = || time_floor::<$t>(&s, spec, shared, context, p);
                let (ours, floor) = if floor_first {
                    let f = floor()?;
                    (ours()?, f)
                } else {
                    let o = ours()?;
                    (o, floor()?)
                };
                out.push((name, ours));
                if let Some(floor) = floor {
                    out.push((floor_name, floor));
                }
                Ok(())
            };
            pair("ort-bind growing", "floor growing", false)?;
            if $shared {
                pair("ort-bind shared", "floor shared", true)?;
            }
            out.push(("ort (examples)", time_ort::<$t>(fixture, spec, context, p)?));
            out
        }};
    }
    Ok(match fixture {
        "gqa_f32" => run!(gqa_f32, f32, true),
        "gqa_f16" => run!(gqa_f16, f16, true),
        "mha_concat" => run!(mha_concat, f32, false),
        "gpt2_stacked" => run!(gpt2_stacked, f32, false),
        "hybrid_conv" => run!(hybrid_conv, f32, false),
        other => return Err(format!("unknown fixture {other}").into()),
    })
}

/// The median of `v` (sorted in place; the upper middle for an even count); NaN for none.
pub(crate) fn median(v: &mut [u64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_unstable();
    v[v.len() / 2] as f64
}

/// Runs the figures and writes `decode.md` and `decode.json` under `out`.
fn run(
    out: &Path,
    python: Option<&Path>,
    contexts: &[usize],
    rounds: usize,
    p: Protocol,
) -> Result<()> {
    std::fs::create_dir_all(out)?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    // (fixture, context, contender) -> samples of every round
    let mut rows: Vec<(String, usize, String, Sample)> = Vec::new();
    let mut add = |fixture: &str, context: usize, name: &str, s: Sample| match rows
        .iter_mut()
        .find(|r| r.0 == fixture && r.1 == context && r.2 == name)
    {
        Some(r) => {
            r.3.step_ns.extend(s.step_ns);
            r.3.allocations += s.allocations;
            r.3.cache_bytes_moved += s.cache_bytes_moved;
        }
        None => rows.push((fixture.to_owned(), context, name.to_owned(), s)),
    };
    let contexts_arg = contexts
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let mut mismatches = Vec::new();
    for round in 0..rounds {
        println!("== round {} of {rounds}", round + 1);
        for fixture in FIXTURES {
            for &context in contexts {
                let samples = rust_round(fixture, context, p, round % 2 == 1)?;
                let reference = samples[0].1.tokens.clone();
                for (name, s) in samples {
                    if s.tokens != reference {
                        mismatches
                            .push(format!("{fixture} @{context}: {name} picked other tokens"));
                    }
                    add(fixture, context, name, s);
                }
            }
            // The Python peers of this fixture right after the Rust contenders, so that
            // each pair of figures is measured under the same machine conditions.
            if let Some(py) = python {
                let json_out = out.join("decode_peer.json");
                let status = std::process::Command::new(py)
                    .arg(root.join("scripts/bench_decode_peer.py"))
                    .args(["--only", fixture])
                    .args(["--contexts", &contexts_arg])
                    .args(["--steps", &p.steps.to_string()])
                    .args(["--warmup", &p.warmup.to_string()])
                    .arg("--json")
                    .arg(&json_out)
                    .status()?;
                if !status.success() {
                    return Err(format!("the Python peer failed: {status}").into());
                }
                let peer: Value = serde_json::from_str(&std::fs::read_to_string(&json_out)?)?;
                for row in peer.as_array().ok_or("peer JSON is not a list")? {
                    let fixture = row["fixture"].as_str().unwrap_or("?");
                    let context = row["context"].as_u64().unwrap_or(0) as usize;
                    let name = row["peer"].as_str().unwrap_or("?");
                    let step_ns = row["step_ns"]
                        .as_array()
                        .map(|a| a.iter().filter_map(Value::as_u64).collect())
                        .unwrap_or_else(|| {
                            // Older rows: the median alone.
                            vec![(row["median_us"].as_f64().unwrap_or(f64::NAN) * 1e3) as u64]
                        });
                    add(
                        fixture,
                        context,
                        name,
                        Sample {
                            step_ns,
                            ..Default::default()
                        },
                    );
                }
            }
        }
    }
    write_report(out, &mut rows, contexts, rounds, p, &mismatches)
}

fn write_report(
    out: &Path,
    rows: &mut [(String, usize, String, Sample)],
    contexts: &[usize],
    rounds: usize,
    p: Protocol,
    mismatches: &[String],
) -> Result<()> {
    let names = [
        "ort-bind shared",
        "ort-bind growing",
        "ort (examples)",
        "python_iobinding_shared",
        "python_iobinding",
        "genai",
    ];
    let mut md = format!(
        "# Decode loop: median µs per token (batch 1, one intra-op thread)\n\n\
         {rounds} round(s) x {} timed steps after {} warm-up steps; the timed steps run at past \
         length context .. context + {}. Machine: {}.\n\n\
         | fixture | context | {} | best ort-bind / genai | ort-bind allocations per token | cache bytes ort-bind moved per token |\n\
         | --- | ---: |{} ---: | ---: | ---: |\n",
        p.steps,
        p.warmup,
        p.steps - 1,
        crate::loadavg_note(),
        names.join(" | "),
        " ---: |".repeat(names.len()),
    );
    let mut json_rows = Vec::new();
    for fixture in FIXTURES {
        for &context in contexts {
            let mut cells = Vec::new();
            let mut med = std::collections::HashMap::new();
            let (mut allocs, mut moved, mut steps) = (0u64, 0u64, 0u64);
            for name in names {
                match rows
                    .iter_mut()
                    .find(|r| r.0 == *fixture && r.1 == context && r.2 == name)
                {
                    Some(r) => {
                        let m = median(&mut r.3.step_ns) / 1e3;
                        med.insert(name, m);
                        cells.push(format!("{m:.0}"));
                        if name.starts_with("ort-bind") {
                            allocs += r.3.allocations;
                            moved += r.3.cache_bytes_moved;
                            steps += r.3.step_ns.len() as u64;
                        }
                        json_rows.push(json!({
                            "fixture": fixture, "context": context, "contender": name,
                            "median_us": m, "steps": r.3.step_ns.len(),
                            "allocations": r.3.allocations, "cache_bytes_moved": r.3.cache_bytes_moved,
                        }));
                    }
                    None => cells.push("–".into()),
                }
            }
            let best = ["ort-bind shared", "ort-bind growing"]
                .iter()
                .filter_map(|n| med.get(n))
                .fold(f64::INFINITY, |a, &b| a.min(b));
            let ratio = med
                .get("genai")
                .map_or("–".to_owned(), |g| format!("{:.2}x", best / g));
            let per = |x: u64| {
                if steps == 0 {
                    "–".to_owned()
                } else {
                    format!("{}", x as f64 / steps as f64)
                }
            };
            md.push_str(&format!(
                "| {fixture} | {context} | {} | {ratio} | {} | {} |\n",
                cells.join(" | "),
                per(allocs),
                per(moved)
            ));
        }
    }
    // Flatness: per-token time at the largest context over the smallest, per contender.
    if let (Some(&lo), Some(&hi)) = (contexts.first(), contexts.last()) {
        md.push_str(&format!(
            "\n## Per-token time at {hi} over {lo}\n\n| fixture | {} |\n| --- |{}\n",
            names.join(" | "),
            " ---: |".repeat(names.len())
        ));
        for fixture in FIXTURES {
            let mut cells = Vec::new();
            for name in names {
                let get = |c: usize| {
                    rows.iter()
                        .find(|r| r.0 == *fixture && r.1 == c && r.2 == name)
                        .map(|r| {
                            let mut v = r.3.step_ns.clone();
                            median(&mut v)
                        })
                };
                cells.push(match (get(lo), get(hi)) {
                    (Some(a), Some(b)) => format!("{:.2}", b / a),
                    _ => "–".into(),
                });
            }
            md.push_str(&format!("| {fixture} | {} |\n", cells.join(" | ")));
        }
    }
    md.push_str(&floor_table(rows, contexts));
    if mismatches.is_empty() {
        md.push_str("\nEvery Rust contender picked the same tokens at every context.\n");
    } else {
        md.push_str("\nToken mismatches:\n");
        for m in mismatches {
            md.push_str(&format!("- {m}\n"));
        }
    }
    std::fs::write(out.join("decode.md"), &md)?;
    std::fs::write(
        out.join("decode.json"),
        serde_json::to_string_pretty(&json_rows)?,
    )?;
    println!("{md}");
    Ok(())
}

/// ort-bind's step over the C API floor's (`decode_floor.rs`: the same session, only the
/// calls a step cannot avoid), per mode: the ratio of medians, and the difference in µs.
fn floor_table(rows: &[(String, usize, String, Sample)], contexts: &[usize]) -> String {
    let mut md = String::from(
        "\n## ort-bind over the C API floor (same session, same tokens)\n\n\
         | fixture | context | growing: ort-bind / floor | shared: ort-bind / floor |\n\
         | --- | ---: | ---: | ---: |\n",
    );
    let get = |fixture: &str, context: usize, name: &str| {
        rows.iter()
            .find(|r| r.0 == fixture && r.1 == context && r.2 == name)
            .map(|r| median(&mut r.3.step_ns.clone()))
    };
    for fixture in FIXTURES {
        for &context in contexts {
            let cell = |mode: &str| match (
                get(fixture, context, &format!("ort-bind {mode}")),
                get(fixture, context, &format!("floor {mode}")),
            ) {
                (Some(ours), Some(floor)) => {
                    format!("{:.3}x ({:+.1} µs)", ours / floor, (ours - floor) / 1e3)
                }
                _ => "–".to_owned(),
            };
            md.push_str(&format!(
                "| {fixture} | {context} | {} | {} |\n",
                cell("growing"),
                cell("shared")
            ));
        }
    }
    md
}

/// Parses `decode [--python PY] [--out DIR] [--contexts 16,256,2048] [--rounds N]
/// [--steps N] [--warmup N] [--quick]` and runs.
pub(crate) fn main(argv: impl Iterator<Item = String>) -> Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut out = root.join("target/bench");
    let mut python = None;
    let mut contexts = vec![16, 256, 2048];
    let mut rounds = 3;
    let mut p = Protocol {
        warmup: 4,
        steps: 32,
        floor_run_options: false,
    };
    let mut argv = argv.peekable();
    while let Some(a) = argv.next() {
        let mut value = || argv.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--python" => python = Some(PathBuf::from(value()?)),
            "--out" => out = value()?.into(),
            "--contexts" => {
                contexts = value()?
                    .split(',')
                    .map(str::parse)
                    .collect::<std::result::Result<_, _>>()?;
            }
            "--rounds" => rounds = value()?.parse()?,
            "--steps" => p.steps = value()?.parse()?,
            "--warmup" => p.warmup = value()?.parse()?,
            "--quick" => {
                rounds = 1;
                p.steps = 8;
            }
            "--floor-run-options" => p.floor_run_options = true,
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    if contexts.iter().any(|&c| c <= p.warmup) {
        return Err("every context must exceed the warm-up steps".into());
    }
    ort_bind_runtime::library::init()?;
    run(&out, python.as_deref(), &contexts, rounds.max(1), p)
}
