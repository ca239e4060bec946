//! The decode loop: token ids in, logits of the last position out, the cache kept in
//! capacity buffers that are bound to ONNX Runtime and rebound only when they change.

use std::ffi::CString;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use super::buffers::{CacheBuffer, IndexBuffer, cache_buffer};
use super::context::{Borrowed, FirstRunCache, Held, ScalarBuffer, check_context, context_dims};
use super::logits::{Logit, Logits, argmax};
use super::spec::{
    CacheSpec, ContextSpec, DecoderSpec, EmbedderSpec, HeadSpec, IndexInput, PositionAxis,
    ScalarSpec,
};
use super::speculative::Vocabulary;
use crate::cancel::RunControl;
use crate::device::{Cpu, Device};
use crate::element::{Element, onnx_type_name};
use crate::error::{DecodeError, Error, Result};
use crate::run_async::Completion;
use crate::session::Session;
use crate::shape::{AnyRank, Shape};
use crate::sys::{IoBinding, MemoryInfo, Value};
use crate::tensor::Tensor;

mod asynchronous;
mod generate;
mod paged;
mod reorder;
mod rows;
pub use asynchronous::{AppendFuture, AsyncTokenStream, StepGreedyFuture};
pub use generate::{GenerateOptions, Generated, TokenStream};
pub use rows::{Joining, RowEvent, Rows, RowsCache};

/// How the decoder keeps a growing (key/value) cache; part of the decoder's type.
pub trait CacheMode: private::Sealed + Send + Sync + 'static {
    /// Whether past and present share one buffer.
    const SHARED: bool;
    /// Whether the cache is a pool of blocks read through a block table ([`Paged`]).
    const PAGED: bool = false;
    /// The mode's name, for messages.
    const NAME: &'static str;
}

mod private {
    pub trait Sealed {}
    impl Sealed for super::Growing {}
    impl Sealed for super::SharedBuffer {}
    impl Sealed for super::Paged {}
}

/// The growing cache mode: each past/present pair has two capacity buffers; the model
/// writes the present (past + new positions) into one while reading the past from the
/// other, and after the run they trade roles. ort-bind copies nothing; the model's
/// `Concat` copies the past into the present, as the model asks. Any decoder can run so.
///
/// What it costs: both buffers of every pair are reserved at the full capacity when the
/// decoder is made, `2 x batch x capacity x (the pair's other axes) x element size` per
/// pair (a 2-layer decoder with 4 heads of 16 `f32`, batch 1, capacity 2048: 4 pairs x 2 x
/// 2048 x 64 x 4 B = 4 MiB). The shared-buffer mode reserves half of that. A decoder made
/// with [`Decoder::new_lazy_on`] (a model's `lazy_decoder_on`) reserves room for 64
/// positions instead and doubles it when a run needs more.
#[derive(Debug, Clone, Copy, Default)]
pub struct Growing;

/// The shared-buffer cache mode (onnxruntime-genai's `past_present_share_buffer`): one
/// buffer of the full capacity per past/present pair, bound as both, which the attention
/// operator (ONNX Runtime's `GroupQueryAttention`) sees and writes only the new positions
/// into. No cache binding changes from token to token, and a rewind moves nothing. Only
/// models whose every growing cache is written in place can run so; codegen offers it
/// only for them.
#[derive(Debug, Clone, Copy, Default)]
pub struct SharedBuffer;

/// The paged cache mode (paged attention): each cache is one pool of fixed-size blocks
/// shared by every row, `[blocks, block_size, ..]`, bound as both past and present and
/// written in place by the model; each run passes a block table (which blocks each row
/// holds, in order) and a slot mapping (where each new position goes). Rows take blocks as
/// they grow and give them back when they are rewound, reset or freed, so the pool can be
/// smaller than `batch x capacity` when sequences differ in length
/// ([`Decoder::with_blocks_on`]); for continuous batching ([`Rows`]) that is the point.
/// Only models that take `block_tables` and `slot_mapping` run so, and they run only so.
#[derive(Debug, Clone, Copy, Default)]
pub struct Paged;

impl CacheMode for Paged {
    const SHARED: bool = true;
    const PAGED: bool = true;
    const NAME: &'static str = "paged";
}

impl CacheMode for Growing {
    const SHARED: bool = false;
    const NAME: &'static str = "growing";
}

impl CacheMode for SharedBuffer {
    const SHARED: bool = true;
    const NAME: &'static str = "shared-buffer";
}

/// The model a [`Decoder`] runs, as a type: generated modules implement it for their
/// `Model` (and the derive for the deriving struct), so two models' decoders are two types
/// and one cannot stand where the other is expected, even with the same logits type and
/// cache mode. Every logits element type implements it too, naming no model: a
/// `Decoder<f32>` runs any spec it is given.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a decoder model",
    note = "a decoder is typed by its model: the generated module's `Model` (or the struct that derives `OnnxBinding` with `decoder`), or the logits element type for an untyped decoder"
)]
pub trait DecoderModel: 'static {
    /// The element type of the model's logits.
    type Logits: Logit;
    /// The model's vocabulary as a type: [`Vocab<SIZE, Id>`](super::Vocab) (its size and
    /// the element type of its token ids) for a generated model, [`AnyVocab`](super::AnyVocab)
    /// for an untyped decoder. A speculative pair ([`Speculative`](super::Speculative))
    /// must agree on it at compile time.
    type Vocab: Vocabulary;
}

impl<L: Logit> DecoderModel for L {
    type Logits = L;
    type Vocab = super::AnyVocab;
}

/// What a decoder has done, for tests and benchmarks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DecodeStats {
    /// Model runs.
    pub runs: u64,
    /// Values bound to ONNX Runtime (each `BindInput`/`BindOutput`): what changed since
    /// the run before.
    pub binds: u64,
    /// Cache bytes ort-bind moved: rewinding a growing cache of more than one row of heads
    /// moves some, and so does reordering rows ([`Decoder::reorder_rows`], beam search);
    /// decoding moves none.
    pub cache_bytes_moved: u64,
    /// Cache buffers replaced by larger ones (only a decoder that grows lazily,
    /// [`Decoder::new_lazy_on`], replaces any: about twice per doubling of its room).
    pub cache_growths: u64,
}

/// A name of the binding and the value bound to it last.
#[derive(Debug)]
struct Slot {
    name: CString,
    // The address of the value bound last (0: none). ONNX Runtime holds a reference to
    // every bound value, so a bound value's address cannot be reused by another value
    // while it is bound: an equal address means the same value.
    bound: usize,
}

impl Slot {
    fn new(name: &str) -> Result<Slot> {
        let name = CString::new(name).map_err(|_| Error::SignatureMismatch {
            problem: format!("the name {name:?} holds a NUL byte"),
        })?;
        Ok(Slot { name, bound: 0 })
    }

    /// Makes the next bind happen whatever was bound (the value bound last is gone, and a
    /// new one could reuse its address).
    fn forget(&mut self) {
        self.bound = 0;
    }

    fn input(&mut self, io: &mut IoBinding, value: &Value, binds: &mut u64) -> Result<()> {
        let address = value.as_ptr().addr();
        if address != self.bound {
            io.bind_input(&self.name, value)?;
            self.bound = address;
            *binds += 1;
        }
        Ok(())
    }

    fn output(&mut self, io: &mut IoBinding, value: &Value, binds: &mut u64) -> Result<()> {
        let address = value.as_ptr().addr();
        if address != self.bound {
            io.bind_output(&self.name, value)?;
            self.bound = address;
            *binds += 1;
        }
        Ok(())
    }
}

/// An integer input with its slot.
#[derive(Debug)]
struct IndexSlot {
    buffer: IndexBuffer,
    slot: Slot,
}

impl IndexSlot {
    fn new(input: &IndexInput, dims: &[usize], capacity: usize, fill: i64) -> Result<Self> {
        Ok(IndexSlot {
            buffer: IndexBuffer::new(input.name, input.elem, dims, capacity, fill)?,
            slot: Slot::new(input.name)?,
        })
    }

    fn bind(&mut self, io: &mut IoBinding, dims: &[usize], binds: &mut u64) -> Result<()> {
        self.buffer.set_dims(dims)?;
        self.slot.input(io, self.buffer.value(), binds)
    }
}

/// One past/present pair.
#[derive(Debug)]
struct Cache<D: Device> {
    spec: &'static CacheSpec,
    past: Box<dyn CacheBuffer<D>>,
    // `None` in the shared-buffer mode for a growing cache: `past` is bound as both.
    present: Option<Box<dyn CacheBuffer<D>>>,
    // Positions each buffer has room for: the capacity, or less for a decoder that grows
    // lazily (`new_lazy_on`), whose present buffer is replaced by a larger one when a run
    // needs more (it holds nothing the run needs: the model writes all of it).
    past_room: usize,
    present_room: usize,
    past_slot: Slot,
    present_slot: Slot,
}

/// Positions a lazily growing cache starts with room for (at most the capacity).
const LAZY_START: usize = 64;

/// How much cache a decoder reserves when it is made.
#[derive(Debug, Clone, Copy)]
enum Room {
    /// Every buffer at the full capacity.
    Full,
    /// Growing buffers from 64 positions, doubled as needed ([`Decoder::new_lazy_on`]).
    Lazy,
    /// A paged pool of this many blocks (`None`: enough for every row at full capacity).
    Blocks(Option<usize>),
}

impl Room {
    /// What a mode's plain constructors reserve.
    fn default_for<M: CacheMode>() -> Room {
        if M::PAGED {
            Room::Blocks(None)
        } else {
            Room::Full
        }
    }
}

/// An input held for a whole sequence, with its slot.
#[derive(Debug)]
struct ContextSlot<D: Device> {
    spec: &'static ContextSpec,
    // Set from outside (`spec.present` is `None`).
    held: Option<Box<dyn Held>>,
    // Computed by the model on a sequence's first run (`spec.present` is `Some`).
    first_run: Option<FirstRunCache<D>>,
    slot: Slot,
    present_slot: Option<Slot>,
}

impl<D: Device> ContextSlot<D> {
    /// The slot of `spec`, with no value yet.
    fn new(spec: &'static ContextSpec) -> Result<Self> {
        Ok(ContextSlot {
            spec,
            held: None,
            first_run: None,
            slot: Slot::new(spec.name)?,
            present_slot: spec.present.map(Slot::new).transpose()?,
        })
    }
}

/// The embedding model run before each decoder run, for a decoder fed `inputs_embeds`:
/// the decoder's ids are its input, and its output buffer is the decoder's input.
#[derive(Debug)]
struct Embedder<D: Device> {
    // Declared first: the binding is released before the buffers it points at (its own,
    // and the decoder's ids, which the decoder drops after this).
    io: IoBinding,
    session: Session,
    spec: &'static EmbedderSpec,
    embeds: Box<dyn CacheBuffer<D>>,
    out_slot: Slot,
    in_slot: Slot,
    // Inputs given for a sequence's first run (image features), and each with no
    // positions for the runs after it.
    extra: Vec<ContextSlot<D>>,
    empty: Vec<Box<dyn CacheBuffer<D>>>,
}

/// The language-model head run after each decoder run, for a decoder split before it:
/// the decoder's hidden states are its input, and its output is the decoder's logits.
#[derive(Debug)]
struct Head<D: Device> {
    // Declared first: the binding is released before the buffers it points at (its own,
    // and the decoder's logits, which the decoder drops after this).
    io: IoBinding,
    session: Session,
    spec: &'static HeadSpec,
    hidden: Box<dyn CacheBuffer<D>>,
    from_slot: Slot,
    in_slot: Slot,
}

/// A scalar input with its slot.
#[derive(Debug)]
struct ScalarSlot {
    spec: &'static ScalarSpec,
    buffer: ScalarBuffer,
    slot: Slot,
}

/// A typed decode loop over a decoder model: tokens in, the last position's logits out,
/// the key/value cache (and any recurrent state) kept on device `D` in buffers of the
/// full capacity, bound once and rebound only where a shape changes.
///
/// `T` is the model ([`DecoderModel`]): generated modules name it for their model
/// (`Decoder`, and `SharedDecoder` where the model allows the [`SharedBuffer`] mode), so a
/// decoder of one model never type-checks where another model's is expected.
///
/// ```no_run
/// # fn demo(session: &ort_bind_runtime::Session, spec: &'static ort_bind_runtime::decode::DecoderSpec) -> ort_bind_runtime::Result<()> {
/// use ort_bind_runtime::decode::{Decoder, Growing};
/// let mut decoder = Decoder::<f32, Growing>::new(session, spec, 1, 256)?;
/// decoder.prefill(&[1, 15, 27])?;                 // one batch row of three tokens
/// for _ in 0..16 {
///     let token = decoder.step_greedy()?[0];      // argmax, appended, run
///     print!("{token} ");
/// }
/// decoder.rewind(4)?;                             // drop the last four positions
/// # Ok(()) }
/// ```
///
/// A steady-state step allocates nothing in ort-bind and copies no cache bytes: it writes
/// the token ids and positions in place, changes the shapes ONNX Runtime sees (a new
/// value over the same memory for the mask and, in the growing mode, the cache) and
/// binds only the values that changed.
pub struct Decoder<T: DecoderModel, M: CacheMode = Growing, D: Device = Cpu> {
    // Declared first: the binding is released before the buffers it points at.
    io: IoBinding,
    // The paged mode's blocks, block table and slot mapping (`None` in the other modes).
    paged: Option<paged::PagedState>,
    // Before `ids`, which its binding points at.
    embedder: Option<Embedder<D>>,
    // Before `logits`, which its binding points at.
    head: Option<Head<D>>,
    session: Session,
    spec: &'static DecoderSpec,
    ids: IndexSlot,
    mask: Option<IndexSlot>,
    positions: Option<IndexSlot>,
    logits: Tensor<T::Logits, AnyRank, Cpu>,
    logits_slot: Slot,
    caches: Vec<Cache<D>>,
    context: Vec<ContextSlot<D>>,
    scalars: Vec<ScalarSlot>,
    other_outputs: Vec<CString>,
    device: D,
    batch: usize,
    capacity: usize,
    vocab: usize,
    len: usize,
    // New positions of the last run (the logits' middle axis); 0: no logits.
    new: usize,
    picked: Vec<i64>,
    dims: Vec<usize>,
    stats: DecodeStats,
    // The run options of every run, with their terminate flag: `terminator()`, and the
    // timeout of a generation (`generate`).
    control: Arc<RunControl>,
    // Inside `generate`/`stream`: runs share one epoch of `control`, so a stop or timeout
    // taken for the generation covers all of its runs.
    generating: bool,
    // The tokens a rewind of a model with recurrent state runs again (reused).
    rerun: Vec<i64>,
    // Continuous batching (`Rows`): each row's positions before the next run; empty when
    // every row holds `len` positions.
    row_lens: Vec<usize>,
    // Continuous batching over a growing cache: the cache position where each row's
    // sequence starts (the positions before it are left padding, masked out).
    row_starts: Vec<usize>,
    // Where the worker thread of an asynchronous run reports (`append_async`, ...), and
    // that run while it is in flight: every method that touches the buffers or the binding
    // (and `Drop`) waits for it first (`settle`).
    completion: Arc<Completion>,
    in_flight: Option<asynchronous::InFlight>,
    // Reordering rows (`reorder_rows`): the plan's scratch, and the sign that every cache
    // buffer has room for one row more than it holds. `None` until reserved.
    reorder: Option<reorder::ReorderScratch>,
    _mode: PhantomData<fn() -> (T, M)>,
}

impl<T: DecoderModel, M: CacheMode, D: Device> fmt::Debug for Decoder<T, M, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Decoder")
            .field("mode", &M::NAME)
            .field("device", &D::NAME)
            .field("batch", &self.batch)
            .field("capacity", &self.capacity)
            .field("len", &self.len)
            .finish()
    }
}

impl<T: DecoderModel, M: CacheMode> Decoder<T, M, Cpu> {
    /// A decoder for `batch` rows of up to `capacity` positions each (prompt and generated
    /// tokens together), with the cache in host memory.
    pub fn new(
        session: &Session,
        spec: &'static DecoderSpec,
        batch: usize,
        capacity: usize,
    ) -> Result<Self> {
        Self::new_on(session, spec, Cpu, batch, capacity)
    }
}

impl<T: DecoderModel, D: Device> Decoder<T, Growing, D> {
    /// A growing-mode decoder that reserves its cache lazily: each buffer starts with room
    /// for 64 positions (or the capacity, if smaller) and is replaced by one of twice the
    /// room when a run needs more, up to `capacity`. The eager constructors reserve two
    /// full-capacity buffers per cache pair up front; this one costs memory in proportion
    /// to the longest sequence so far, and a few allocations while growing (counted in
    /// [`DecodeStats::cache_growths`]); once grown, steps allocate nothing. The tokens are
    /// the same.
    pub fn new_lazy_on(
        session: &Session,
        spec: &'static DecoderSpec,
        device: D,
        batch: usize,
        capacity: usize,
    ) -> Result<Self> {
        Self::single(session, spec, device, batch, capacity, Room::Lazy)
    }
}

impl<T: DecoderModel, M: CacheMode, D: Device> Decoder<T, M, D> {
    /// A decoder whose cache lives on `device` (the ids, mask, positions and logits stay
    /// on the host: what crosses to the device per token is the new ids and positions, the
    /// mask, and the logits of the new positions).
    pub fn new_on(
        session: &Session,
        spec: &'static DecoderSpec,
        device: D,
        batch: usize,
        capacity: usize,
    ) -> Result<Self> {
        Self::single(
            session,
            spec,
            device,
            batch,
            capacity,
            Room::default_for::<M>(),
        )
    }

    /// A decoder split in parts: `embedder`, the embedding model in front of a decoder fed
    /// embeddings, and `head`, the language-model head after a decoder that returns hidden
    /// states, each where the spec has one ([`DecoderSpec::embedder`], [`DecoderSpec::head`]).
    /// Each part writes into the buffer the next reads: nothing is copied between them.
    pub fn with_parts_on(
        session: &Session,
        embedder: Option<&Session>,
        head: Option<&Session>,
        spec: &'static DecoderSpec,
        device: D,
        batch: usize,
        capacity: usize,
    ) -> Result<Self> {
        Self::make(
            session,
            embedder,
            head,
            spec,
            device,
            batch,
            capacity,
            Room::default_for::<M>(),
        )
    }

    /// [`Decoder::make`] of a decoder in one part.
    fn single(
        session: &Session,
        spec: &'static DecoderSpec,
        device: D,
        batch: usize,
        capacity: usize,
        room: Room,
    ) -> Result<Self> {
        Self::make(session, None, None, spec, device, batch, capacity, room)
    }

    #[allow(clippy::too_many_arguments)]
    fn make(
        session: &Session,
        embedder_session: Option<&Session>,
        head_session: Option<&Session>,
        spec: &'static DecoderSpec,
        device: D,
        batch: usize,
        capacity: usize,
        room: Room,
    ) -> Result<Self> {
        if batch == 0 || capacity == 0 {
            return Err(DecodeError::Empty { batch, capacity }.into());
        }
        if let Some(model) = spec.fixed_batch
            && model != batch
        {
            return Err(DecodeError::FixedBatch {
                model,
                asked: batch,
            }
            .into());
        }
        spec.check(session)?;
        if M::PAGED != spec.paged.is_some() {
            return Err(DecodeError::PagedMismatch {
                paged: spec.paged.is_some(),
            }
            .into());
        }
        let (paged, pool) = match room {
            Room::Blocks(blocks) => {
                let (state, pool) = paged::PagedState::new(spec, batch, capacity, blocks)?;
                (Some(state), pool)
            }
            Room::Full | Room::Lazy => (None, 0),
        };
        let lazy = matches!(room, Room::Lazy);
        let logits_elem = spec.output_elem(spec.logits)?;
        if logits_elem != <T::Logits as Element>::ONNX_TYPE {
            return Err(Error::OutputType {
                output: spec.logits.to_owned(),
                expected: onnx_type_name(logits_elem).to_owned(),
                found: <T::Logits as Element>::NAME.to_owned(),
            });
        }
        let vocab = spec.vocab.ok_or_else(|| Error::SignatureMismatch {
            problem: format!(
                "the logits output `{}` has no fixed vocabulary axis (its last)",
                spec.logits
            ),
        })?;
        let too_large = || Error::TooLarge {
            tensor: spec.logits.to_owned(),
            dims: vec![batch, capacity, vocab],
        };
        let rows = batch.checked_mul(capacity).ok_or_else(too_large)?;
        let mut dims = Vec::with_capacity(8);
        let mut caches = Vec::with_capacity(spec.caches.len());
        for cache in spec.caches {
            if M::PAGED != cache.paged() {
                return Err(DecodeError::PagedMismatch { paged: !M::PAGED }.into());
            }
            if M::SHARED && !M::PAGED && cache.grows() && !spec.shared_buffer {
                return Err(DecodeError::NotShareable { cache: cache.past }.into());
            }
            if M::SHARED && cache.grows() && session.on_device() && !shared_on_device(cache.elem) {
                return Err(DecodeError::NotSharedOnDevice {
                    cache: cache.past,
                    elem: onnx_type_name(cache.elem),
                }
                .into());
            }
            device.check_session(session, cache.past)?;
            let positions = if lazy && cache.grows() && !M::SHARED {
                capacity.min(LAZY_START)
            } else {
                capacity
            };
            // A paged cache is its pool: `pool` blocks along its `Blocks` axis.
            let positions = if M::PAGED { pool } else { positions };
            cache.dims(batch, positions, &mut dims);
            let room = crate::shape::element_count(&dims).ok_or_else(too_large)?;
            // A pool keeps room for one block more: moving blocks (copies of blocks that
            // rows share) goes through the row-moving code, which wants room for a saved row.
            let room = if M::PAGED {
                room.checked_add(dims[1..].iter().product())
                    .ok_or_else(too_large)?
            } else {
                room
            };
            // The shared mode shows ONNX Runtime the whole capacity (a paged one the whole
            // pool); the others start empty.
            let start = if M::SHARED { positions } else { 0 };
            cache.dims(batch, start, &mut dims);
            let past = cache_buffer(cache.past, cache.elem, &device, &dims, room)?;
            let present = if M::SHARED && cache.grows() {
                None
            } else {
                Some(cache_buffer(
                    cache.present,
                    cache.elem,
                    &device,
                    &dims,
                    room,
                )?)
            };
            caches.push(Cache {
                spec: cache,
                past,
                present,
                past_room: positions,
                present_room: positions,
                past_slot: Slot::new(cache.past)?,
                present_slot: Slot::new(cache.present)?,
            });
        }
        let logits_dims = [batch, 1, vocab];
        let logits = Tensor::with_capacity_in(
            spec.logits,
            Cpu,
            if spec.sequence_axis {
                &logits_dims
            } else {
                &logits_dims[..2]
            },
            batch.checked_mul(vocab).ok_or_else(too_large)?,
        )?;
        let index = |input: &Option<IndexInput>, fill, extra: usize| {
            input
                .as_ref()
                .map(|i| {
                    let room = rows.checked_mul(extra).ok_or_else(too_large)?;
                    IndexSlot::new(i, &[room], room, fill)
                })
                .transpose()
        };
        let extra = spec
            .position_axes
            .iter()
            .map(|a| match a {
                PositionAxis::Extra(n) => *n,
                _ => 1,
            })
            .product();
        let context = spec
            .context
            .iter()
            .map(ContextSlot::new)
            .collect::<Result<_>>()?;
        let scalars = spec
            .scalars
            .iter()
            .map(|c| {
                Ok(ScalarSlot {
                    spec: c,
                    buffer: ScalarBuffer::new(c)?,
                    slot: Slot::new(c.name)?,
                })
            })
            .collect::<Result<_>>()?;
        // SAFETY: the session pointer is live and the decoder holds a counted reference
        // to the session (`session` field) for as long as the binding exists.
        let io = unsafe { IoBinding::new(session.raw(), session.on_device())? };
        let other_outputs = spec
            .other_outputs
            .iter()
            .map(|n| Slot::new(n).map(|s| s.name))
            .collect::<Result<_>>()?;
        let embedder = match (spec.embedder, embedder_session) {
            (Some(e), Some(embedder_session)) => {
                Some(Embedder::new(e, embedder_session, &device, batch, rows)?)
            }
            (None, _) => None,
            (Some(_), None) => return Err(missing_part("embedding model, for `inputs_embeds`")),
        };
        let head = match (spec.head, head_session) {
            (Some(h), Some(head_session)) => {
                Some(Head::new(h, head_session, &device, batch, rows)?)
            }
            (None, _) => None,
            (Some(_), None) => return Err(missing_part("language-model head, for its logits")),
        };
        Ok(Decoder {
            io,
            paged,
            embedder,
            head,
            control: Arc::new(RunControl::new(session)?),
            generating: false,
            rerun: Vec::new(),
            row_lens: Vec::new(),
            row_starts: Vec::new(),
            completion: Arc::default(),
            in_flight: None,
            reorder: None,
            session: session.clone(),
            spec,
            ids: IndexSlot::new(&spec.input_ids, &[rows], rows, 0)?,
            mask: index(&spec.attention_mask, 1, 1)?,
            positions: index(&spec.position_ids, 0, extra)?,
            logits,
            logits_slot: Slot::new(spec.logits)?,
            caches,
            context,
            scalars,
            other_outputs,
            device,
            batch,
            capacity,
            vocab,
            len: 0,
            new: 0,
            picked: vec![0; batch],
            dims,
            stats: DecodeStats::default(),
            _mode: PhantomData,
        })
    }

    /// Batch rows.
    pub fn batch(&self) -> usize {
        self.batch
    }

    /// Positions each row can hold.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Positions each row holds now (prompt and generated tokens).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no position is held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The vocabulary size (the logits' last axis).
    pub fn vocab(&self) -> usize {
        self.vocab
    }

    /// The session the decoder runs.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The model's roles this decoder runs by.
    pub fn spec(&self) -> &'static DecoderSpec {
        self.spec
    }

    /// What the decoder has done so far.
    pub fn stats(&self) -> DecodeStats {
        self.stats
    }

    /// Starts over with `tokens` (`batch` rows one after another, equal lengths):
    /// [`reset`](Self::reset), then [`append`](Self::append).
    pub fn prefill(&mut self, tokens: &[i64]) -> Result<()> {
        self.check_tokens(tokens, 0)?;
        self.reset()?;
        self.append(tokens)
    }

    /// Runs the model on `tokens` (`batch` rows one after another, each of the same number
    /// of new tokens) after the positions already held; afterwards [`logits`](Self::logits)
    /// holds each row's last position. Checked before anything changes: a wrong count, an
    /// id outside the vocabulary, or more positions than the capacity is an error that
    /// leaves the decoder as it was.
    pub fn append(&mut self, tokens: &[i64]) -> Result<()> {
        let new = self.check_tokens(tokens, self.len)?;
        // A model that fixes the new positions per run takes the prompt in steps.
        let step = self.spec.fixed_new.unwrap_or(new);
        for from in (0..new).step_by(step) {
            self.run(tokens, new, from, step)?;
        }
        Ok(())
    }

    /// Runs positions `from..from + new` of each row of `tokens` (rows of `row_len`).
    fn run(&mut self, tokens: &[i64], row_len: usize, from: usize, new: usize) -> Result<()> {
        let total = self.prepare_run(tokens, row_len, from, new)?;
        let ran = self.run_models();
        self.finish_run(ran, total, new)
    }

    /// Everything of a run before ONNX Runtime's: waits for an asynchronous run still in
    /// flight, binds what changed and writes the ids, positions, scalars and mask. Returns
    /// the positions per row after the run.
    fn prepare_run(
        &mut self,
        tokens: &[i64],
        row_len: usize,
        from: usize,
        new: usize,
    ) -> Result<usize> {
        self.settle();
        let total = self.len + new;
        if let Some(paged) = &mut self.paged {
            // Before anything changes: a pool short of blocks refuses the run.
            let (len, lens) = (self.len, &self.row_lens);
            let start = |row: usize| lens.get(row).copied().unwrap_or(len);
            paged.take_blocks(0..self.batch, new, start)?;
            // Blocks that rows shared and this run writes into: each row its own copy.
            if !paged.copies().is_empty() {
                for cache in &mut self.caches {
                    cache.spec.dims(1, paged.pool() + 1, &mut self.dims);
                    let layout = paged.block_layout(self.dims[1..].iter().product());
                    let moved = cache.past.move_rows(layout, paged.copies())?;
                    self.stats.cache_bytes_moved += moved as u64;
                }
                paged.copies().clear();
            }
            paged.write(self.batch, new, start)?;
        }
        self.new = 0;
        self.bind(new, total)?;
        for row in 0..self.batch {
            let start = row * row_len + from;
            self.ids
                .buffer
                .write(row * new, tokens[start..start + new].iter().copied());
        }
        if let Some(positions) = &mut self.positions {
            write_positions(
                &mut positions.buffer,
                self.spec.position_axes,
                self.batch,
                self.len,
                new,
            );
        }
        for scalar in &mut self.scalars {
            scalar.buffer.write(scalar.spec.role, self.len, new);
        }
        if !self.row_lens.is_empty() {
            self.write_row_lengths(total);
        }
        for name in &self.other_outputs {
            // Rebound each run: after a run ONNX Runtime's binding holds the value it made,
            // whose shape may not fit the next.
            self.io.bind_output_to_device(name, MemoryInfo::cpu()?)?;
        }
        Ok(total)
    }

    /// Everything of a run after ONNX Runtime's, which ended with `ran`: names a stop that
    /// was requested, and on success takes the run's positions into the sequence.
    fn finish_run(&mut self, ran: Result<()>, total: usize, new: usize) -> Result<()> {
        // The runs of a generation share one epoch, closed when it ends (or a run fails);
        // a run that stopped on request says why.
        let reason = if self.generating && ran.is_ok() {
            None
        } else {
            self.control.close()
        };
        match (ran, reason) {
            (Err(_), Some(reason)) => return Err(reason.error()),
            (Err(e), None) => return Err(e),
            (Ok(()), _) => {}
        }
        self.len = total;
        self.new = new;
        for cache in &mut self.caches {
            if let Some(present) = &mut cache.present {
                // The present becomes the next run's past: the buffers trade places.
                std::mem::swap(&mut cache.past, present);
                std::mem::swap(&mut cache.past_room, &mut cache.present_room);
            }
        }
        Ok(())
    }

    /// Runs the embedding model (if any), the decoder, then the head (if any), with the
    /// decoder's run options (so a stop request ends whichever is running).
    fn run_models(&mut self) -> Result<()> {
        let options = Some(self.control.options(false));
        if let Some(e) = &mut self.embedder {
            e.io.run_with(options).map_err(|x| e.session.run_error(x))?;
        }
        self.stats.runs += 1;
        self.io
            .run_with(options)
            .map_err(|e| self.session.run_error(e))?;
        if let Some(h) = &mut self.head {
            h.io.run_with(options).map_err(|x| h.session.run_error(x))?;
        }
        Ok(())
    }

    /// Gives input `name`, held for the whole sequence (an encoder's hidden states or
    /// mask, a cross-attention cache the encoder computed), the value of `tensor`: the
    /// decoder keeps the tensor and binds it, copying nothing. Checked against the model
    /// (element type, rank, the batch and fixed sizes); the next run reads it.
    ///
    /// An encoder-decoder pipeline sets these from its encoder's outputs itself.
    pub fn set_context<E: Element, S: Shape>(
        &mut self,
        name: &str,
        tensor: Tensor<E, S, D>,
    ) -> Result<()> {
        self.settle();
        let batch = self.batch;
        let slot = self.held_slot(name, E::ONNX_TYPE, E::NAME)?;
        check_context(slot.spec, tensor.dims(), batch)?;
        slot.slot.forget();
        slot.held = Some(Box::new(tensor));
        Ok(())
    }

    /// Like [`set_context`](Self::set_context) for a value over memory that the caller
    /// owns (an encoder binding's output in a pipeline that owns this decoder).
    ///
    /// # Safety
    /// The memory `value` points at must stay valid and in place until the context is set
    /// again or the decoder is dropped.
    pub(crate) unsafe fn set_context_value(&mut self, name: &str, value: Value) -> Result<()> {
        self.settle();
        let mut dims = Vec::new();
        let (dims, elem) = value_dims(&value, &mut dims)?;
        let batch = self.batch;
        let slot = self.held_slot(name, elem, crate::element::onnx_type_name(elem))?;
        check_context(slot.spec, dims, batch)?;
        slot.slot.forget();
        slot.held = Some(Box::new(Borrowed(value)));
        Ok(())
    }

    /// Drops every input held for the sequence that was set from outside: a run needs them
    /// set again first.
    pub(crate) fn clear_context(&mut self) {
        self.settle();
        for c in self.all_context_mut() {
            if c.held.take().is_some() {
                c.slot.forget();
            }
        }
    }

    /// The address of the memory bound as context input `name`, if it has a value (two
    /// equal addresses: the same buffer, nothing copied between them).
    pub fn context_address(&self, name: &str) -> Option<usize> {
        let slot = self.all_context().find(|c| c.spec.name == name)?;
        let value = match (&slot.held, &slot.first_run) {
            (Some(held), _) => held.value(),
            (None, Some(cache)) => cache.keep.value(),
            (None, None) => return None,
        };
        value.data_ptr().ok().map(|p| p.addr())
    }

    /// The address of the embeddings buffer the embedding model writes and the decoder
    /// reads (a decoder fed embeddings), for checking that nothing is copied between them.
    pub fn embeds_address(&self) -> Option<usize> {
        let e = self.embedder.as_ref()?;
        e.embeds.value().data_ptr().ok().map(|p| p.addr())
    }

    /// Every input held for a sequence: the decoder's, then its embedding model's.
    fn all_context(&self) -> impl Iterator<Item = &ContextSlot<D>> {
        let extra = self.embedder.iter().flat_map(|e| e.extra.iter());
        self.context.iter().chain(extra)
    }

    /// [`Self::all_context`], mutably.
    fn all_context_mut(&mut self) -> impl Iterator<Item = &mut ContextSlot<D>> {
        let extra = self.embedder.iter_mut().flat_map(|e| e.extra.iter_mut());
        self.context.iter_mut().chain(extra)
    }

    /// The input `name` that is set from outside (held for a sequence, or the embedding
    /// model's input given for the prompt), checked to be of `elem`.
    fn held_slot(
        &mut self,
        name: &str,
        elem: ort_sys::ONNXTensorElementDataType,
        found: &str,
    ) -> Result<&mut ContextSlot<D>> {
        let settable = |c: &&mut ContextSlot<D>| c.spec.present.is_none();
        if !self
            .all_context()
            .any(|c| c.spec.name == name && c.spec.present.is_none())
        {
            let names: Vec<&str> = self
                .all_context()
                .filter(|c| c.spec.present.is_none())
                .map(|c| c.spec.name)
                .collect();
            return Err(Error::SignatureMismatch {
                problem: format!(
                    "`{name}` is not an input this decoder holds for a sequence (those: {names:?})"
                ),
            });
        }
        let slot = self
            .all_context_mut()
            .filter(settable)
            .find(|c| c.spec.name == name)
            .expect("checked above");
        if slot.spec.elem != elem {
            return Err(Error::InputType {
                input: name.to_owned(),
                expected: onnx_type_name(slot.spec.elem).to_owned(),
                found: found.to_owned(),
            });
        }
        Ok(slot)
    }

    /// Runs one token per batch row (`tokens.len() == batch`).
    pub fn step(&mut self, tokens: &[i64]) -> Result<()> {
        if tokens.len() != self.batch {
            return Err(DecodeError::StepTokens {
                count: tokens.len(),
                batch: self.batch,
            }
            .into());
        }
        self.append(tokens)
    }

    /// Picks each row's most likely next token (argmax of [`logits`](Self::logits)),
    /// runs it, and returns the tokens picked (one per row).
    pub fn step_greedy(&mut self) -> Result<&[i64]> {
        self.step_with(|_, row| argmax(row) as i64)
    }

    /// Picks each row's most likely next token from the last run's logits without running
    /// it: the last token of a generation needs no run of its own, so N new tokens after
    /// the prompt cost N - 1 runs (`step_greedy` for all but the last, then this). Calling
    /// it again picks the same tokens; `step` runs them if generation goes on.
    pub fn pick_greedy(&mut self) -> Result<&[i64]> {
        let logits = Self::view(&self.logits, self.batch, self.new, self.vocab)?;
        for (row, slot) in self.picked.iter_mut().enumerate() {
            *slot = argmax(logits.row(row)) as i64;
        }
        Ok(&self.picked)
    }

    /// Picks each row's next token with `pick(row_index, logits_of_that_row)` (a sampler
    /// of your own), runs them, and returns the tokens picked.
    pub fn step_with(
        &mut self,
        mut pick: impl FnMut(usize, &[T::Logits]) -> i64,
    ) -> Result<&[i64]> {
        let logits = Self::view(&self.logits, self.batch, self.new, self.vocab)?;
        for (row, slot) in self.picked.iter_mut().enumerate() {
            *slot = pick(row, logits.row(row));
        }
        self.run_picked().map(|()| &self.picked[..])
    }

    /// Runs the tokens last picked (one per row), as `append` would.
    fn run_picked(&mut self) -> Result<()> {
        // Taken out for the call and put back: the buffer is reused, never reallocated.
        let picked = std::mem::take(&mut self.picked);
        let result = self.append(&picked);
        self.picked = picked;
        result
    }

    /// The logits of each row's last position after the last run, read in place.
    pub fn logits(&self) -> Result<Logits<'_, T::Logits>> {
        Self::view(&self.logits, self.batch, self.new, self.vocab)
    }

    fn view(
        logits: &Tensor<T::Logits, AnyRank, Cpu>,
        batch: usize,
        new: usize,
        vocab: usize,
    ) -> Result<Logits<'_, T::Logits>> {
        if new == 0 {
            return Err(DecodeError::NoLogits.into());
        }
        Ok(Logits {
            data: logits.as_slice(),
            batch,
            new,
            vocab,
        })
    }

    /// Drops the last `n` positions of every row, so that the next tokens follow the ones
    /// before them. Free in the shared-buffer mode; in the growing mode the cache of each
    /// batch row and head moves down in place (nothing moves for one row of one head).
    ///
    /// A model with recurrent state (`past_conv.N` -> `present_conv.N`) rewinds within its
    /// last run: the state before that run is still in the buffer it traded places with,
    /// so the buffers trade back (0 bytes copied), the run's positions are dropped, and its
    /// first `new - n` tokens run again (one run; none when `n` is the whole run). Further
    /// back, its state has no history: [`DecodeError::RecurrentState`].
    pub fn rewind(&mut self, n: usize) -> Result<()> {
        self.settle();
        if n > self.len {
            return Err(DecodeError::RewindPastStart {
                by: n,
                len: self.len,
            }
            .into());
        }
        if n == 0 {
            return Ok(());
        }
        if let Some(state) = self.caches.iter().find(|c| !c.spec.grows()) {
            if n > self.new {
                return Err(DecodeError::RecurrentState {
                    state: state.spec.past,
                }
                .into());
            }
            return self.rewind_last_run(n);
        }
        self.drop_positions(n)
    }

    /// [`rewind`](Self::rewind) of a model with recurrent state, by `n` of the last run's
    /// `self.new` positions.
    fn rewind_last_run(&mut self, n: usize) -> Result<()> {
        let (new, kept) = (self.new, self.new - n);
        // The tokens to run again, from the ids buffer, which holds the last run's.
        self.rerun.clear();
        for row in 0..self.batch {
            self.ids.buffer.read(row * new, kept, &mut self.rerun);
        }
        for cache in self.caches.iter_mut().filter(|c| !c.spec.grows()) {
            let present = cache
                .present
                .as_mut()
                .expect("recurrent state has two buffers");
            std::mem::swap(&mut cache.past, present);
            std::mem::swap(&mut cache.past_room, &mut cache.present_room);
        }
        self.drop_positions(new)?;
        if kept > 0 {
            let tokens = std::mem::take(&mut self.rerun);
            let ran = self.append(&tokens);
            self.rerun = tokens;
            ran?;
        }
        Ok(())
    }

    /// Drops the last `n` positions of every growing cache.
    fn drop_positions(&mut self, n: usize) -> Result<()> {
        let keep = self.len - n;
        if let Some(paged) = &mut self.paged {
            paged.truncate(keep);
        }
        if !M::SHARED {
            for cache in self.caches.iter_mut().filter(|c| c.spec.grows()) {
                let (outer, inner) = cache.spec.outer_inner(self.batch);
                let moved = cache.past.compact(outer, inner, self.len, keep)?;
                self.stats.cache_bytes_moved += moved as u64;
                cache.spec.dims(self.batch, keep, &mut self.dims);
                cache.past.set_dims(&self.dims)?;
            }
        }
        self.len = keep;
        self.new = 0;
        Ok(())
    }

    /// Forgets every position (and zeroes recurrent state): the next
    /// [`append`](Self::append) starts a new sequence. Nothing is freed.
    pub fn reset(&mut self) -> Result<()> {
        self.settle();
        for cache in &mut self.caches {
            if !cache.spec.grows() {
                cache.past.zero()?;
            }
        }
        if let Some(paged) = &mut self.paged {
            paged.clear(false);
        }
        self.len = 0;
        self.new = 0;
        Ok(())
    }

    /// Checks `tokens` as `append` would after `len` positions; returns the new positions
    /// per row.
    fn check_tokens(&self, tokens: &[i64], len: usize) -> Result<usize> {
        if tokens.is_empty() || !tokens.len().is_multiple_of(self.batch) {
            return Err(DecodeError::TokenCount {
                count: tokens.len(),
                batch: self.batch,
            }
            .into());
        }
        let new = tokens.len() / self.batch;
        if let Some(step) = self.spec.fixed_new
            && !new.is_multiple_of(step)
        {
            return Err(DecodeError::FixedStep { new, step }.into());
        }
        if new > self.capacity - len {
            return Err(DecodeError::CapacityExceeded {
                len,
                adding: new,
                capacity: self.capacity,
            }
            .into());
        }
        self.check_ids(tokens)?;
        Ok(new)
    }

    /// Refuses an id outside the vocabulary, or beyond what the model's id type holds.
    pub(crate) fn check_ids(&self, tokens: &[i64]) -> Result<()> {
        let max = self.ids.buffer.max();
        match tokens
            .iter()
            .find(|&&t| t < 0 || t as u64 >= self.vocab as u64 || t > max)
        {
            Some(&token) => Err(DecodeError::TokenOutOfRange {
                token,
                vocab: self.vocab,
            }
            .into()),
            None => Ok(()),
        }
    }

    /// Gives every value the shape of a run of `new` positions per row after `self.len`,
    /// and binds those that changed.
    fn bind(&mut self, new: usize, total: usize) -> Result<()> {
        let (batch, len) = (self.batch, self.len);
        // A decoder that reorders rows keeps room for one row more in each cache buffer.
        let spare_row = self.reorder.is_some();
        let io = &mut self.io;
        let binds = &mut self.stats.binds;
        // Without a sequence axis the model takes one token per run (`fixed_new` is 1).
        let seq = self.spec.sequence_axis;
        let ids_dims = [batch, new];
        let ids_dims = if seq { &ids_dims[..] } else { &ids_dims[..1] };
        match &mut self.embedder {
            None => self.ids.bind(io, ids_dims, binds)?,
            Some(e) => {
                // The ids go to the embedding model (`input_ids` names its input), whose
                // output is the decoder's input.
                self.ids.bind(&mut e.io, ids_dims, binds)?;
                e.embeds.set_dims(&[batch, new, e.spec.hidden])?;
                e.out_slot.output(&mut e.io, e.embeds.value(), binds)?;
                e.in_slot.input(io, e.embeds.value(), binds)?;
                for (c, empty) in e.extra.iter_mut().zip(&e.empty) {
                    let value = match (&c.held, len == 0) {
                        (Some(held), true) => held.value(),
                        _ => empty.value(),
                    };
                    c.slot.input(&mut e.io, value, binds)?;
                }
            }
        }
        if let Some(positions) = &mut self.positions {
            self.dims.clear();
            self.dims
                .extend(self.spec.position_axes.iter().map(|a| match *a {
                    PositionAxis::Batch => batch,
                    PositionAxis::Sequence => new,
                    PositionAxis::Extra(n) => n,
                }));
            positions.bind(io, &self.dims, binds)?;
        }
        for scalar in &mut self.scalars {
            scalar.slot.input(io, scalar.buffer.value(), binds)?;
        }
        // Inputs held for the sequence; a merged decoder's cross-attention caches are
        // computed on the first run into the decoder's own buffer and read from it after.
        let first = len == 0;
        let encoder_len = if first && self.context.iter().any(|c| c.spec.present.is_some()) {
            Some(encoder_len(&self.context)?)
        } else {
            None
        };
        for c in &mut self.context {
            let Some(present_slot) = &mut c.present_slot else {
                let held = c
                    .held
                    .as_ref()
                    .ok_or(DecodeError::MissingContext { input: c.spec.name })?;
                c.slot.input(io, held.value(), binds)?;
                continue;
            };
            if let Some(encoder_len) = encoder_len {
                let cache = FirstRunCache::ensure(
                    c.first_run.take(),
                    c.spec,
                    &self.device,
                    batch,
                    encoder_len,
                    &mut self.dims,
                );
                let cache = c.first_run.insert(cache?);
                cache.keep.set_dims(&self.dims)?;
                context_dims(c.spec, batch, 0, &mut self.dims);
                cache.sink.set_dims(&self.dims)?;
                c.slot.input(io, cache.sink.value(), binds)?;
                present_slot.output(io, cache.keep.value(), binds)?;
            } else {
                let cache = c
                    .first_run
                    .as_mut()
                    .ok_or(DecodeError::MissingContext { input: c.spec.name })?;
                context_dims(c.spec, batch, cache.encoder_len, &mut self.dims);
                cache.sink.set_dims(&self.dims)?;
                c.slot.input(io, cache.keep.value(), binds)?;
                present_slot.output(io, cache.sink.value(), binds)?;
            }
        }
        if let Some(mask) = &mut self.mask {
            mask.bind(io, &[batch, total], binds)?;
        }
        if let Some(paged) = &mut self.paged {
            // Written (and shaped) by `PagedState::write`; bound here when they changed.
            paged.tables.bind(io, &[batch, paged.width], binds)?;
            paged.slots.bind(io, &[batch, new], binds)?;
        }
        if seq {
            self.logits.set_dims(&[batch, new, self.vocab])?;
        } else {
            self.logits.set_dims(&[batch, self.vocab])?;
        }
        match &mut self.head {
            None => self.logits_slot.output(io, self.logits.value(), binds)?,
            Some(h) => {
                // The decoder writes hidden states, which the head reads and turns into
                // the logits.
                h.hidden.set_dims(&[batch, new, h.spec.hidden])?;
                h.from_slot.output(io, h.hidden.value(), binds)?;
                h.in_slot.input(&mut h.io, h.hidden.value(), binds)?;
                self.logits_slot
                    .output(&mut h.io, self.logits.value(), binds)?;
            }
        }
        for cache in &mut self.caches {
            match &mut cache.present {
                None => {
                    // Shared buffer: one value of the whole capacity, bound as both.
                    cache.past_slot.input(io, cache.past.value(), binds)?;
                    cache.present_slot.output(io, cache.past.value(), binds)?;
                }
                Some(present) => {
                    if cache.spec.grows() {
                        cache.spec.dims(batch, len, &mut self.dims);
                        cache.past.set_dims(&self.dims)?;
                        if total > cache.present_room {
                            // A lazily growing cache: a larger buffer (twice the room, at
                            // most the capacity); the run writes all of it.
                            let positions = self.capacity.min(total.max(2 * cache.present_room));
                            cache.spec.dims(batch, positions, &mut self.dims);
                            let room =
                                crate::shape::element_count(&self.dims).ok_or_else(|| {
                                    Error::TooLarge {
                                        tensor: cache.spec.present.to_owned(),
                                        dims: self.dims.clone(),
                                    }
                                })?;
                            let room = if spare_row {
                                room + room.div_ceil(batch)
                            } else {
                                room
                            };
                            cache.spec.dims(batch, total, &mut self.dims);
                            *present = cache_buffer(
                                cache.spec.present,
                                cache.spec.elem,
                                &self.device,
                                &self.dims,
                                room,
                            )?;
                            cache.present_room = positions;
                            self.stats.cache_growths += 1;
                        }
                        cache.spec.dims(batch, total, &mut self.dims);
                        present.set_dims(&self.dims)?;
                    }
                    cache.past_slot.input(io, cache.past.value(), binds)?;
                    cache.present_slot.output(io, present.value(), binds)?;
                }
            }
        }
        Ok(())
    }
}

/// The encoder positions of the sequence: the sequence axis of the first context input set
/// from outside that has one (the encoder's hidden states).
fn encoder_len<D: Device>(context: &[ContextSlot<D>]) -> Result<usize> {
    let mut dims = Vec::new();
    for c in context {
        let (Some(held), Some(axis)) = (
            &c.held,
            c.spec
                .axes
                .iter()
                .position(|a| *a == super::spec::CacheAxis::Sequence),
        ) else {
            continue;
        };
        let (d, _) = value_dims(held.value(), &mut dims)?;
        return Ok(d[axis]);
    }
    let input = context
        .iter()
        .find(|c| c.spec.present.is_none())
        .or(context.first())
        .map_or("encoder_hidden_states", |c| c.spec.name);
    Err(DecodeError::MissingContext { input }.into())
}

/// A value's dims, read into `buf` (as `usize`), and its element type.
fn value_dims<'a>(
    value: &Value,
    buf: &'a mut Vec<usize>,
) -> Result<(&'a [usize], ort_sys::ONNXTensorElementDataType)> {
    let mut raw = Vec::new();
    let elem = value.tensor_info(&mut raw)?;
    buf.clear();
    buf.extend(raw.iter().map(|&d| d.max(0) as usize));
    Ok((buf, elem))
}

/// Writes the positions of a run of `new` positions after `past` for `batch` rows, in the
/// layout `axes` gives (`[batch, new]`, or with an extra axis first or last whose every
/// entry gets the position).
fn write_positions(
    buffer: &mut IndexBuffer,
    axes: &[PositionAxis],
    batch: usize,
    past: usize,
    new: usize,
) {
    let start = past as i64;
    match axes {
        [PositionAxis::Extra(n), ..] => {
            for block in 0..n * batch {
                buffer.write(block * new, (0..new as i64).map(|i| start + i));
            }
        }
        [.., PositionAxis::Extra(n)] => {
            let n = *n;
            for row in 0..batch {
                buffer.write(
                    row * new * n,
                    (0..new as i64).flat_map(|i| std::iter::repeat_n(start + i, n)),
                );
            }
        }
        _ => {
            for row in 0..batch {
                buffer.write(row * new, (0..new as i64).map(|i| start + i));
            }
        }
    }
}

impl<D: Device> Embedder<D> {
    /// The embedding model's binding and buffers for `batch` rows of up to `rows` ids
    /// (`batch * capacity`).
    fn new(
        spec: &'static EmbedderSpec,
        session: &Session,
        device: &D,
        batch: usize,
        rows: usize,
    ) -> Result<Self> {
        session.check_signature(spec.inputs, spec.outputs)?;
        let too_large = || Error::TooLarge {
            tensor: spec.output.to_owned(),
            dims: vec![rows, spec.hidden],
        };
        let room = rows.checked_mul(spec.hidden).ok_or_else(too_large)?;
        let embeds = cache_buffer(
            spec.output,
            spec.elem,
            device,
            &[batch, 1, spec.hidden],
            room,
        )?;
        let mut dims = Vec::new();
        let mut extra = Vec::with_capacity(spec.extra.len());
        let mut empty = Vec::with_capacity(spec.extra.len());
        for c in spec.extra {
            context_dims(c, batch, 0, &mut dims);
            empty.push(cache_buffer(c.name, c.elem, device, &dims, 1)?);
            extra.push(ContextSlot::new(c)?);
        }
        // SAFETY: the session pointer is live and the embedder holds a counted reference
        // to the session (`session` field) for as long as the binding exists.
        let io = unsafe { IoBinding::new(session.raw(), session.on_device())? };
        Ok(Embedder {
            io,
            session: session.clone(),
            spec,
            embeds,
            out_slot: Slot::new(spec.output)?,
            in_slot: Slot::new(spec.embeds)?,
            extra,
            empty,
        })
    }
}

/// A decoder made without a part its spec has.
fn missing_part(part: &str) -> Error {
    Error::SignatureMismatch {
        problem: format!(
            "the decoder is one part of a split model and needs its other parts (its {part}): make it with `Decoder::with_parts_on` (a pipeline's generated constructors do)"
        ),
    }
}

impl<D: Device> Head<D> {
    /// The head's binding and hidden-states buffer for `batch` rows of up to `rows`
    /// positions (`batch * capacity`).
    fn new(
        spec: &'static HeadSpec,
        session: &Session,
        device: &D,
        batch: usize,
        rows: usize,
    ) -> Result<Self> {
        session.check_signature(spec.inputs, spec.outputs)?;
        let room = rows
            .checked_mul(spec.hidden)
            .ok_or_else(|| Error::TooLarge {
                tensor: spec.from.to_owned(),
                dims: vec![rows, spec.hidden],
            })?;
        let hidden = cache_buffer(spec.from, spec.elem, device, &[batch, 1, spec.hidden], room)?;
        // SAFETY: the session pointer is live and the head holds a counted reference to
        // the session (`session` field) for as long as the binding exists.
        let io = unsafe { IoBinding::new(session.raw(), session.on_device())? };
        Ok(Head {
            io,
            session: session.clone(),
            spec,
            hidden,
            from_slot: Slot::new(spec.from)?,
            in_slot: Slot::new(spec.input)?,
        })
    }
}

/// Whether ONNX Runtime's CUDA `GroupQueryAttention` has a kernel for a cache of `elem`
/// (float16 and bfloat16, with int8 for quantized caches): elsewhere the node falls back
/// to the CPU, where past and present are copies and the shared buffer is lost (seen on an
/// H200 with ONNX Runtime 1.31.1: a float32 model's tokens went wrong from the first step).
fn shared_on_device(elem: ort_sys::ONNXTensorElementDataType) -> bool {
    use ort_sys::ONNXTensorElementDataType as E;
    matches!(
        elem,
        E::ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16
            | E::ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16
            | E::ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8
    )
}
