//! Asynchronous runs over the bound buffers: [`Binding::run_async`], on any session
//! configuration and any executor.
//!
//! # Which path runs
//! - **ONNX Runtime's `RunAsync`**, where the session has an intra-op pool of at least 2
//!   threads ([`SessionOptions::intra_threads`](crate::SessionOptions::intra_threads) >= 2,
//!   or 0 / unset on a machine with more than one core), runs on the CPU, and every output
//!   ONNX Runtime allocates is on the [`Cpu`](crate::Cpu). `RunAsync` takes arrays of input
//!   and output values (no I/O binding) and a callback; it runs the model on a thread of
//!   the session's intra-op pool and calls the callback from there. ort-bind passes the
//!   values its tensors already hold (bound inputs; outputs written in place; null for
//!   outputs ONNX Runtime allocates, which are stored in their typed slots afterwards, as
//!   a synchronous run stores them), so an asynchronous run copies and allocates nothing
//!   either.
//! - **ort-bind's worker threads** otherwise: a session with one intra-op thread (the
//!   usual setting for a [`Pool`](crate::Pool) of bindings on few cores, where `RunAsync`
//!   has no pool to run on), a session on the CUDA execution provider, or outputs that
//!   ONNX Runtime allocates on a device. The binding's ordinary blocking run (the one
//!   [`Binding::run`] makes, with the same run options, so [`Terminator`](crate::Terminator)s
//!   and timeouts stop it) runs on one of a small process-wide pool of threads, started on
//!   first use and grown on demand up to one per core
//!   ([`std::thread::available_parallelism`]), which then report to the future exactly as
//!   `RunAsync`'s callback does. Handing a run to a worker is a lock and a push onto a
//!   queue whose capacity is reused: no thread and no allocation per run. Runs beyond one
//!   per core wait in that queue (first in, first out); a timeout counts from the first
//!   poll, waiting included. On a CUDA session the future resolves when [`Binding::run`]
//!   would return (with every bound tensor in device memory: once the run is enqueued on
//!   the device's stream).
//!
//! Either way no executor thread blocks on a run, and the rules below are the same.
//!
//! # Rules
//! - **Borrowing**: the future borrows the binding mutably until the run has finished,
//!   so no safe code can read an output or write an input in flight.
//! - **Executors**: the future is woken by the run's end through its [`Waker`]; it never
//!   polls in a loop and needs no particular executor (tokio, `futures::executor`, ...).
//!   It is `Send` when the binding is.
//! - **Dropped early**: dropping the future while the run is in flight tells the run to
//!   stop (ONNX Runtime stops after the kernel it is in) and returns at once, without
//!   waiting for ONNX Runtime (a lock and a flag: microseconds), so an executor thread
//!   never blocks on it. The buffers stay the run's until ONNX Runtime's callback has
//!   fired: the binding's next use (`inputs`, `outputs`, `run`, `set_dims`, ...) or its
//!   drop waits for that first (at most the rest of one kernel), and a
//!   [`Pool`](crate::Pool) hands out such a binding only when no other idle binding is
//!   there. That run's outputs are unspecified (but initialised) values. A leaked future
//!   (`mem::forget`) is handled the same way: the binding stops and waits for its run the
//!   next time it is used or dropped.
//! - **Devices**: any session; see [which path runs](#which-path-runs).
//!
//! ```no_run
//! # async fn demo<Io: ort_bind_runtime::BindingIo>(bound: &mut ort_bind_runtime::Binding<Io>)
//! # -> ort_bind_runtime::Result<()> {
//! bound.run_async().await?; // the same bound buffers as `bound.run()`
//! let outputs = bound.outputs();
//! # Ok(()) }
//! ```

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use crate::binding::{Binding, BindingIo};
use crate::error::{Error, Result};

/// Where ONNX Runtime's callback (or ort-bind's worker thread) leaves the result of an
/// asynchronous run; shared between a binding and the run in flight.
#[derive(Debug, Default)]
pub(crate) struct Completion {
    running: AtomicBool,
    state: Mutex<CompletionState>,
    done: Condvar,
}

#[derive(Debug, Default)]
struct CompletionState {
    result: Option<Result<()>>,
    waker: Option<Waker>,
    /// Threads blocked in `wait`/`wait_idle` (`complete` notifies only when there are).
    waiters: usize,
}

impl crate::sys::RunCompletion for Completion {
    fn complete(&self, result: Result<()>) {
        // The inherent method: wakes the future and records the result.
        Completion::complete(self, result);
    }
}

impl Completion {
    fn lock(&self) -> MutexGuard<'_, CompletionState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Prepares for a run whose completion wakes `waker`.
    pub(crate) fn begin(&self, waker: Option<&Waker>) {
        let mut state = self.lock();
        state.result = None;
        match (&mut state.waker, waker) {
            (Some(old), Some(new)) if old.will_wake(new) => {}
            (slot, new) => *slot = new.cloned(),
        }
        self.running.store(true, Ordering::Release);
    }

    /// The run did not start after all.
    pub(crate) fn abandon(&self) {
        let mut state = self.lock();
        state.waker = None;
        self.running.store(false, Ordering::Release);
    }

    /// Called once per run, from ONNX Runtime's thread or ort-bind's worker thread, when
    /// the run has finished.
    pub(crate) fn complete(&self, result: Result<()>) {
        let waker = {
            let mut state = self.lock();
            state.result = Some(result);
            self.running.store(false, Ordering::Release);
            if state.waiters > 0 {
                self.done.notify_all();
            }
            state.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// The result, when the run has finished; otherwise `waker` is woken when it does.
    pub(crate) fn poll(&self, waker: &Waker) -> Option<Result<()>> {
        let mut state = self.lock();
        if let Some(result) = state.result.take() {
            return Some(result);
        }
        match &mut state.waker {
            Some(old) if old.will_wake(waker) => {}
            slot => *slot = Some(waker.clone()),
        }
        None
    }

    /// Blocks until the run has finished; takes its result.
    pub(crate) fn wait(&self) -> Result<()> {
        let mut state = self.lock();
        loop {
            if let Some(result) = state.result.take() {
                state.waker = None;
                return result;
            }
            state.waiters += 1;
            state = self
                .done
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
            state.waiters -= 1;
        }
    }

    /// Forgets the waker of the run in flight (its future was dropped: nobody waits).
    pub(crate) fn forget_waker(&self) {
        let waker = self.lock().waker.take();
        drop(waker);
    }

    /// Whether a run is in flight (ONNX Runtime's callback has not fired yet).
    pub(crate) fn running(&self) -> bool {
        self.running.load(Ordering::Acquire)
    }

    /// Blocks until no run is in flight (leaves the result for [`Completion::wait`]).
    pub(crate) fn wait_idle(&self) {
        if !self.running.load(Ordering::Acquire) {
            return;
        }
        let mut state = self.lock();
        while self.running.load(Ordering::Acquire) {
            state.waiters += 1;
            state = self
                .done
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
            state.waiters -= 1;
        }
    }
}

/// The future of [`Binding::run_async`]: resolves when the run has finished (ONNX Runtime's
/// callback has fired, or ort-bind's worker thread has made the run).
///
/// Does nothing until first polled. See the [module docs](self) for what dropping it early
/// does.
#[must_use = "a run starts only when its future is polled (`.await`)"]
#[derive(Debug)]
pub struct RunFuture<'a, Io: BindingIo> {
    bound: &'a mut Binding<Io>,
    timeout: Option<Duration>,
    phase: Phase,
    // A check that failed before the run (see `RunFuture::after_check`): the first poll
    // resolves to it and starts nothing.
    early: Option<Error>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    NotStarted,
    Running,
    Finished,
}

impl<Io: BindingIo> Future for RunFuture<'_, Io> {
    type Output = Result<()>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
        let this = &mut *self;
        match this.phase {
            Phase::Finished => {
                return Poll::Ready(Err(Error::AsyncRun {
                    reason: "the run's future was polled again after it completed".into(),
                }));
            }
            Phase::NotStarted => {
                if let Some(e) = this.early.take() {
                    this.phase = Phase::Finished;
                    return Poll::Ready(Err(e));
                }
                if let Err(e) = this.bound.start_async(cx.waker(), this.timeout) {
                    this.phase = Phase::Finished;
                    return Poll::Ready(Err(e));
                }
                this.phase = Phase::Running;
            }
            Phase::Running => {}
        }
        match this.bound.completion().poll(cx.waker()) {
            None => Poll::Pending,
            Some(result) => {
                this.phase = Phase::Finished;
                Poll::Ready(this.bound.finish_async(result))
            }
        }
    }
}

impl<'a, Io: BindingIo> RunFuture<'a, Io> {
    /// For generated code: when `check` (made before the run, e.g. that every required
    /// input value is set) failed, the future resolves to its error on the first poll and
    /// starts no run.
    #[doc(hidden)]
    pub fn after_check(mut self, check: Result<()>) -> RunFuture<'a, Io> {
        if let Err(e) = check {
            self.early = Some(e);
        }
        self
    }
}

impl<Io: BindingIo> Drop for RunFuture<'_, Io> {
    fn drop(&mut self) {
        if self.phase == Phase::Running {
            // Stop the run and return at once. The binding still records the run as in
            // flight, so every method that could touch what ONNX Runtime uses (and the
            // binding's `Drop`) waits for the callback first, as for a leaked future.
            self.bound.abandon_in_flight();
        }
    }
}

impl<Io: BindingIo> Binding<Io> {
    /// Runs the model on the bound buffers asynchronously: the returned future resolves
    /// when the run has finished, and outputs are then read in place with
    /// [`Binding::outputs`] as after [`Binding::run`].
    ///
    /// Works with any session: on ONNX Runtime's `RunAsync` where the session has an
    /// intra-op pool of 2 or more threads, on ort-bind's worker threads otherwise (one
    /// intra-op thread, a CUDA session); see the [module docs](crate::run_async) for which
    /// path runs when and what dropping the future early does. A run stopped by a
    /// [`Terminator`](crate::Terminator) gives [`Error::Terminated`].
    pub fn run_async(&mut self) -> RunFuture<'_, Io> {
        RunFuture {
            bound: self,
            timeout: None,
            phase: Phase::NotStarted,
            early: None,
        }
    }

    /// [`Binding::run_async`], terminated when it has not finished `timeout` after it
    /// started (its first poll): it then resolves to [`Error::TimedOut`], without blocking,
    /// once ONNX Runtime has stopped (after the kernel it was in). On the worker threads,
    /// time spent waiting for a free thread counts too.
    pub fn run_async_with_timeout(&mut self, timeout: Duration) -> RunFuture<'_, Io> {
        RunFuture {
            bound: self,
            timeout: Some(timeout),
            phase: Phase::NotStarted,
            early: None,
        }
    }
}
