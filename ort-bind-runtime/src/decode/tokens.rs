//! The channel between the [`Scheduler`](super::Scheduler)'s thread and one request:
//! [`Tokens`], read as a blocking iterator by a thread or as a [`Stream`] by an async
//! handler, and the scheduler's [`TokenSender`].
//!
//! Its room is reserved when the request is submitted (every token it may get, and a last
//! error), so the scheduler never waits for a slow reader and sending allocates nothing. A
//! reader that waits is woken by a condition variable (a thread) or its [`Waker`] (a task).

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

use futures_core::Stream;

use crate::error::Result;

#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    ready: Condvar,
}

#[derive(Debug)]
struct State {
    items: VecDeque<Result<i64>>,
    // The sender is gone: after `items`, the request has ended.
    closed: bool,
    // The reader is gone: the request is to end.
    abandoned: bool,
    // An async reader waiting for the next item.
    waker: Option<Waker>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A channel of room for `room` items.
pub(super) fn channel(room: usize) -> (TokenSender, Tokens) {
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            items: VecDeque::with_capacity(room),
            closed: false,
            abandoned: false,
            waker: None,
        }),
        ready: Condvar::new(),
    });
    (
        TokenSender {
            shared: Arc::clone(&shared),
        },
        Tokens { shared },
    )
}

/// The scheduler's end of a request's channel; dropping it ends the request's [`Tokens`].
#[derive(Debug)]
pub(super) struct TokenSender {
    shared: Arc<Shared>,
}

impl TokenSender {
    /// Hands `item` to the reader; `false` when the reader is gone (the request is
    /// abandoned: free its row).
    pub(super) fn send(&self, item: Result<i64>) -> bool {
        let waker = {
            let mut state = self.shared.lock();
            if state.abandoned {
                return false;
            }
            state.items.push_back(item);
            state.waker.take()
        };
        self.shared.ready.notify_one();
        if let Some(waker) = waker {
            waker.wake();
        }
        true
    }
}

impl Drop for TokenSender {
    fn drop(&mut self) {
        let waker = {
            let mut state = self.shared.lock();
            state.closed = true;
            state.waker.take()
        };
        self.shared.ready.notify_one();
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

/// The tokens of one request, as they are generated: a blocking [`Iterator`] for a thread,
/// and a [`Stream`] for an async handler (woken when a token comes; no executor thread
/// blocks). It ends after the request's last token; an error is its last item: the refusal
/// of a bad request (`Error::Decode`), its timeout (`Error::TimedOut`), the scheduler's end
/// before it finished (`Error::Terminated`), or a failed run of the batch it was in
/// (`Error::Batch`, shared by every request of that run). Dropping it ends the request: its
/// row is freed at the scheduler's next run.
///
/// ```no_run
/// # async fn demo(scheduler: &ort_bind_runtime::decode::Scheduler) -> ort_bind_runtime::Result<()> {
/// use std::future::poll_fn;
/// use std::pin::Pin;
/// use futures_core::Stream;
///
/// let mut tokens = scheduler.submit(&[5, 42, 79], 32, None);
/// while let Some(token) = poll_fn(|cx| Pin::new(&mut tokens).poll_next(cx)).await {
///     print!("{} ", token?);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Tokens {
    shared: Arc<Shared>,
}

impl Iterator for Tokens {
    type Item = Result<i64>;

    fn next(&mut self) -> Option<Result<i64>> {
        let mut state = self.shared.lock();
        loop {
            if let Some(item) = state.items.pop_front() {
                return Some(item);
            }
            if state.closed {
                return None;
            }
            state = self
                .shared
                .ready
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

impl Stream for Tokens {
    type Item = Result<i64>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<i64>>> {
        let mut state = self.shared.lock();
        if let Some(item) = state.items.pop_front() {
            return Poll::Ready(Some(item));
        }
        if state.closed {
            return Poll::Ready(None);
        }
        match &mut state.waker {
            Some(waker) if waker.will_wake(cx.waker()) => {}
            slot => *slot = Some(cx.waker().clone()),
        }
        Poll::Pending
    }
}

impl Drop for Tokens {
    fn drop(&mut self) {
        let mut state = self.shared.lock();
        state.abandoned = true;
        state.items.clear();
        state.waker = None;
    }
}
