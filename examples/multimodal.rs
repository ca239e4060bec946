//! A multimodal prompt: an image and text in, tokens out, through three models (vision ->
//! embedding -> text decoder) that hand each other buffers, never copies.
//!
//! ```sh
//! cargo run --release --example multimodal            # 64 tokens after the prompt
//! cargo run --release --example multimodal -- 200     # more tokens
//! ```
//!
//! The models are the repository's Qwen2-VL-shaped fixtures (random weights, written by
//! `ort-bind-tests/tests/fixtures/pipelines/make_chains.py`): the tokens mean nothing, but
//! the pipeline is the one a real model gets. `pipeline!` reads the three files when this
//! compiles and finds how they connect: the vision model's `image_features` feed the
//! embedding model, whose `inputs_embeds` feed the text decoder (its position ids carry
//! three rows, as multimodal rotary embeddings do). Image token 511 marks where the
//! image's 16 feature rows go in the prompt.

use std::io::Write;
use std::time::Instant;

mod vlm {
    ort_bind::pipeline!(
        vision = "ort-bind-tests/tests/fixtures/pipelines/vision_text/vision.onnx",
        embedding = "ort-bind-tests/tests/fixtures/pipelines/vision_text/embedding.onnx",
        text = "ort-bind-tests/tests/fixtures/pipelines/vision_text/text.onnx",
    );
}

const IMAGE_TOKEN: i64 = 511;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let new_tokens: usize = match std::env::args().nth(1) {
        Some(n) => n.parse().map_err(|_| format!("not a token count: {n}"))?,
        None => 64,
    };
    // A prompt: a start token, the image's 16 rows, then three text tokens.
    let prompt: Vec<i64> = [3]
        .into_iter()
        .chain([IMAGE_TOKEN; 16])
        .chain([40, 41, 42])
        .collect();

    let pipeline = vlm::Pipeline::load()?;
    let mut generator = pipeline.generator(
        vlm::vision::Dims { batch_size: 1 },
        1,
        prompt.len() + new_tokens,
    )?;
    // A synthetic 32x32 RGB image, written in place into the vision model's input.
    for (i, p) in generator
        .encoder_inputs()
        .pixel_values
        .as_mut_slice()
        .iter_mut()
        .enumerate()
    {
        *p = (0.05 * (i % 1024 + 1) as f32 * (i / 1024 + 1) as f32).sin();
    }
    let start = Instant::now();
    generator.encode()?; // the vision model, once per image
    generator.prefill(&prompt)?; // embeddings (with the image rows), then the decoder
    let prompt_time = start.elapsed();

    let mut out = std::io::stdout().lock();
    let start = Instant::now();
    for _ in 0..new_tokens {
        let token = generator.step_greedy()?[0];
        write!(out, "{token} ")?;
        out.flush()?;
    }
    let elapsed = start.elapsed();
    writeln!(out)?;
    eprintln!(
        "image and {}-token prompt in {:.2} ms; {new_tokens} tokens in {:.1} ms: {:.0} tokens/s",
        prompt.len(),
        prompt_time.as_secs_f64() * 1e3,
        elapsed.as_secs_f64() * 1e3,
        new_tokens as f64 / elapsed.as_secs_f64(),
    );
    Ok(())
}
