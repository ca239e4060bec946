//! Pools of decoders: [`DecoderPool`], the runtime's [`PoolOf`] lending decoders of one
//! model, one per request, each back in the pool (ready for the next request's `prefill`)
//! when its guard drops.

use super::{CacheMode, Decoder, DecoderModel, Growing};
use crate::device::{Cpu, Device};
use crate::error::Result;
use crate::pool::{CheckedOut, CheckoutFuture, PoolOf, Poolable, sealed};

/// A pool of at most `capacity` decoders of one model, made on demand: a request handler
/// checks one out ([`checkout`](PoolOf::checkout), or
/// [`checkout_async`](PoolOf::checkout_async) from an async handler), generates, and the
/// decoder goes back when the guard drops. Checkout, waiting and fairness are
/// [`Pool`](crate::Pool)'s: waiters are served in order, and a decoder whose dropped
/// asynchronous run is still stopping is handed out last. A decoder that comes back ends
/// every stop taken for its runs, so a late [`Terminator`](crate::Terminator) never reaches
/// the next request; its buffers keep their room (nothing is freed or made again).
///
/// ```no_run
/// # fn demo(make: impl Fn() -> ort_bind_runtime::Result<ort_bind_runtime::decode::Decoder<f32>>
/// #     + Send + Sync + 'static) -> ort_bind_runtime::Result<()> {
/// use ort_bind_runtime::decode::{DecoderPool, GenerateOptions};
///
/// // e.g. `move || model.shared_decoder(1, 2048)` for a generated module's model
/// let pool: DecoderPool<f32> = DecoderPool::of_decoders(4, make);
/// let mut decoder = pool.checkout()?; // blocks while all 4 are out
/// for token in decoder.stream(&[1, 15, 27], GenerateOptions::new(32))? {
///     print!("{} ", token?);
/// }
/// # Ok(()) }
/// ```
pub type DecoderPool<T, M = Growing, D = Cpu> = PoolOf<Decoder<T, M, D>>;

/// A decoder checked out of a [`DecoderPool`]; dereferences to the [`Decoder`] and goes back
/// to the pool when dropped.
pub type PooledDecoder<T, M = Growing, D = Cpu> = CheckedOut<Decoder<T, M, D>>;

impl<T: DecoderModel, M: CacheMode, D: Device> PoolOf<Decoder<T, M, D>> {
    /// A pool of at most `capacity` decoders (at least 1), each made by `make` when a
    /// checkout finds none idle and there is room.
    pub fn of_decoders(
        capacity: usize,
        make: impl Fn() -> Result<Decoder<T, M, D>> + Send + Sync + 'static,
    ) -> Self {
        PoolOf::new(capacity, move |()| make())
    }

    /// Checks a decoder out, blocking while all `capacity` are checked out.
    pub fn checkout(&self) -> Result<PooledDecoder<T, M, D>> {
        self.get(&())
    }

    /// Checks a decoder out asynchronously: the future resolves when one is idle, may be
    /// made, or comes back (woken then; no polling).
    pub fn checkout_async(&self) -> CheckoutFuture<Decoder<T, M, D>> {
        self.get_async(&())
    }
}

impl<T: DecoderModel, M: CacheMode, D: Device> sealed::Sealed for Decoder<T, M, D> {}

impl<T: DecoderModel, M: CacheMode, D: Device> Poolable for Decoder<T, M, D> {
    type Dims = ();

    fn fit(&self, (): &()) -> u8 {
        if self.busy() { 0 } else { 1 }
    }

    fn prepare(&mut self, (): &()) -> Result<()> {
        Ok(())
    }

    fn returned(&mut self) {
        self.end_stops();
    }
}
