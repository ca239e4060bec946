//! Timeouts: one process-wide timer thread that stops runs whose deadline passed (and
//! expires batcher requests still queued at theirs: [`Expire`]).
//!
//! A timed run ([`Binding::run_with_timeout`](crate::Binding::run_with_timeout),
//! [`Binding::run_async_with_timeout`](crate::Binding::run_async_with_timeout)) registers
//! `(deadline, epoch)` here, the epoch being its binding's [`RunControl`] number for that
//! run; at the deadline the thread asks the control to stop the run of that epoch, which
//! does nothing when the run already returned (the epoch has moved on). Registering takes one lock and a push onto a
//! heap whose capacity is reused (no allocation in steady state), and wakes the thread only
//! when the new deadline is the earliest. Entries of runs that returned stay in the heap
//! until their deadline and are then dropped.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::{Arc, Condvar, Mutex, OnceLock, PoisonError, Weak};
use std::time::{Duration, Instant};

use crate::cancel::{Reason, RunControl};
use crate::error::{Error, Result};

/// What the timer acts on at a deadline: a binding's run control (stop run `run`), or
/// anything else with a deadline (a batcher's queued request).
pub(crate) trait Expire: Send + Sync {
    /// The deadline `timeout` after scheduling has passed; `run` is the number given to
    /// [`schedule`].
    fn expire(&self, run: u64, timeout: Duration);
}

impl Expire for RunControl {
    fn expire(&self, run: u64, timeout: Duration) {
        // Failing to set the flag leaves the run to finish; nothing to report to.
        let _ = self.request(Reason::TimedOut(timeout), run);
    }
}

struct Entry {
    at: Instant,
    seq: u64,
    run: u64,
    timeout: Duration,
    target: Weak<dyn Expire>,
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entry")
            .field("at", &self.at)
            .field("run", &self.run)
            .finish_non_exhaustive()
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

#[derive(Debug, Default)]
struct Queue {
    heap: BinaryHeap<Reverse<Entry>>,
    seq: u64,
}

#[derive(Debug)]
struct Timer {
    queue: Mutex<Queue>,
    wake: Condvar,
}

fn timer() -> Result<&'static Timer> {
    static TIMER: OnceLock<std::result::Result<&'static Timer, String>> = OnceLock::new();
    let timer = TIMER.get_or_init(|| {
        let timer: &'static Timer = Box::leak(Box::new(Timer {
            queue: Mutex::new(Queue {
                heap: BinaryHeap::with_capacity(64),
                seq: 0,
            }),
            wake: Condvar::new(),
        }));
        std::thread::Builder::new()
            .name("ort-bind-timeouts".into())
            .spawn(move || timer.serve())
            .map(|_| timer)
            .map_err(|e| e.to_string())
    });
    match timer {
        Ok(timer) => Ok(timer),
        Err(message) => Err(Error::Io {
            path: "ort-bind's timeout thread".into(),
            source: std::io::Error::other(message.clone()),
        }),
    }
}

/// Calls `target.expire(run, timeout)` once `timeout` has passed from now, unless `target`
/// is gone by then: for a [`RunControl`], asks it to stop its run of epoch `run` (see
/// [`RunControl::epoch`]).
pub(crate) fn schedule<T: Expire + 'static>(
    target: &Arc<T>,
    run: u64,
    timeout: Duration,
) -> Result<()> {
    let target: Weak<dyn Expire> = Arc::downgrade(target) as Weak<dyn Expire>;
    let timer = timer()?;
    // A timeout too large for `Instant` never fires.
    let Some(at) = Instant::now().checked_add(timeout) else {
        return Ok(());
    };
    let mut queue = timer.queue.lock().unwrap_or_else(PoisonError::into_inner);
    let earliest = queue.heap.peek().is_none_or(|Reverse(e)| at < e.at);
    queue.seq += 1;
    let seq = queue.seq;
    queue.heap.push(Reverse(Entry {
        at,
        seq,
        run,
        timeout,
        target,
    }));
    drop(queue);
    if earliest {
        timer.wake.notify_one();
    }
    Ok(())
}

impl Timer {
    fn serve(&self) {
        let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            let now = Instant::now();
            while queue.heap.peek().is_some_and(|Reverse(e)| e.at <= now) {
                if let Some(Reverse(entry)) = queue.heap.pop()
                    && let Some(target) = entry.target.upgrade()
                {
                    target.expire(entry.run, entry.timeout);
                }
            }
            let wait = queue
                .heap
                .peek()
                .map(|Reverse(next)| next.at.saturating_duration_since(now));
            queue = match wait {
                None => self
                    .wake
                    .wait(queue)
                    .unwrap_or_else(PoisonError::into_inner),
                Some(wait) => {
                    self.wake
                        .wait_timeout(queue, wait)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
            };
        }
    }
}
