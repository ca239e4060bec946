//! A joining request's whole prompt in one run of batch 1 over its row of the shared
//! cache (see [`Joining::Prefill`](super::Joining::Prefill)).
//!
//! The run has its own I/O binding on the decoder's session, its own ids, mask, positions
//! and logits of batch 1, and the decoder's run options (a stop or timeout of the step
//! reaches it). Its cache inputs and outputs are values over the row's part of each
//! shared `[batch, ..]` buffer ([`Value::part`]): with the batch the outer axis, row `r`
//! is one contiguous block, and the run writes only there. Over a paged cache the run
//! binds each whole pool, with a block table of the row's blocks and the slots of the
//! prompt's positions in them: it writes only there.

use std::ffi::CString;

use super::super::{Decoder, DecoderModel};
use super::RowsCache;
use crate::decode::buffers::IndexBuffer;
use crate::decode::logits::{Logit, argmax};
use crate::decode::spec::{CacheAxis, DecoderSpec, PositionAxis};
use crate::device::{Cpu, Device};
use crate::error::{Error, Result};
use crate::session::Session;
use crate::shape::AnyRank;
use crate::sys::{IoBinding, MemoryInfo};
use crate::tensor::Tensor;

/// Positions of logits a prefill reserves at least (the room then doubles as prompts
/// need, up to the capacity).
const LOGITS_START: usize = 64;

/// Why a decoder's rows cannot join by a prefill run, if they cannot.
pub(super) fn unsupported(spec: &DecoderSpec) -> Option<&'static str> {
    if spec.fixed_new.is_some() {
        Some("the model takes a fixed number of tokens per run")
    } else if spec.fixed_batch.is_some_and(|b| b != 1) {
        Some("the model's batch is fixed, so it cannot run one row alone")
    } else if spec.paged.is_none()
        && spec
            .caches
            .iter()
            .any(|c| c.axes.first() != Some(&CacheAxis::Batch))
    {
        Some("a cache's outer axis is not the batch, so a row's cache is not one block")
    } else {
        None
    }
}

/// The binding and buffers of a batch-1 prefill run.
#[derive(Debug)]
pub(super) struct Prefill<L: Logit> {
    // Declared first: the binding is released before the buffers it points at (these,
    // and the decoder's caches, which `Rows` drops after this).
    io: IoBinding,
    session: Session,
    ids: IndexBuffer,
    mask: Option<IndexBuffer>,
    positions: IndexBuffer,
    // A paged decoder's block table and slot mapping of batch 1.
    paged: Option<(IndexBuffer, IndexBuffer)>,
    logits: Tensor<L, AnyRank, Cpu>,
    // Positions `logits` has room for.
    logits_room: usize,
    other_outputs: Vec<CString>,
    // Reused: dims of the values bound.
    dims: Vec<usize>,
    cache_dims: Vec<i64>,
}

impl<L: Logit> Prefill<L> {
    /// The binding and buffers for prompts of up to `decoder`'s capacity: ids, mask (all
    /// ones) and positions (`0..capacity`, of which a prompt of `n` shows the first `n`)
    /// of `capacity` elements each, logits for 64 positions (grown when a prompt needs
    /// more: see [`Prefill::run`]).
    pub(super) fn new<T, M, D>(decoder: &Decoder<T, M, D>) -> Result<Self>
    where
        T: DecoderModel<Logits = L>,
        M: RowsCache,
        D: Device,
    {
        let (spec, capacity) = (decoder.spec, decoder.capacity);
        let missing = |what: &str| Error::SignatureMismatch {
            problem: format!("continuous batching needs the model's {what}"),
        };
        let positions = spec
            .position_ids
            .as_ref()
            .ok_or_else(|| missing("position ids"))?;
        let ids = IndexBuffer::new(
            spec.input_ids.name,
            spec.input_ids.elem,
            &[capacity],
            capacity,
            0,
        )?;
        let mask = spec
            .attention_mask
            .as_ref()
            .map(|m| IndexBuffer::new(m.name, m.elem, &[capacity], capacity, 1))
            .transpose()?;
        let paged = match (spec.paged, &decoder.paged) {
            (Some(p), Some(state)) => {
                let per_row = state.per_row();
                let tables = &p.block_tables;
                let slots = &p.slot_mapping;
                Some((
                    IndexBuffer::new(tables.name, tables.elem, &[1, per_row], per_row, 0)?,
                    IndexBuffer::new(slots.name, slots.elem, &[capacity], capacity, 0)?,
                ))
            }
            _ => None,
        };
        let mut positions =
            IndexBuffer::new(positions.name, positions.elem, &[capacity], capacity, 0)?;
        positions.write(0, 0..capacity as i64);
        let room = capacity.min(LOGITS_START);
        let logits = Self::logits_for(spec, room, decoder.vocab)?;
        let session = decoder.session.clone();
        // SAFETY: the session pointer is live and the prefill holds a counted reference to
        // the session (`session` field) for as long as the binding exists.
        let io = unsafe { IoBinding::new(session.raw(), session.on_device())? };
        Ok(Prefill {
            io,
            session,
            ids,
            mask,
            positions,
            paged,
            logits,
            logits_room: room,
            other_outputs: decoder.other_outputs.iter().map(|n| n.to_owned()).collect(),
            dims: Vec::with_capacity(4),
            cache_dims: Vec::with_capacity(8),
        })
    }

    /// A logits buffer with room for `positions` positions of batch 1.
    fn logits_for(
        spec: &DecoderSpec,
        positions: usize,
        vocab: usize,
    ) -> Result<Tensor<L, AnyRank, Cpu>> {
        let room = positions
            .checked_mul(vocab)
            .ok_or_else(|| Error::TooLarge {
                tensor: spec.logits.to_owned(),
                dims: vec![1, positions, vocab],
            })?;
        Tensor::with_capacity_in(spec.logits, Cpu, &[1, 1, vocab], room)
    }

    /// Runs `prompt` (checked by the caller: ids in the vocabulary, at most the capacity)
    /// in row `row` of `decoder`'s cache, positions `0..prompt.len()`, and returns the
    /// argmax of its last position's logits. Nothing else of the decoder changes: its
    /// other rows' caches, its lengths, its bindings.
    ///
    /// The logits buffer grows when a prompt needs more room than it has: to the prompt's
    /// length rounded up to a power of two, at most the capacity (so a `Rows` allocates
    /// for logits about twice per doubling of its longest prompt, then never again).
    pub(super) fn run<T, M, D>(
        &mut self,
        decoder: &mut Decoder<T, M, D>,
        row: usize,
        prompt: &[i64],
    ) -> Result<i64>
    where
        T: DecoderModel<Logits = L>,
        M: RowsCache,
        D: Device,
    {
        let (spec, vocab, n) = (decoder.spec, decoder.vocab, prompt.len());
        if n > self.logits_room {
            let room = n
                .next_power_of_two()
                .max(LOGITS_START)
                .min(decoder.capacity);
            self.logits = Self::logits_for(spec, room, vocab)?;
            self.logits_room = room;
        }
        self.logits.set_dims(&[1, n, vocab])?;
        self.ids.set_dims(&[1, n])?;
        self.ids.write(0, prompt.iter().copied());
        if let Some(mask) = &mut self.mask {
            mask.set_dims(&[1, n])?;
        }
        self.dims.clear();
        self.dims
            .extend(spec.position_axes.iter().map(|a| match *a {
                PositionAxis::Sequence => n,
                PositionAxis::Batch | PositionAxis::Extra(_) => 1,
            }));
        self.positions.set_dims(&self.dims)?;
        let io = &mut self.io;
        io.bind_input(&decoder.ids.slot.name, self.ids.value())?;
        if let (Some(slot), Some(mask)) = (&decoder.mask, &self.mask) {
            io.bind_input(&slot.slot.name, mask.value())?;
        }
        if let Some(positions) = &decoder.positions {
            io.bind_input(&positions.slot.name, self.positions.value())?;
        }
        io.bind_output(&decoder.logits_slot.name, self.logits.value())?;
        for name in &self.other_outputs {
            io.bind_output_to_device(name, MemoryInfo::cpu()?)?;
        }
        if let (Some((tables, slots)), Some(state)) = (&mut self.paged, &mut decoder.paged) {
            // The row's blocks (promised when it joined) and the prompt's slots in them;
            // each pool bound whole, as past and present.
            state.take_blocks(row..row + 1, n, |_| 0)?;
            // Rows of continuous batching never share blocks (reordering them is refused),
            // so there is no block to copy first.
            debug_assert!(state.copies().is_empty());
            let blocks = state.row_blocks(row);
            let bs = state.block_size();
            tables.set_dims(&[1, blocks.len()])?;
            tables.write(0, blocks.iter().map(|&b| i64::from(b)));
            slots.set_dims(&[1, n])?;
            slots.write(
                0,
                (0..n).map(|p| (blocks[p / bs] as usize * bs + p % bs) as i64),
            );
            io.bind_input(&state.tables.slot.name, tables.value())?;
            io.bind_input(&state.slots.slot.name, slots.value())?;
            for cache in &decoder.caches {
                io.bind_input(&cache.past_slot.name, cache.past.value())?;
                io.bind_output(&cache.present_slot.name, cache.past.value())?;
            }
        }
        // Each cache's part for the row: `[1, ..]` of the capacity, from element
        // `row * (elements of a row)` of the shared buffer, bound as past and present.
        for cache in decoder.caches.iter().filter(|_| !M::PAGED) {
            cache.spec.dims(1, decoder.capacity, &mut decoder.dims);
            let per_row: usize = decoder.dims.iter().product();
            self.cache_dims.clear();
            self.cache_dims
                .extend(decoder.dims.iter().map(|&d| d as i64));
            let part = cache.past.value().part(row * per_row, &self.cache_dims)?;
            io.bind_input(&cache.past_slot.name, part.value())?;
            io.bind_output(&cache.present_slot.name, part.value())?;
        }
        decoder.stats.runs += 1;
        io.run_with(Some(decoder.control.options(false)))
            .map_err(|e| self.session.run_error(e))?;
        let last = &self.logits.as_slice()[(n - 1) * vocab..n * vocab];
        Ok(argmax(last) as i64)
    }
}
