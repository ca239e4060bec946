//! The Silero VAD example against Python onnxruntime running the `silero-vad`
//! package's own wrapper on the same file.
//!
//! `tests/reference/vad/speech.wav` and `speech.probs` were written by
//! `tests/reference/vad_reference.py` (see its docstring); the model is fetched from the
//! pinned wheel on first use. Python is not needed to run these tests.

/// The Silero VAD bindings `build.rs` generated (`examples/vad.rs` gets the same module
/// from `bindings!`).
mod vad_bindings {
    ort_bind::include_bindings!("silero_vad");
}
#[path = "../../examples/vad/silero.rs"]
mod silero;

use std::path::{Path, PathBuf};

use silero::{BoxError, CHUNK, CONTEXT, bindings};

fn reference_dir() -> PathBuf {
    ort_bind_tests::paths::reference("vad")
}

fn reference_probs() -> Vec<f32> {
    let text = std::fs::read_to_string(reference_dir().join("speech.probs")).expect("reference");
    text.lines()
        .map(|l| l.trim().parse::<f32>().expect("a probability per line"))
        .collect()
}

fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len(), "one probability per chunk on both sides");
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

fn model() -> Result<bindings::Model, BoxError> {
    Ok(silero::load(&silero::model_path()?)?)
}

#[test]
fn probabilities_match_python_onnxruntime() -> Result<(), BoxError> {
    let model = model()?;
    let mut vad = silero::Vad::new(&model)?;
    let wav = reference_dir().join("speech.wav");
    let ours = silero::probabilities(&mut vad, &wav)?;
    let want = reference_probs();
    // 99837 samples: 194 full chunks and a zero-padded one.
    assert_eq!(want.len(), 195);
    let diff = max_abs_diff(&ours, &want);
    println!(
        "silero vad: {} chunks, max abs diff vs Python onnxruntime {diff:e}",
        ours.len()
    );
    assert!(diff <= 1e-4, "max abs diff {diff}");
    // The audio has speech and non-speech: the comparison covers the whole range.
    assert!(want.iter().any(|&p| p > 0.99) && want.iter().any(|&p| p < 0.01));

    // The same binding streams a second file from a fresh state: same answers.
    let again = silero::probabilities(&mut vad, &wav)?;
    assert_eq!(ours, again);
    Ok(())
}

/// Runs the model chunk by chunk, optionally without carrying the state or the context:
/// shows the reference comparison above can fail.
fn variant(carry_state: bool, carry_context: bool) -> Result<Vec<f32>, BoxError> {
    let model = model()?;
    let mut b = model.bind(bindings::Dims {
        batch: 1,
        samples: CONTEXT + CHUNK,
    })?;
    b.inputs().sr.fill(16_000);
    b.inputs().state.fill(0.0);
    b.inputs().input.fill(0.0);
    let mut samples = Vec::new();
    silero::for_each_chunk(
        std::fs::File::open(reference_dir().join("speech.wav"))?,
        |c| {
            samples.push(c.to_vec());
            Ok(())
        },
    )?;
    let mut out = Vec::new();
    for chunk in &samples {
        {
            let mut inputs = b.inputs();
            let x = inputs.input.as_mut_slice();
            if carry_context {
                x.copy_within(CHUNK.., 0);
            } else {
                x[..CONTEXT].fill(0.0);
            }
            x[CONTEXT..CONTEXT + chunk.len()].copy_from_slice(chunk);
            x[CONTEXT + chunk.len()..].fill(0.0);
        }
        b.run()?;
        out.push(b.outputs().output.as_slice()[0]);
        if carry_state {
            b.feed_state_n_into_state()?;
        }
    }
    Ok(out)
}

#[test]
fn state_and_context_both_matter() -> Result<(), BoxError> {
    let want = reference_probs();
    assert!(max_abs_diff(&variant(true, true)?, &want) <= 1e-4);
    let no_state = max_abs_diff(&variant(false, true)?, &want);
    let no_context = max_abs_diff(&variant(true, false)?, &want);
    println!("without state carried: {no_state}; without context: {no_context}");
    assert!(no_state > 0.05, "{no_state}");
    assert!(no_context > 1e-3, "{no_context}");
    Ok(())
}

#[test]
fn the_signature_in_git_is_the_fetched_model_s() -> Result<(), BoxError> {
    let stub = ort_bind_tests::paths::fixture("signatures/silero_vad.onnx");
    let stub = ort_bind_codegen::read_signature(&stub)?;
    let real = ort_bind_codegen::read_signature(&silero::model_path()?)?;
    assert_eq!(stub.inputs, real.inputs);
    assert_eq!(stub.outputs, real.outputs);
    assert_eq!(stub.opsets, real.opsets);
    assert!(
        stub.metadata
            .iter()
            .any(|(k, v)| k == "ort-bind.signature-of" && v.starts_with(silero::WHEEL))
    );
    Ok(())
}

#[test]
fn the_binding_has_the_planned_shapes() -> Result<(), BoxError> {
    let model = model()?;
    let vad = silero::Vad::new(&model)?;
    let b = vad.binding();
    assert_eq!(
        *b.dims(),
        bindings::Dims {
            batch: 1,
            samples: 576
        }
    );
    let out = b.outputs();
    // `output` [batch, 1] and `stateN` [2, batch, 128] are pre-allocated, typed views.
    let output: ort_bind::TensorRef<'_, f32, (ort_bind::Dyn, ort_bind::Fix<1>)> = out.output;
    assert_eq!(output.dims(), &[1, 1]);
    assert_eq!(out.state_n.dims(), &[2, 1, 128]);
    Ok(())
}

#[test]
fn contradicting_shapes_name_the_dim() {
    let err = bindings::Dims::from_input_shapes(&[1, 576], &[2, 3, 128], &[]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "dimension `batch`: axis 0 of `input` says 1, axis 1 of `state` says 3"
    );
    let err = bindings::Dims::from_input_shapes(&[1, 576], &[2, 1, 64], &[]).unwrap_err();
    assert!(err.to_string().starts_with("dimension `state[2]`"), "{err}");
    let err = bindings::Dims::from_input_shapes(&[1, 576], &[2, 1, 128], &[1]).unwrap_err();
    assert!(err.to_string().contains("tensor `sr`"), "{err}");
}

fn write_wav(path: &Path, spec: hound::WavSpec, samples: &[i16]) {
    let mut w = hound::WavWriter::create(path, spec).unwrap();
    for &s in samples {
        w.write_sample(s).unwrap();
    }
    w.finalize().unwrap();
}

#[test]
fn wav_input_is_checked_and_chunked() -> Result<(), BoxError> {
    let dir = std::env::temp_dir().join(format!("ort-bind-vad-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: 16_000,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    // 8 kHz is refused with a message that says what is expected.
    let slow = dir.join("slow.wav");
    write_wav(
        &slow,
        hound::WavSpec {
            sample_rate: 8000,
            ..spec
        },
        &[0; 100],
    );
    let err = silero::for_each_chunk(std::fs::File::open(&slow)?, |_| Ok(())).unwrap_err();
    assert!(
        err.to_string()
            .contains("expected 16000 Hz mono 16-bit PCM, found 8000 Hz"),
        "{err}"
    );
    // Stereo too.
    let stereo = dir.join("stereo.wav");
    write_wav(
        &stereo,
        hound::WavSpec {
            channels: 2,
            ..spec
        },
        &[0; 100],
    );
    assert!(silero::for_each_chunk(std::fs::File::open(&stereo)?, |_| Ok(())).is_err());
    // 1100 samples: chunks of 512, 512 and 76; samples scaled by 1/32768.
    let ok = dir.join("ok.wav");
    let samples: Vec<i16> = (0..1100).map(|i| (i * 29 % 2000 - 1000) as i16).collect();
    write_wav(&ok, spec, &samples);
    let mut lens = Vec::new();
    let mut first = None;
    silero::for_each_chunk(std::fs::File::open(&ok)?, |c| {
        lens.push(c.len());
        first.get_or_insert(c[1]);
        Ok(())
    })?;
    assert_eq!(lens, [512, 512, 76]);
    assert_eq!(first, Some(f32::from(samples[1]) / 32768.0));
    // An empty file has no chunks, and a chunk longer than 512 samples is an error.
    let empty = dir.join("empty.wav");
    write_wav(&empty, spec, &[]);
    let mut vad = silero::Vad::new(&model()?)?;
    assert!(silero::probabilities(&mut vad, &empty)?.is_empty());
    assert!(vad.process(&[0.0; 513]).is_err());
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
