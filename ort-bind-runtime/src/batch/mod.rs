//! Dynamic batching: single-item requests from many callers gathered along the model's
//! batch axis into one run, results scattered back to each caller.
//!
//! A [`Batcher`] runs `workers` worker threads, each with its own binding. A request
//! ([`Batcher::submit`], [`Batcher::submit_async`], or their `_with_timeout` forms) is
//! checked when it is submitted ([`Batching::item_dims`]: a malformed item fails alone,
//! before it joins a batch) and joins a queue. A free worker takes the oldest request and
//! the queued requests of the same dims, up to the size limit, waiting up to `max_delay`
//! for more when the limit is above 1; sets its binding to the batch's dims (shape buckets
//! make switching between recent sizes free; capacity grows once); writes each item into
//! its row of the bound inputs ([`Batching::gather`]); runs; and reads each row back
//! ([`Batching::scatter`]). The only copies are these two. While one worker runs,
//! another gathers the next batch.
//!
//! - **Size limit**: [`BatchSizing::Adaptive`] (the default) measures the throughput at
//!   each batch size and serves at the best, down to 1 (no batching, no waiting) on a
//!   model that runs slower per item in batches; [`BatchSizing::Fixed`] always allows
//!   `max_batch`. [`Batcher::sizing`] reports what was measured.
//! - **Giving up**: a dropped [`ReplyFuture`], or a request whose timeout passed, is not
//!   run if no worker has taken it yet (its caller gets [`Error::TimedOut`]). A request
//!   already in a running batch runs to the end.
//! - **Adapters**: [`Batcher::submit_with_adapter`] runs a request with a LoRA
//!   [`Adapter`] (checked against the model when submitted, so a misfit fails alone).
//!   Requests batch only with requests of the same adapter (or none); a worker sets the
//!   batch's adapter on its binding when it differs from its last batch's (a rebind).
//! - **Errors**: a batch that fails gives each of its callers [`Error::Batch`], whose
//!   `cause` is the batch's own error (shared), to match on.
//! - **Shutdown**: dropping a batcher never blocks: its workers serve what is queued, then
//!   exit. [`Batcher::shutdown`] returns a future (or [`Shutdown::wait`]) that completes
//!   once they have.
//!
//! What a batch is for a model (the dims of an item, where its rows go) is a
//! [`Batching`] value: generic over [`BindingIo`], so generated modules and hand-written
//! `Io`s batch alike.

mod request;
mod rows;
mod sizing;

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use crate::adapter::{Adapter, BoundAdapter};
use crate::binding::{Binding, BindingIo};
use crate::deadline;
use crate::error::{Error, Result};
pub use request::ReplyFuture;
use request::{ReplySlot, Request};
pub use rows::{Row, gather_row, scatter_row};
pub use sizing::BatchSizing;
use sizing::Sizer;

/// How single items of a model batch: implemented once per model (by hand, or by code
/// generation where the batch axis is known).
pub trait Batching<Io: BindingIo>: Send + Sync + 'static {
    /// One request's inputs.
    type Item: Send + 'static;
    /// One request's result.
    type Reply: Send + 'static;
    /// The dims of a batch holding `item` alone, checked against the model: called when
    /// the item is submitted, so a malformed item fails alone. Items batch together when
    /// their dims are equal.
    fn item_dims(&self, item: &Self::Item) -> Result<Io::Dims>;
    /// `item_dims` (a batch of one) with the batch dim set to `n`.
    fn batch_dims(&self, item_dims: &Io::Dims, n: usize) -> Io::Dims;
    /// Writes `item` into row `row` of the inputs (the binding is set to the batch's dims).
    fn gather(&self, inputs: &mut Io::InputsMut<'_>, row: usize, item: &Self::Item) -> Result<()>;
    /// Reads row `row` of the outputs after the run.
    fn scatter(&self, outputs: &Io::OutputsRef<'_>, row: usize) -> Result<Self::Reply>;
}

/// What a generated module's `Model::batcher` asks of its argument where the model has
/// no known batch dim: nothing implements it, so calling that `batcher` is a compile
/// error that says how to name the batch dim.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "this model has no known batch dim, so it has no batcher",
    label = "`batcher` needs the model's batch dim",
    note = "name it with `batch_dim(\"N\")` in `bindings!`, or `ModelOptions::batch_dim(\"N\")` in build.rs: a dim on axis 0 of every input and output and on no other axis (a dim named `batch` or `batch_size` that fits is found without it)"
)]
pub trait NoBatchDim {
    /// Never called: no type implements the trait.
    fn unavailable(self) -> std::convert::Infallible;
}

/// Limits of a [`Batcher`]. `..Default::default()` includes [`BatchSizing::Adaptive`],
/// which measures each batch size and may serve below `max_batch`; write
/// `sizing: BatchSizing::Fixed` to serve every batch up to `max_batch` (what a batcher did
/// before sizing was added).
///
/// ```
/// use std::time::Duration;
/// use ort_bind_runtime::{BatchOptions, BatchSizing};
/// let options = BatchOptions { max_batch: 16, max_delay: Duration::from_millis(1), ..Default::default() };
/// assert_eq!((options.workers, options.sizing), (2, BatchSizing::Adaptive));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchOptions {
    /// The most items in one run.
    pub max_batch: usize,
    /// How long the first request of a batch waits for others (when the size limit is
    /// above 1).
    pub max_delay: Duration,
    /// Worker threads, each with its own binding (2 lets one gather while one runs; with
    /// one intra-op thread per session, one per core runs that many batches at once).
    pub workers: usize,
    /// How the size limit is chosen: measured ([`BatchSizing::Adaptive`], the default) or
    /// always `max_batch`.
    pub sizing: BatchSizing,
}

impl Default for BatchOptions {
    fn default() -> Self {
        BatchOptions {
            max_batch: 8,
            max_delay: Duration::from_millis(2),
            workers: 2,
            sizing: BatchSizing::Adaptive,
        }
    }
}

/// What a [`Batcher`] has measured: see [`Batcher::sizing`].
#[derive(Debug, Clone, PartialEq)]
pub struct SizingReport {
    /// The size limit batches are served at (apart from windows that re-measure another).
    pub chosen: usize,
    /// Each size tried, with the throughput measured at it, in items per second (`None`:
    /// not measured yet; always `None` with [`BatchSizing::Fixed`]).
    pub throughput: Vec<(usize, Option<f64>)>,
}

/// Makes a worker's binding for the dims of a batch (capacity for a full batch).
type MakeBinding<Io> = dyn Fn(&<Io as BindingIo>::Dims) -> Result<Binding<Io>> + Send + Sync;

/// Runs single-item requests in batches; see the [module docs](self). Dropping it lets its
/// workers serve the requests already queued and exit, without waiting for them.
pub struct Batcher<Io: BindingIo, B: Batching<Io>> {
    spec: Arc<B>,
    shared: Arc<Shared<Io, B>>,
}

/// What callers and workers share.
struct Shared<Io: BindingIo, B: Batching<Io>> {
    queue: Mutex<Waiting<B::Item, Io::Dims, B::Reply>>,
    arrived: Condvar,
    sizer: Sizer,
    options: BatchOptions,
    make: Box<MakeBinding<Io>>,
    runs: AtomicU64,
    items: AtomicU64,
    /// Workers still running, and the shutdown futures waiting for none.
    live: Mutex<(usize, Vec<Waker>)>,
    exited: Condvar,
}

struct Waiting<Item, Dims, Reply> {
    requests: VecDeque<Request<Item, Dims, Reply>>,
    closed: bool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<Io: BindingIo, B: Batching<Io>> fmt::Debug for Batcher<Io, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Batcher")
            .field("options", &self.shared.options)
            .field("runs", &self.shared.runs.load(Ordering::Relaxed))
            .field("items", &self.shared.items.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl<Io, B> Batcher<Io, B>
where
    Io: BindingIo + Send + 'static,
    B: Batching<Io>,
{
    /// Starts `options.workers` workers. Each makes its binding with `make` when its first
    /// batch arrives (called with that batch's dims at `max_batch` items, so capacity for
    /// a full batch is allocated once); a failure there fails that batch, and the next
    /// batch tries again.
    pub fn new(
        spec: B,
        options: BatchOptions,
        make: impl Fn(&Io::Dims) -> Result<Binding<Io>> + Send + Sync + 'static,
    ) -> Result<Self> {
        let options = BatchOptions {
            max_batch: options.max_batch.max(1),
            workers: options.workers.max(1),
            ..options
        };
        let shared = Arc::new(Shared {
            queue: Mutex::new(Waiting {
                requests: VecDeque::new(),
                closed: false,
            }),
            arrived: Condvar::new(),
            sizer: Sizer::new(options.sizing, options.max_batch),
            options,
            make: Box::new(make),
            runs: AtomicU64::new(0),
            items: AtomicU64::new(0),
            live: Mutex::new((0, Vec::new())),
            exited: Condvar::new(),
        });
        let spec = Arc::new(spec);
        let batcher = Batcher { spec, shared };
        for i in 0..options.workers {
            let (shared, spec) = (Arc::clone(&batcher.shared), Arc::clone(&batcher.spec));
            lock(&batcher.shared.live).0 += 1;
            let spawned = std::thread::Builder::new()
                .name(format!("ort-bind-batch-{i}"))
                .spawn(move || {
                    work(&shared, &*spec);
                    shared.exit();
                });
            if let Err(e) = spawned {
                batcher.shared.exit();
                // Dropping `batcher` closes the queue: the workers started stop.
                return Err(Error::Io {
                    path: "an ort-bind batch worker thread".into(),
                    source: e,
                });
            }
        }
        Ok(batcher)
    }
}

impl<Io: BindingIo, B: Batching<Io>> Batcher<Io, B> {
    fn enqueue(
        &self,
        item: B::Item,
        timeout: Option<Duration>,
        adapter: Option<&Adapter>,
    ) -> Arc<ReplySlot<B::Reply>> {
        let dims = match self.spec.item_dims(&item) {
            Ok(dims) => dims,
            Err(e) => return ReplySlot::answered(Err(e)),
        };
        // An adapter that does not fit fails its request alone, before it joins a batch.
        if let Some(a) = adapter
            && let Err(e) = BoundAdapter::new(a, Io::OVERRIDABLE, Io::OVERRIDABLE_AXES)
        {
            return ReplySlot::answered(Err(e));
        }
        let reply = ReplySlot::new();
        if let Some(timeout) = timeout
            && let Err(e) = deadline::schedule(&reply, 0, timeout)
        {
            return ReplySlot::answered(Err(e));
        }
        let mut queue = lock(&self.shared.queue);
        queue.requests.push_back(Request {
            item,
            dims,
            adapter: adapter.cloned(),
            at: Instant::now(),
            reply: Arc::clone(&reply),
        });
        drop(queue);
        self.shared.arrived.notify_one();
        reply
    }

    /// Runs `item` in the next batch of its dims and returns its result (blocks until
    /// then). An item [`Batching::item_dims`] refuses fails at once with that error.
    pub fn submit(&self, item: B::Item) -> Result<B::Reply> {
        self.enqueue(item, None, None).wait()
    }

    /// [`submit`](Self::submit) with a LoRA adapter: `item` runs in a batch of requests with
    /// the same adapter, its parameters bound as the model's overridable inputs (no copy).
    /// An adapter that does not fit the model fails this request alone
    /// ([`Error::Adapter`]).
    pub fn submit_with_adapter(&self, item: B::Item, adapter: &Adapter) -> Result<B::Reply> {
        self.enqueue(item, None, Some(adapter)).wait()
    }

    /// [`submit_async`](Self::submit_async) with a LoRA adapter (see
    /// [`submit_with_adapter`](Self::submit_with_adapter)).
    pub fn submit_async_with_adapter(
        &self,
        item: B::Item,
        adapter: &Adapter,
    ) -> ReplyFuture<B::Reply> {
        ReplyFuture {
            slot: self.enqueue(item, None, Some(adapter)),
        }
    }

    /// [`submit`](Self::submit), given up with [`Error::TimedOut`] if no batch has taken
    /// `item` within `timeout` (it is then never run). Once taken it runs to the end.
    pub fn submit_with_timeout(&self, item: B::Item, timeout: Duration) -> Result<B::Reply> {
        self.enqueue(item, Some(timeout), None).wait()
    }

    /// Runs `item` in the next batch of its dims; the future resolves to its result (woken
    /// by the worker; no polling). The request is queued at once; dropping the future
    /// gives it up (not run if no batch has taken it yet).
    pub fn submit_async(&self, item: B::Item) -> ReplyFuture<B::Reply> {
        ReplyFuture {
            slot: self.enqueue(item, None, None),
        }
    }

    /// [`submit_async`](Self::submit_async), resolving to [`Error::TimedOut`] if no batch
    /// has taken `item` within `timeout` (it is then never run).
    pub fn submit_async_with_timeout(
        &self,
        item: B::Item,
        timeout: Duration,
    ) -> ReplyFuture<B::Reply> {
        ReplyFuture {
            slot: self.enqueue(item, Some(timeout), None),
        }
    }

    /// Runs made and items served so far (`items / runs` is the mean batch size).
    pub fn stats(&self) -> (u64, u64) {
        (
            self.shared.runs.load(Ordering::Relaxed),
            self.shared.items.load(Ordering::Relaxed),
        )
    }

    /// The size limit batches are served at and the throughput measured at each size
    /// (see [`BatchSizing::Adaptive`]).
    pub fn sizing(&self) -> SizingReport {
        let (chosen, throughput) = self.shared.sizer.report();
        SizingReport { chosen, throughput }
    }

    /// Stops taking requests (there is no way to submit through a batcher given up) and
    /// returns a future that completes once the workers have served what is queued and
    /// exited; [`Shutdown::wait`] blocks for it instead.
    pub fn shutdown(self) -> Shutdown
    where
        Io: 'static,
    {
        let live = Arc::clone(&self.shared) as Arc<dyn Liveness>;
        drop(self);
        Shutdown { live }
    }
}

impl<Io: BindingIo, B: Batching<Io>> Drop for Batcher<Io, B> {
    fn drop(&mut self) {
        lock(&self.shared.queue).closed = true;
        self.shared.arrived.notify_all();
    }
}

impl<Io: BindingIo, B: Batching<Io>> Shared<Io, B> {
    /// A worker has exited.
    fn exit(&self) {
        let wakers = {
            let mut live = lock(&self.live);
            live.0 -= 1;
            self.exited.notify_all();
            if live.0 == 0 {
                std::mem::take(&mut live.1)
            } else {
                Vec::new()
            }
        };
        wakers.into_iter().for_each(Waker::wake);
    }
}

/// A batcher's workers, seen by [`Shutdown`] (whatever the batcher's types).
trait Liveness: Send + Sync {
    /// Whether every worker has exited; if not, `waker` is woken when they have.
    fn done_or_wake(&self, waker: Option<&Waker>) -> bool;
    /// Blocks until every worker has exited.
    fn wait(&self);
}

impl<Io: BindingIo, B: Batching<Io>> Liveness for Shared<Io, B> {
    fn done_or_wake(&self, waker: Option<&Waker>) -> bool {
        let mut live = lock(&self.live);
        if live.0 == 0 {
            return true;
        }
        if let Some(waker) = waker
            && !live.1.iter().any(|w| w.will_wake(waker))
        {
            live.1.push(waker.clone());
        }
        false
    }

    fn wait(&self) {
        let mut live = lock(&self.live);
        while live.0 > 0 {
            live = self
                .exited
                .wait(live)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// The future of [`Batcher::shutdown`]: completes once the batcher's workers have served
/// the requests queued before it and exited.
#[must_use = "the workers are known to have exited only once this completes"]
pub struct Shutdown {
    live: Arc<dyn Liveness>,
}

impl fmt::Debug for Shutdown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shutdown")
            .field("done", &self.live.done_or_wake(None))
            .finish()
    }
}

impl Shutdown {
    /// Blocks until the workers have exited (for code outside an async executor).
    pub fn wait(self) {
        self.live.wait();
    }
}

impl Future for Shutdown {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.live.done_or_wake(Some(cx.waker())) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

/// A worker: gather a batch, run it, scatter the results; until closed and drained.
fn work<Io: BindingIo, B: Batching<Io>>(shared: &Shared<Io, B>, spec: &B) {
    let options = shared.options;
    let mut bound: Option<Binding<Io>> = None;
    // The adapter the binding has set (`Some(None)`: none; `None`: not known, after a
    // failure), so a batch of another adapter sets its own.
    let mut adapter: Option<Option<usize>> = Some(None);
    let mut batch: Vec<Request<B::Item, Io::Dims, B::Reply>> =
        Vec::with_capacity(options.max_batch);
    // The batch dims this worker has run: ONNX Runtime's first run at new dims plans and
    // allocates, a cost of that run only, so it is not a measure of the size.
    let mut seen: Vec<Io::Dims> = Vec::new();
    loop {
        let limit = shared.sizer.limit();
        if gather(shared, limit, &mut batch).is_none() {
            return;
        }
        // Counted before the replies go out, so a caller that has its reply sees it counted.
        shared.runs.fetch_add(1, Ordering::Relaxed);
        shared
            .items
            .fetch_add(batch.len() as u64, Ordering::Relaxed);
        let dims = spec.batch_dims(&batch[0].dims, batch.len());
        // Bounded: past 256 dims, every batch counts.
        let first_at_dims = seen.len() < 256 && !seen.contains(&dims);
        let ran = run_batch(shared, spec, (&mut bound, &mut adapter), &batch, &dims);
        if ran && first_at_dims {
            seen.push(dims);
        }
        let counted = ran && !first_at_dims;
        shared
            .sizer
            .record(limit, batch.len(), Instant::now(), counted);
        batch.clear();
    }
}

/// Fills `batch` with up to `limit` wanted requests of one dims (the oldest request's),
/// waiting up to `max_delay` from its arrival for more when `limit > 1`. `None` once the
/// batcher is closed and the queue is empty.
fn gather<Io: BindingIo, B: Batching<Io>>(
    shared: &Shared<Io, B>,
    limit: usize,
    batch: &mut Vec<Request<B::Item, Io::Dims, B::Reply>>,
) -> Option<()> {
    let mut queue = lock(&shared.queue);
    loop {
        // Requests their callers gave up, or whose deadline passed, leave unrun.
        queue.requests.retain(|r| r.reply.wanted());
        if queue.requests.is_empty() {
            if queue.closed {
                return None;
            }
            queue = shared
                .arrived
                .wait(queue)
                .unwrap_or_else(PoisonError::into_inner);
            continue;
        }
        let now = Instant::now();
        let first = &queue.requests[0];
        let deadline = first.at + shared.options.max_delay;
        let same = queue
            .requests
            .iter()
            .filter(|r| r.batches_with(first))
            .count();
        if same >= limit || queue.closed || now >= deadline {
            take(&mut queue.requests, limit, batch);
            // Others may be waiting: let the next worker start gathering.
            if !queue.requests.is_empty() {
                shared.arrived.notify_one();
            }
            // Every request taken may have been given up between the check and the take.
            if !batch.is_empty() {
                return Some(());
            }
            continue;
        }
        queue = shared
            .arrived
            .wait_timeout(queue, deadline - now)
            .unwrap_or_else(PoisonError::into_inner)
            .0;
    }
}

/// Moves up to `limit` wanted requests that batch with the oldest one (its dims and
/// adapter) from the queue into `batch`, oldest first.
fn take<Item, Dims: PartialEq + Clone, Reply>(
    requests: &mut VecDeque<Request<Item, Dims, Reply>>,
    limit: usize,
    batch: &mut Vec<Request<Item, Dims, Reply>>,
) {
    let Some(first) = requests.front() else {
        return;
    };
    let (dims, adapter) = (first.dims.clone(), first.adapter_id());
    let mut i = 0;
    while i < requests.len() && batch.len() < limit {
        if requests[i].dims == dims && requests[i].adapter_id() == adapter {
            if let Some(r) = requests.remove(i)
                && r.reply.take()
            {
                batch.push(r);
            }
        } else {
            i += 1;
        }
    }
}

/// Runs one batch and answers each request; `true` when it ran (its time is a measure of
/// the model, not of a failure).
fn run_batch<Io: BindingIo, B: Batching<Io>>(
    shared: &Shared<Io, B>,
    spec: &B,
    (bound, adapter): (&mut Option<Binding<Io>>, &mut Option<Option<usize>>),
    batch: &[Request<B::Item, Io::Dims, B::Reply>],
    dims: &Io::Dims,
) -> bool {
    let prepared = prepare(shared, spec, bound, &batch[0], adapter, dims).and_then(|b| {
        {
            let mut inputs = b.inputs();
            batch
                .iter()
                .enumerate()
                .try_for_each(|(row, r)| spec.gather(&mut inputs, row, &r.item))?;
        }
        b.run()?;
        Ok(b)
    });
    match prepared {
        Ok(b) => {
            let outputs = b.outputs();
            for (row, r) in batch.iter().enumerate() {
                r.reply.send(spec.scatter(&outputs, row));
            }
            true
        }
        Err(e) => {
            let cause = Arc::new(e);
            for r in batch {
                r.reply.send(Err(Error::Batch {
                    cause: Arc::clone(&cause),
                }));
            }
            false
        }
    }
}

/// The worker's binding with the batch's adapter (`first`'s), set to `dims`: made on the
/// first batch (at `max_batch` items of `first`'s dims, so capacity for a full batch is
/// allocated once).
fn prepare<'b, Io: BindingIo, B: Batching<Io>>(
    shared: &Shared<Io, B>,
    spec: &B,
    bound: &'b mut Option<Binding<Io>>,
    first: &Request<B::Item, Io::Dims, B::Reply>,
    adapter: &mut Option<Option<usize>>,
    dims: &Io::Dims,
) -> Result<&'b mut Binding<Io>> {
    if bound.is_none() {
        let full = spec.batch_dims(&first.dims, shared.options.max_batch);
        let mut made = (shared.make)(&full)?;
        // A bucket per batch size (batches that do not fill take any size up to the
        // limit), so that switching sizes makes no ONNX Runtime call.
        made.keep_recent_dims(shared.options.max_batch.min(64) + 1);
        *bound = Some(made);
    }
    let b = bound.as_mut().expect("made above");
    let wanted = first.adapter_id();
    if *adapter != Some(wanted) {
        *adapter = None;
        b.set_adapter(first.adapter.as_ref())?;
        *adapter = Some(wanted);
    }
    b.set_dims(dims)?;
    Ok(b)
}
