//! One request's life in a batcher: queued, taken into a batch, answered; or given up by
//! its caller (a dropped future, a deadline) while still queued, in which case no worker
//! runs it.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use crate::deadline::Expire;
use crate::error::{Error, Result};

/// A queued request: the item, the dims (and adapter) it batches under, and where its reply
/// goes.
pub(super) struct Request<Item, Dims, Reply> {
    pub(super) item: Item,
    pub(super) dims: Dims,
    /// The LoRA adapter the request runs with (requests batch only with the same one).
    pub(super) adapter: Option<crate::adapter::Adapter>,
    pub(super) at: Instant,
    pub(super) reply: Arc<ReplySlot<Reply>>,
}

/// Where a request stands.
enum Phase<R> {
    /// In the queue: a worker may take it, its caller may give it up.
    Queued,
    /// Taken into a batch: it runs, and its caller gets the result.
    Taken,
    /// Answered (or expired while queued): the result waits for its caller.
    Done(Result<R>),
    /// The result went to the caller, or the caller is gone.
    Closed,
}

impl<R> Phase<R> {
    /// The result, if it is in (the phase becomes `Closed`).
    fn take_result(&mut self) -> Option<Result<R>> {
        match std::mem::replace(self, Phase::Closed) {
            Phase::Done(result) => Some(result),
            other => {
                *self = other;
                None
            }
        }
    }
}

/// Where a worker leaves one request's result, shared by the caller, the queue and (for a
/// request with a deadline) the timer.
pub(super) struct ReplySlot<R> {
    state: Mutex<(Phase<R>, Option<Waker>)>,
    ready: Condvar,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<R> ReplySlot<R> {
    /// A queued request's slot.
    pub(super) fn new() -> Arc<Self> {
        Arc::new(ReplySlot {
            state: Mutex::new((Phase::Queued, None)),
            ready: Condvar::new(),
        })
    }

    /// A slot answered at once (a request refused before it was queued).
    pub(super) fn answered(result: Result<R>) -> Arc<Self> {
        Arc::new(ReplySlot {
            state: Mutex::new((Phase::Done(result), None)),
            ready: Condvar::new(),
        })
    }

    /// A worker takes the request into a batch: `false` when its caller gave it up (or
    /// its deadline passed), and the request is dropped unrun.
    pub(super) fn take(&self) -> bool {
        let mut state = lock(&self.state);
        if matches!(state.0, Phase::Queued) {
            state.0 = Phase::Taken;
            true
        } else {
            false
        }
    }

    /// Whether the request is still queued and wanted (a worker skips the others).
    pub(super) fn wanted(&self) -> bool {
        matches!(lock(&self.state).0, Phase::Queued)
    }

    /// Answers the request (a result nobody waits for any more is dropped).
    pub(super) fn send(&self, result: Result<R>) {
        self.finish(
            |phase| matches!(phase, Phase::Queued | Phase::Taken),
            result,
        );
    }

    fn finish(&self, when: impl Fn(&Phase<R>) -> bool, result: Result<R>) {
        let waker = {
            let mut state = lock(&self.state);
            if !when(&state.0) {
                return;
            }
            state.0 = Phase::Done(result);
            self.ready.notify_all();
            state.1.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// Blocks until the result is in, and takes it.
    pub(super) fn wait(&self) -> Result<R> {
        let mut state = lock(&self.state);
        loop {
            if let Some(result) = state.0.take_result() {
                return result;
            }
            state = self
                .ready
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// The caller is gone: a request still queued is not run.
    fn abandon(&self) {
        let mut state = lock(&self.state);
        if matches!(state.0, Phase::Queued | Phase::Done(_)) {
            state.0 = Phase::Closed;
        }
        state.1 = None;
    }
}

impl<R: Send> Expire for ReplySlot<R> {
    /// The request's deadline passed: if no worker has taken it, it never runs and its
    /// caller gets [`Error::TimedOut`]; once taken, it runs to the end.
    fn expire(&self, _: u64, timeout: Duration) {
        self.finish(
            |phase| matches!(phase, Phase::Queued),
            Err(Error::TimedOut { timeout }),
        );
    }
}

/// The future of [`Batcher::submit_async`](super::Batcher::submit_async): resolves to the
/// request's result, woken by the worker that ran it (no polling). Dropping it gives the
/// request up: one no worker has taken yet is never run.
#[must_use = "the result arrives through the future; dropped, the request is given up"]
pub struct ReplyFuture<R> {
    pub(super) slot: Arc<ReplySlot<R>>,
}

impl<R> fmt::Debug for ReplyFuture<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReplyFuture").finish_non_exhaustive()
    }
}

impl<R> Future for ReplyFuture<R> {
    type Output = Result<R>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<R>> {
        let mut state = lock(&self.slot.state);
        if let Some(result) = state.0.take_result() {
            return Poll::Ready(result);
        }
        if matches!(state.0, Phase::Closed) {
            return Poll::Ready(Err(Error::AsyncRun {
                reason: "a batcher's reply future was polled after it completed".into(),
            }));
        }
        match &state.1 {
            Some(w) if w.will_wake(cx.waker()) => {}
            _ => state.1 = Some(cx.waker().clone()),
        }
        Poll::Pending
    }
}

impl<R> Drop for ReplyFuture<R> {
    fn drop(&mut self) {
        self.slot.abandon();
    }
}

impl<Item, Dims: PartialEq, Reply> Request<Item, Dims, Reply> {
    /// Whether `self` and `other` can run in one batch: the same dims and the same adapter.
    pub(super) fn batches_with(&self, other: &Self) -> bool {
        self.dims == other.dims && self.adapter_id() == other.adapter_id()
    }

    /// Its adapter's number, `None` without one.
    pub(super) fn adapter_id(&self) -> Option<usize> {
        self.adapter.as_ref().map(crate::adapter::Adapter::id)
    }
}
