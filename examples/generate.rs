//! Greedy generation with a key/value cache, streaming token ids as they come.
//!
//! ```sh
//! cargo run --release --example generate            # 128 tokens after a 12-token prompt
//! cargo run --release --example generate -- 1000    # more tokens
//! ```
//!
//! The model is one of the repository's decoder fixtures (a two-layer GroupQueryAttention
//! decoder with random weights, written by
//! `ort-bind-tests/tests/fixtures/decoders/make_decoders.py`): its tokens mean nothing,
//! but the loop is the one a real model gets. `bindings!` recognises the decoder signature
//! and generates `Decoder` and, because the model's attention writes its cache in place,
//! `SharedDecoder`: one cache buffer per key/value per layer, bound once.

use std::io::Write;
use std::time::Instant;

use ort_bind::SessionOptions;

mod decoder {
    ort_bind::bindings!("ort-bind-tests/tests/fixtures/decoders/gqa_f32/model.onnx");
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let new_tokens: usize = match std::env::args().nth(1) {
        Some(n) => n.parse().map_err(|_| format!("not a token count: {n}"))?,
        None => 128,
    };
    let prompt: Vec<i64> = vec![5, 42, 79, 116, 153, 190, 227, 264, 301, 338, 375, 412];

    let model = decoder::Model::load_with(&SessionOptions::new().intra_threads(1))?;
    // Capacity: every position the sequence will hold, prompt included.
    let mut generator = model.shared_decoder(1, prompt.len() + new_tokens)?;

    let start = Instant::now();
    generator.prefill(&prompt)?;
    let prefill = start.elapsed();

    let mut out = std::io::stdout().lock();
    let start = Instant::now();
    for _ in 0..new_tokens {
        // The most likely next token, appended and run; the cache grows in place.
        let token = generator.step_greedy()?[0];
        write!(out, "{token} ")?;
        out.flush()?;
    }
    let elapsed = start.elapsed();
    writeln!(out)?;
    eprintln!(
        "prompt of {} tokens in {:.2} ms; {new_tokens} tokens in {:.1} ms: {:.0} tokens/s \
         ({} positions held of {})",
        prompt.len(),
        prefill.as_secs_f64() * 1e3,
        elapsed.as_secs_f64() * 1e3,
        new_tokens as f64 / elapsed.as_secs_f64(),
        generator.len(),
        generator.capacity(),
    );
    Ok(())
}
