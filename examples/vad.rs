//! Voice activity detection with Silero VAD: one speech probability per 512-sample
//! chunk of a 16 kHz mono 16-bit PCM WAV file, one number per line.
//!
//! ```text
//! cargo run --release --example vad -- FILE.wav [--model silero_vad.onnx]
//! ```
//!
//! The model (`silero_vad.onnx` from the MIT-licensed `silero-vad` 6.2.3 wheel) is
//! fetched with `pip download` on first use and cached; `--model` uses a local copy
//! instead. Chunks are fed exactly as the package's reference ONNX wrapper feeds them:
//! each model input is the chunk preceded by the last 64 samples of the previous
//! input, the recurrent state carries across chunks, and the last chunk is zero-padded.
//!
//! Through the generated bindings every buffer is bound once: per chunk the example
//! writes the samples in place, runs, reads the probability in place and swaps the new
//! state into the state input. No allocation, no copy of the state (see `tests/alloc.rs`).

#[path = "vad/silero.rs"]
mod silero;

/// Silero VAD's typed bindings, generated at compile time from the model's signature
/// (the wheel's model is fetched at run time). The exporter left every dynamic dim
/// unnamed; the options name them, so every buffer is allocated once by the binding.
mod vad_bindings {
    ort_bind::bindings!(
        "examples/models/silero_vad.signature.onnx",
        dim("input", 0, "batch"),
        dim("input", 1, "samples"),
        dim("state", 1, "batch"),
        dim("output", 0, "batch"),
    );
}

use std::io::Write;
use std::path::PathBuf;

fn main() {
    if let Err(e) = run() {
        eprintln!("vad: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), silero::BoxError> {
    let mut wav: Option<PathBuf> = None;
    let mut model: Option<PathBuf> = None;
    let mut args = std::env::args_os().skip(1);
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--model") => {
                model = Some(args.next().ok_or("--model needs a path")?.into());
            }
            Some("-h" | "--help") => {
                println!("usage: vad FILE.wav [--model silero_vad.onnx]");
                return Ok(());
            }
            _ if wav.is_none() => wav = Some(arg.into()),
            _ => return Err(format!("unexpected argument {arg:?}").into()),
        }
    }
    let wav = wav.ok_or("usage: vad FILE.wav [--model silero_vad.onnx]")?;
    let model = match model {
        Some(path) => path,
        None => silero::model_path()?,
    };
    let model = silero::load(&model)?;
    let mut detector = silero::Vad::new(&model)?;

    let file = std::fs::File::open(&wav).map_err(|e| format!("{}: {e}", wav.display()))?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    silero::for_each_chunk(std::io::BufReader::new(file), |chunk| {
        let probability = detector.process(chunk)?;
        writeln!(out, "{probability}")?;
        Ok(())
    })
    .map_err(|e| format!("{}: {e}", wav.display()))?;
    out.flush()?;
    Ok(())
}
