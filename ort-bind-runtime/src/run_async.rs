//! Asynchronous runs over the bound buffers: [`Bound::run_async`] on ONNX Runtime's
//! `RunAsync`.
//!
//! ONNX Runtime's `RunAsync` takes arrays of input and output values (no I/O binding)
//! and a callback; it runs the model on a thread of the session's intra-op pool and calls
//! the callback from there. ort-bind passes the values its tensors already hold (bound
//! inputs; outputs written in place; null for outputs ONNX Runtime allocates, which are
//! stored in their typed slots afterwards, as a synchronous run stores them), so an
//! asynchronous run copies and allocates nothing either.
//!
//! # Rules
//! - **Threads**: the session needs at least 2 intra-op threads
//!   ([`SessionOptions::intra_threads`](crate::SessionOptions::intra_threads)), because the
//!   run occupies one thread of that pool; a session built with one is refused with
//!   [`Error::AsyncRun`] before anything runs. The default (0: ONNX Runtime decides) uses
//!   one thread per core.
//! - **Borrowing**: the future borrows the binding mutably until ONNX Runtime's callback
//!   has fired, so no safe code can read an output or write an input in flight.
//! - **Executors**: the future is woken by the callback through its [`Waker`]; it never
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
//! - **Devices**: CPU sessions (the bound tensors may be any host memory the session
//!   accepts); outputs that ONNX Runtime allocates must be on the [`Cpu`](crate::Cpu).
//!   A session with the CUDA execution provider is refused with [`Error::AsyncRun`]:
//!   `RunAsync` cannot say on which device to allocate outputs, and CUDA runs are already
//!   asynchronous on the device's stream.
//!
//! ```no_run
//! # async fn demo<Io: ort_bind_runtime::BindingIo>(bound: &mut ort_bind_runtime::Bound<Io>)
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

use crate::binding::{BindingIo, Bound};
use crate::error::{Error, Result};

/// Where ONNX Runtime's callback leaves the result of an asynchronous run; shared between
/// a binding and the run in flight.
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

    /// Called once per run, from ONNX Runtime's thread, when the run has finished.
    pub(crate) fn complete(&self, result: Result<()>) {
        let waker = {
            let mut state = self.lock();
            state.result = Some(result);
            self.running.store(false, Ordering::Release);
            self.done.notify_all();
            state.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// The result, when the run has finished; otherwise `waker` is woken when it does.
    fn poll(&self, waker: &Waker) -> Option<Result<()>> {
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
            state = self
                .done
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
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
            state = self
                .done
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// The future of [`Bound::run_async`]: resolves when ONNX Runtime's callback has fired.
///
/// Does nothing until first polled. See the [module docs](self) for what dropping it early
/// does.
#[must_use = "a run starts only when its future is polled (`.await`)"]
#[derive(Debug)]
pub struct RunFuture<'a, Io: BindingIo> {
    bound: &'a mut Bound<Io>,
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

impl<Io: BindingIo> Bound<Io> {
    /// Runs the model on the bound buffers asynchronously, on ONNX Runtime's `RunAsync`:
    /// the returned future resolves when the run has finished, and outputs are then read
    /// in place with [`Bound::outputs`] as after [`Bound::run`].
    ///
    /// The session needs at least 2 intra-op threads; see the [module docs](crate::run_async)
    /// for this rule, what dropping the future early does, and which sessions qualify
    /// (others give [`Error::AsyncRun`]). A run stopped by a [`Terminator`](crate::Terminator)
    /// gives [`Error::Terminated`].
    pub fn run_async(&mut self) -> RunFuture<'_, Io> {
        RunFuture {
            bound: self,
            timeout: None,
            phase: Phase::NotStarted,
            early: None,
        }
    }

    /// [`Bound::run_async`], terminated when it has not finished `timeout` after it
    /// started (its first poll): it then resolves to [`Error::TimedOut`], without blocking,
    /// once ONNX Runtime has stopped (after the kernel it was in).
    pub fn run_async_with_timeout(&mut self, timeout: Duration) -> RunFuture<'_, Io> {
        RunFuture {
            bound: self,
            timeout: Some(timeout),
            phase: Phase::NotStarted,
            early: None,
        }
    }
}
