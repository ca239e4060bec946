//! `ort-bind-bench serving`: the serving figures of issue 13, each measured side by side
//! in one run (paired rounds, the order rotating per round; medians of per-round ratios).
//!
//! - threads (`field.rs`): throughput of 2 threads over 1 thread (SqueezeNet, one
//!   intra-op thread per run) for ort-bind (a binding per thread on one shared session),
//!   `ort` with one session behind a `Mutex`, `ort` with a session per thread, and Python
//!   onnxruntime's `run_with_iobinding` on one session (with `--python`);
//! - `run_async` over `run` on the same binding (session with 2 intra-op threads, so
//!   ONNX Runtime's `RunAsync` runs it): tiny Add `[16]` (ns more per run) and SqueezeNet
//!   (ratio);
//! - shape buckets: a run after switching between two recently used sizes over a run of a
//!   fixed binding (Add `[16]` <-> `[8]`), with and without buckets, and two fixed
//!   bindings alternated;
//! - cancellation: time from `Terminator::terminate()` to the run's return on a long model
//!   (64 x MatMul + Tanh), and the run after it checked;
//! - dynamic batching on a CNN (`det.rs`): 16 client threads sending one image each
//!   request to PP-OCRv4's text detector (32x32), the generated `Model::batcher` (a few
//!   settings) over unbatched serving through the generated `Model::pool` of 2: throughput,
//!   p50/p99 latency, mean batch, every reply checked against the image's run alone;
//! - dynamic batching on an MLP: 16 client threads sending one-row requests to a 64-layer
//!   MLP (`slow.onnx`), a hand-written `Batching` (2 workers) over unbatched serving
//!   through a `Pool` of 2: throughput, p50/p99 latency, every reply checked;
//! - allocations per steady-state request in ort-bind (Rust heap): `run_async`, a bucket
//!   switch + run, a pool checkout + run, `run_with_timeout`.
//!
//! The Add and slow models are the runtime's test models
//! (`ort-bind-runtime/tests/data/`, made by its `make_models.py`).

use ort_bind_runtime::__private::InputShape as _;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::pin;
use std::sync::{Arc, Barrier};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use ort_bind_runtime::{
    BatchOptions, BatchSizing, Batcher, Batching, Binder, Binding, BindingIo, Dyn, Fix,
    OutputValue, Pool, Session, SessionOptions, Tensor, TensorMut, TensorRef, ValueSpec,
};
use serde_json::json;

mod det;
mod field;

use crate::Result;
use crate::alloc;
use crate::harness::median_f64;
use crate::peer::Peer;
use crate::workloads::{Plan, Workload, models};

// ---------------------------------------------------------------------------------------
// The models' bindings, written by hand (the generated `Binding` wraps the runtime's
// `Binding`, and these figures need the runtime `Binding`'s API itself).

/// `z = x + y` over float32 `[n]` (`add.onnx`: `x`, `y` -> `sum`; `tiny.onnx`: -> `z`).
struct AddIo<const TINY: bool> {
    x: Tensor<f32, (Dyn,)>,
    y: Tensor<f32, (Dyn,)>,
    out: Tensor<f32, (Dyn,)>,
}

impl<const TINY: bool> AddIo<TINY> {
    fn new(n: usize) -> ort_bind_runtime::Result<Self> {
        Ok(AddIo {
            x: Tensor::new("x", &[n])?,
            y: Tensor::new("y", &[n])?,
            out: Tensor::new(if TINY { "z" } else { "sum" }, &[n])?,
        })
    }
}

// SAFETY: storage changes only in `set_dims` (through `Tensor::set_dims`); views are
// `view()`/`view_mut()`, which read and write elements in place.
unsafe impl<const TINY: bool> BindingIo for AddIo<TINY> {
    const INPUTS: &'static [ValueSpec] = &[
        ValueSpec::of::<f32>("x", Some(1)),
        ValueSpec::of::<f32>("y", Some(1)),
    ];
    const OUTPUTS: &'static [ValueSpec] = &[ValueSpec::of::<f32>(
        if TINY { "z" } else { "sum" },
        Some(1),
    )];
    const HAS_ALLOCATED_OUTPUTS: bool = false;
    type Dims = usize;
    type InputsMut<'a> = (TensorMut<'a, f32, (Dyn,)>, TensorMut<'a, f32, (Dyn,)>);
    type OutputsRef<'a> = TensorRef<'a, f32, (Dyn,)>;

    fn bind<'io>(&'io self, binder: &mut Binder<'_, 'io>) -> ort_bind_runtime::Result<()> {
        binder.input(0, &self.x)?;
        binder.input(1, &self.y)?;
        binder.output(0, &self.out)
    }
    fn set_dims(&mut self, n: &usize) -> ort_bind_runtime::Result<()> {
        for t in [&mut self.x, &mut self.y, &mut self.out] {
            t.set_dims(&[*n])?;
        }
        Ok(())
    }
    fn store_output(&mut self, _: usize, _: OutputValue) -> ort_bind_runtime::Result<()> {
        Ok(())
    }
    fn take_resized(&mut self) -> bool {
        self.x.take_resized() | self.y.take_resized()
    }
    fn inputs_mut(&mut self) -> Self::InputsMut<'_> {
        (self.x.view_mut(), self.y.view_mut())
    }
    fn outputs(&self) -> Self::OutputsRef<'_> {
        self.out.view()
    }
}

type Nchw = (Fix<1>, Fix<3>, Fix<224>, Fix<224>);
type Probs = (Fix<1>, Fix<1000>, Fix<1>, Fix<1>);

/// light_squeezenet: `data_0` f32 `[1,3,224,224]` -> `softmaxout_1` f32 `[1,1000,1,1]`.
struct CnnIo {
    data: Tensor<f32, Nchw>,
    probs: Tensor<f32, Probs>,
}

impl CnnIo {
    fn new(input: &[f32]) -> ort_bind_runtime::Result<Self> {
        let mut data = Tensor::new("data_0", &[1, 3, 224, 224])?;
        data.view_mut().copy_from_slice(input)?;
        Ok(CnnIo {
            data,
            probs: Tensor::new("softmaxout_1", &[1, 1000, 1, 1])?,
        })
    }
}

// SAFETY: as for `AddIo`; nothing changes storage (fixed dims).
unsafe impl BindingIo for CnnIo {
    const INPUTS: &'static [ValueSpec] = &[ValueSpec::of::<f32>("data_0", Some(4))];
    const OUTPUTS: &'static [ValueSpec] = &[ValueSpec::of::<f32>("softmaxout_1", Some(4))];
    const HAS_ALLOCATED_OUTPUTS: bool = false;
    type Dims = ();
    type InputsMut<'a> = TensorMut<'a, f32, Nchw>;
    type OutputsRef<'a> = TensorRef<'a, f32, Probs>;

    fn bind<'io>(&'io self, binder: &mut Binder<'_, 'io>) -> ort_bind_runtime::Result<()> {
        binder.input(0, &self.data)?;
        binder.output(0, &self.probs)
    }
    fn set_dims(&mut self, _: &()) -> ort_bind_runtime::Result<()> {
        Ok(())
    }
    fn store_output(&mut self, _: usize, _: OutputValue) -> ort_bind_runtime::Result<()> {
        Ok(())
    }
    fn take_resized(&mut self) -> bool {
        self.data.take_resized()
    }
    fn inputs_mut(&mut self) -> Self::InputsMut<'_> {
        self.data.view_mut()
    }
    fn outputs(&self) -> Self::OutputsRef<'_> {
        self.probs.view()
    }
}

const SLOW_WIDTH: usize = 256;
const SLOW_LAYERS: usize = 64;
type Rows = (Dyn, Fix<SLOW_WIDTH>);

/// A model `x: f32[m, W] -> y: f32[m, W]`: `slow.onnx` (64 x (MatMul by W, Tanh), `W` =
/// 256) and `elementwise.onnx` (12 x (Mul, Tanh), `W` = 131072).
pub(crate) struct RowsIo<const W: usize> {
    x: Tensor<f32, (Dyn, Fix<W>)>,
    y: Tensor<f32, (Dyn, Fix<W>)>,
}

/// `slow.onnx`'s binding.
type SlowIo = RowsIo<SLOW_WIDTH>;

// SAFETY: as for `AddIo`.
unsafe impl<const W: usize> BindingIo for RowsIo<W> {
    const INPUTS: &'static [ValueSpec] = &[ValueSpec::of::<f32>("x", Some(2))];
    const OUTPUTS: &'static [ValueSpec] = &[ValueSpec::of::<f32>("y", Some(2))];
    const HAS_ALLOCATED_OUTPUTS: bool = false;
    type Dims = usize;
    type InputsMut<'a> = TensorMut<'a, f32, (Dyn, Fix<W>)>;
    type OutputsRef<'a> = TensorRef<'a, f32, (Dyn, Fix<W>)>;

    fn bind<'io>(&'io self, binder: &mut Binder<'_, 'io>) -> ort_bind_runtime::Result<()> {
        binder.input(0, &self.x)?;
        binder.output(0, &self.y)
    }
    fn set_dims(&mut self, m: &usize) -> ort_bind_runtime::Result<()> {
        self.x.set_dims(&[*m, W])?;
        self.y.set_dims(&[*m, W])?;
        Ok(())
    }
    fn store_output(&mut self, _: usize, _: OutputValue) -> ort_bind_runtime::Result<()> {
        Ok(())
    }
    fn take_resized(&mut self) -> bool {
        self.x.take_resized()
    }
    fn inputs_mut(&mut self) -> Self::InputsMut<'_> {
        self.x.view_mut()
    }
    fn outputs(&self) -> Self::OutputsRef<'_> {
        self.y.view()
    }
}

impl<const W: usize> RowsIo<W> {
    pub(crate) fn new(m: usize) -> ort_bind_runtime::Result<Self> {
        Ok(RowsIo {
            x: Tensor::new("x", &[m, W])?,
            y: Tensor::new("y", &[m, W])?,
        })
    }
}

/// slow.onnx batches along `m`: an item is one row, its reply the output row.
struct SlowRows;

impl Batching<SlowIo> for SlowRows {
    type Item = [f32; SLOW_WIDTH];
    type Reply = [f32; SLOW_WIDTH];
    fn item_dims(&self, _: &Self::Item) -> ort_bind_runtime::Result<usize> {
        Ok(1)
    }
    fn batch_dims(&self, _: &usize, n: usize) -> usize {
        n
    }
    fn gather(
        &self,
        x: &mut TensorMut<'_, f32, Rows>,
        row: usize,
        item: &Self::Item,
    ) -> ort_bind_runtime::Result<()> {
        x.as_mut_slice()[row * SLOW_WIDTH..][..SLOW_WIDTH].copy_from_slice(item);
        Ok(())
    }
    fn scatter(
        &self,
        y: &TensorRef<'_, f32, Rows>,
        row: usize,
    ) -> ort_bind_runtime::Result<Self::Reply> {
        let mut reply = [0.0; SLOW_WIDTH];
        reply.copy_from_slice(&y.as_slice()[row * SLOW_WIDTH..][..SLOW_WIDTH]);
        Ok(reply)
    }
}

/// The slow model's output for a constant row `v`.
pub(crate) fn slow_row(v: f32) -> f32 {
    let factor = 0.5 + SLOW_WIDTH as f64 * 1e-3;
    let mut v = f64::from(v);
    for _ in 0..SLOW_LAYERS {
        v = (v * factor).tanh();
    }
    v as f32
}

/// Dynamic batching: 16 client threads, one-row requests to slow.onnx (a 64-layer
/// MLP, 256 wide), through a pool of 2 bindings unbatched vs a batcher with 2 workers.
/// Returns (throughput ratio, [p50, p99] unbatched, [p50, p99] batched, mean batch).
fn batching(s: Sizes) -> Result<(f64, [Duration; 2], [Duration; 2], f64)> {
    const CLIENTS: usize = 16;
    let each = s.batch_requests;
    let session = session(runtime_model("slow.onnx"), 1)?;
    let check = |c: usize, i: usize, reply: &[f32]| -> Result<()> {
        let v = ((c * 31 + i) % 7 + 1) as f32 / 8.0;
        let want = slow_row(v);
        if reply.iter().any(|&g| (g - want).abs() > 5e-4 * want) {
            return Err(format!("client {c} request {i}: {} != {want}", reply[0]).into());
        }
        Ok(())
    };
    let percentiles = |mut v: Vec<Duration>| {
        v.sort();
        [v[v.len() / 2], v[v.len() * 99 / 100]]
    };
    // Unbatched: a pool of 2 bindings of one row.
    let pool = Pool::new(2, {
        let session = session.clone();
        move |m: &usize| Binding::new(&session, SlowIo::new(*m)?)
    });
    pool.fill(&1)?;
    let t = Instant::now();
    let lat = std::thread::scope(|scope| -> Result<Vec<Duration>> {
        let handles: Vec<_> = (0..CLIENTS)
            .map(|c| {
                let pool = &pool;
                scope.spawn(move || -> std::result::Result<Vec<Duration>, String> {
                    let mut lat = Vec::with_capacity(each);
                    for i in 0..each {
                        let v = ((c * 31 + i) % 7 + 1) as f32 / 8.0;
                        let start = Instant::now();
                        let mut b = pool.get(&1).map_err(|e| e.to_string())?;
                        b.inputs().fill(v);
                        b.run().map_err(|e| e.to_string())?;
                        let mut reply = [0.0; SLOW_WIDTH];
                        reply.copy_from_slice(b.outputs().as_slice());
                        drop(b);
                        lat.push(start.elapsed());
                        check(c, i, &reply).map_err(|e| e.to_string())?;
                    }
                    Ok(lat)
                })
            })
            .collect();
        let mut all = Vec::new();
        for h in handles {
            all.extend(h.join().map_err(|_| "client panicked")??);
        }
        Ok(all)
    })?;
    let unbatched = t.elapsed();
    let lat_unbatched = percentiles(lat);
    // Batched: 2 workers, up to 16 rows per run.
    let batcher = Batcher::new(
        SlowRows,
        BatchOptions {
            max_batch: CLIENTS,
            max_delay: Duration::from_millis(1),
            workers: 2,
            sizing: BatchSizing::Fixed,
        },
        move |m: &usize| Binding::new(&session, SlowIo::new(*m)?),
    )?;
    let t = Instant::now();
    let lat = std::thread::scope(|scope| -> Result<Vec<Duration>> {
        let handles: Vec<_> = (0..CLIENTS)
            .map(|c| {
                let batcher = &batcher;
                scope.spawn(move || -> std::result::Result<Vec<Duration>, String> {
                    let mut lat = Vec::with_capacity(each);
                    for i in 0..each {
                        let v = ((c * 31 + i) % 7 + 1) as f32 / 8.0;
                        let start = Instant::now();
                        let reply = batcher.submit([v; SLOW_WIDTH]).map_err(|e| e.to_string())?;
                        lat.push(start.elapsed());
                        check(c, i, &reply).map_err(|e| e.to_string())?;
                    }
                    Ok(lat)
                })
            })
            .collect();
        let mut all = Vec::new();
        for h in handles {
            all.extend(h.join().map_err(|_| "client panicked")??);
        }
        Ok(all)
    })?;
    let batched = t.elapsed();
    let (runs, items) = batcher.stats();
    Ok((
        unbatched.as_secs_f64() / batched.as_secs_f64(),
        lat_unbatched,
        percentiles(lat),
        items as f64 / runs.max(1) as f64,
    ))
}

/// The slow model's expected output for rows filled with `(r % 7 + 1) / 8`: a constant row
/// `v` maps to `tanh(v * (0.5 + 256e-3))` per layer.
fn slow_check(y: &[f32]) -> Result<()> {
    let factor = 0.5 + SLOW_WIDTH as f64 * 1e-3;
    for (r, row) in y.chunks(SLOW_WIDTH).enumerate() {
        let mut v = ((r % 7) as f64 + 1.0) / 8.0;
        for _ in 0..SLOW_LAYERS {
            v = (v * factor).tanh();
        }
        if row.iter().any(|&g| (f64::from(g) - v).abs() > 5e-4 * v) {
            return Err(format!("slow.onnx row {r}: {} != {v}", row[0]).into());
        }
    }
    Ok(())
}

fn runtime_model(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../ort-bind-runtime/tests/data")
        .join(name)
}

fn session(model: impl AsRef<Path>, threads: usize) -> Result<Session> {
    Ok(Session::from_file(
        model,
        &SessionOptions::new()
            .intra_threads(threads)
            .optimization_level(3),
    )?)
}

// ---------------------------------------------------------------------------------------
// A minimal executor: park the thread until the waker unparks it.

struct Unpark(std::thread::Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// A waker for the calling thread; make it once, outside timed loops.
fn thread_waker() -> Waker {
    Waker::from(Arc::new(Unpark(std::thread::current())))
}

fn block_on<F: Future>(f: F, waker: &Waker) -> F::Output {
    let mut f = pin!(f);
    let mut cx = Context::from_waker(waker);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park();
    }
}

// ---------------------------------------------------------------------------------------

/// Sizes of the measurements.
#[derive(Debug, Clone, Copy)]
struct Sizes {
    rounds: usize,
    tiny_runs: usize,
    cnn_runs: usize,
    cancel_trials: usize,
    alloc_runs: usize,
    batch_requests: usize,
    det_rounds: usize,
    det_requests: usize,
    soak_runs: usize,
}

/// Median, first and third quartile.
type Stats = (f64, f64, f64);

/// The median and quartiles of per-round values.
fn stats(mut v: Vec<f64>) -> Stats {
    v.sort_by(f64::total_cmp);
    let q = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
    (median_f64(&v), q(0.25), q(0.75))
}

fn fmt3((m, lo, hi): Stats) -> String {
    format!("{m:.3} ({lo:.3}-{hi:.3})")
}

fn time(runs: usize, mut f: impl FnMut() -> ort_bind_runtime::Result<()>) -> Result<f64> {
    let t = Instant::now();
    for _ in 0..runs {
        f()?;
    }
    Ok(t.elapsed().as_secs_f64())
}

/// `run_async` on `asyn` (a session with 2 intra-op threads) over `run` on `sync`: per-round
/// (async time / sync time) and (async - sync) ns per run.
fn async_overhead<Io: BindingIo>(
    s: Sizes,
    sync: &mut Binding<Io>,
    asyn: &mut Binding<Io>,
    runs: usize,
) -> Result<(Stats, Stats)> {
    let waker = thread_waker();
    sync.run()?;
    block_on(asyn.run_async(), &waker)?;
    let (mut ratios, mut extra) = (Vec::new(), Vec::new());
    for round in 0..s.rounds {
        let one = |b: &mut Binding<Io>| time(runs, || b.run());
        let other = |b: &mut Binding<Io>| time(runs, || block_on(b.run_async(), &waker));
        let (ts, ta) = if round % 2 == 0 {
            let ts = one(sync)?;
            (ts, other(asyn)?)
        } else {
            let ta = other(asyn)?;
            (one(sync)?, ta)
        };
        ratios.push(ta / ts);
        extra.push((ta - ts) * 1e9 / runs as f64);
    }
    Ok((stats(ratios), stats(extra)))
}

/// The `run_async` rows for one model: async on a 2-thread session over sync on the same
/// binding, and over sync on a 1-thread session (an asynchronous run computes on one pool
/// thread: the other of the 2 is the caller, which waits).
fn async_rows<Io: BindingIo>(
    s: Sizes,
    what: &str,
    runs: usize,
    make: impl Fn(&Session) -> Result<Binding<Io>>,
    model: &Path,
) -> Result<Vec<(String, String, String)>> {
    let two = session(model, 2)?;
    let one = session(model, 1)?;
    let mut a = make(&two)?;
    let mut b = make(&one)?;
    let (same_r, same_x) = {
        let mut a2 = make(&two)?;
        async_overhead(s, &mut a2, &mut a, runs)?
    };
    let (one_r, one_x) = async_overhead(s, &mut b, &mut a, runs)?;
    let cell = |r: Stats, x: Stats| {
        if x.0.abs() < 1e5 {
            format!(
                "{} = {:+.0} ns per run ({:+.0} to {:+.0})",
                fmt3(r),
                x.0,
                x.1,
                x.2
            )
        } else {
            format!("{} = {:+.0} µs per run", fmt3(r), x.0 / 1e3)
        }
    };
    Ok(vec![
        (
            format!(
                "`run_async` (2 intra-op threads) over `run` on a session with 2, {what}: time"
            ),
            cell(same_r, same_x),
            String::new(),
        ),
        (
            format!(
                "`run_async` (2 intra-op threads) over `run` on a session with 1, {what}: time"
            ),
            cell(one_r, one_x),
            String::new(),
        ),
    ])
}

/// Shape buckets: ratios over a fixed binding of (buckets, no buckets, two fixed bindings
/// alternated), Add `[16]` <-> `[8]`, a switch before every run.
fn buckets(s: Sizes) -> Result<[Stats; 3]> {
    let session = session(runtime_model("add.onnx"), 1)?;
    let new = |n| -> Result<Binding<AddIo<false>>> {
        let mut b = Binding::new(&session, AddIo::new(n)?)?;
        b.inputs().0.fill(1.0);
        b.inputs().1.fill(2.0);
        Ok(b)
    };
    let mut fixed = new(16)?;
    let mut with = new(16)?;
    let mut without = new(16)?;
    without.keep_recent_dims(0);
    let (mut p16, mut p8) = (new(16)?, new(8)?);
    let n = s.tiny_runs;
    let mut r = [Vec::new(), Vec::new(), Vec::new()];
    for round in 0..s.rounds {
        let mut blocks: [Box<dyn FnMut() -> Result<f64>>; 4] = [
            Box::new(|| time(n, || fixed.run())),
            Box::new(|| {
                let mut i = 0;
                time(n, || {
                    i += 1;
                    with.set_dims(&[16, 8][i % 2])?;
                    with.run()
                })
            }),
            Box::new(|| {
                let mut i = 0;
                time(n, || {
                    i += 1;
                    without.set_dims(&[16, 8][i % 2])?;
                    without.run()
                })
            }),
            Box::new(|| {
                let mut i = 0;
                time(n, || {
                    i += 1;
                    if i % 2 == 0 { p16.run() } else { p8.run() }
                })
            }),
        ];
        let mut t = [0.0; 4];
        for j in 0..4 {
            let k = (j + round) % 4;
            t[k] = blocks[k]()?;
        }
        for (k, v) in r.iter_mut().enumerate() {
            v.push(t[k + 1] / t[0]);
        }
    }
    for b in [&with, &without, &p16, &p8] {
        if b.outputs().as_slice().iter().any(|&v| v != 3.0) {
            return Err("the Add binding computed a wrong sum".into());
        }
    }
    let [a, b, c] = r;
    Ok([stats(a), stats(b), stats(c)])
}

/// Cancellation latency on slow.onnx: (full run, median latency, max latency, kernels).
fn cancellation(s: Sizes) -> Result<(Duration, Duration, Duration)> {
    const M: usize = 4096;
    let session = session(runtime_model("slow.onnx"), 1)?;
    let mut bound = Binding::new(&session, SlowIo::new(M)?)?;
    for (r, row) in bound
        .inputs()
        .as_mut_slice()
        .chunks_mut(SLOW_WIDTH)
        .enumerate()
    {
        row.fill(((r % 7) as f32 + 1.0) / 8.0);
    }
    let t = Instant::now();
    bound.run()?;
    let full = t.elapsed();
    slow_check(bound.outputs().as_slice())?;
    let mut latencies = Vec::new();
    let mut late = 0;
    while latencies.len() < s.cancel_trials {
        if late > 3 * s.cancel_trials {
            return Err("the slow run kept finishing before terminate()".into());
        }
        let stop = bound.terminator();
        let delay = full / 10 + full * (latencies.len() as u32 % 3) / 20;
        let killer = std::thread::spawn(move || {
            std::thread::sleep(delay);
            let at = Instant::now();
            stop.terminate().map(|()| at).map_err(|e| e.to_string())
        });
        let result = bound.run();
        let returned = Instant::now();
        let at = killer.join().map_err(|_| "thread panicked")??;
        match result {
            Err(ort_bind_runtime::Error::Terminated) => {
                latencies.push(returned.saturating_duration_since(at));
            }
            // Finished before the terminate: the stop was for that run only.
            Ok(()) => late += 1,
            Err(e) => return Err(e.into()),
        }
        bound.run()?;
        slow_check(bound.outputs().as_slice())?;
    }
    latencies.sort();
    Ok((
        full,
        latencies[latencies.len() / 2],
        latencies[latencies.len() - 1],
    ))
}

/// Rust allocations per steady-state request: run_async, bucket switch + run, pool
/// checkout + run, run_with_timeout.
fn allocations(s: Sizes) -> Result<[f64; 4]> {
    let session2 = session(runtime_model("add.onnx"), 2)?;
    let waker = thread_waker();
    let per_run = |runs: usize, f: &mut dyn FnMut() -> ort_bind_runtime::Result<()>| {
        for _ in 0..100 {
            f()?;
        }
        let before = alloc::count();
        for _ in 0..runs {
            f()?;
        }
        Ok::<_, ort_bind_runtime::Error>((alloc::count() - before) as f64 / runs as f64)
    };
    let mut a = Binding::new(&session2, AddIo::<false>::new(16)?)?;
    let run_async = per_run(s.alloc_runs, &mut || block_on(a.run_async(), &waker))?;
    let mut i = 0;
    let switch = per_run(s.alloc_runs, &mut || {
        i += 1;
        a.set_dims(&[16, 8][i % 2])?;
        a.run()
    })?;
    let pool = Pool::new(2, {
        let session = session2.clone();
        move |n: &usize| Binding::new(&session, AddIo::<false>::new(*n)?)
    });
    pool.fill(&16)?;
    let mut j = 0;
    let pooled = per_run(s.alloc_runs, &mut || {
        j += 1;
        let mut b = pool.get(&[16, 8][j % 2])?;
        b.run()
    })?;
    let timeout = per_run(s.alloc_runs, &mut || {
        a.run_with_timeout(Duration::from_secs(60))
    })?;
    Ok([run_async, switch, pooled, timeout])
}

/// Resident memory of the process (ONNX Runtime's included), in bytes.
fn resident_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4096)
}

/// Soak: `runs` runs over 2 threads x 2 bindings of add.onnx on one session (2 intra-op
/// threads), a dims change (among 3 sizes) every 16th run and an async run every 10th,
/// every output checked. Returns (resident growth after warm-up in bytes, allocations per
/// run after warm-up, runs, wall time).
fn soak(runs: usize) -> Result<(i64, f64, usize, Duration)> {
    const THREADS: usize = 2;
    let session = session(runtime_model("add.onnx"), 2)?;
    let per_thread = runs / THREADS;
    let warm = per_thread / 10;
    let barrier = Barrier::new(THREADS + 1);
    let t = Instant::now();
    let (rss_warm, allocs_warm, rss_end, allocs_end) = std::thread::scope(|scope| -> Result<_> {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let (session, barrier) = (&session, &barrier);
                scope.spawn(move || -> std::result::Result<(), String> {
                    let e = |e: ort_bind_runtime::Error| e.to_string();
                    let waker = thread_waker();
                    let mut bindings = [
                        Binding::new(session, AddIo::<false>::new(16).map_err(e)?).map_err(e)?,
                        Binding::new(session, AddIo::<false>::new(16).map_err(e)?).map_err(e)?,
                    ];
                    for k in 0..per_thread {
                        if k == warm {
                            barrier.wait(); // warm-up done
                            barrier.wait(); // measured
                        }
                        let b = &mut bindings[k % 2];
                        if k % 16 == t {
                            b.set_dims(&[16, 8, 12][(k / 16) % 3]).map_err(e)?;
                        }
                        let v = (k % 1000) as f32;
                        b.inputs().0.fill(v);
                        b.inputs().1.fill(1.0);
                        if k % 10 == 0 {
                            block_on(b.run_async(), &waker).map_err(e)?;
                        } else {
                            b.run().map_err(e)?;
                        }
                        if b.outputs().as_slice().iter().any(|&s| s != v + 1.0) {
                            return Err(format!("thread {t} run {k}: wrong sum"));
                        }
                    }
                    Ok(())
                })
            })
            .collect();
        barrier.wait();
        let (rss_warm, allocs_warm) = (resident_bytes(), alloc::count());
        barrier.wait();
        for h in handles {
            h.join().map_err(|_| "soak thread panicked")??;
        }
        Ok((rss_warm, allocs_warm, resident_bytes(), alloc::count()))
    })?;
    let steady = (per_thread - warm) * THREADS;
    Ok((
        rss_end as i64 - rss_warm as i64,
        (allocs_end - allocs_warm) as f64 / steady as f64,
        per_thread * THREADS,
        t.elapsed(),
    ))
}

/// Runs every serving measurement, prints a table and writes `serving.json`/`serving.md`.
///
/// With `python` (the interpreter and `scripts/bench_peer.py`), the threads figure has
/// Python onnxruntime's row too.
/// Runs every serving figure, or with `threads_only` the threads comparison alone (it is
/// the one that needs a quiet machine: rerun it when the machine is idle).
pub(crate) fn run(
    out: &Path,
    quick: bool,
    threads_only: bool,
    python: Option<(&Path, &Path)>,
) -> Result<()> {
    let s = if quick {
        Sizes {
            rounds: 3,
            tiny_runs: 500,
            cnn_runs: 3,
            cancel_trials: 3,
            alloc_runs: 1000,
            batch_requests: 30,
            det_rounds: 1,
            det_requests: 8,
            soak_runs: 50_000,
        }
    } else {
        Sizes {
            rounds: 15,
            tiny_runs: 4000,
            cnn_runs: 12,
            cancel_trials: 9,
            alloc_runs: 20_000,
            batch_requests: 300,
            det_rounds: 5,
            det_requests: 40,
            soak_runs: 1_000_000,
        }
    };
    let plan = Plan {
        rounds: 1,
        iters: 1,
        warm: 0,
        clock: crate::contenders::Clock::Wall,
    };
    let cnn = Workload::cnn(plan)?;
    let load_start = crate::loadavg();
    println!("serving: threads (SqueezeNet, 1 intra-op thread per run) ...");
    let mut peer = match python {
        Some((py, script)) => {
            let mut peer = Peer::spawn(py, script)?;
            let files = cnn.write_inputs(&out.join("inputs"))?;
            let version = peer.setup(&cnn, &files)?;
            println!("serving: Python onnxruntime {version} ({})", py.display());
            Some(peer)
        }
        None => {
            println!("serving: no --python given: Python's threads row is skipped");
            None
        }
    };
    let field = field::threads(s.rounds, s.cnn_runs, &cnn, peer.as_mut())?;
    drop(peer);
    if threads_only {
        for (name, r) in &field {
            println!("threads 2 over 1, {name}: {}", fmt3(*r));
        }
        println!(
            "load average: {} at the start, {} at the end",
            load_start,
            crate::loadavg()
        );
        return Ok(());
    }
    let thr = field[0].1;
    println!("serving: run_async overhead ...");
    let mut tiny_rows = async_rows(
        s,
        "tiny Add [16]",
        s.tiny_runs,
        |session| {
            let mut b = Binding::new(session, AddIo::<true>::new(16)?)?;
            b.inputs().0.fill(1.0);
            Ok(b)
        },
        Path::new(models::tiny::MODEL_PATH),
    )?;
    for row in &mut tiny_rows {
        row.2 = "< +1000 ns".into();
    }
    let input = cnn.sets[0][0].clone();
    let mut cnn_rows = async_rows(
        s,
        "SqueezeNet",
        s.cnn_runs,
        |session| Ok(Binding::new(session, CnnIo::new(&input)?)?),
        Path::new(cnn.model),
    )?;
    for row in &mut cnn_rows {
        row.2 = "<= 1.02x".into();
    }
    println!("serving: shape buckets ...");
    let [with, without, alternated] = buckets(s)?;
    println!("serving: cancellation ...");
    let (full, lat_med, lat_max) = cancellation(s)?;
    println!("serving: dynamic batching ...");
    let (batch_gain, lat_u, lat_b, mean_batch) = batching(s)?;
    println!(
        "serving: dynamic batching on PP-OCRv4's detector ({}x{}) ...",
        det::SIDE,
        det::SIDE
    );
    let dets = det::batching(s.det_rounds, s.det_requests)?;
    println!("serving: allocations ...");
    let allocs = allocations(s)?;
    println!("serving: soak ({} runs) ...", s.soak_runs);
    let (rss_growth, soak_allocs, soak_runs, soak_time) = soak(s.soak_runs)?;

    let mut rows = vec![
        (
            "2 threads over 1 thread, one session, own binding each (SqueezeNet, 1 intra-op thread per run): throughput".to_owned(),
            fmt3(thr),
            ">= 1.8x".to_owned(),
        ),
        (
            "run after a switch between two recent sizes (Add [16] <-> [8]) over a fixed binding, with shape buckets".to_owned(),
            fmt3(with),
            "<= 1.05x".to_owned(),
        ),
        (
            "the same without buckets (`keep_recent_dims(0)`: rebind on every switch)".to_owned(),
            fmt3(without),
            "(issue baseline 1.56x)".to_owned(),
        ),
        (
            "two fixed bindings alternated, over one fixed binding".to_owned(),
            fmt3(alternated),
            "(reference)".to_owned(),
        ),
        (
            format!("`terminate()` -> run returned, slow.onnx m=4096 (128 kernels, full run {:.0} ms, 1 intra-op thread); the run after it checked", full.as_secs_f64() * 1e3),
            format!("median {:.2} ms, max {:.2} ms ({} trials)", lat_med.as_secs_f64() * 1e3, lat_max.as_secs_f64() * 1e3, s.cancel_trials),
            "one kernel ~ full run / 128".to_owned(),
        ),
        (
            "Rust allocations per steady-state request: `run_async` / bucket switch + run / pool checkout + run / `run_with_timeout`".to_owned(),
            format!("{} / {} / {} / {}", allocs[0], allocs[1], allocs[2], allocs[3]),
            "0".to_owned(),
        ),
        (
            format!("soak: {soak_runs} runs in {:.1} s, 2 threads x 2 bindings on one session, a dims change every 16th run, `run_async` every 10th, every output checked: resident memory (ONNX Runtime's included) after the first 10% / Rust allocations per run after it", soak_time.as_secs_f64()),
            format!(
                "{:+.0} KiB / {soak_allocs:.6} ({:.0} in all)",
                rss_growth as f64 / 1024.0,
                soak_allocs * soak_runs as f64 * 0.9
            ),
            "within 1 MiB / 0".to_owned(),
        ),
    ];
    let field_rows = field[1..].iter().map(|(name, r)| {
        (
            format!("the same for {name}"),
            fmt3(*r),
            "(field)".to_owned(),
        )
    });
    let tiny_and_cnn = tiny_rows.iter().chain(&cnn_rows).cloned();
    rows.splice(1..1, field_rows.chain(tiny_and_cnn).collect::<Vec<_>>());
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let settings = |o: &BatchOptions| {
        format!(
            "max {}, {} ms, {} worker{}",
            o.max_batch,
            o.max_delay.as_millis(),
            o.workers,
            if o.workers == 1 { "" } else { "s" }
        )
    };
    let det_stats: Vec<Stats> = dets
        .settings
        .iter()
        .map(|(r, _, _)| stats(r.clone()))
        .collect();
    let best = (0..det_stats.len())
        .max_by(|&a, &b| det_stats[a].0.total_cmp(&det_stats[b].0))
        .ok_or("no batcher settings were measured")?;
    let (_, best_pass, best_mean) = &dets.settings[best];
    let [b50, b99] = best_pass.percentiles();
    let [u50, u99] = dets.unbatched.percentiles();
    let max_diff = dets
        .settings
        .iter()
        .map(|(_, p, _)| p.max_diff)
        .fold(dets.unbatched.max_diff, f32::max);
    let det_rows = vec![
        (
            format!(
                "dynamic batching on a CNN, {} client threads x {} requests of one image each ({} distinct per client), PP-OCRv4 text detector {side}x{side} (trained weights, 1 intra-op thread, a run alone {:.2} ms): throughput through the generated `Model::batcher` (best of {} settings: {}) over unbatched through the generated `Model::pool` of {}; paired rounds: {}",
                det::CLIENTS,
                s.det_requests,
                det::IMAGES,
                ms(dets.single_run),
                det::SETTINGS.len(),
                settings(&det::SETTINGS[best]),
                det::POOL,
                s.det_rounds,
                side = det::SIDE,
            ),
            format!(
                "{}; mean batch {best_mean:.1}; latency p50/p99 {:.2}/{:.2} ms batched, {:.2}/{:.2} ms unbatched; every reply within {max_diff:.1e} of the image's run alone",
                fmt3(det_stats[best]),
                ms(b50),
                ms(b99),
                ms(u50),
                ms(u99)
            ),
            ">= 1.5x".to_owned(),
        ),
        (
            "the same per batcher setting: throughput over unbatched (mean batch, p50/p99 ms)"
                .to_owned(),
            dets.settings
                .iter()
                .zip(&det::SETTINGS)
                .zip(&det_stats)
                .map(|(((_, pass, mean), o), r)| {
                    let [p50, p99] = pass.percentiles();
                    format!(
                        "{}: {} ({mean:.1}, {:.2}/{:.2})",
                        settings(o),
                        fmt3(*r),
                        ms(p50),
                        ms(p99)
                    )
                })
                .collect::<Vec<_>>()
                .join("; "),
            "(sweep)".to_owned(),
        ),
    ];
    let at = rows.len() - 2;
    rows.splice(at..at, det_rows);
    rows.insert(
        rows.len() - 2,
        (
            format!("dynamic batching, 16 client threads x {} one-row requests, slow.onnx (64 x MatMul 256x256 + Tanh, 1 intra-op thread): throughput batched (2 workers, max 16, 1 ms) over unbatched through a pool of 2", s.batch_requests),
            format!("{batch_gain:.2}x; mean batch {mean_batch:.1}; latency p50/p99 {:.2}/{:.2} ms batched, {:.2}/{:.2} ms unbatched", ms(lat_b[0]), ms(lat_b[1]), ms(lat_u[0]), ms(lat_u[1])),
            ">= 1.5x".to_owned(),
        ),
    );
    let mut md = String::from(
        "| serving figure (median of paired rounds, quartiles in brackets) | measured | goal |\n| --- | --- | --- |\n",
    );
    for (what, got, goal) in &rows {
        md.push_str(&format!("| {what} | {got} | {goal} |\n"));
    }
    md.push_str(&format!(
        "\n{} rounds; load average (1/5/15 min) at the start: {load_start}; at the end: {}\n",
        s.rounds,
        crate::loadavg()
    ));
    println!("\n{md}");
    let json = json!({
        "threads_2_over_1": thr.0,
        "threads_2_over_1_field": field.iter().map(|(name, r)| json!({"contender": name, "median": r.0, "q1": r.1, "q3": r.2})).collect::<Vec<_>>(),
        "cnn_batching": {
            "model": format!("PP-OCRv4 det {0}x{0}", det::SIDE),
            "single_run_ms": ms(dets.single_run),
            "unbatched_pool": det::POOL,
            "unbatched_latency_ms": {"p50": ms(u50), "p99": ms(u99)},
            "max_diff": max_diff,
            "best": best,
            "settings": dets.settings.iter().zip(&det::SETTINGS).zip(&det_stats).map(|(((_, pass, mean), o), r)| {
                let [p50, p99] = pass.percentiles();
                json!({"max_batch": o.max_batch, "max_delay_ms": o.max_delay.as_secs_f64() * 1e3,
                    "workers": o.workers, "throughput_gain": r.0, "q1": r.1, "q3": r.2,
                    "mean_batch": mean, "latency_ms": {"p50": ms(p50), "p99": ms(p99)}})
            }).collect::<Vec<_>>(),
        },
        "run_async_rows": tiny_rows.iter().chain(&cnn_rows).map(|r| json!([r.0, r.1])).collect::<Vec<_>>(),
        "switch_with_buckets_over_fixed": with.0,
        "switch_without_buckets_over_fixed": without.0,
        "two_fixed_alternated_over_fixed": alternated.0,
        "batching_throughput_gain": batch_gain,
        "batching_mean_batch": mean_batch,
        "batching_latency_ms": {"batched_p50": ms(lat_b[0]), "batched_p99": ms(lat_b[1]),
            "unbatched_p50": ms(lat_u[0]), "unbatched_p99": ms(lat_u[1])},
        "cancel_full_run_ms": full.as_secs_f64() * 1e3,
        "cancel_latency_median_ms": lat_med.as_secs_f64() * 1e3,
        "cancel_latency_max_ms": lat_max.as_secs_f64() * 1e3,
        "allocations_per_request": {
            "run_async": allocs[0], "bucket_switch_run": allocs[1],
            "pool_checkout_run": allocs[2], "run_with_timeout": allocs[3],
        },
        "soak": {"runs": soak_runs, "seconds": soak_time.as_secs_f64(),
            "resident_growth_bytes": rss_growth, "allocations_per_run": soak_allocs},
        "rounds": s.rounds,
    });
    std::fs::create_dir_all(out)?;
    std::fs::write(
        out.join("serving.json"),
        serde_json::to_string_pretty(&json)?,
    )?;
    std::fs::write(out.join("serving.md"), &md)?;
    println!("wrote {}", out.join("serving.md").display());
    Ok(())
}

/// `ort-bind-bench switch-loop fixed|switch N`: `N` runs of one Add binding, either at
/// `[16]` throughout or switching `[16]` <-> `[8]` before every run (shape buckets). Run
/// under callgrind by `scripts/bucket_callgrind.sh`, which counts the instructions a switch
/// adds to a run whatever else the machine is doing.
pub(crate) fn switch_loop(mode: &str, n: usize) -> Result<()> {
    let switch = match mode {
        "fixed" => false,
        "switch" => true,
        other => return Err(format!("switch-loop: mode `{other}` is not fixed or switch").into()),
    };
    let session = session(runtime_model("add.onnx"), 1)?;
    let mut b = Binding::new(&session, AddIo::<false>::new(16)?)?;
    // Both sizes seen once: every later switch is a bucket hit.
    b.set_dims(&8)?;
    b.set_dims(&16)?;
    b.inputs().0.fill(1.0);
    b.inputs().1.fill(2.0);
    for i in 0..n {
        if switch {
            b.set_dims(&[16, 8][i % 2])?;
        }
        b.run()?;
    }
    if b.outputs().as_slice().iter().any(|&v| v != 3.0) {
        return Err("the Add binding computed a wrong sum".into());
    }
    Ok(())
}
