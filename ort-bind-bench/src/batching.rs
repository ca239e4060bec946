//! `ort-bind-bench batching [--quick] [--rounds N]`: what dynamic batching buys, side by
//! side in one run, on a model that gains from batching (`slow.onnx`: 64 x MatMul
//! 256x256 + Tanh, weights shared by every row) and one that does not
//! (`elementwise.onnx`: 12 x Mul + Tanh over 512 KiB rows, nothing shared, bigger batches
//! outgrow the caches). Both are the runtime's test models (`ort-bind-runtime/tests/data/`).
//!
//! 16 client threads each send one-row requests (a row filled with one value) and check
//! every reply against the model's closed form. Contenders, all on sessions with one
//! intra-op thread, run in a rotating order within each round:
//! - `ort`, a session per client thread (the peer: what a service on `ort` alone does);
//! - ort-bind, unbatched: a `Pool` of 2 bindings (one per core), from the client threads;
//! - the same pool from 16 tokio tasks (2 executor threads), a handler as a service writes
//!   it: `get_async` + `run_async`, against `spawn_blocking` + `get` + `run` (issue 19's
//!   point 2: `run_async` on a session with one intra-op thread runs on ort-bind's worker
//!   threads);
//! - ort-bind, `Batcher` with `BatchSizing::Fixed` at 2, 4, 8 and 16 (2 workers, 1 ms);
//! - ort-bind, `Batcher` with `BatchSizing::Adaptive` (max 16, 2 workers, 1 ms).
//!
//! The batchers live across rounds, as in a service (the adaptive one measures sizes in
//! the first requests it serves; a warm-up round, not counted, lets every contender reach
//! its steady state). Reported per model: each contender's throughput over the unbatched
//! pool (median of per-round ratios), and the adaptive batcher's throughput over the best
//! configuration among the unbatched pool and the fixed sizes (best by median throughput;
//! median of per-round ratios).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ort::value::TensorRef as OrtTensorRef;
use ort_bind_runtime::{BatchOptions, BatchSizing, Batcher, Batching, Binding, Pool, Session};

use crate::Result;
use crate::contenders::{ort_bind_options, ort_session};
use crate::harness::median_f64;
use crate::serving::RowsIo;

const CLIENTS: usize = 16;
const WORKERS: usize = 2;

/// One of the two models: its file, row width and closed form for a constant row.
struct Model {
    name: &'static str,
    file: &'static str,
    about: &'static str,
    /// The output value of a row whose every element is `v`.
    expect: fn(f32) -> f32,
}

fn elementwise(v: f32) -> f32 {
    let mut v = v;
    for _ in 0..12 {
        v = (v * 0.9).tanh();
    }
    v
}

/// The value client `c` sends in request `i`.
fn value(c: usize, i: usize) -> f32 {
    ((c * 31 + i) % 7 + 1) as f32 / 8.0
}

/// Checks a reply row (every 61st element: the rows are constant).
fn check(model: &Model, c: usize, i: usize, row: &[f32]) -> std::result::Result<(), String> {
    let want = (model.expect)(value(c, i));
    match row
        .iter()
        .step_by(61)
        .find(|&&g| (g - want).abs() > 1e-4 * want.abs().max(1e-3))
    {
        None => Ok(()),
        Some(g) => Err(format!(
            "{}: client {c} request {i}: {g} != {want}",
            model.name
        )),
    }
}

/// `x` rows filled with one value each, their output rows copied out.
struct Constant<const W: usize>;

impl<const W: usize> Batching<RowsIo<W>> for Constant<W> {
    type Item = f32;
    type Reply = Vec<f32>;
    fn item_dims(&self, _: &f32) -> ort_bind_runtime::Result<usize> {
        Ok(1)
    }
    fn batch_dims(&self, _: &usize, n: usize) -> usize {
        n
    }
    fn gather(
        &self,
        x: &mut <RowsIo<W> as ort_bind_runtime::BindingIo>::InputsMut<'_>,
        row: usize,
        v: &f32,
    ) -> ort_bind_runtime::Result<()> {
        x.row_mut(row)?.fill(*v);
        Ok(())
    }
    fn scatter(
        &self,
        y: &<RowsIo<W> as ort_bind_runtime::BindingIo>::OutputsRef<'_>,
        row: usize,
    ) -> ort_bind_runtime::Result<Vec<f32>> {
        Ok(y.row(row)?.to_vec())
    }
}

/// A way of serving one-row requests to 16 client threads.
enum Contender<const W: usize> {
    Ort(Vec<std::sync::Mutex<ort::session::Session>>),
    Pool(Pool<RowsIo<W>>),
    /// The pool, from tokio tasks: `run_async` (`true`) or `spawn_blocking` + `run`.
    Tasks(Arc<Pool<RowsIo<W>>>, Arc<tokio::runtime::Runtime>, bool),
    Batcher(Batcher<RowsIo<W>, Constant<W>>),
}

impl<const W: usize> Contender<W> {
    /// Serves `each` requests per client; the elapsed time.
    fn serve(&self, model: &'static Model, each: usize) -> Result<Duration> {
        if let Contender::Tasks(pool, rt, run_async) = self {
            return serve_tasks(pool, rt, *run_async, model, each);
        }
        let t = Instant::now();
        std::thread::scope(|scope| -> Result<()> {
            let clients: Vec<_> = (0..CLIENTS)
                .map(|c| scope.spawn(move || self.client(model, c, each)))
                .collect();
            for client in clients {
                client.join().map_err(|_| "a client panicked")??;
            }
            Ok(())
        })?;
        Ok(t.elapsed())
    }

    fn client(&self, model: &Model, c: usize, each: usize) -> std::result::Result<(), String> {
        let err = |e: &dyn std::fmt::Display| e.to_string();
        let mut row = vec![0.0f32; W];
        for i in 0..each {
            let v = value(c, i);
            let reply: Vec<f32> = match self {
                Contender::Ort(sessions) => {
                    row.fill(v);
                    let mut session = sessions[c].lock().map_err(|e| err(&e))?;
                    let x = OrtTensorRef::from_array_view(([1usize, W], &row[..]))
                        .map_err(|e| err(&e))?;
                    let out = session.run(ort::inputs![x]).map_err(|e| err(&e))?;
                    let (_, y) = out[0].try_extract_tensor::<f32>().map_err(|e| err(&e))?;
                    y.to_vec()
                }
                Contender::Pool(pool) => {
                    let mut b = pool.get(&1).map_err(|e| err(&e))?;
                    b.inputs().fill(v);
                    b.run().map_err(|e| err(&e))?;
                    b.outputs().as_slice().to_vec()
                }
                Contender::Batcher(batcher) => batcher.submit(v).map_err(|e| err(&e))?,
                Contender::Tasks(..) => return Err("tasks are served by serve_tasks".into()),
            };
            check(model, c, i, &reply)?;
        }
        Ok(())
    }
}

/// A batcher's (runs, items) so far; (0, 0) for the others.
fn batch_stats<const W: usize>(c: &Contender<W>) -> (u64, u64) {
    match c {
        Contender::Batcher(b) => b.stats(),
        _ => (0, 0),
    }
}

/// 16 tokio tasks, each sending `each` requests through the pool.
fn serve_tasks<const W: usize>(
    pool: &Arc<Pool<RowsIo<W>>>,
    rt: &tokio::runtime::Runtime,
    run_async: bool,
    model: &'static Model,
    each: usize,
) -> Result<Duration> {
    let t = Instant::now();
    rt.block_on(async {
        let tasks: Vec<_> = (0..CLIENTS)
            .map(|c| {
                let pool = Arc::clone(pool);
                tokio::spawn(async move {
                    let err = |e: &dyn std::fmt::Display| e.to_string();
                    for i in 0..each {
                        let v = value(c, i);
                        let reply = if run_async {
                            let mut b = pool.get_async(&1).await.map_err(|e| err(&e))?;
                            b.inputs().fill(v);
                            b.run_async().await.map_err(|e| err(&e))?;
                            b.outputs().as_slice().to_vec()
                        } else {
                            let pool = Arc::clone(&pool);
                            tokio::task::spawn_blocking(
                                move || -> std::result::Result<Vec<f32>, String> {
                                    let mut b = pool.get(&1).map_err(|e| err(&e))?;
                                    b.inputs().fill(v);
                                    b.run().map_err(|e| err(&e))?;
                                    Ok(b.outputs().as_slice().to_vec())
                                },
                            )
                            .await
                            .map_err(|e| err(&e))??
                        };
                        check(model, c, i, &reply)?;
                    }
                    Ok::<_, String>(())
                })
            })
            .collect();
        for task in tasks {
            task.await.map_err(|e| e.to_string())??;
        }
        Ok::<_, String>(())
    })?;
    Ok(t.elapsed())
}

/// One model's figures: per contender (name, throughput per round in requests/s), and
/// the adaptive batcher's chosen size and per-size measurements at the end.
pub(crate) struct Figures {
    /// Index of the first batcher among the contenders (before it: `ort` and unbatched).
    first_batcher: usize,
    model: &'static str,
    about: &'static str,
    contenders: Vec<(String, Vec<f64>)>,
    sizing: ort_bind_runtime::SizingReport,
}

fn measure<const W: usize>(model: &'static Model, rounds: usize, each: usize) -> Result<Figures> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../ort-bind-runtime/tests/data")
        .join(model.file);
    let session = Session::from_file(&path, &ort_bind_options())?;
    let batcher = |sizing: BatchSizing, max_batch: usize| -> Result<Contender<W>> {
        let session = session.clone();
        let options = BatchOptions {
            max_batch,
            max_delay: Duration::from_millis(1),
            workers: WORKERS,
            sizing,
        };
        Ok(Contender::Batcher(Batcher::new(
            Constant::<W>,
            options,
            move |m: &usize| Binding::new(&session, RowsIo::<W>::new(*m)?),
        )?))
    };
    let path_str = path.to_str().ok_or("model path is not UTF-8")?;
    let mut contenders: Vec<(String, Contender<W>)> = vec![
        (
            "`ort`, a session per client thread".into(),
            Contender::Ort(
                (0..CLIENTS)
                    .map(|_| ort_session(path_str).map(std::sync::Mutex::new))
                    .collect::<Result<_>>()?,
            ),
        ),
        (
            "unbatched, `Pool` of 2".into(),
            Contender::Pool({
                let session = session.clone();
                let pool = Pool::new(WORKERS, move |m: &usize| {
                    Binding::new(&session, RowsIo::<W>::new(*m)?)
                });
                pool.fill(&1)?;
                pool
            }),
        ),
    ];
    let rt = Arc::new(
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(WORKERS)
            .build()?,
    );
    let shared_pool = Arc::new(Pool::new(WORKERS, {
        let session = session.clone();
        move |m: &usize| Binding::new(&session, RowsIo::<W>::new(*m)?)
    }));
    shared_pool.fill(&1)?;
    contenders.push((
        "unbatched, `Pool` of 2, 16 tokio tasks: `run_async`".into(),
        Contender::Tasks(Arc::clone(&shared_pool), Arc::clone(&rt), true),
    ));
    contenders.push((
        "unbatched, `Pool` of 2, 16 tokio tasks: `spawn_blocking` + `run`".into(),
        Contender::Tasks(shared_pool, rt, false),
    ));
    let first_batcher = contenders.len();
    for b in [2, 4, 8, 16] {
        contenders.push((format!("fixed batch {b}"), batcher(BatchSizing::Fixed, b)?));
    }
    contenders.push((
        "adaptive (max 16)".into(),
        batcher(BatchSizing::Adaptive, 16)?,
    ));
    println!("batching: {} warm-up ...", model.name);
    for (_, c) in &contenders {
        c.serve(model, each)?;
    }
    let mut per_round: Vec<Vec<f64>> = vec![Vec::new(); contenders.len()];
    // Runs and items of each batcher in the measured rounds.
    let mut batches = vec![(0u64, 0u64); contenders.len()];
    for round in 0..rounds {
        let n = contenders.len();
        for k in 0..n {
            let i = (k + round) % n;
            let before = batch_stats(&contenders[i].1);
            let took = contenders[i].1.serve(model, each)?;
            let after = batch_stats(&contenders[i].1);
            batches[i].0 += after.0 - before.0;
            batches[i].1 += after.1 - before.1;
            per_round[i].push((CLIENTS * each) as f64 / took.as_secs_f64());
        }
        println!("batching: {} round {}/{rounds}", model.name, round + 1);
    }
    let sizing = match &contenders[contenders.len() - 1].1 {
        Contender::Batcher(b) => b.sizing(),
        _ => return Err("the last contender is the adaptive batcher".into()),
    };
    Ok(Figures {
        first_batcher,
        model: model.name,
        about: model.about,
        contenders: contenders
            .into_iter()
            .zip(batches)
            .map(|((name, _), (runs, items))| match runs {
                0 => name,
                _ => format!("{name} (mean batch {:.1})", items as f64 / runs as f64),
            })
            .zip(per_round)
            .collect(),
        sizing,
    })
}

/// Rows of the report for one model.
fn rows(f: &Figures) -> Vec<String> {
    let unbatched = &f.contenders[1].1;
    let adaptive = &f.contenders[f.contenders.len() - 1].1;
    let mut out = vec![format!("### {} ({})\n", f.model, f.about)];
    out.push("| contender | requests/s (median) | over unbatched (median of rounds) |".into());
    out.push("| --- | ---: | ---: |".into());
    for (name, thr) in &f.contenders {
        let ratio: Vec<f64> = thr.iter().zip(unbatched).map(|(a, b)| a / b).collect();
        out.push(format!(
            "| {name} | {:.0} | {:.2}x |",
            median_f64(thr),
            median_f64(&ratio)
        ));
    }
    // Issue 19's point 2: run_async against spawn_blocking + run on the same pool.
    let named = |part: &str| {
        f.contenders
            .iter()
            .find(|(n, _)| n.contains(part))
            .map(|(_, t)| t)
    };
    if let (Some(a), Some(b)) = (named("`run_async`"), named("`spawn_blocking`")) {
        let r: Vec<f64> = a.iter().zip(b).map(|(a, b)| a / b).collect();
        out.push(format!(
            "\n`run_async` over `spawn_blocking` + `run`, same pool, 16 tasks: median {:.2}x (goal >= 0.95x)",
            median_f64(&r)
        ));
    }
    // The adaptive batcher against the best configuration of the others ort-bind offers
    // (the unbatched pool and each fixed size; best by median throughput), round by round.
    let candidates = std::iter::once(1).chain(f.first_batcher..f.contenders.len() - 1);
    let best = candidates
        .max_by(|&a, &b| median_f64(&f.contenders[a].1).total_cmp(&median_f64(&f.contenders[b].1)))
        .unwrap_or(1);
    let ratios: Vec<f64> = adaptive
        .iter()
        .zip(&f.contenders[best].1)
        .map(|(a, b)| a / b)
        .collect();
    let (lo, hi) = ratios
        .iter()
        .fold((f64::MAX, 0.0f64), |(lo, hi), &r| (lo.min(r), hi.max(r)));
    out.push(format!(
        "\nadaptive over the best of the unbatched pool (client threads) and the fixed sizes ({}): median {:.2}x \
         (rounds {lo:.2}-{hi:.2}x; goal >= 0.95x); it serves at {} (throughput it measured, requests/s: {})\n",
        f.contenders[best].0,
        median_f64(&ratios),
        f.sizing.chosen,
        f.sizing
            .throughput
            .iter()
            .map(|(n, t)| match t {
                Some(t) => format!("{n}: {t:.0}"),
                None => format!("{n}: -"),
            })
            .collect::<Vec<_>>()
            .join(", ")
    ));
    out
}

/// `ort-bind-bench batching [--quick] [--rounds N] [--out DIR]`.
pub(crate) fn main(mut argv: impl Iterator<Item = String>) -> Result<()> {
    let (mut rounds, mut quick, mut out) = (5, false, None);
    while let Some(a) = argv.next() {
        match a.as_str() {
            "--quick" => quick = true,
            "--rounds" => {
                rounds = argv
                    .next()
                    .and_then(|r| r.parse().ok())
                    .ok_or("--rounds N")?
            }
            "--out" => out = Some(argv.next().ok_or("--out DIR")?),
            other => return Err(format!("batching: unknown argument `{other}`").into()),
        }
    }
    if quick {
        rounds = rounds.min(2);
    }
    ort_bind_runtime::library::init()?;
    let load = crate::loadavg();
    static GAINS: Model = Model {
        name: "slow.onnx",
        file: "slow.onnx",
        about: "64 x MatMul 256x256 + Tanh: gains from batching",
        expect: crate::serving::slow_row,
    };
    static LOSES: Model = Model {
        name: "elementwise.onnx",
        file: "elementwise.onnx",
        about: "12 x Mul + Tanh over 512 KiB rows: does not gain",
        expect: elementwise,
    };
    let figures = [
        measure::<256>(&GAINS, rounds, if quick { 20 } else { 150 })?,
        measure::<131072>(&LOSES, rounds, if quick { 4 } else { 30 })?,
    ];
    let mut report = vec![format!(
        "## Dynamic batching: {CLIENTS} client threads, one-row requests, {rounds} paired rounds (load average {load} at the start)\n"
    )];
    for f in &figures {
        report.extend(rows(f));
    }
    let report = report.join("\n");
    println!("{report}");
    if let Some(dir) = out {
        std::fs::create_dir_all(&dir)?;
        std::fs::write(Path::new(&dir).join("batching.md"), &report)?;
    }
    Ok(())
}
