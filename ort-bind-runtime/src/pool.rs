//! A pool of bindings of one model, for request handlers: check a binding out for the dims
//! of a request, run it, and it goes back when the guard drops.
//!
//! [`Pool`] is generic over [`BindingIo`], so generated modules, the derive and
//! hand-written `Io`s all pool the same way: the pool makes bindings with a closure you
//! give it, at most `capacity` of them, and hands each out as a [`PooledBinding`] guard that
//! dereferences to the [`Binding`]. Checkout is blocking ([`Pool::get`]), non-blocking
//! ([`Pool::try_get`]) or asynchronous ([`Pool::get_async`], woken when a binding comes
//! back; no polling, any executor). Waiters are served in order, and a binding that comes
//! back goes straight to the first waiter.
//!
//! Capacity is reused: a checked-out binding is set to the request's dims with
//! [`Binding::set_dims`], which keeps each tensor's buffer when it is large enough and the
//! bindings of recently used dims (shape buckets), so once the bindings have served the
//! largest request ([`Pool::fill`] does that up front), smaller ones allocate nothing. The
//! pool prefers an idle binding already set to the request's dims, then one that has them
//! among its recent dims, then the binding returned last; a binding whose dropped
//! [`run_async`](Binding::run_async) future left a run still stopping comes last (its first
//! use waits for that run, at most the rest of one kernel).
//!
//! A binding that comes back ends every stop taken for its runs (see
//! [`Terminator`](crate::Terminator)): a late `terminate()` never reaches the next request.
//!
//! ```no_run
//! # fn demo<Io: ort_bind_runtime::BindingIo + Send + 'static>(
//! #     session: ort_bind_runtime::Session,
//! #     make_io: fn(&Io::Dims) -> ort_bind_runtime::Result<Io>,
//! #     dims: Io::Dims,
//! # ) -> ort_bind_runtime::Result<()> {
//! use ort_bind_runtime::{Binding, Pool};
//!
//! let pool = Pool::new(4, move |dims| Binding::new(&session, make_io(dims)?));
//! let mut binding = pool.get(&dims)?; // blocks while all 4 are out
//! binding.run()?;
//! drop(binding); // back to the pool
//! # Ok(()) }
//! ```

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::ops::{Deref, DerefMut};
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

use crate::binding::{Binding, BindingIo};
use crate::error::Result;

type Make<Io> = dyn Fn(&<Io as BindingIo>::Dims) -> Result<Binding<Io>> + Send + Sync;

/// A pool of at most `capacity` bindings of one model; cheap to clone (shared), `Send +
/// Sync` when the bindings are `Send`. See the [module docs](self).
pub struct Pool<Io: BindingIo> {
    shared: Arc<Shared<Io>>,
}

struct Shared<Io: BindingIo> {
    make: Box<Make<Io>>,
    capacity: usize,
    state: Mutex<State<Io>>,
}

struct State<Io: BindingIo> {
    idle: Vec<Binding<Io>>,
    created: usize,
    waiters: VecDeque<Arc<Waiter<Io>>>,
}

/// One checkout waiting for a binding.
struct Waiter<Io: BindingIo> {
    slot: Mutex<Slot<Io>>,
    ready: Condvar,
}

struct Slot<Io: BindingIo> {
    /// A binding handed over by `put`.
    bound: Option<Binding<Io>>,
    /// Room to make a binding freed up (one failed to be made): try again.
    retry: bool,
    /// The checkout gave up (its future was dropped): hand nothing over.
    gone: bool,
    waker: Option<Waker>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<Io: BindingIo> Clone for Pool<Io> {
    fn clone(&self) -> Self {
        Pool {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<Io: BindingIo> fmt::Debug for Pool<Io> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = lock(&self.shared.state);
        f.debug_struct("Pool")
            .field("capacity", &self.shared.capacity)
            .field("created", &state.created)
            .field("idle", &state.idle.len())
            .field("waiting", &state.waiters.len())
            .finish()
    }
}

/// What an attempt to check out found (moved once; boxing the binding would allocate per
/// checkout).
#[allow(clippy::large_enum_variant)]
enum Attempt<Io: BindingIo> {
    Got(Binding<Io>),
    /// Room for one more: the caller makes it (outside the lock).
    Make,
    Wait(Arc<Waiter<Io>>),
    Busy,
}

impl<Io: BindingIo> Pool<Io> {
    /// A pool of at most `capacity` bindings (at least 1), made on demand by `make` for the
    /// dims of the request that needs one.
    pub fn new(
        capacity: usize,
        make: impl Fn(&Io::Dims) -> Result<Binding<Io>> + Send + Sync + 'static,
    ) -> Pool<Io> {
        let capacity = capacity.max(1);
        Pool {
            shared: Arc::new(Shared {
                make: Box::new(make),
                capacity,
                state: Mutex::new(State {
                    idle: Vec::with_capacity(capacity),
                    created: 0,
                    waiters: VecDeque::new(),
                }),
            }),
        }
    }

    /// The most bindings the pool makes.
    pub fn capacity(&self) -> usize {
        self.shared.capacity
    }

    /// Bindings made so far (checked out or idle).
    pub fn created(&self) -> usize {
        lock(&self.shared.state).created
    }

    /// Bindings idle in the pool now.
    pub fn idle(&self) -> usize {
        lock(&self.shared.state).idle.len()
    }

    /// Makes bindings until there are `capacity`, each set to `dims` (normally the largest
    /// a request will have), so that later requests up to that size allocate nothing.
    /// Idle bindings are set to `dims` too.
    pub fn fill(&self, dims: &Io::Dims) -> Result<()> {
        let mut ready = Vec::new();
        loop {
            match self.attempt(dims, false) {
                Attempt::Got(bound) => ready.push(bound),
                Attempt::Make => ready.push(self.make(dims)?),
                Attempt::Wait(_) | Attempt::Busy => break,
            }
        }
        let mut result = Ok(());
        for mut bound in ready {
            if result.is_ok() {
                result = bound.set_dims(dims);
            }
            self.shared.put(bound);
        }
        result
    }

    /// Checks a binding out for `dims`, blocking while all `capacity` are checked out.
    /// The binding is set to `dims` (see the [module docs](self) for capacity reuse).
    pub fn get(&self, dims: &Io::Dims) -> Result<PooledBinding<Io>> {
        loop {
            let waiter = match self.attempt(dims, true) {
                Attempt::Got(bound) => return self.prepare(bound, dims),
                Attempt::Make => return self.made(dims),
                Attempt::Wait(waiter) => waiter,
                Attempt::Busy => continue,
            };
            let mut slot = lock(&waiter.slot);
            loop {
                if let Some(bound) = slot.bound.take() {
                    drop(slot);
                    return self.prepare(bound, dims);
                }
                if slot.retry {
                    break;
                }
                slot = waiter
                    .ready
                    .wait(slot)
                    .unwrap_or_else(PoisonError::into_inner);
            }
        }
    }

    /// Checks a binding out for `dims` if one is idle or may be made now; `Ok(None)` when
    /// all `capacity` are checked out.
    pub fn try_get(&self, dims: &Io::Dims) -> Result<Option<PooledBinding<Io>>> {
        match self.attempt(dims, false) {
            Attempt::Got(bound) => self.prepare(bound, dims).map(Some),
            Attempt::Make => self.made(dims).map(Some),
            Attempt::Wait(_) | Attempt::Busy => Ok(None),
        }
    }

    /// Checks a binding out for `dims` asynchronously: the future resolves when one is
    /// idle, may be made, or comes back (it is woken then; no polling). Dropping the future
    /// gives up its place in the queue (a binding already handed to it goes to the next).
    pub fn get_async(&self, dims: &Io::Dims) -> GetFuture<Io> {
        GetFuture {
            pool: self.clone(),
            dims: dims.clone(),
            waiter: None,
        }
    }

    /// An idle binding (the best for `dims`), leave to make one, or (with `wait`) a place
    /// in the queue.
    fn attempt(&self, dims: &Io::Dims, wait: bool) -> Attempt<Io> {
        let mut state = lock(&self.shared.state);
        if !state.idle.is_empty() {
            let best = best_for(&state.idle, dims);
            return Attempt::Got(state.idle.swap_remove(best));
        }
        if state.created < self.shared.capacity {
            state.created += 1;
            return Attempt::Make;
        }
        if !wait {
            return Attempt::Busy;
        }
        let waiter = Arc::new(Waiter {
            slot: Mutex::new(Slot {
                bound: None,
                retry: false,
                gone: false,
                waker: None,
            }),
            ready: Condvar::new(),
        });
        state.waiters.push_back(Arc::clone(&waiter));
        Attempt::Wait(waiter)
    }

    /// Makes a binding for the room `attempt` reserved, giving the room back on failure.
    fn make(&self, dims: &Io::Dims) -> Result<Binding<Io>> {
        (self.shared.make)(dims).inspect_err(|_| self.shared.unreserve())
    }

    fn made(&self, dims: &Io::Dims) -> Result<PooledBinding<Io>> {
        let bound = self.make(dims)?;
        self.prepare(bound, dims)
    }

    fn prepare(&self, mut bound: Binding<Io>, dims: &Io::Dims) -> Result<PooledBinding<Io>> {
        match bound.set_dims(dims) {
            Ok(()) => Ok(PooledBinding {
                bound: Some(bound),
                shared: Arc::clone(&self.shared),
            }),
            Err(e) => {
                self.shared.put(bound);
                Err(e)
            }
        }
    }
}

/// The idle binding to hand out for `dims`: one set to them, else one that kept them among
/// its recent dims, else the one returned last; a binding whose dropped asynchronous run is
/// still stopping (its first use would wait for it) only when every idle binding is such.
fn best_for<Io: BindingIo>(idle: &[Binding<Io>], dims: &Io::Dims) -> usize {
    let mut best = idle.len() - 1;
    let mut score = 0;
    for (i, bound) in idle.iter().enumerate().rev() {
        // 1 + how cheaply it switches to `dims`; 0 while busy.
        let s = if bound.busy() {
            0
        } else {
            1 + bound.dims_score(dims)
        };
        if s > score {
            (best, score) = (i, s);
            if s == 3 {
                break;
            }
        }
    }
    best
}

impl<Io: BindingIo> Shared<Io> {
    /// Takes a binding back: to the first waiter still waiting, else to the idle list.
    /// Every stop taken for its runs ends here, so none reaches the next checkout's runs.
    fn put(&self, bound: Binding<Io>) {
        bound.end_stops();
        let mut state = lock(&self.state);
        let mut bound = Some(bound);
        while let Some(waiter) = state.waiters.pop_front() {
            let mut slot = lock(&waiter.slot);
            if slot.gone {
                continue;
            }
            slot.bound = bound.take();
            let waker = slot.waker.take();
            drop(slot);
            drop(state);
            waiter.ready.notify_one();
            if let Some(waker) = waker {
                waker.wake();
            }
            return;
        }
        if let Some(bound) = bound {
            state.idle.push(bound);
        }
    }

    /// Gives back the room of a binding that could not be made; the first waiter tries to
    /// make one itself.
    fn unreserve(&self) {
        let mut state = lock(&self.state);
        state.created -= 1;
        while let Some(waiter) = state.waiters.pop_front() {
            let mut slot = lock(&waiter.slot);
            if slot.gone {
                continue;
            }
            slot.retry = true;
            let waker = slot.waker.take();
            drop(slot);
            waiter.ready.notify_one();
            if let Some(waker) = waker {
                waker.wake();
            }
            return;
        }
    }
}

/// A binding checked out of a [`Pool`]; dereferences to the [`Binding`] and goes back to the
/// pool when dropped.
pub struct PooledBinding<Io: BindingIo> {
    bound: Option<Binding<Io>>,
    shared: Arc<Shared<Io>>,
}

impl<Io: BindingIo> fmt::Debug for PooledBinding<Io> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("PooledBinding").field(&self.bound).finish()
    }
}

impl<Io: BindingIo> PooledBinding<Io> {
    /// Takes the binding out of the pool for good; the pool may then make another.
    pub fn detach(mut self) -> Option<Binding<Io>> {
        let bound = self.bound.take();
        self.shared.unreserve();
        bound
    }
}

impl<Io: BindingIo> Deref for PooledBinding<Io> {
    type Target = Binding<Io>;
    fn deref(&self) -> &Binding<Io> {
        // Only `detach` and `drop` take it, and both consume the guard.
        self.bound.as_ref().unwrap_or_else(|| unreachable!())
    }
}

impl<Io: BindingIo> DerefMut for PooledBinding<Io> {
    fn deref_mut(&mut self) -> &mut Binding<Io> {
        self.bound.as_mut().unwrap_or_else(|| unreachable!())
    }
}

impl<Io: BindingIo> Drop for PooledBinding<Io> {
    fn drop(&mut self) {
        if let Some(bound) = self.bound.take() {
            self.shared.put(bound);
        }
    }
}

/// The future of [`Pool::get_async`].
#[must_use = "a checkout happens only when its future is polled (`.await`)"]
pub struct GetFuture<Io: BindingIo> {
    pool: Pool<Io>,
    dims: Io::Dims,
    waiter: Option<Arc<Waiter<Io>>>,
}

impl<Io: BindingIo> fmt::Debug for GetFuture<Io> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GetFuture")
            .field("waiting", &self.waiter.is_some())
            .finish_non_exhaustive()
    }
}

impl<Io: BindingIo> Unpin for GetFuture<Io> {}

impl<Io: BindingIo> Future for GetFuture<Io> {
    type Output = Result<PooledBinding<Io>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        loop {
            if let Some(waiter) = &this.waiter {
                let mut slot = lock(&waiter.slot);
                if let Some(bound) = slot.bound.take() {
                    drop(slot);
                    this.waiter = None;
                    return Poll::Ready(this.pool.prepare(bound, &this.dims));
                }
                if !slot.retry {
                    match &slot.waker {
                        Some(w) if w.will_wake(cx.waker()) => {}
                        _ => slot.waker = Some(cx.waker().clone()),
                    }
                    return Poll::Pending;
                }
                drop(slot);
                this.waiter = None;
            }
            match this.pool.attempt(&this.dims, true) {
                Attempt::Got(bound) => return Poll::Ready(this.pool.prepare(bound, &this.dims)),
                Attempt::Make => return Poll::Ready(this.pool.made(&this.dims)),
                Attempt::Wait(waiter) => {
                    lock(&waiter.slot).waker = Some(cx.waker().clone());
                    this.waiter = Some(waiter);
                    // Loop once more: a binding may have been handed over meanwhile.
                }
                Attempt::Busy => {}
            }
        }
    }
}

impl<Io: BindingIo> Drop for GetFuture<Io> {
    fn drop(&mut self) {
        if let Some(waiter) = self.waiter.take() {
            let mut slot = lock(&waiter.slot);
            slot.gone = true;
            let handed = slot.bound.take();
            let retry = slot.retry;
            drop(slot);
            if let Some(bound) = handed {
                self.pool.shared.put(bound);
            } else if retry {
                // Pass the chance to make a binding on to the next waiter.
                let mut state = lock(&self.pool.shared.state);
                state.created += 1;
                drop(state);
                self.pool.shared.unreserve();
            }
        }
    }
}
