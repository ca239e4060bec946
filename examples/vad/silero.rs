//! Silero VAD through ort-bind's generated bindings: the model fetched on first use,
//! WAV input, and streaming in the chunks the `silero-vad` package's own ONNX wrapper
//! (`OnnxWrapper` in `silero_vad/utils_vad.py`) feeds the model.
//!
//! Shared by `examples/vad.rs` and the tests (`tests/vad.rs`, `tests/alloc.rs`), which
//! include this file as a module.
//!
//! The includer provides the bindings as `crate::vad_bindings`, generated from
//! `examples/models/silero_vad.signature.onnx`, the model's signature (inputs, outputs,
//! no weights), with options that name the dims the exporter left unnamed:
//! `input` `[batch, samples]`, `state` `[2, batch, 128]`, `sr` scalar, `output`
//! `[batch, 1]`, `stateN` `[2, batch, 128]` (the recurrent pair of `state`). So every
//! buffer is allocated by the binding once, and a chunk is: write 512 samples in place,
//! run, read one probability in place, swap `stateN` into `state`.

#![allow(dead_code)] // each includer uses a different part

use std::error::Error;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The bindings generated for `silero_vad.onnx` (by `bindings!` in the example, by the
/// test crate's `build.rs` in the tests: the same module).
pub(crate) use crate::vad_bindings as bindings;

/// The pinned wheel the model comes from (MIT licence).
pub(crate) const WHEEL: &str = "silero-vad==6.2.3";
/// The model inside the wheel: the one `load_silero_vad(onnx=True)` loads (opset 16).
pub(crate) const MODEL_ENTRY: &str = "silero_vad/data/silero_vad.onnx";
/// Sample rate the example takes.
pub(crate) const SAMPLE_RATE: u32 = 16_000;
/// Samples per chunk at 16 kHz, as the wrapper requires.
pub(crate) const CHUNK: usize = 512;
/// Samples of the previous chunk the wrapper puts in front of each chunk at 16 kHz.
pub(crate) const CONTEXT: usize = 64;

/// Any error of this module, boxed.
pub(crate) type BoxError = Box<dyn Error + Send + Sync>;

/// The model file, fetched from the wheel with `pip download` on first use and kept in
/// the per-user cache (`$ORT_BIND_CACHE_DIR`, else `$XDG_CACHE_HOME/ort-bind`, else
/// `~/.cache/ort-bind`), folder `silero-vad-6.2.3`. Later calls read the cache only.
pub(crate) fn model_path() -> Result<PathBuf, BoxError> {
    let root = ort_bind_fetch::WheelCache::new(WHEEL, "silero-vad-6.2.3")
        .keep(|name| name == MODEL_ENTRY)
        .get()?;
    Ok(root.join(MODEL_ENTRY))
}

/// Loads the model at `path` (one intra-op and one inter-op thread, as the wrapper does),
/// checking that it matches the bindings.
pub(crate) fn load(path: &Path) -> ort_bind::Result<bindings::Model> {
    let options = ort_bind::SessionOptions::new()
        .intra_threads(1)
        .inter_threads(1);
    bindings::Model::from_file(path, &options)
}

/// A streaming voice-activity detector: one binding, reused for every chunk.
#[derive(Debug)]
pub(crate) struct Vad {
    binding: bindings::Binding,
}

impl Vad {
    /// Binds the model for one stream of 16 kHz audio.
    pub(crate) fn new(model: &bindings::Model) -> ort_bind::Result<Vad> {
        let dims = bindings::Dims::from_input_shapes(&[1, CONTEXT + CHUNK], &[2, 1, 128], &[])?;
        let mut binding = model.bind(dims)?;
        binding.inputs().sr.fill(SAMPLE_RATE.into());
        let mut vad = Vad { binding };
        vad.reset();
        Ok(vad)
    }

    /// Starts a new stream: zero state, zero context (the wrapper's `reset_states`).
    pub(crate) fn reset(&mut self) {
        let mut inputs = self.binding.inputs();
        inputs.state.fill(0.0);
        inputs.input.fill(0.0);
    }

    /// The speech probability of the next chunk of the stream. `chunk` holds at most
    /// [`CHUNK`] samples; a shorter one (the end of the audio) is zero-padded, as the
    /// wrapper pads the audio. Allocates nothing.
    pub(crate) fn process(&mut self, chunk: &[f32]) -> Result<f32, BoxError> {
        if chunk.len() > CHUNK {
            return Err(
                format!("a chunk holds at most {CHUNK} samples, got {}", chunk.len()).into(),
            );
        }
        {
            let mut inputs = self.binding.inputs();
            let x = inputs.input.as_mut_slice();
            // The model input is [context | chunk]; the context is the last CONTEXT
            // samples of the previous model input (zeros at the start of a stream).
            x.copy_within(CHUNK.., 0);
            x[CONTEXT..CONTEXT + chunk.len()].copy_from_slice(chunk);
            x[CONTEXT + chunk.len()..].fill(0.0);
        }
        self.binding.run()?;
        let probability = self.binding.outputs().output.as_slice()[0];
        // The new state becomes the next chunk's state: buffers swap, nothing is copied.
        self.binding.feed_back()?;
        Ok(probability)
    }

    /// The binding, for inspection.
    pub(crate) fn binding(&self) -> &bindings::Binding {
        &self.binding
    }
}

/// Reads 16 kHz mono 16-bit PCM WAV samples from `reader`, scaled to [-1, 1) as the
/// package's `read_audio` returns them (sample / 32768), and calls `chunk` with each
/// run of [`CHUNK`] samples (the last one shorter when the length is not a multiple).
/// Streams: memory use does not grow with the length of the audio.
pub(crate) fn for_each_chunk<R: Read>(
    reader: R,
    mut chunk: impl FnMut(&[f32]) -> Result<(), BoxError>,
) -> Result<(), BoxError> {
    let mut wav = hound::WavReader::new(reader)?;
    let spec = wav.spec();
    if spec.sample_rate != SAMPLE_RATE
        || spec.channels != 1
        || spec.bits_per_sample != 16
        || spec.sample_format != hound::SampleFormat::Int
    {
        return Err(format!(
            "expected 16000 Hz mono 16-bit PCM, found {} Hz, {} channel(s), {}-bit {}",
            spec.sample_rate,
            spec.channels,
            spec.bits_per_sample,
            match spec.sample_format {
                hound::SampleFormat::Int => "PCM",
                hound::SampleFormat::Float => "float",
            }
        )
        .into());
    }
    let mut buf = [0f32; CHUNK];
    let mut n = 0;
    for sample in wav.samples::<i16>() {
        buf[n] = f32::from(sample?) / 32768.0;
        n += 1;
        if n == CHUNK {
            chunk(&buf)?;
            n = 0;
        }
    }
    if n > 0 {
        chunk(&buf[..n])?;
    }
    Ok(())
}

/// Speech probabilities of every chunk of the WAV file at `path`.
pub(crate) fn probabilities(vad: &mut Vad, path: &Path) -> Result<Vec<f32>, BoxError> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = Vec::new();
    vad.reset();
    for_each_chunk(std::io::BufReader::new(file), |chunk| {
        out.push(vad.process(chunk)?);
        Ok(())
    })
    .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(out)
}
