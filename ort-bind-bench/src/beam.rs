//! Beam search's speed (issue 33, item 4): `decode::BeamSearch` on the `gqa_f32` fixture in
//! both cache modes, on `gqa_paged` (the same weights, a paged cache whose beams share
//! blocks), and onnxruntime-genai's beam search on `gqa_f32`
//! (`scripts/bench_beam_peer.py`, when `--python` is given), the same best sequence
//! checked.
//!
//! ```text
//! ort-bind-bench beam [--rounds N] [--beams 4] [--max-length 140] [--python PY]
//! ```
//!
//! A search starts from a 12-token prompt and runs to `max_length` (eos id 0, which the
//! fixture never ranks high), one intra-op thread; the figure is the median over the
//! rounds of generated positions per second (`max_length - 12` per search, each position
//! `beams` tokens computed), with the cache bytes the reordering moved per step.

use std::time::Instant;

use ort_bind_runtime::decode::{BeamOptions, BeamSearch, CacheMode, Decoder, DecoderModel};
use ort_bind_runtime::{Session, SessionOptions};

use crate::Result;
use crate::decode::median;

fn prompt() -> Vec<i64> {
    (0..12).map(|i| (5 + 37 * i) % 500).collect()
}

/// Positions per second (median), bytes moved per step, and the best sequence.
fn measure<T: DecoderModel, M: CacheMode>(
    decoder: Decoder<T, M>,
    options: &BeamOptions,
    rounds: usize,
) -> Result<(f64, f64, Vec<i64>)> {
    let prompt = prompt();
    let positions = options.max_length - prompt.len();
    let mut search = BeamSearch::new(decoder)?;
    let want = search.run(&prompt, options)?.remove(0).tokens;
    let (moved, runs) = (
        search.decoder().stats().cache_bytes_moved,
        search.decoder().stats().runs,
    );
    let mut rates = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let t = Instant::now();
        let got = search.run(&prompt, options)?.remove(0).tokens;
        rates.push((positions as f64 / t.elapsed().as_secs_f64()) as u64);
        if got != want {
            return Err("the best sequence changed between rounds".into());
        }
    }
    let stats = search.decoder().stats();
    let per_step = (stats.cache_bytes_moved - moved) as f64 / (stats.runs - runs).max(1) as f64;
    Ok((median(&mut rates), per_step, want))
}

pub(crate) fn main(mut argv: impl Iterator<Item = String>) -> Result<()> {
    let (mut rounds, mut beams, mut max_length, mut python) = (5usize, 4usize, 140usize, None);
    while let Some(a) = argv.next() {
        let mut value = |name: &str| argv.next().ok_or(format!("{name} needs a value"));
        match a.as_str() {
            "--rounds" => rounds = value("--rounds")?.parse()?,
            "--beams" => beams = value("--beams")?.parse()?,
            "--max-length" => max_length = value("--max-length")?.parse()?,
            "--python" => python = Some(value("--python")?),
            other => return Err(format!("unknown argument {other:?}").into()),
        }
    }
    if rounds == 0 || max_length <= 12 {
        return Err("--rounds needs at least 1 and --max-length more than 12".into());
    }
    ort_bind_runtime::library::init()?;
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../ort-bind-tests/tests/fixtures/decoders/gqa_f32");
    let session = Session::from_file(
        folder.join("model.onnx"),
        &SessionOptions::new().intra_threads(1),
    )?;
    let model = crate::decode::gqa_f32::Model::from_session(session)?;
    let options = BeamOptions::new(beams, max_length).eos(0);
    println!(
        "beam search on gqa_f32: {beams} beams, 12-token prompt to max_length {max_length}, one intra-op thread; generated positions/s, median over {rounds} rounds"
    );
    println!();
    println!("| contender | positions/s | tokens/s (x beams) | cache bytes moved / step |");
    println!("| --- | ---: | ---: | ---: |");
    let shared = measure(model.shared_decoder(beams, max_length)?, &options, rounds)?;
    let growing = measure(model.decoder(beams, max_length)?, &options, rounds)?;
    if shared.2 != growing.2 {
        return Err("the cache modes found different best sequences".into());
    }
    // The same weights with a paged cache (`gqa_paged`): a pool with room for every beam's
    // own positions, whose beams share their common blocks.
    let paged_model =
        crate::paged::gqa_paged::Model::from_session(crate::decode::session("gqa_paged")?)?;
    let blocks = beams * max_length.div_ceil(16) + beams;
    let paged = measure(
        paged_model.paged_decoder(beams, max_length, blocks)?,
        &options,
        rounds,
    )?;
    let paged_note = if paged.2 == shared.2 {
        ""
    } else {
        " (another best sequence: the paged model's attention sums apart)"
    };
    let paged_name = format!("ort-bind, paged (gqa_paged){paged_note}");
    for (name, (rate, moved, _)) in [
        ("ort-bind, shared buffer", &shared),
        ("ort-bind, growing", &growing),
        (paged_name.as_str(), &paged),
    ] {
        println!(
            "| {name} | {rate:.0} | {:.0} | {moved:.0} |",
            rate * beams as f64
        );
    }
    if let Some(python) = python {
        let script =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/bench_beam_peer.py");
        let out = std::process::Command::new(python)
            .arg(script)
            .args(["--folder", &folder.to_string_lossy()])
            .args(["--beams", &beams.to_string()])
            .args(["--max-length", &max_length.to_string()])
            .args(["--rounds", &rounds.to_string()])
            .output()?;
        if !out.status.success() {
            return Err(
                format!("the peer failed: {}", String::from_utf8_lossy(&out.stderr)).into(),
            );
        }
        let json: serde_json::Value = serde_json::from_slice(&out.stdout)?;
        let best: Vec<i64> = json["best"]
            .as_array()
            .ok_or("the peer printed no sequence")?
            .iter()
            .filter_map(serde_json::Value::as_i64)
            .collect();
        if best != shared.2 {
            return Err("onnxruntime-genai's best sequence differs from ort-bind's".into());
        }
        let rate = json["positions_per_s"]
            .as_f64()
            .ok_or("the peer printed no rate")?;
        println!(
            "| onnxruntime-genai 0.18 | {rate:.0} | {:.0} | |",
            rate * beams as f64
        );
        println!();
        println!("ort-bind shared / genai: {:.2}x", shared.0 / rate.max(1.0));
    }
    Ok(())
}
