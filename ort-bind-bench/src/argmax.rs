//! Greedy selection's cost (issue 33): `decode::argmax` over one row of logits against the
//! one-pass compare loop it replaced (kept here as the baseline), side by side in each
//! round, at vocabulary sizes of the project's fixtures (512) and of real decoders (32,000
//! for Llama-2 and Mistral, 151,936 for Qwen2). Both must pick the same index.
//!
//! ```text
//! ort-bind-bench argmax [--rounds N]      # prints a table; nothing to install
//! ```

use std::hint::black_box;
use std::time::Instant;

use ort_bind_runtime::decode::argmax;

use crate::Result;
use crate::decode::median;

const VOCABS: [usize; 3] = [512, 32_000, 151_936];

/// The search `decode::argmax` did before (first index on ties; NaN never wins).
fn one_pass(values: &[f32]) -> usize {
    let mut best = 0;
    let mut best_value: Option<f32> = None;
    for (i, &v) in values.iter().enumerate() {
        let better = match best_value {
            None => !v.is_nan(),
            Some(b) => v > b,
        };
        if better {
            best = i;
            best_value = Some(v);
        }
    }
    best
}

/// Logits shaped like a model's: small values from a fixed-seed generator, the largest
/// somewhere in the middle.
fn logits(vocab: usize, seed: u64) -> Vec<f32> {
    let mut state = seed | 1;
    (0..vocab)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            ((state >> 40) as f32 / (1u64 << 24) as f32) * 8.0 - 4.0
        })
        .collect()
}

/// Nanoseconds per search, the median of `samples` timed batches of `inner` searches.
fn time(f: impl Fn(&[f32]) -> usize, rows: &[Vec<f32>], inner: usize, samples: usize) -> f64 {
    let mut times = Vec::with_capacity(samples);
    for s in 0..samples {
        let row = &rows[s % rows.len()];
        let start = Instant::now();
        for _ in 0..inner {
            black_box(f(black_box(row)));
        }
        times.push(start.elapsed().as_nanos() as u64 / inner as u64);
    }
    median(&mut times)
}

pub(crate) fn main(mut argv: impl Iterator<Item = String>) -> Result<()> {
    let mut rounds = 5usize;
    while let Some(a) = argv.next() {
        match a.as_str() {
            "--rounds" => {
                rounds = argv
                    .next()
                    .and_then(|n| n.parse().ok())
                    .ok_or("--rounds N")?
            }
            other => return Err(format!("unknown argument {other:?}").into()),
        }
    }
    println!("argmax over one row of f32 logits: ns per search, median over {rounds} rounds");
    println!();
    println!("| vocab | one-pass loop | decode::argmax | ratio |");
    println!("| ---: | ---: | ---: | ---: |");
    for vocab in VOCABS {
        let rows: Vec<Vec<f32>> = (0..8).map(|s| logits(vocab, 0x9e37 + s)).collect();
        for row in &rows {
            if argmax(row) != one_pass(row) {
                return Err(format!("the searches disagree at vocab {vocab}").into());
            }
        }
        let inner = (2_000_000 / vocab).max(1);
        let (mut old, mut new) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            // Side by side in each round: the machine's noise hits both.
            old.push(time(one_pass, &rows, inner, 31) as u64);
            new.push(time(argmax::<f32>, &rows, inner, 31) as u64);
        }
        let (old, new) = (median(&mut old), median(&mut new));
        println!(
            "| {vocab} | {old:.0} | {new:.0} | {:.2}x |",
            old / new.max(1.0)
        );
    }
    Ok(())
}
