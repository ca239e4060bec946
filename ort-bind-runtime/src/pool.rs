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

type Make<T> = dyn Fn(&<T as Poolable>::Dims) -> Result<T> + Send + Sync;

/// A pool of at most `capacity` bindings of one model: [`PoolOf`] of [`Binding`]s. See the
/// [module docs](self).
pub type Pool<Io> = PoolOf<Binding<Io>>;

/// A binding checked out of a [`Pool`]; dereferences to the [`Binding`] and goes back to the
/// pool when dropped.
pub type PooledBinding<Io> = CheckedOut<Binding<Io>>;

/// The future of [`Pool::get_async`].
pub type GetFuture<Io> = CheckoutFuture<Binding<Io>>;

/// What a [`PoolOf`] lends: [`Binding`]s (a [`Pool`]) and decoders
/// ([`DecoderPool`](crate::decode::DecoderPool)). Sealed: the pool relies on how each
/// gives up its runs when it comes back.
pub trait Poolable: Sized + fmt::Debug + sealed::Sealed {
    /// What a checkout asks for ([`BindingIo::Dims`] for a binding; `()` for a decoder).
    type Dims: Clone;

    /// How well an idle one serves `dims`: 0 while a run of a dropped asynchronous future
    /// is still stopping (its first use would wait), else 1 + how cheaply it switches.
    #[doc(hidden)]
    fn fit(&self, dims: &Self::Dims) -> u8;

    /// Readies it for a checkout for `dims`.
    #[doc(hidden)]
    fn prepare(&mut self, dims: &Self::Dims) -> Result<()>;

    /// It came back: every stop taken for its runs ends, so none reaches the next
    /// checkout's runs.
    #[doc(hidden)]
    fn returned(&mut self);
}

/// Seals [`Poolable`]: implemented here for bindings and in `decode` for decoders.
pub(crate) mod sealed {
    pub trait Sealed {}
    impl<Io: crate::BindingIo> Sealed for crate::Binding<Io> {}
}

impl<Io: BindingIo> Poolable for Binding<Io> {
    type Dims = Io::Dims;

    fn fit(&self, dims: &Io::Dims) -> u8 {
        if self.busy() {
            0
        } else {
            1 + self.dims_score(dims)
        }
    }

    fn prepare(&mut self, dims: &Io::Dims) -> Result<()> {
        self.set_dims(dims)
    }

    fn returned(&mut self) {
        self.end_stops();
    }
}

/// A pool of at most `capacity` values of one kind (bindings of one model: [`Pool`];
/// decoders: [`DecoderPool`](crate::decode::DecoderPool)), made on demand; cheap to clone
/// (shared), `Send + Sync` when the values are `Send`. See the [module docs](self).
pub struct PoolOf<T: Poolable> {
    shared: Arc<Shared<T>>,
}

struct Shared<T: Poolable> {
    make: Box<Make<T>>,
    capacity: usize,
    state: Mutex<State<T>>,
}

struct State<T: Poolable> {
    idle: Vec<T>,
    created: usize,
    waiters: VecDeque<Arc<Waiter<T>>>,
}

/// One checkout waiting for a binding.
struct Waiter<T: Poolable> {
    slot: Mutex<Slot<T>>,
    ready: Condvar,
}

struct Slot<T: Poolable> {
    /// A binding handed over by `put`.
    bound: Option<T>,
    /// Room to make a binding freed up (one failed to be made): try again.
    retry: bool,
    /// The checkout gave up (its future was dropped): hand nothing over.
    gone: bool,
    waker: Option<Waker>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<T: Poolable> Clone for PoolOf<T> {
    fn clone(&self) -> Self {
        PoolOf {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<T: Poolable> fmt::Debug for PoolOf<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = lock(&self.shared.state);
        f.debug_struct("PoolOf")
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
enum Attempt<T: Poolable> {
    Got(T),
    /// Room for one more: the caller makes it (outside the lock).
    Make,
    Wait(Arc<Waiter<T>>),
    Busy,
}

impl<T: Poolable> PoolOf<T> {
    /// A pool of at most `capacity` bindings (at least 1), made on demand by `make` for the
    /// dims of the request that needs one.
    pub fn new(
        capacity: usize,
        make: impl Fn(&T::Dims) -> Result<T> + Send + Sync + 'static,
    ) -> PoolOf<T> {
        let capacity = capacity.max(1);
        PoolOf {
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
    pub fn fill(&self, dims: &T::Dims) -> Result<()> {
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
                result = bound.prepare(dims);
            }
            self.shared.put(bound);
        }
        result
    }

    /// Checks a binding out for `dims`, blocking while all `capacity` are checked out.
    /// The binding is set to `dims` (see the [module docs](self) for capacity reuse).
    pub fn get(&self, dims: &T::Dims) -> Result<CheckedOut<T>> {
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
    pub fn try_get(&self, dims: &T::Dims) -> Result<Option<CheckedOut<T>>> {
        match self.attempt(dims, false) {
            Attempt::Got(bound) => self.prepare(bound, dims).map(Some),
            Attempt::Make => self.made(dims).map(Some),
            Attempt::Wait(_) | Attempt::Busy => Ok(None),
        }
    }

    /// Checks a binding out for `dims` asynchronously: the future resolves when one is
    /// idle, may be made, or comes back (it is woken then; no polling). Dropping the future
    /// gives up its place in the queue (a binding already handed to it goes to the next).
    pub fn get_async(&self, dims: &T::Dims) -> CheckoutFuture<T> {
        CheckoutFuture {
            pool: self.clone(),
            dims: dims.clone(),
            waiter: None,
        }
    }

    /// An idle binding (the best for `dims`), leave to make one, or (with `wait`) a place
    /// in the queue.
    fn attempt(&self, dims: &T::Dims, wait: bool) -> Attempt<T> {
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
    fn make(&self, dims: &T::Dims) -> Result<T> {
        (self.shared.make)(dims).inspect_err(|_| self.shared.unreserve())
    }

    fn made(&self, dims: &T::Dims) -> Result<CheckedOut<T>> {
        let bound = self.make(dims)?;
        self.prepare(bound, dims)
    }

    fn prepare(&self, mut bound: T, dims: &T::Dims) -> Result<CheckedOut<T>> {
        match bound.prepare(dims) {
            Ok(()) => Ok(CheckedOut {
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
fn best_for<T: Poolable>(idle: &[T], dims: &T::Dims) -> usize {
    let mut best = idle.len() - 1;
    let mut score = 0;
    for (i, bound) in idle.iter().enumerate().rev() {
        // 1 + how cheaply it switches to `dims`; 0 while busy.
        let s = bound.fit(dims);
        if s > score {
            (best, score) = (i, s);
            if s == 3 {
                break;
            }
        }
    }
    best
}

impl<T: Poolable> Shared<T> {
    /// Takes a binding back: to the first waiter still waiting, else to the idle list.
    /// Every stop taken for its runs ends here, so none reaches the next checkout's runs.
    fn put(&self, mut bound: T) {
        bound.returned();
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
pub struct CheckedOut<T: Poolable> {
    bound: Option<T>,
    shared: Arc<Shared<T>>,
}

impl<T: Poolable> fmt::Debug for CheckedOut<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("CheckedOut").field(&self.bound).finish()
    }
}

impl<T: Poolable> CheckedOut<T> {
    /// Takes the binding out of the pool for good; the pool may then make another.
    pub fn detach(mut self) -> Option<T> {
        let bound = self.bound.take();
        self.shared.unreserve();
        bound
    }
}

impl<T: Poolable> Deref for CheckedOut<T> {
    type Target = T;
    fn deref(&self) -> &T {
        // Only `detach` and `drop` take it, and both consume the guard.
        self.bound.as_ref().unwrap_or_else(|| unreachable!())
    }
}

impl<T: Poolable> DerefMut for CheckedOut<T> {
    fn deref_mut(&mut self) -> &mut T {
        self.bound.as_mut().unwrap_or_else(|| unreachable!())
    }
}

impl<T: Poolable> Drop for CheckedOut<T> {
    fn drop(&mut self) {
        if let Some(bound) = self.bound.take() {
            self.shared.put(bound);
        }
    }
}

/// The future of [`Pool::get_async`].
#[must_use = "a checkout happens only when its future is polled (`.await`)"]
pub struct CheckoutFuture<T: Poolable> {
    pool: PoolOf<T>,
    dims: T::Dims,
    waiter: Option<Arc<Waiter<T>>>,
}

impl<T: Poolable> fmt::Debug for CheckoutFuture<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CheckoutFuture")
            .field("waiting", &self.waiter.is_some())
            .finish_non_exhaustive()
    }
}

impl<T: Poolable> Unpin for CheckoutFuture<T> {}

impl<T: Poolable> Future for CheckoutFuture<T> {
    type Output = Result<CheckedOut<T>>;

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

impl<T: Poolable> Drop for CheckoutFuture<T> {
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
