//! The threads figure side by side with the field: throughput of 2 threads over 1 on
//! SqueezeNet (one intra-op thread per run) for ort-bind (one shared session, a binding
//! per thread), `ort` with one session behind a `Mutex`, `ort` with a session per thread,
//! and Python onnxruntime (`run_with_iobinding`, a binding per thread on one session),
//! all measured in the same rounds, the contenders' order rotating per round and the
//! 1-thread/2-thread order alternating.

use std::sync::{Barrier, Mutex, PoisonError};
use std::time::Instant;

use ort::memory::Allocator;
use ort::session::{IoBinding, Session as OrtSession};
use ort::value::Tensor as OrtTensor;
use ort_bind_runtime::Binding;

use super::{CnnIo, Stats, session, stats};
use crate::Result;
use crate::contenders::ort_session;
use crate::peer::Peer;
use crate::workloads::{Summary, Workload};

/// Errors inside client threads (the harness's error type is not `Send`).
type ThreadResult<T> = std::result::Result<T, String>;

/// One contender of the threads figure.
trait Scaling {
    /// Name in the table.
    fn name(&self) -> &'static str;
    /// Wall seconds of `runs` runs on one thread.
    fn one(&mut self, runs: usize) -> Result<f64>;
    /// Wall seconds of `runs` runs on each of two threads at once.
    fn two(&mut self, runs: usize) -> Result<f64>;
    /// Checks the last output of every thread against the reference.
    fn check(&mut self, w: &Workload, reference: &[f32]) -> Result<()>;
}

/// Wall seconds of `runs` calls of `f` on this thread.
fn on_one(runs: usize, mut f: impl FnMut() -> ThreadResult<()>) -> Result<f64> {
    let t = Instant::now();
    for _ in 0..runs {
        f()?;
    }
    Ok(t.elapsed().as_secs_f64())
}

/// Wall seconds of `runs` calls of `a` on this thread while another thread does `b`:
/// whatever setup it needs, then a wait on the barrier it is given (the start of the
/// timing), then its `runs` runs.
fn on_two(
    runs: usize,
    mut a: impl FnMut() -> ThreadResult<()>,
    b: impl FnOnce(&Barrier) -> ThreadResult<()> + Send,
) -> Result<f64> {
    let barrier = Barrier::new(2);
    std::thread::scope(|scope| -> Result<f64> {
        let other = scope.spawn(|| b(&barrier));
        barrier.wait();
        let t = Instant::now();
        let mine = (0..runs).try_for_each(|_| a());
        let theirs = other.join().map_err(|_| "a benchmark thread panicked")?;
        let elapsed = t.elapsed().as_secs_f64();
        mine?;
        theirs?;
        Ok(elapsed)
    })
}

/// Whether thread `thread` of contender `name` computed exactly the reference output.
fn same(name: &str, thread: usize, got: &[f32], reference: &[f32]) -> Result<()> {
    if got != reference {
        return Err(format!(
            "{name}: thread {thread}'s SqueezeNet output differs from the reference run"
        )
        .into());
    }
    Ok(())
}

/// ort-bind: one session, a binding per thread.
struct OrtBind {
    bindings: [Binding<CnnIo>; 2],
}

impl Scaling for OrtBind {
    fn name(&self) -> &'static str {
        "ort-bind, one session, a binding per thread"
    }
    fn one(&mut self, runs: usize) -> Result<f64> {
        on_one(runs, || self.bindings[0].run().map_err(|e| e.to_string()))
    }
    fn two(&mut self, runs: usize) -> Result<f64> {
        let [a, b] = &mut self.bindings;
        on_two(
            runs,
            || a.run().map_err(|e| e.to_string()),
            |start| {
                start.wait();
                (0..runs).try_for_each(|_| b.run().map_err(|e| e.to_string()))
            },
        )
    }
    fn check(&mut self, _: &Workload, reference: &[f32]) -> Result<()> {
        for (t, b) in self.bindings.iter().enumerate() {
            same(self.name(), t, b.outputs().as_slice(), reference)?;
        }
        Ok(())
    }
}

/// One thread's `ort` I/O binding: the input and output tensors `ort` allocated, bound
/// once, read in place (as `contenders::OrtRunBinding` does). `ort`'s `IoBinding` and
/// tensors are neither `Send` nor `Sync`, so each lives on the thread that made it: the
/// second thread of a 2-thread block makes its own before the block's timing starts.
struct OrtSlot {
    binding: IoBinding,
    _input: OrtTensor<f32>,
    output: OrtTensor<f32>,
}

impl OrtSlot {
    fn new(session: &OrtSession, w: &Workload) -> ThreadResult<OrtSlot> {
        let err = |e: ort::Error| e.to_string();
        let allocator = Allocator::default();
        let slot = &w.slots[0];
        let mut binding = session.create_binding().map_err(err)?;
        let mut input = OrtTensor::<f32>::new(&allocator, slot.in_dims.clone()).map_err(err)?;
        input.extract_tensor_mut().1.copy_from_slice(&w.sets[0][0]);
        binding.bind_input(w.inputs[0], &input).map_err(err)?;
        let mut output = OrtTensor::<f32>::new(&allocator, slot.out_dims.clone()).map_err(err)?;
        binding.bind_output(w.output, &mut output).map_err(err)?;
        Ok(OrtSlot {
            binding,
            _input: input,
            output,
        })
    }

    fn output(&self) -> &[f32] {
        self.output.extract_tensor().1
    }
}

fn run_binding(session: &mut OrtSession, slot: &OrtSlot) -> ThreadResult<()> {
    session
        .run_binding(&slot.binding)
        .map(drop)
        .map_err(|e| e.to_string())
}

/// `ort` with one session behind a `Mutex` (its runs take `&mut Session`), a binding per
/// thread.
struct OrtMutex<'w> {
    session: Mutex<OrtSession>,
    slot: OrtSlot,
    w: &'w Workload,
    reference: Vec<f32>,
}

impl OrtMutex<'_> {
    fn run(session: &Mutex<OrtSession>, slot: &OrtSlot) -> ThreadResult<()> {
        let mut session = session.lock().unwrap_or_else(PoisonError::into_inner);
        run_binding(&mut session, slot)
    }
}

impl Scaling for OrtMutex<'_> {
    fn name(&self) -> &'static str {
        "`ort`, one session behind a `Mutex`, a binding per thread"
    }
    fn one(&mut self, runs: usize) -> Result<f64> {
        on_one(runs, || Self::run(&self.session, &self.slot))
    }
    fn two(&mut self, runs: usize) -> Result<f64> {
        let (session, slot, w, reference) = (&self.session, &self.slot, self.w, &self.reference);
        let name = self.name();
        on_two(
            runs,
            || Self::run(session, slot),
            |start| {
                let guard = session.lock().unwrap_or_else(PoisonError::into_inner);
                // Made under the lock (`create_binding` needs only `&Session`), run under it.
                let made = OrtSlot::new(&guard, w);
                drop(guard);
                start.wait();
                let mine = made?;
                (0..runs).try_for_each(|_| Self::run(session, &mine))?;
                same(name, 1, mine.output(), reference).map_err(|e| e.to_string())
            },
        )
    }
    fn check(&mut self, _: &Workload, reference: &[f32]) -> Result<()> {
        same(self.name(), 0, self.slot.output(), reference)
    }
}

/// `ort` with a session (and binding) per thread.
struct OrtPerThread<'w> {
    first: (OrtSession, OrtSlot),
    second: OrtSession,
    w: &'w Workload,
    reference: Vec<f32>,
}

impl Scaling for OrtPerThread<'_> {
    fn name(&self) -> &'static str {
        "`ort`, a session per thread"
    }
    fn one(&mut self, runs: usize) -> Result<f64> {
        let (session, slot) = &mut self.first;
        on_one(runs, || run_binding(session, slot))
    }
    fn two(&mut self, runs: usize) -> Result<f64> {
        let name = self.name();
        let ((sa, a), sb, w, reference) =
            (&mut self.first, &mut self.second, self.w, &self.reference);
        on_two(
            runs,
            || run_binding(sa, a),
            |start| {
                let made = OrtSlot::new(sb, w);
                start.wait();
                let mine = made?;
                (0..runs).try_for_each(|_| run_binding(sb, &mine))?;
                same(name, 1, mine.output(), reference).map_err(|e| e.to_string())
            },
        )
    }
    fn check(&mut self, _: &Workload, reference: &[f32]) -> Result<()> {
        same(self.name(), 0, self.first.1.output(), reference)
    }
}

/// Python onnxruntime in the peer: `run_with_iobinding`, a binding per thread (its own
/// input and output arrays) on one session; the peer times its threads itself.
struct Python<'p> {
    peer: &'p mut Peer,
    last: Vec<Summary>,
}

impl Python<'_> {
    fn timed(&mut self, threads: usize, runs: usize) -> Result<f64> {
        let (seconds, outputs) = self.peer.threads("cnn", threads, runs)?;
        self.last = outputs;
        Ok(seconds)
    }
}

impl Scaling for Python<'_> {
    fn name(&self) -> &'static str {
        "Python onnxruntime, `run_with_iobinding`, one session, a binding per thread"
    }
    fn one(&mut self, runs: usize) -> Result<f64> {
        self.timed(1, runs)
    }
    fn two(&mut self, runs: usize) -> Result<f64> {
        self.timed(2, runs)
    }
    fn check(&mut self, w: &Workload, _: &[f32]) -> Result<()> {
        // Another build of ONNX Runtime: checked within ONNX's tolerance, not bit for bit.
        for (t, got) in self.last.iter().enumerate() {
            w.check(&format!("{} (thread {t})", self.name()), 0, got)?;
        }
        Ok(())
    }
}

/// Per contender: its name and the 2-threads-over-1 throughput ratio (median and
/// quartiles of the per-round ratios).
pub(super) fn threads(
    rounds: usize,
    runs: usize,
    w: &Workload,
    peer: Option<&mut Peer>,
) -> Result<Vec<(&'static str, Stats)>> {
    let ours = session(w.model, 1)?;
    let mut first = Binding::new(&ours, CnnIo::new(&w.sets[0][0])?)?;
    first.run()?;
    let reference = first.outputs().as_slice().to_vec();
    w.check(
        "ort-bind serving",
        0,
        &Summary::edges(&reference).with_sum(&reference, true),
    )?;
    let second = Binding::new(&ours, CnnIo::new(&w.sets[0][0])?)?;
    let shared = ort_session(w.model)?;
    let slot = OrtSlot::new(&shared, w)?;
    let own = ort_session(w.model)?;
    let own_slot = OrtSlot::new(&own, w)?;
    let mut contenders: Vec<Box<dyn Scaling + '_>> = vec![
        Box::new(OrtBind {
            bindings: [first, second],
        }),
        Box::new(OrtMutex {
            session: Mutex::new(shared),
            slot,
            w,
            reference: reference.clone(),
        }),
        Box::new(OrtPerThread {
            first: (own, own_slot),
            second: ort_session(w.model)?,
            w,
            reference: reference.clone(),
        }),
    ];
    if let Some(peer) = peer {
        contenders.push(Box::new(Python {
            peer,
            last: Vec::new(),
        }));
    }
    let k = contenders.len();
    let mut ratios = vec![Vec::with_capacity(rounds); k];
    for round in 0..rounds {
        for j in 0..k {
            let c = (j + round) % k;
            let it = &mut contenders[c];
            let (t1, t2) = if round % 2 == 0 {
                let t1 = it.one(runs)?;
                (t1, it.two(runs)?)
            } else {
                let t2 = it.two(runs)?;
                (it.one(runs)?, t2)
            };
            ratios[c].push(2.0 * t1 / t2);
            it.check(w, &reference)?;
        }
    }
    Ok(contenders
        .iter()
        .zip(ratios)
        .map(|(c, r)| (c.name(), stats(r)))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contenders::Clock;
    use crate::workloads::Plan;

    #[test]
    fn every_rust_contender_scales_and_computes_the_reference() -> Result<()> {
        let w = Workload::cnn(Plan {
            rounds: 1,
            iters: 1,
            warm: 0,
            clock: Clock::Wall,
        })?;
        // Two rounds, so both orders (1 thread first, 2 threads first) run; every block's
        // outputs are checked against ort-bind's reference run inside `threads`.
        let rows = threads(2, 1, &w, None)?;
        let names: Vec<_> = rows.iter().map(|(name, _)| *name).collect();
        assert_eq!(names.len(), 3, "{names:?}");
        assert!(names[0].starts_with("ort-bind"), "{names:?}");
        assert!(names[1].contains("Mutex") && names[2].contains("per thread"));
        for (name, (median, q1, q3)) in rows {
            // One run per thread is noisy; a ratio outside (0, 4) would be a timing bug.
            assert!(
                median > 0.0 && median < 4.0 && q1 <= median && median <= q3,
                "{name}: {median} ({q1}-{q3})"
            );
        }
        Ok(())
    }
}
