//! Encoder-decoder generation (speech-to-text shaped): the encoder runs once per clip, the
//! decoder reads its buffers directly (cross-attention caches bound once per clip, nothing
//! copied), and greedy tokens stream out.
//!
//! ```sh
//! cargo run --release --example seq2seq            # a 3 s clip (300 frames), 64 tokens
//! cargo run --release --example seq2seq -- 900 128 # 900 frames, 128 tokens
//! ```
//!
//! The models are the repository's Whisper-shaped fixtures (random weights, written by
//! `ort-bind-tests/tests/fixtures/pipelines/make_seq2seq.py`): the tokens mean nothing,
//! but the pipeline is the one a real model gets. `pipeline!` reads both files when this
//! compiles, finds the edges by name (the encoder's `present_key_cross_N` feeds the
//! decoder's `past_key_cross_N`) and checks them; a wrong edge does not compile.

use std::io::Write;
use std::time::Instant;

mod speech {
    ort_bind::pipeline!(
        encoder = "examples/models/speech/encoder.onnx",
        decoder = "examples/models/speech/decoder.onnx",
    );
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut number = |default: usize, what: &str| -> Result<usize, String> {
        match args.next() {
            Some(n) => n.parse().map_err(|_| format!("not a {what}: {n}")),
            None => Ok(default),
        }
    };
    let frames = number(300, "frame count")?;
    let new_tokens = number(64, "token count")?;
    let start_tokens = [3_i64, 17, 42];

    let pipeline = speech::Pipeline::load()?;
    let dims = speech::encoder::Dims {
        batch_size: 1,
        num_frames: frames,
    };
    // Capacity: every decoded position, the start tokens included (the decoder's position
    // table holds 448).
    let mut generator = pipeline.generator(dims, 1, start_tokens.len() + new_tokens)?;

    // A synthetic clip: 16 mel-like channels of slow sines.
    {
        let mut inputs = generator.encoder_inputs();
        let features = inputs.audio_features.as_mut_slice();
        for (i, x) in features.iter_mut().enumerate() {
            let (channel, t) = (i / frames, i % frames);
            *x = (0.01 * (t as f32 + 1.0) * (channel as f32 + 1.0)).sin();
        }
    }
    let start = Instant::now();
    generator.encode()?;
    let encode = start.elapsed();

    let mut out = std::io::stdout().lock();
    let start = Instant::now();
    generator.prefill(&start_tokens)?;
    for _ in 0..new_tokens {
        let token = generator.step_greedy()?[0];
        write!(out, "{token} ")?;
        out.flush()?;
    }
    let elapsed = start.elapsed();
    writeln!(out)?;
    eprintln!(
        "{frames} frames encoded in {:.2} ms ({} encoder positions); {new_tokens} tokens in {:.1} ms: {:.0} tokens/s",
        encode.as_secs_f64() * 1e3,
        generator.encoder_outputs().encoder_hidden_states.dims()[1],
        elapsed.as_secs_f64() * 1e3,
        new_tokens as f64 / elapsed.as_secs_f64(),
    );
    Ok(())
}
