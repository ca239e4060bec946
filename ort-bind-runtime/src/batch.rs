//! Dynamic batching: single-item requests from many callers gathered along the model's
//! batch axis into one run, results scattered back to each caller.
//!
//! A [`Batcher`] owns `workers` bindings (one worker thread each). A request
//! ([`Batcher::submit`], or [`Batcher::submit_async`] from async code) joins a queue; a
//! free worker takes the first request and waits for more until it has `max_batch` or the
//! first has waited `max_delay`, sets its binding to the batch's dims (shape buckets make
//! switching between recent batch sizes nearly free, and capacity for `max_batch` is
//! allocated once), writes each request's item into its row of the bound inputs
//! ([`Batching::gather`]), runs, and reads each row back ([`Batching::scatter`]): the only
//! copies are these two, into and out of the bound buffers. While one worker runs, another
//! gathers the next batch.
//!
//! What a batch is for a model (its dims for `n` items, where an item's rows go) is a
//! [`Batching`] value: generic over [`BindingIo`], so generated modules, the derive and
//! hand-written `Io`s batch alike.

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::binding::{BindingIo, Bound};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::shape::Shape;
use crate::tensor::{TensorMut, TensorRef};

/// How single items of a model batch: implemented once per model (by hand, or by code
/// generation where the batch axis is known).
pub trait Batching<Io: BindingIo>: Send + Sync + 'static {
    /// One request's inputs.
    type Item: Send + 'static;
    /// One request's result.
    type Reply: Send + 'static;
    /// The dims of a batch of `n` items (`1 <= n <= max_batch`).
    fn dims(&self, n: usize) -> Io::Dims;
    /// Writes `item` into row `row` of the inputs (the binding is set to `dims(n)`).
    fn gather(&self, inputs: &mut Io::InputsMut<'_>, row: usize, item: &Self::Item) -> Result<()>;
    /// Reads row `row` of the outputs after the run.
    fn scatter(&self, outputs: &Io::OutputsRef<'_>, row: usize) -> Result<Self::Reply>;
    /// Checks `item` when it is submitted, so that a malformed request fails alone
    /// instead of failing the batch it would have joined (default: accepts every item).
    fn check(&self, item: &Self::Item) -> Result<()> {
        let _ = item;
        Ok(())
    }
}

/// Copies one item into row `row` (along axis 0) of a batched input: what a
/// [`Batching::gather`] does per input. `item` must hold exactly one row (the input's
/// shape without its batch axis, row-major); otherwise [`Error::Length`] names the input.
pub fn gather_row<T: Element, S: Shape>(
    input: &mut TensorMut<'_, T, S>,
    row: usize,
    item: &[T],
) -> Result<()> {
    let (name, dims) = (input.name().to_owned(), input.dims().to_vec());
    let dst = input.row_mut(row)?;
    if dst.len() != item.len() {
        return Err(Error::Length {
            tensor: name,
            expected: dst.len(),
            found: item.len(),
            dims: dims.get(1..).unwrap_or_default().to_vec(),
        });
    }
    dst.copy_from_slice(item);
    Ok(())
}

/// Checks that `item` holds one row of input `input` batched to `batch_dims` (what a
/// [`Batching::check`] does per input): [`Error::Length`] names the input otherwise.
pub fn check_row<T>(input: &str, batch_dims: &[usize], item: &[T]) -> Result<()> {
    let row = batch_dims.get(1..).unwrap_or_default();
    let expected = row.iter().product::<usize>();
    if item.len() == expected {
        return Ok(());
    }
    Err(Error::Length {
        tensor: input.to_owned(),
        expected,
        found: item.len(),
        dims: row.to_vec(),
    })
}

/// Copies row `row` (along axis 0) of a batched output out: what a
/// [`Batching::scatter`] does per output (the reply must outlive the bound buffer, so
/// this is the one allocation per reply).
pub fn scatter_row<T: Element, S: Shape>(
    output: &TensorRef<'_, T, S>,
    row: usize,
) -> Result<Vec<T>> {
    Ok(output.row(row)?.to_vec())
}

/// Limits of a [`Batcher`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchOptions {
    /// The most items in one run.
    pub max_batch: usize,
    /// How long the first request of a batch waits for others.
    pub max_delay: Duration,
    /// Worker threads, each with its own binding (2 lets one gather while one runs).
    pub workers: usize,
}

impl Default for BatchOptions {
    fn default() -> Self {
        BatchOptions {
            max_batch: 8,
            max_delay: Duration::from_millis(2),
            workers: 2,
        }
    }
}

/// Runs single-item requests in batches; see the [module docs](self). Dropping it serves
/// the requests already queued, then stops its workers.
pub struct Batcher<Io: BindingIo, B: Batching<Io>> {
    spec: Arc<B>,
    queue: Arc<Queue<B::Item, B::Reply>>,
    workers: Vec<JoinHandle<()>>,
    _io: PhantomData<fn() -> (Io, B)>,
}

/// The requests waiting, shared by callers and workers.
struct Queue<Item, Reply> {
    state: Mutex<Waiting<Item, Reply>>,
    arrived: Condvar,
    runs: AtomicU64,
    items: AtomicU64,
}

struct Waiting<Item, Reply> {
    requests: VecDeque<Request<Item, Reply>>,
    closed: bool,
}

struct Request<Item, Reply> {
    item: Item,
    at: Instant,
    reply: Arc<ReplySlot<Reply>>,
}

/// Where a worker leaves one request's result.
struct ReplySlot<R> {
    state: Mutex<(Option<Result<R>>, Option<Waker>)>,
    ready: Condvar,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<R> ReplySlot<R> {
    fn new() -> Arc<Self> {
        Arc::new(ReplySlot {
            state: Mutex::new((None, None)),
            ready: Condvar::new(),
        })
    }

    fn send(&self, result: Result<R>) {
        let waker = {
            let mut state = lock(&self.state);
            state.0 = Some(result);
            self.ready.notify_one();
            state.1.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    fn wait(&self) -> Result<R> {
        let mut state = lock(&self.state);
        loop {
            if let Some(result) = state.0.take() {
                return result;
            }
            state = self
                .ready
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

impl<Io: BindingIo, B: Batching<Io>> fmt::Debug for Batcher<Io, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Batcher")
            .field("workers", &self.workers.len())
            .field("runs", &self.queue.runs.load(Ordering::Relaxed))
            .field("items", &self.queue.items.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl<Io, B> Batcher<Io, B>
where
    Io: BindingIo + Send + 'static,
    B: Batching<Io>,
{
    /// Starts `options.workers` workers, each with a binding from `make` (called with the
    /// dims of a full batch, so that capacity for `max_batch` items is allocated once).
    pub fn new(
        spec: B,
        options: BatchOptions,
        make: impl Fn(&Io::Dims) -> Result<Bound<Io>>,
    ) -> Result<Self> {
        let options = BatchOptions {
            max_batch: options.max_batch.max(1),
            workers: options.workers.max(1),
            ..options
        };
        let full = spec.dims(options.max_batch);
        let bindings = (0..options.workers)
            .map(|_| make(&full))
            .collect::<Result<Vec<_>>>()?;
        let queue = Arc::new(Queue {
            state: Mutex::new(Waiting {
                requests: VecDeque::new(),
                closed: false,
            }),
            arrived: Condvar::new(),
            runs: AtomicU64::new(0),
            items: AtomicU64::new(0),
        });
        let spec = Arc::new(spec);
        let mut workers = Vec::with_capacity(options.workers);
        for (i, bound) in bindings.into_iter().enumerate() {
            let (q, worker_spec) = (Arc::clone(&queue), Arc::clone(&spec));
            let spawned = std::thread::Builder::new()
                .name(format!("ort-bind-batch-{i}"))
                .spawn(move || work(&q, &*worker_spec, options, bound));
            match spawned {
                Ok(handle) => workers.push(handle),
                Err(e) => {
                    let batcher: Batcher<Io, B> = Batcher {
                        spec,
                        queue,
                        workers,
                        _io: PhantomData,
                    };
                    drop(batcher);
                    return Err(Error::Io {
                        path: "an ort-bind batch worker thread".into(),
                        source: e,
                    });
                }
            }
        }
        Ok(Batcher {
            spec,
            queue,
            workers,
            _io: PhantomData,
        })
    }
}

impl<Io: BindingIo, B: Batching<Io>> Batcher<Io, B> {
    fn enqueue(&self, item: B::Item) -> Arc<ReplySlot<B::Reply>> {
        let reply = ReplySlot::new();
        if let Err(e) = self.spec.check(&item) {
            reply.send(Err(e));
            return reply;
        }
        let mut state = lock(&self.queue.state);
        state.requests.push_back(Request {
            item,
            at: Instant::now(),
            reply: Arc::clone(&reply),
        });
        drop(state);
        self.queue.arrived.notify_one();
        reply
    }

    /// Runs `item` in the next batch and returns its result (blocks until then). An
    /// item [`Batching::check`] refuses fails at once with that error.
    pub fn submit(&self, item: B::Item) -> Result<B::Reply> {
        self.enqueue(item).wait()
    }

    /// Runs `item` in the next batch; the future resolves to its result (woken by the
    /// worker; no polling). The request is queued at once; dropping the future discards
    /// its result.
    pub fn submit_async(&self, item: B::Item) -> ReplyFuture<B::Reply> {
        ReplyFuture {
            slot: self.enqueue(item),
        }
    }

    /// Runs made and items served so far (`items / runs` is the mean batch size).
    pub fn stats(&self) -> (u64, u64) {
        (
            self.queue.runs.load(Ordering::Relaxed),
            self.queue.items.load(Ordering::Relaxed),
        )
    }
}

impl<Io: BindingIo, B: Batching<Io>> Drop for Batcher<Io, B> {
    fn drop(&mut self) {
        lock(&self.queue.state).closed = true;
        self.queue.arrived.notify_all();
        for worker in self.workers.drain(..) {
            let _ = worker.join();
        }
    }
}

/// The future of [`Batcher::submit_async`].
#[must_use = "the result arrives through the future"]
pub struct ReplyFuture<R> {
    slot: Arc<ReplySlot<R>>,
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
        if let Some(result) = state.0.take() {
            return Poll::Ready(result);
        }
        match &state.1 {
            Some(w) if w.will_wake(cx.waker()) => {}
            _ => state.1 = Some(cx.waker().clone()),
        }
        Poll::Pending
    }
}

/// A worker: gather a batch, run it, scatter the results; until closed and drained.
fn work<Io: BindingIo, B: Batching<Io>>(
    queue: &Queue<B::Item, B::Reply>,
    spec: &B,
    options: BatchOptions,
    mut bound: Bound<Io>,
) {
    let mut batch: Vec<Request<B::Item, B::Reply>> = Vec::with_capacity(options.max_batch);
    loop {
        {
            let mut state = lock(&queue.state);
            while state.requests.is_empty() {
                if state.closed {
                    return;
                }
                state = queue
                    .arrived
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            let deadline = state.requests[0].at + options.max_delay;
            while state.requests.len() < options.max_batch && !state.closed {
                let now = Instant::now();
                if now >= deadline {
                    break;
                }
                state = queue
                    .arrived
                    .wait_timeout(state, deadline - now)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
            let n = state.requests.len().min(options.max_batch);
            batch.extend(state.requests.drain(..n));
            // Others may be waiting: let the next worker start gathering.
            if !state.requests.is_empty() {
                queue.arrived.notify_one();
            }
        }
        // Counted before the replies go out, so a caller that has its reply sees it counted.
        queue.runs.fetch_add(1, Ordering::Relaxed);
        queue.items.fetch_add(batch.len() as u64, Ordering::Relaxed);
        run_batch(spec, &mut bound, &mut batch);
        batch.clear();
    }
}

fn run_batch<Io: BindingIo, B: Batching<Io>>(
    spec: &B,
    bound: &mut Bound<Io>,
    batch: &mut [Request<B::Item, B::Reply>],
) {
    let prepared = bound.set_dims(&spec.dims(batch.len())).and_then(|()| {
        let mut inputs = bound.inputs();
        batch
            .iter()
            .enumerate()
            .try_for_each(|(row, r)| spec.gather(&mut inputs, row, &r.item))
    });
    if let Err(e) = prepared.and_then(|()| bound.run()) {
        let message = e.to_string();
        for r in batch.iter() {
            r.reply.send(Err(Error::Batch {
                message: message.clone(),
            }));
        }
        return;
    }
    let outputs = bound.outputs();
    for (row, r) in batch.iter().enumerate() {
        r.reply.send(spec.scatter(&outputs, row));
    }
}
