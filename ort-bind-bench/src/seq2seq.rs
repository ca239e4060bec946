//! The encoder-decoder figures (issue 32): per-token time of greedy generation on two of the
//! project's encoder-decoder fixtures (`ort-bind-tests/tests/fixtures/pipelines/`), batch 1,
//! one intra-op thread, at contexts 16 and 256, for
//!
//! - `ort-bind`: the runtime's [`EncoderDecoder`] over the generated encoder `Binding` and
//!   decoder `Decoder` (`encode` once: the encoder's output buffers are the decoder's inputs
//!   held for the sequence, nothing copied; then `step_greedy`: argmax, append, run);
//! - `ort (examples)`: the `ort` crate as its examples write the loop: the encoder once with
//!   `Session::run`, its outputs copied into host arrays; each step `Session::run` with every
//!   input a view of a host array (the encoder's arrays among them) and every state output
//!   copied into the host array the next step reads;
//! - the Python peers of `scripts/bench_seq2seq_peer.py`, run as a subprocess in each round
//!   right after the Rust contenders of the same fixture: onnxruntime with I/O binding (the
//!   encoder's outputs bound into the OrtValues the decoder reads, caches swapped) and
//!   onnxruntime-genai 0.18.0 on the fixture folder.
//!
//! The fixtures and the source every contender gets (the Python script's docs say the same):
//!
//! - `speech` (Whisper-shaped): 16 x 3000 frames of `sin(0.01 (t + 1)(c + 1))` (genai's
//!   whisper accepts only 3000 frames; the encoder length is 1500). The decoder prompt is
//!   the start token 2 then `prompt_ids`, run at once.
//! - `marian` (genai's `marian-ssru` shape): the source `5 + 29 i mod 500` (i < 15) then eos
//!   0, with an all-ones mask: genai gives a batch-1 source an all-ones mask and appends the
//!   eos itself, so every contender gets exactly what genai feeds. genai feeds the decoder
//!   its start token and then its own picks, so every contender does: the start token, then
//!   greedy steps, one decoder run per token (the model takes one id per run).
//!
//! Protocol: for a context C, the decoder holds C - warmup positions after the prompt (the
//! prefill: speech one run of C - warmup tokens, marian the start token and C - warmup - 1
//! greedy steps; not timed), `warmup` greedy steps run (not timed), then `steps`
//! single-token steps are timed one by one, at past lengths C .. C + steps - 1. C is capped
//! so that every timed step fits every contender: speech C + steps <= 448 (its decoder's
//! position table), marian C + steps <= 241 (genai's max_length may not exceed its
//! context_length 256 and counts the 15 source ids; the position table has 256 rows); the
//! report names the context asked for where it was capped. Each round measures every
//! contender once; a figure is the median over all rounds' timed steps. Reported for
//! ort-bind: Rust heap allocations per timed step. The tokens every contender fed the decoder
//! after the prompt are compared with ort-bind's, every round; a mismatch is listed in the
//! report and makes the command fail (after writing it).

use std::path::{Path, PathBuf};
use std::time::Instant;

use ort::session::{Session as OrtSession, SessionInputValue};
use ort::value::TensorRef;
use ort_bind_runtime::BindingIo;
use ort_bind_runtime::decode::{DecoderModel, Edge, EncoderDecoder, argmax};
use serde_json::{Value, json};

use crate::Result;
use crate::contenders::{ort_bind_options, ort_session};
use crate::decode::{median, prompt_ids};

mod speech_encoder {
    include!(concat!(env!("OUT_DIR"), "/ort-bind/speech_encoder.rs"));
}
mod speech_decoder {
    include!(concat!(env!("OUT_DIR"), "/ort-bind/speech_decoder.rs"));
}
mod marian_encoder {
    include!(concat!(env!("OUT_DIR"), "/ort-bind/marian_encoder.rs"));
}
mod marian_decoder {
    include!(concat!(env!("OUT_DIR"), "/ort-bind/marian_decoder.rs"));
}

/// The fixtures, in report order (folders of `ort-bind-tests/tests/fixtures/pipelines`).
const FIXTURES: &[&str] = &["speech", "marian"];

/// The contenders, in report order (the first is the reference for ratios and tokens).
const CONTENDERS: &[&str] = &["ort-bind", "ort (examples)", "python_iobinding", "genai"];

/// The decoder's start token (`bos_token_id` of both `genai_config.json`).
const START: i64 = 2;

/// Audio frames of the speech source: the only count genai's whisper accepts.
const SPEECH_FRAMES: usize = 3000;

/// Speech's encoder length for [`SPEECH_FRAMES`] (`floor((num_frames - 1) / 2) + 1`).
const SPEECH_ENCODED: usize = (SPEECH_FRAMES - 1) / 2 + 1;

/// Speech's vocabulary (the logits' last axis).
const VOCAB: usize = 512;
/// Speech's attention heads.
const HEADS: usize = 4;
/// Speech's head size.
const HEAD: usize = 16;

/// Speech's self-attention caches: (past input, present output).
const SPEECH_SELF: [(&str, &str); 4] = [
    ("past_key_self_0", "present_key_self_0"),
    ("past_value_self_0", "present_value_self_0"),
    ("past_key_self_1", "present_key_self_1"),
    ("past_value_self_1", "present_value_self_1"),
];

/// Speech's cross-attention caches: the encoder computes them, the decoder reads them.
const SPEECH_EDGES: [Edge; 4] = [
    Edge {
        from: "present_key_cross_0",
        to: "past_key_cross_0",
    },
    Edge {
        from: "present_value_cross_0",
        to: "past_value_cross_0",
    },
    Edge {
        from: "present_key_cross_1",
        to: "past_key_cross_1",
    },
    Edge {
        from: "present_value_cross_1",
        to: "past_value_cross_1",
    },
];

/// Marian's encoder output and source mask, read by the decoder for the whole sequence.
const MARIAN_EDGES: [Edge; 2] = [
    Edge {
        from: "encoder_outputs",
        to: "encoder_hidden_states",
    },
    Edge {
        from: "attention_mask",
        to: "encoder_attention_mask",
    },
];

/// Marian's recurrent state `[layers, batch, hidden]`.
const MARIAN_STATE: [usize; 3] = [3, 1, 64];
/// Marian's encoder output `[batch, source length, hidden]`.
const MARIAN_HIDDEN: [usize; 3] = [1, 16, 64];

/// The folder of the pipeline fixtures.
fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../ort-bind-tests/tests/fixtures/pipelines")
}

/// `<fixture>/<model>.onnx` under [`fixtures_dir`].
fn model_path(fixture: &str, model: &str) -> PathBuf {
    fixtures_dir().join(fixture).join(format!("{model}.onnx"))
}

/// The largest `context + steps` every contender runs on `fixture` (see the module docs).
fn limit(fixture: &str) -> usize {
    if fixture == "speech" { 448 } else { 241 }
}

/// The context measured for `asked`: capped so that the timed steps fit.
fn effective_context(fixture: &str, asked: usize, steps: usize) -> usize {
    asked.min(limit(fixture).saturating_sub(steps))
}

/// The decoder prompt: speech's start token and filler (C - warmup tokens in all); Marian's
/// start token alone (its prefill goes on with greedy steps).
fn prompt(fixture: &str, context: usize, warmup: usize) -> Vec<i64> {
    let mut p = vec![START];
    if fixture == "speech" {
        p.extend(prompt_ids(context - warmup - 1));
    }
    p
}

/// `audio_features[0, c, t] = sin(0.01 (t + 1)(c + 1))`, computed in f64 and rounded.
fn audio() -> Vec<f32> {
    let mut out = Vec::with_capacity(16 * SPEECH_FRAMES);
    for c in 0..16 {
        for t in 0..SPEECH_FRAMES {
            out.push((0.01 * (t as f64 + 1.0) * (c as f64 + 1.0)).sin() as f32);
        }
    }
    out
}

/// Marian's source (15 ids and the eos genai appends) and its all-ones mask.
fn marian_source() -> (Vec<i64>, Vec<i64>) {
    let mut ids: Vec<i64> = (0..15).map(|i| 5 + (29 * i) % 500).collect();
    ids.push(0);
    let mask = vec![1; ids.len()];
    (ids, mask)
}

/// What one contender measured at one context in one round.
#[derive(Debug, Default, Clone)]
struct Sample {
    /// Each timed step's wall-clock time.
    step_ns: Vec<u64>,
    /// Rust heap allocations over the timed steps (Rust contenders only).
    allocations: u64,
    /// The tokens fed to the decoder after the prompt, one per run.
    tokens: Vec<i64>,
}

/// Steps per measurement: `warmup` untimed greedy steps, then `steps` timed ones.
#[derive(Debug, Clone, Copy)]
struct Protocol {
    /// Greedy steps after the prefill, not timed.
    warmup: usize,
    /// Timed single-token steps.
    steps: usize,
}

/// ort-bind's generator, encoded, timed: `prompt`, `untimed` greedy steps (the rest of the
/// prefill and the warm-up), then the timed steps.
fn time_ort_bind<E: BindingIo, T: DecoderModel>(
    generator: &mut EncoderDecoder<E, T>,
    prompt: &[i64],
    untimed: usize,
    steps: usize,
) -> Result<Sample> {
    generator.prefill(prompt)?;
    let mut tokens = Vec::with_capacity(untimed + steps);
    for _ in 0..untimed {
        tokens.push(generator.step_greedy()?[0]);
    }
    let mut step_ns = Vec::with_capacity(steps);
    let allocations = crate::alloc::count();
    for _ in 0..steps {
        let t = Instant::now();
        let token = generator.step_greedy()?[0];
        step_ns.push(t.elapsed().as_nanos() as u64);
        tokens.push(token);
    }
    Ok(Sample {
        allocations: crate::alloc::count() - allocations,
        step_ns,
        tokens,
    })
}

/// An `ort` error as the harness's.
fn ort_err(e: ort::Error) -> Box<dyn std::error::Error> {
    e.to_string().into()
}

/// Copies output `name` of an `ort` run into a host array, checking its shape.
fn copy_out(
    outputs: &ort::session::SessionOutputs<'_>,
    name: &str,
    want: &[usize],
) -> Result<Vec<f32>> {
    let (shape, data) = outputs[name].try_extract_tensor::<f32>().map_err(ort_err)?;
    let shape: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
    if shape != want {
        return Err(format!("`{name}` came out {shape:?}, not {want:?}").into());
    }
    Ok(data.to_vec())
}

/// A decoder loop written with the `ort` crate.
trait OrtLoop {
    /// Runs `tokens` (one row) after the positions held and returns the argmax of the last
    /// position's logits.
    fn run(&mut self, tokens: &[i64]) -> Result<i64>;
}

/// Speech's cross-attention caches: `[batch, heads, encoder length, head size]`.
const SPEECH_CROSS: [usize; 4] = [1, HEADS, SPEECH_ENCODED, HEAD];

/// The `ort` crate's loop on `speech`: the encoder's cross caches copied into host arrays
/// once, passed as views every step; each self-attention present copied into the host
/// array the next step reads as past.
struct OrtSpeech {
    /// The decoder's session.
    decoder: OrtSession,
    /// The encoder's cross caches, by the decoder input that reads each.
    cross: Vec<(&'static str, Vec<f32>)>,
    /// The self-attention pasts, in [`SPEECH_SELF`] order.
    caches: Vec<Vec<f32>>,
    /// Positions held.
    len: usize,
}

impl OrtSpeech {
    fn new() -> Result<Self> {
        let mut encoder = ort_session(path_str(&model_path("speech", "encoder"))?)?;
        let audio = audio();
        let outputs = encoder
            .run(vec![(
                "audio_features",
                SessionInputValue::from(
                    TensorRef::from_array_view(([1usize, 16, SPEECH_FRAMES], &audio[..]))
                        .map_err(ort_err)?,
                ),
            )])
            .map_err(ort_err)?;
        let cross = SPEECH_EDGES
            .iter()
            .map(|e| Ok((e.to, copy_out(&outputs, e.from, &SPEECH_CROSS)?)))
            .collect::<Result<Vec<_>>>()?;
        drop(outputs);
        Ok(OrtSpeech {
            decoder: ort_session(path_str(&model_path("speech", "decoder"))?)?,
            cross,
            caches: vec![Vec::new(); SPEECH_SELF.len()],
            len: 0,
        })
    }
}

impl OrtLoop for OrtSpeech {
    fn run(&mut self, tokens: &[i64]) -> Result<i64> {
        let new = tokens.len();
        let mut inputs: Vec<(&str, SessionInputValue<'_>)> = vec![(
            "input_ids",
            TensorRef::from_array_view(([1usize, new], tokens))
                .map_err(ort_err)?
                .into(),
        )];
        for ((past, _), data) in SPEECH_SELF.iter().zip(&self.caches) {
            inputs.push((
                past,
                TensorRef::from_array_view(([1usize, HEADS, self.len, HEAD], &data[..]))
                    .map_err(ort_err)?
                    .into(),
            ));
        }
        for (name, data) in &self.cross {
            inputs.push((
                name,
                TensorRef::from_array_view((SPEECH_CROSS, &data[..]))
                    .map_err(ort_err)?
                    .into(),
            ));
        }
        let outputs = self.decoder.run(inputs).map_err(ort_err)?;
        let (_, logits) = outputs["logits"]
            .try_extract_tensor::<f32>()
            .map_err(ort_err)?;
        let token = argmax(&logits[logits.len() - VOCAB..]) as i64;
        for ((_, present), data) in SPEECH_SELF.iter().zip(&mut self.caches) {
            let (_, value) = outputs[*present]
                .try_extract_tensor::<f32>()
                .map_err(ort_err)?;
            data.clear();
            data.extend_from_slice(value);
        }
        self.len += new;
        Ok(token)
    }
}

/// The `ort` crate's loop on `marian`: the encoder's output and the source mask as views
/// every step, the recurrent state copied into the host array the next step reads.
struct OrtMarian {
    /// The decoder's session.
    decoder: OrtSession,
    /// The encoder's output.
    hidden: Vec<f32>,
    /// The source mask.
    mask: Vec<i64>,
    /// The recurrent state the next run reads.
    state: Vec<f32>,
    /// Runs so far (the next run's `past_key_values_length`).
    len: usize,
}

impl OrtMarian {
    fn new() -> Result<Self> {
        let mut encoder = ort_session(path_str(&model_path("marian", "encoder"))?)?;
        let (ids, mask) = marian_source();
        let shape = [1usize, ids.len()];
        let outputs = encoder
            .run(vec![
                (
                    "input_ids",
                    SessionInputValue::from(
                        TensorRef::from_array_view((shape, &ids[..])).map_err(ort_err)?,
                    ),
                ),
                (
                    "attention_mask",
                    TensorRef::from_array_view((shape, &mask[..]))
                        .map_err(ort_err)?
                        .into(),
                ),
            ])
            .map_err(ort_err)?;
        let hidden = copy_out(&outputs, "encoder_outputs", &MARIAN_HIDDEN)?;
        drop(outputs);
        Ok(OrtMarian {
            decoder: ort_session(path_str(&model_path("marian", "decoder"))?)?,
            hidden,
            mask,
            state: vec![0.0; MARIAN_STATE.iter().product()],
            len: 0,
        })
    }

    /// Runs one token and returns the argmax of its logits.
    fn run_one(&mut self, token: i64) -> Result<i64> {
        let ids = [token];
        let past = [self.len as i64];
        let inputs: Vec<(&str, SessionInputValue<'_>)> = vec![
            (
                "input_ids",
                TensorRef::from_array_view(([1usize], &ids[..]))
                    .map_err(ort_err)?
                    .into(),
            ),
            (
                "encoder_hidden_states",
                TensorRef::from_array_view((MARIAN_HIDDEN, &self.hidden[..]))
                    .map_err(ort_err)?
                    .into(),
            ),
            (
                "encoder_attention_mask",
                TensorRef::from_array_view(([1usize, self.mask.len()], &self.mask[..]))
                    .map_err(ort_err)?
                    .into(),
            ),
            (
                "rnn_states_prev",
                TensorRef::from_array_view((MARIAN_STATE, &self.state[..]))
                    .map_err(ort_err)?
                    .into(),
            ),
            (
                "past_key_values_length",
                TensorRef::from_array_view(([1usize], &past[..]))
                    .map_err(ort_err)?
                    .into(),
            ),
        ];
        let outputs = self.decoder.run(inputs).map_err(ort_err)?;
        let (_, logits) = outputs["logits"]
            .try_extract_tensor::<f32>()
            .map_err(ort_err)?;
        let token = argmax(logits) as i64;
        let (_, state) = outputs["rnn_states"]
            .try_extract_tensor::<f32>()
            .map_err(ort_err)?;
        self.state.copy_from_slice(state);
        self.len += 1;
        Ok(token)
    }
}

impl OrtLoop for OrtMarian {
    /// One run per token (the model takes one id per run).
    fn run(&mut self, tokens: &[i64]) -> Result<i64> {
        let mut pick = None;
        for &t in tokens {
            pick = Some(self.run_one(t)?);
        }
        pick.ok_or_else(|| "no token to run".into())
    }
}

/// A path as `ort` takes it.
fn path_str(p: &Path) -> Result<&str> {
    p.to_str()
        .ok_or_else(|| format!("{} is not UTF-8", p.display()).into())
}

/// An `ort` loop timed: `prompt`, `untimed` greedy steps (the rest of the prefill and the
/// warm-up), then the timed steps.
fn time_ort(
    run: &mut impl OrtLoop,
    prompt: &[i64],
    untimed: usize,
    steps: usize,
) -> Result<Sample> {
    let mut token = run.run(prompt)?;
    // The tokens fed, one per run, as ort-bind's `step_greedy` returns them.
    let mut tokens = Vec::with_capacity(untimed + steps);
    for _ in 0..untimed {
        tokens.push(token);
        token = run.run(&[token])?;
    }
    let mut step_ns = Vec::with_capacity(steps);
    let allocations = crate::alloc::count();
    for _ in 0..steps {
        tokens.push(token);
        let t = Instant::now();
        token = run.run(&[token])?;
        step_ns.push(t.elapsed().as_nanos() as u64);
    }
    Ok(Sample {
        allocations: crate::alloc::count() - allocations,
        step_ns,
        tokens,
    })
}

/// One round of the Rust contenders for `fixture` at `context`: (contender, sample).
fn rust_round(fixture: &str, context: usize, p: Protocol) -> Result<Vec<(&'static str, Sample)>> {
    let prompt = prompt(fixture, context, p.warmup);
    // Greedy steps before the timed ones: the rest of the prefill (Marian) and the warm-up.
    let untimed = context - prompt.len();
    let capacity = context + p.steps + 1;
    let options = ort_bind_options();
    Ok(match fixture {
        "speech" => {
            let encoder =
                speech_encoder::Model::from_file(model_path(fixture, "encoder"), &options)?;
            let decoder =
                speech_decoder::Model::from_file(model_path(fixture, "decoder"), &options)?;
            let dims = speech_encoder::Dims {
                batch_size: 1,
                num_frames: SPEECH_FRAMES,
            };
            let mut generator = EncoderDecoder::new(
                encoder.bind(dims)?,
                decoder.decoder(1, capacity)?,
                &SPEECH_EDGES,
            )?;
            generator
                .encoder_inputs()
                .audio_features
                .copy_from_slice(&audio())?;
            generator.encode()?;
            let ours = time_ort_bind(&mut generator, &prompt, untimed, p.steps)?;
            drop(generator);
            let theirs = time_ort(&mut OrtSpeech::new()?, &prompt, untimed, p.steps)?;
            vec![("ort-bind", ours), ("ort (examples)", theirs)]
        }
        "marian" => {
            let encoder =
                marian_encoder::Model::from_file(model_path(fixture, "encoder"), &options)?;
            let decoder =
                marian_decoder::Model::from_file(model_path(fixture, "decoder"), &options)?;
            let mut generator = EncoderDecoder::new(
                encoder.bind(marian_encoder::Dims::default())?,
                decoder.decoder(1, capacity)?,
                &MARIAN_EDGES,
            )?;
            let (ids, mask) = marian_source();
            {
                let mut inputs = generator.encoder_inputs();
                inputs.input_ids.copy_from_slice(&ids)?;
                inputs.attention_mask.copy_from_slice(&mask)?;
            }
            generator.encode()?;
            let ours = time_ort_bind(&mut generator, &prompt, untimed, p.steps)?;
            drop(generator);
            let theirs = time_ort(&mut OrtMarian::new()?, &prompt, untimed, p.steps)?;
            vec![("ort-bind", ours), ("ort (examples)", theirs)]
        }
        other => return Err(format!("unknown fixture {other}").into()),
    })
}

/// Where two token lists first differ, in words.
fn first_difference(want: &[i64], got: &[i64]) -> String {
    match want.iter().zip(got).position(|(a, b)| a != b) {
        Some(i) => format!(
            "token {i} of {}: {} where ort-bind fed {}",
            want.len(),
            got[i],
            want[i]
        ),
        None => format!("{} tokens where ort-bind fed {}", got.len(), want.len()),
    }
}

/// Everything measured for one (fixture, context, contender), over all rounds.
#[derive(Debug)]
struct Row {
    /// The fixture's folder name.
    fixture: &'static str,
    /// The context measured.
    context: usize,
    /// The context asked for (larger where the fixture capped it).
    asked: usize,
    /// The contender's name, as [`CONTENDERS`] spells it.
    contender: String,
    /// Every round's timed steps and allocations; the first round's tokens.
    sample: Sample,
    /// Rounds whose tokens differed from ort-bind's.
    mismatched_rounds: usize,
}

/// What the command was asked for.
struct Plan<'a> {
    /// Where the reports go.
    out: &'a Path,
    /// The Python with onnxruntime (and genai) for the peers; none: Rust contenders only.
    python: Option<&'a Path>,
    /// Whether the Python peers include onnxruntime-genai.
    genai: bool,
    /// The fixtures to run, in report order.
    fixtures: &'a [&'static str],
    /// The contexts asked for.
    contexts: &'a [usize],
    /// Rounds, each measuring every contender once.
    rounds: usize,
    /// Steps per measurement.
    p: Protocol,
}

/// Runs the figures and writes `seq2seq.md` and `seq2seq.json` under `plan.out`.
fn run(plan: &Plan<'_>) -> Result<()> {
    let p = plan.p;
    std::fs::create_dir_all(plan.out)?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut rows: Vec<Row> = Vec::new();
    let mut mismatches = Vec::new();
    for round in 0..plan.rounds {
        println!("== round {} of {}", round + 1, plan.rounds);
        for &fixture in plan.fixtures {
            let contexts: Vec<(usize, usize)> = plan
                .contexts
                .iter()
                .map(|&asked| (effective_context(fixture, asked, p.steps), asked))
                .collect();
            // ort-bind's tokens, per context: what every other contender is compared with.
            let mut reference: Vec<(usize, Vec<i64>)> = Vec::new();
            let mut add =
                |context: usize, asked: usize, name: &str, s: Sample, rows: &mut Vec<Row>| {
                    let want = reference.iter().find(|r| r.0 == context).map(|r| &r.1);
                    let differs = match want {
                        None => {
                            reference.push((context, s.tokens.clone()));
                            false
                        }
                        Some(want) if *want != s.tokens => {
                            let what = format!(
                                "{fixture} @{context}, round {}: {name} picked other tokens ({})",
                                round + 1,
                                first_difference(want, &s.tokens)
                            );
                            eprintln!("TOKEN MISMATCH: {what}");
                            mismatches.push(what);
                            true
                        }
                        Some(_) => false,
                    };
                    match rows.iter_mut().find(|r| {
                        r.fixture == fixture && r.context == context && r.contender == name
                    }) {
                        Some(r) => {
                            r.sample.step_ns.extend(s.step_ns);
                            r.sample.allocations += s.allocations;
                            r.mismatched_rounds += usize::from(differs);
                        }
                        None => rows.push(Row {
                            fixture,
                            context,
                            asked,
                            contender: name.to_owned(),
                            sample: s,
                            mismatched_rounds: usize::from(differs),
                        }),
                    }
                };
            for &(context, asked) in &contexts {
                for (name, s) in rust_round(fixture, context, p)? {
                    add(context, asked, name, s, &mut rows);
                }
            }
            // The Python peers of this fixture right after the Rust contenders, so that
            // each pair of figures is measured under the same machine conditions.
            if let Some(py) = plan.python {
                let json_out = plan.out.join("seq2seq_peer.json");
                let contexts_arg = contexts
                    .iter()
                    .map(|c| c.0.to_string())
                    .collect::<Vec<_>>()
                    .join(",");
                let mut command = std::process::Command::new(py);
                command
                    .arg(root.join("scripts/bench_seq2seq_peer.py"))
                    .args(["--only", fixture])
                    .args(["--contexts", &contexts_arg])
                    .args(["--steps", &p.steps.to_string()])
                    .args(["--warmup", &p.warmup.to_string()])
                    .arg("--json")
                    .arg(&json_out);
                if !plan.genai {
                    command.arg("--no-genai");
                }
                let status = command.status()?;
                if !status.success() {
                    return Err(format!("the Python peer failed: {status}").into());
                }
                let peer: Value = serde_json::from_str(&std::fs::read_to_string(&json_out)?)?;
                for row in peer.as_array().ok_or("peer JSON is not a list")? {
                    let context = row["context"].as_u64().unwrap_or(0) as usize;
                    let asked = contexts
                        .iter()
                        .find(|c| c.0 == context)
                        .map_or(context, |c| c.1);
                    let name = row["peer"].as_str().unwrap_or("?");
                    let numbers = |key: &str| -> Vec<i64> {
                        row[key]
                            .as_array()
                            .map(|a| a.iter().filter_map(Value::as_i64).collect())
                            .unwrap_or_default()
                    };
                    let sample = Sample {
                        step_ns: numbers("step_ns").into_iter().map(|t| t as u64).collect(),
                        allocations: 0,
                        tokens: numbers("tokens"),
                    };
                    add(context, asked, name, sample, &mut rows);
                }
            }
        }
    }
    write_report(plan, &mut rows, &mismatches)?;
    if mismatches.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} token mismatch(es) (listed above and in {})",
            mismatches.len(),
            plan.out.join("seq2seq.md").display()
        )
        .into())
    }
}

/// Writes `seq2seq.md` (the table) and `seq2seq.json` (a row per fixture, context and
/// contender) under `plan.out`, and prints the table.
fn write_report(plan: &Plan<'_>, rows: &mut [Row], mismatches: &[String]) -> Result<()> {
    let p = plan.p;
    let peers = &CONTENDERS[1..];
    let mut md = format!(
        "# Encoder-decoder generation: median µs per token (batch 1, one intra-op thread)\n\n\
         {} round(s) x {} timed steps after {} warm-up steps; the timed steps run at past \
         length context .. context + {}. Each peer's cell: its median, and in brackets its \
         time over ort-bind's (above 1x: ort-bind is faster). Machine: {}.\n\n\
         | fixture | context | {} | {} | ort-bind allocations per token | tokens equal |\n\
         | --- | ---: | ---: |{} ---: | --- |\n",
        plan.rounds,
        p.steps,
        p.warmup,
        p.steps - 1,
        crate::loadavg_note(),
        CONTENDERS[0],
        peers.join(" | "),
        " ---: |".repeat(peers.len()),
    );
    let mut json_rows = Vec::new();
    for fixture in plan.fixtures {
        let mut contexts: Vec<(usize, usize)> = rows
            .iter()
            .filter(|r| r.fixture == *fixture)
            .map(|r| (r.context, r.asked))
            .collect();
        contexts.sort_unstable();
        contexts.dedup();
        for (context, asked) in contexts {
            let mut cells = Vec::new();
            let mut ours = f64::NAN;
            let mut allocations = "–".to_owned();
            let mut unequal = Vec::new();
            for &name in CONTENDERS {
                let Some(r) = rows
                    .iter_mut()
                    .find(|r| r.fixture == *fixture && r.context == context && r.contender == name)
                else {
                    if name != CONTENDERS[0] {
                        cells.push("not run".to_owned());
                    }
                    continue;
                };
                let steps = r.sample.step_ns.len();
                let m = median(&mut r.sample.step_ns) / 1e3;
                let per_step = r.sample.allocations as f64 / steps.max(1) as f64;
                if name == CONTENDERS[0] {
                    ours = m;
                    allocations = format!("{per_step}");
                } else {
                    cells.push(format!("{m:.0} ({:.2}x)", m / ours));
                }
                if r.mismatched_rounds > 0 {
                    unequal.push(format!("{name} ({} round(s))", r.mismatched_rounds));
                }
                json_rows.push(json!({
                    "fixture": fixture, "context": context, "asked_context": asked,
                    "contender": name, "median_us": m, "steps": steps,
                    "allocations": r.sample.allocations,
                    "allocations_per_step": if name.starts_with("ort") { json!(per_step) } else { Value::Null },
                    "ratio_to_ort_bind": m / ours,
                    "tokens_equal": r.mismatched_rounds == 0,
                }));
            }
            let context_cell = if asked == context {
                format!("{context}")
            } else {
                format!("{context} (asked {asked})")
            };
            let equal = if unequal.is_empty() {
                "yes".to_owned()
            } else {
                format!("**NO**: {}", unequal.join(", "))
            };
            md.push_str(&format!(
                "| {fixture} | {context_cell} | {ours:.0} | {} | {allocations} | {equal} |\n",
                cells.join(" | "),
            ));
        }
    }
    md.push_str(
        "\nContexts are capped so that every timed step fits every contender: speech \
         context + steps <= 448 (the decoder's position table), marian context + steps <= 241 \
         (genai's max_length, at most its context_length 256, counts the 15 source ids).\n",
    );
    if mismatches.is_empty() {
        md.push_str(
            "\nEvery contender fed the decoder the same tokens as ort-bind, at every context, \
             in every round.\n",
        );
    } else {
        md.push_str("\n**Token mismatches** (against ort-bind's tokens):\n");
        for m in mismatches {
            md.push_str(&format!("- {m}\n"));
        }
    }
    std::fs::write(plan.out.join("seq2seq.md"), &md)?;
    std::fs::write(
        plan.out.join("seq2seq.json"),
        serde_json::to_string_pretty(&json_rows)?,
    )?;
    println!("{md}");
    Ok(())
}

/// Parses `seq2seq [--python PY] [--no-genai] [--out DIR] [--only speech,marian]
/// [--contexts 16,256] [--rounds N] [--steps N] [--warmup N] [--quick]` and runs.
pub(crate) fn main(argv: impl Iterator<Item = String>) -> Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut out = root.join("target/bench");
    let mut python = None;
    let mut genai = true;
    let mut fixtures = FIXTURES.to_vec();
    let mut contexts = vec![16, 256];
    let mut rounds = 3;
    let mut p = Protocol {
        warmup: 4,
        steps: 32,
    };
    let mut argv = argv.peekable();
    while let Some(a) = argv.next() {
        let mut value = || argv.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--python" => python = Some(PathBuf::from(value()?)),
            "--no-genai" => genai = false,
            "--out" => out = value()?.into(),
            "--only" => {
                let names = value()?;
                fixtures = FIXTURES
                    .iter()
                    .copied()
                    .filter(|f| names.split(',').any(|n| n == *f))
                    .collect();
                if fixtures.is_empty() {
                    return Err(format!("--only {names}: the fixtures are {FIXTURES:?}").into());
                }
            }
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
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    if p.steps == 0 {
        return Err("--steps must be at least 1".into());
    }
    for fixture in &fixtures {
        for &asked in &contexts {
            // Speech's prompt holds the start token and at least one more.
            if effective_context(fixture, asked, p.steps) < p.warmup + 2 {
                return Err(format!(
                    "{fixture}: context {asked} (capped at {}) must exceed the warm-up steps by 2",
                    effective_context(fixture, asked, p.steps)
                )
                .into());
            }
        }
    }
    ort_bind_runtime::library::init()?;
    run(&Plan {
        out: &out,
        python: python.as_deref(),
        genai,
        fixtures: &fixtures,
        contexts: &contexts,
        rounds: rounds.max(1),
        p,
    })
}
