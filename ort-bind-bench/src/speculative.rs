//! Speculative decoding's speed-up (issue 33): the target's plain greedy decoding against
//! `decode::Speculative` with the project's draft (`ort-bind-tests/tests/fixtures/decoders/
//! speculative/`: an 8-layer target, its first layer as the draft, about 70 % greedy
//! agreement), side by side in each round, in each cache mode.
//!
//! ```text
//! ort-bind-bench speculative [--rounds N] [--k 3 | --k 2,3,4,6] [--steps N]
//!                            [--mode growing|shared|both]
//! ```
//!
//! Each round generates `steps` tokens after a 12-token prompt both ways (the prompt's
//! runs included: both start over with it), one intra-op thread; the figure is the median
//! over the rounds of tokens per second. Both must give the same tokens (checked every
//! round). Also reported: tokens and accepted draft tokens per target run, and the share
//! of proposals accepted.

use std::time::Instant;

use ort_bind_runtime::Session;
use ort_bind_runtime::decode::{CacheMode, Decoder, DecoderModel, SameVocab, Speculative};

use crate::Result;
use crate::decode::median;

pub(crate) mod spec_target {
    include!(concat!(env!("OUT_DIR"), "/ort-bind/spec_target.rs"));
}
mod spec_draft {
    include!(concat!(env!("OUT_DIR"), "/ort-bind/spec_draft.rs"));
}

/// The prompt of the fixture's `greedy.json`.
fn prompt() -> Vec<i64> {
    (0..12).map(|i| (5 + 37 * i) % 500).collect()
}

fn session(fixture: &str) -> Result<Session> {
    crate::decode::session(&format!("speculative/{fixture}"))
}

/// Plain greedy decoding: `n` tokens in `n` target runs (the prompt's and `n - 1` steps).
fn plain<T: DecoderModel, M: CacheMode>(
    decoder: &mut Decoder<T, M>,
    prompt: &[i64],
    n: usize,
) -> Result<Vec<i64>> {
    decoder.prefill(prompt)?;
    let mut out = Vec::with_capacity(n);
    for _ in 1..n {
        out.push(decoder.step_greedy()?[0]);
    }
    out.push(decoder.pick_greedy()?[0]);
    Ok(out)
}

/// One figure: what a row of the table holds.
struct Row {
    plain: f64,
    speculative: f64,
    tokens_per_run: f64,
    accepted_per_run: f64,
    acceptance: f64,
}

fn measure<T, R, MT, MR>(
    mut baseline: Decoder<T, MT>,
    target: Decoder<T, MT>,
    draft: Decoder<R, MR>,
    k: usize,
    steps: usize,
    rounds: usize,
) -> Result<Row>
where
    T: DecoderModel,
    R: DecoderModel,
    MT: CacheMode,
    MR: CacheMode,
    R::Vocab: SameVocab<T::Vocab>,
{
    let prompt = prompt();
    let mut generator = Speculative::new(target, draft, k)?;
    // Warm-up: one of each, and the check that they agree.
    let want = plain(&mut baseline, &prompt, steps)?;
    if generator.generate(&prompt, steps)? != want {
        return Err(format!("k = {k}: speculative tokens differ from plain greedy").into());
    }
    generator.reset_stats();
    let (mut plain_tps, mut spec_tps) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        // Side by side in each round: the machine's noise hits both.
        let t = Instant::now();
        let a = plain(&mut baseline, &prompt, steps)?;
        plain_tps.push((steps as f64 / t.elapsed().as_secs_f64()) as u64);
        let t = Instant::now();
        let b = generator.generate(&prompt, steps)?;
        spec_tps.push((steps as f64 / t.elapsed().as_secs_f64()) as u64);
        if a != want || b != want {
            return Err(format!("k = {k}: the tokens changed between rounds").into());
        }
    }
    let s = generator.stats();
    Ok(Row {
        plain: median(&mut plain_tps),
        speculative: median(&mut spec_tps),
        tokens_per_run: s.tokens_per_target_run(),
        accepted_per_run: s.accepted_per_target_run(),
        acceptance: s.acceptance_rate(),
    })
}

pub(crate) fn main(mut argv: impl Iterator<Item = String>) -> Result<()> {
    let (mut rounds, mut ks, mut steps, mut mode) = (7usize, vec![3usize], 256usize, "both");
    while let Some(a) = argv.next() {
        let mut value = |name: &str| argv.next().ok_or(format!("{name} needs a value"));
        match a.as_str() {
            "--rounds" => rounds = value("--rounds")?.parse()?,
            "--steps" => steps = value("--steps")?.parse()?,
            "--k" => {
                ks = value("--k")?
                    .split(',')
                    .map(str::parse)
                    .collect::<std::result::Result<_, _>>()?
            }
            "--mode" => {
                mode = match value("--mode")?.as_str() {
                    "growing" => "growing",
                    "shared" => "shared",
                    "both" => "both",
                    other => return Err(format!("--mode growing|shared|both, not {other}").into()),
                }
            }
            other => return Err(format!("unknown argument {other:?}").into()),
        }
    }
    if steps < 2 || rounds == 0 {
        return Err("--steps needs at least 2 and --rounds at least 1".into());
    }
    ort_bind_runtime::library::init()?;
    let target = spec_target::Model::from_session(session("target")?)?;
    let draft = spec_draft::Model::from_session(session("draft")?)?;
    let capacity = 12 + steps;
    println!(
        "speculative vs plain greedy: {steps} tokens after a 12-token prompt, batch 1, one intra-op thread; tokens/s, median over {rounds} rounds"
    );
    println!();
    println!(
        "| cache mode | k | plain | speculative | ratio | tokens / target run | accepted / target run | accepted / proposed |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for &k in &ks {
        let mut rows = Vec::new();
        if mode != "shared" {
            let row = measure(
                target.decoder(1, capacity)?,
                target.decoder(1, capacity)?,
                draft.decoder(1, capacity)?,
                k,
                steps,
                rounds,
            )?;
            rows.push(("growing", row));
        }
        if mode != "growing" {
            let row = measure(
                target.shared_decoder(1, capacity)?,
                target.shared_decoder(1, capacity)?,
                draft.shared_decoder(1, capacity)?,
                k,
                steps,
                rounds,
            )?;
            rows.push(("shared", row));
        }
        for (name, r) in rows {
            println!(
                "| {name} | {k} | {:.0} | {:.0} | {:.2}x | {:.2} | {:.2} | {:.0} % |",
                r.plain,
                r.speculative,
                r.speculative / r.plain.max(1.0),
                r.tokens_per_run,
                r.accepted_per_run,
                100.0 * r.acceptance
            );
        }
    }
    Ok(())
}
