//! The Rust contenders. Each runs one workload's model and, per run, does three timed
//! phases, marking the end of each with [`Laps::lap`]:
//!
//! 1. **fill**: write this run's input values (copied from the workload's source arrays,
//!    standing in for whatever produces them) into the memory the contender hands to ONNX
//!    Runtime, plus any change of dims the run needs;
//! 2. **run**: the inference call, including whatever the API needs per call (input
//!    values, output maps);
//! 3. **read**: make the output readable as a host slice and read its first and last
//!    element (any copy or release an API needs is paid here).

use std::sync::Arc;
use std::time::Instant;

use ort::memory::Allocator;
use ort::session::builder::GraphOptimizationLevel;
use ort::session::{IoBinding, Session};
use ort::value::{Tensor, TensorRef};

use crate::Result;
use crate::workloads::models::{big, dynamic, light_squeezenet, tiny};
use crate::workloads::{Summary, Workload};

/// The clock phases are timed with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Clock {
    /// Wall-clock time (`Instant`): for runs of microseconds, where a preemption lands in
    /// few runs and the median discards them.
    Wall,
    /// CPU time of the calling thread (`CLOCK_THREAD_CPUTIME_ID`): for runs of
    /// milliseconds on a shared machine, where the scheduler's time slices (about 4 ms
    /// here) land in many runs and add whole slices to their wall time. With one intra-op
    /// thread ONNX Runtime runs the model on the calling thread, so this is the run's cost.
    ThreadCpu,
}

impl Clock {
    /// Name in reports and in requests to the Python peer.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Clock::Wall => "wall",
            Clock::ThreadCpu => "thread_cpu",
        }
    }

    /// Median cost of reading the clock (the gap between two back-to-back reads): every
    /// phase includes about one of these.
    pub(crate) fn overhead_ns(self) -> u64 {
        let epoch = Instant::now();
        let mut gaps: Vec<u64> = (0..1001)
            .map(|_| {
                let a = self.now_ns(epoch);
                let b = self.now_ns(epoch);
                b.saturating_sub(a)
            })
            .collect();
        gaps.sort_unstable();
        gaps[gaps.len() / 2]
    }

    #[inline(always)]
    fn now_ns(self, epoch: Instant) -> u64 {
        match self {
            Clock::Wall => epoch.elapsed().as_nanos() as u64,
            Clock::ThreadCpu => thread_cpu_ns(),
        }
    }
}

/// CPU time consumed by the calling thread, in nanoseconds.
#[cfg(unix)]
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec that outlives the call; the clock id is a
    // constant every Unix `libc` defines. On failure `ts` stays zero.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0;
    }
    (ts.tv_sec as u64).saturating_mul(1_000_000_000) + ts.tv_nsec as u64
}

/// CPU time consumed by the calling thread (not available here: wall time instead).
#[cfg(not(unix))]
fn thread_cpu_ns() -> u64 {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// Timestamps of one run: start, end of fill, end of run, end of read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Laps {
    clock: Clock,
    epoch: Instant,
    t: [u64; 4],
    n: usize,
}

impl Laps {
    pub(crate) fn new(clock: Clock) -> Laps {
        Laps {
            clock,
            epoch: Instant::now(),
            t: [0; 4],
            n: 0,
        }
    }

    /// Marks the start of a run.
    #[inline(always)]
    pub(crate) fn start(&mut self) {
        self.n = 0;
        self.t[0] = self.clock.now_ns(self.epoch);
    }

    /// Marks the end of the current phase.
    #[inline(always)]
    pub(crate) fn lap(&mut self) {
        if self.n < 3 {
            self.n += 1;
            self.t[self.n] = self.clock.now_ns(self.epoch);
        }
    }

    /// Nanoseconds of fill, run, read and the whole run; `None` unless all three laps were marked.
    pub(crate) fn phases(&self) -> Option<[u64; 4]> {
        let ns = |a: u64, b: u64| b.saturating_sub(a);
        (self.n == 3).then(|| {
            [
                ns(self.t[0], self.t[1]),
                ns(self.t[1], self.t[2]),
                ns(self.t[2], self.t[3]),
                ns(self.t[0], self.t[3]),
            ]
        })
    }
}

/// A contender run in this process.
pub(crate) trait Contender {
    /// Name in results (`ort-bind`, `ort_run_binding`, ...).
    fn name(&self) -> &'static str;
    /// Does run `k` (fill, lap, run, lap, read, lap). With `full`, also sums every output
    /// element, after the last lap.
    fn iterate(&mut self, k: usize, laps: &mut Laps, full: bool) -> Result<Summary>;
}

fn ort_err<R>(e: ort::Error<R>) -> Box<dyn std::error::Error> {
    e.to_string().into()
}

/// Session options every contender uses: one intra-op thread, all graph optimisations.
pub(crate) fn ort_bind_options() -> ort_bind_runtime::SessionOptions {
    ort_bind_runtime::SessionOptions::new()
        .intra_threads(1)
        .optimization_level(3)
}

/// `ort`'s environment, over the library file ort-bind loaded: both sides of every
/// comparison run the same ONNX Runtime. (The library's environment is one per process;
/// `ort` shares the one ort-bind created.)
fn ort_environment() -> Result<&'static ort::environment::Environment> {
    static ENV: std::sync::OnceLock<ort::environment::Environment> = std::sync::OnceLock::new();
    if let Some(env) = ENV.get() {
        return Ok(env);
    }
    let lib = ort_bind_runtime::library::init()?;
    let env = ort::init_from(lib.path())
        .map_err(|e| e.to_string())?
        .with_telemetry(false)
        .build()
        .map_err(ort_err)?;
    Ok(ENV.get_or_init(|| env))
}

pub(crate) fn ort_session(model: &str) -> Result<Session> {
    Session::builder(ort_environment()?)
        .map_err(ort_err)?
        .with_intra_threads(1)
        .map_err(ort_err)?
        .with_optimization_level(GraphOptimizationLevel::All)
        .map_err(ort_err)?
        .commit_from_file(model)
        .map_err(ort_err)
}

// ---------------------------------------------------------------------------------------
// ort-bind: the generated typed bindings, bound once.

/// ort-bind on a fixed-dims Add model (`tiny` or `big`): inputs `x`, `y`, output `z`.
macro_rules! ort_bind_add {
    ($ty:ident, $module:ident) => {
        /// ort-bind's generated binding for this model, bound once and reused.
        pub(crate) struct $ty {
            binding: $module::Binding,
            w: Arc<Workload>,
        }

        impl $ty {
            pub(crate) fn new(w: Arc<Workload>) -> Result<Self> {
                let model = $module::Model::from_file(w.model, &ort_bind_options())?;
                let binding = model.bind($module::Dims {})?;
                Ok(Self { binding, w })
            }
        }

        impl Contender for $ty {
            fn name(&self) -> &'static str {
                "ort-bind"
            }

            fn iterate(&mut self, k: usize, laps: &mut Laps, full: bool) -> Result<Summary> {
                let src = &self.w.sets[self.w.set_of(k)];
                {
                    let mut inputs = self.binding.inputs();
                    inputs.x.copy_from_slice(&src[0])?;
                    inputs.y.copy_from_slice(&src[1])?;
                }
                laps.lap();
                self.binding.run()?;
                laps.lap();
                let outputs = self.binding.outputs();
                let z = outputs.z.as_slice();
                let summary = Summary::edges(z);
                laps.lap();
                Ok(summary.with_sum(z, full))
            }
        }
    };
}

ort_bind_add!(OrtBindTiny, tiny);
ort_bind_add!(OrtBindBig, big);

/// ort-bind on the dynamic-batch model: bound once at the largest batch; a batch change is
/// `set_dims` (metadata only: capacity is reused, so shrinking and regrowing allocate nothing).
pub(crate) struct OrtBindDynamic {
    binding: dynamic::Binding,
    w: Arc<Workload>,
}

impl OrtBindDynamic {
    pub(crate) fn new(w: Arc<Workload>) -> Result<Self> {
        let model = dynamic::Model::from_file(w.model, &ort_bind_options())?;
        let max = w.slots.iter().filter_map(|s| s.batch).max().unwrap_or(1);
        let binding = model.bind(dynamic::Dims { batch: max })?;
        Ok(Self { binding, w })
    }
}

impl Contender for OrtBindDynamic {
    fn name(&self) -> &'static str {
        "ort-bind"
    }

    fn iterate(&mut self, k: usize, laps: &mut Laps, full: bool) -> Result<Summary> {
        let slot = &self.w.slots[self.w.slot_of(k)];
        let batch = slot.batch.unwrap_or(1);
        if self.binding.dims().batch != batch {
            self.binding.set_dims(dynamic::Dims { batch })?;
        }
        let src = &self.w.sets[self.w.set_of(k)];
        {
            let mut inputs = self.binding.inputs();
            inputs.x.copy_from_slice(&src[0][..slot.in_len])?;
            inputs.y.copy_from_slice(&src[1][..slot.in_len])?;
        }
        laps.lap();
        self.binding.run()?;
        laps.lap();
        let outputs = self.binding.outputs();
        let z = outputs.z.as_slice();
        let summary = Summary::edges(z);
        laps.lap();
        Ok(summary.with_sum(z, full))
    }
}

/// ort-bind on light_squeezenet.
pub(crate) struct OrtBindCnn {
    binding: light_squeezenet::Binding,
    w: Arc<Workload>,
}

impl OrtBindCnn {
    pub(crate) fn new(w: Arc<Workload>) -> Result<Self> {
        let model = light_squeezenet::Model::from_file(w.model, &ort_bind_options())?;
        let binding = model.bind(light_squeezenet::Dims {})?;
        Ok(Self { binding, w })
    }
}

impl Contender for OrtBindCnn {
    fn name(&self) -> &'static str {
        "ort-bind"
    }

    fn iterate(&mut self, k: usize, laps: &mut Laps, full: bool) -> Result<Summary> {
        let src = &self.w.sets[self.w.set_of(k)];
        self.binding.inputs().data_0.copy_from_slice(&src[0])?;
        laps.lap();
        self.binding.run()?;
        laps.lap();
        let outputs = self.binding.outputs();
        let out = outputs.softmaxout_1.as_slice();
        let summary = Summary::edges(out);
        laps.lap();
        Ok(summary.with_sum(out, full))
    }
}

/// The ort-bind contender for a workload.
pub(crate) fn ort_bind_for(w: &Arc<Workload>) -> Result<Box<dyn Contender>> {
    Ok(match w.name {
        "tiny" => Box::new(OrtBindTiny::new(w.clone())?),
        "big" => Box::new(OrtBindBig::new(w.clone())?),
        "dynamic" => Box::new(OrtBindDynamic::new(w.clone())?),
        "cnn" => Box::new(OrtBindCnn::new(w.clone())?),
        other => return Err(format!("no ort-bind contender for workload {other}").into()),
    })
}

// ---------------------------------------------------------------------------------------
// Raw `ort`: IoBinding + run_binding, as an expert would write it.

struct BoundSlot {
    binding: IoBinding,
    inputs: Vec<Tensor<f32>>,
    output: Tensor<f32>,
}

/// `ort`'s `IoBinding` + `Session::run_binding`, written the best way its safe API allows:
/// inputs and outputs are tensors `ort` allocated (`Tensor::new`: bound without a copy,
/// unlike views of user memory, which `bind_input` clones), bound once and filled in place
/// through `extract_tensor_mut`; the output is read in place from the tensor bound to it.
/// `ort` tensors cannot change shape, so for the dynamic workload it keeps one binding
/// with its own tensors per batch size, all made up front (more memory than one binding at
/// the largest batch, but no rebinding per run: the fastest `ort` allows).
pub(crate) struct OrtRunBinding {
    session: Session,
    slots: Vec<BoundSlot>,
    w: Arc<Workload>,
}

impl OrtRunBinding {
    pub(crate) fn new(w: Arc<Workload>) -> Result<Self> {
        let session = ort_session(w.model)?;
        let allocator = Allocator::default();
        let mut slots = Vec::new();
        for slot in &w.slots {
            let mut binding = session.create_binding().map_err(ort_err)?;
            let mut inputs = Vec::new();
            for name in w.inputs {
                let t = Tensor::<f32>::new(&allocator, slot.in_dims.clone()).map_err(ort_err)?;
                binding.bind_input(*name, &t).map_err(ort_err)?;
                inputs.push(t);
            }
            let mut output =
                Tensor::<f32>::new(&allocator, slot.out_dims.clone()).map_err(ort_err)?;
            binding
                .bind_output(w.output, &mut output)
                .map_err(ort_err)?;
            slots.push(BoundSlot {
                binding,
                inputs,
                output,
            });
        }
        Ok(Self { session, slots, w })
    }
}

impl Contender for OrtRunBinding {
    fn name(&self) -> &'static str {
        "ort_run_binding"
    }

    fn iterate(&mut self, k: usize, laps: &mut Laps, full: bool) -> Result<Summary> {
        let src = &self.w.sets[self.w.set_of(k)];
        let slot = &mut self.slots[self.w.slot_of(k)];
        for (tensor, values) in slot.inputs.iter_mut().zip(src) {
            let (_, data) = tensor.extract_tensor_mut();
            let n = data.len();
            data.copy_from_slice(&values[..n]);
        }
        laps.lap();
        let outputs = self.session.run_binding(&slot.binding).map_err(ort_err)?;
        drop(outputs);
        laps.lap();
        let (_, z) = slot.output.extract_tensor();
        let summary = Summary::edges(z);
        laps.lap();
        Ok(summary.with_sum(z, full))
    }
}

// ---------------------------------------------------------------------------------------
// Raw `ort`: session.run with inputs!, the usual path.

/// `ort`'s `Session::run` with `inputs!` over views of user-owned buffers (no input copy),
/// output allocated by ONNX Runtime each run and read in place from the returned map.
pub(crate) struct OrtRun {
    session: Session,
    buffers: Vec<Vec<f32>>,
    w: Arc<Workload>,
}

impl OrtRun {
    pub(crate) fn new(w: Arc<Workload>) -> Result<Self> {
        let session = ort_session(w.model)?;
        let buffers = w.sets[0].iter().map(|v| vec![0.0; v.len()]).collect();
        Ok(Self {
            session,
            buffers,
            w,
        })
    }
}

impl Contender for OrtRun {
    fn name(&self) -> &'static str {
        "ort_run"
    }

    fn iterate(&mut self, k: usize, laps: &mut Laps, full: bool) -> Result<Summary> {
        let src = &self.w.sets[self.w.set_of(k)];
        let slot = &self.w.slots[self.w.slot_of(k)];
        let n = slot.in_len;
        for (buf, values) in self.buffers.iter_mut().zip(src) {
            buf[..n].copy_from_slice(&values[..n]);
        }
        laps.lap();
        let dims = &slot.in_dims[..];
        let view =
            |i: usize| TensorRef::from_array_view((dims, &self.buffers[i][..n])).map_err(ort_err);
        let outputs = match self.buffers.len() {
            1 => self.session.run(ort::inputs![view(0)?]),
            2 => self.session.run(ort::inputs![view(0)?, view(1)?]),
            other => return Err(format!("ort_run handles 1 or 2 inputs, not {other}").into()),
        }
        .map_err(ort_err)?;
        laps.lap();
        let summary = {
            let (_, z) = outputs[self.w.output]
                .try_extract_tensor::<f32>()
                .map_err(ort_err)?;
            Summary::edges(z).with_sum(z, full)
        };
        drop(outputs);
        laps.lap();
        Ok(summary)
    }
}

// ---------------------------------------------------------------------------------------
// The physical floor for `big`.

/// `z = x + y`, element by element; the compiler vectorises it.
#[inline(always)]
fn add_into(z: &mut [f32], x: &[f32], y: &[f32]) {
    for ((z, x), y) in z.iter_mut().zip(x).zip(y) {
        *z = x + y;
    }
}

/// [`add_into`] compiled for AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn add_into_avx512(z: &mut [f32], x: &[f32], y: &[f32]) {
    add_into(z, x, y)
}

/// [`add_into`] compiled for AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn add_into_avx2(z: &mut [f32], x: &[f32], y: &[f32]) {
    add_into(z, x, y)
}

/// The widest vector instructions this CPU runs, for the plain loop: a baseline x86-64
/// build only uses SSE2, which on the machines measured here is about 1.8x slower than
/// AVX-512 on this memory-bound loop, so without this the floor would not be a floor.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Isa {
    /// AVX-512F.
    Avx512,
    /// AVX2.
    Avx2,
    /// Whatever the build targets (SSE2 on baseline x86-64).
    Baseline,
}

impl Isa {
    pub(crate) fn detect() -> Isa {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                return Isa::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                return Isa::Avx2;
            }
        }
        Isa::Baseline
    }

    fn add(self, z: &mut [f32], x: &[f32], y: &[f32]) {
        match self {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `detect` returned `Avx512` only after the CPU reported AVX-512F.
            Isa::Avx512 => unsafe { add_into_avx512(z, x, y) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `detect` returned `Avx2` only after the CPU reported AVX2.
            Isa::Avx2 => unsafe { add_into_avx2(z, x, y) },
            _ => add_into(z, x, y),
        }
    }

    /// Name for reports.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Isa::Avx512 => "avx512f",
            Isa::Avx2 => "avx2",
            Isa::Baseline => "baseline",
        }
    }
}

/// A plain Rust loop computing `z = x + y` over user-owned buffers, one thread, with the
/// widest vector instructions the CPU has (see [`Isa`]).
pub(crate) struct PlainLoop {
    x: Vec<f32>,
    y: Vec<f32>,
    z: Vec<f32>,
    isa: Isa,
    w: Arc<Workload>,
}

impl PlainLoop {
    pub(crate) fn new(w: Arc<Workload>) -> Result<Self> {
        let n = w.slots[0].in_len;
        Ok(Self {
            x: vec![0.0; n],
            y: vec![0.0; n],
            z: vec![0.0; n],
            isa: Isa::detect(),
            w,
        })
    }
}

impl Contender for PlainLoop {
    fn name(&self) -> &'static str {
        "plain_loop"
    }

    fn iterate(&mut self, k: usize, laps: &mut Laps, full: bool) -> Result<Summary> {
        let src = &self.w.sets[self.w.set_of(k)];
        self.x.copy_from_slice(&src[0]);
        self.y.copy_from_slice(&src[1]);
        laps.lap();
        self.isa.add(&mut self.z, &self.x, &self.y);
        laps.lap();
        let summary = Summary::edges(&self.z);
        laps.lap();
        Ok(summary.with_sum(&self.z, full))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alloc;
    use crate::workloads::Plan;

    fn plan() -> Plan {
        Plan {
            rounds: 1,
            iters: 1,
            warm: 0,
            clock: Clock::Wall,
        }
    }

    /// Runs `c` for runs `from..to`, checking every output; returns the allocations this
    /// thread made meanwhile.
    fn runs(w: &Workload, c: &mut dyn Contender, from: usize, to: usize) -> Result<u64> {
        let mut laps = Laps::new(Clock::Wall);
        let before = alloc::count_this_thread();
        for k in from..to {
            laps.start();
            let got = c.iterate(k, &mut laps, false)?;
            assert!(
                laps.phases().is_some(),
                "{} did not mark its phases",
                c.name()
            );
            w.check(c.name(), k, &got)?;
        }
        let allocations = alloc::count_this_thread() - before;
        laps.start();
        let got = c.iterate(to, &mut laps, true)?;
        w.check(c.name(), to, &got)?;
        Ok(allocations)
    }

    #[test]
    fn rust_contenders_compute_the_model_and_only_ort_bind_allocates_nothing() -> Result<()> {
        for w in [Workload::tiny(plan()), Workload::dynamic(plan())] {
            let w = Arc::new(w);
            let mut ours = ort_bind_for(&w)?;
            runs(&w, ours.as_mut(), 0, 16)?;
            assert_eq!(
                runs(&w, ours.as_mut(), 17, 117)?,
                0,
                "ort-bind allocated on {}",
                w.name
            );
            let mut theirs: [Box<dyn Contender>; 2] = [
                Box::new(OrtRunBinding::new(w.clone())?),
                Box::new(OrtRun::new(w.clone())?),
            ];
            for c in &mut theirs {
                runs(&w, c.as_mut(), 0, 16)?;
                // The counter sees the allocations `ort` makes per run.
                assert!(
                    runs(&w, c.as_mut(), 17, 117)? >= 100,
                    "{} on {}",
                    c.name(),
                    w.name
                );
            }
        }
        Ok(())
    }

    #[test]
    fn plain_loop_adds() -> Result<()> {
        let mut w = Workload::dynamic(plan());
        w.sequence = vec![0];
        let w = Arc::new(w);
        let mut c = PlainLoop::new(w.clone())?;
        runs(&w, &mut c, 0, 4)?;
        Ok(())
    }

    #[test]
    fn clocks_advance() {
        for clock in [Clock::Wall, Clock::ThreadCpu] {
            let mut laps = Laps::new(clock);
            laps.start();
            let mut x = 0u64;
            for i in 0..200_000u64 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
            }
            laps.lap();
            laps.lap();
            assert!(laps.phases().is_none(), "only two of three laps marked");
            laps.lap();
            let [fill, _, _, total] = laps.phases().expect("three laps marked");
            assert!(fill > 0 && total >= fill, "{clock:?}: {fill} {total}");
        }
    }
}
