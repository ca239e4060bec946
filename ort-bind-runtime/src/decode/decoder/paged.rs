//! The paged cache mode's blocks: which blocks of the pool each row holds, and the block
//! table and slot mapping each run reads.
//!
//! Every cache of a paged model is one pool `[blocks, block_size, ..]` bound as both past
//! and present (the model writes only the new positions, in place); a row's positions live
//! in the blocks its table lists, taken from the pool as the row grows and given back when
//! it is rewound, reset or freed. Block 0 is never handed out: rows with no sequence
//! (continuous batching's free rows) point their table at it and write their padding
//! position there, so they hold no block.
//!
//! Memory then follows the positions held, not `batch x capacity`: a decoder of 16 rows
//! whose requests hold 300 positions on average needs a pool of about `16 x 300 /
//! block_size` blocks, where the shared-buffer mode reserves every row's full capacity.
//!
//! Rows may share blocks: reordering rows (beam search, [`Decoder::reorder_rows`]) gives
//! row `i` row `src[i]`'s block list, and each block counts the rows that hold it. A block
//! is written only by a row that holds it alone: before a run writes into a shared block,
//! the row gets a copy of it (copy on write), so beams that share a prompt share its blocks
//! for good and a reordering copies at most the blocks then being written.

use super::super::buffers::RowMove;
use super::super::spec::RowLayout;
use super::{Decoder, DecoderModel, IndexSlot, Paged};
use crate::decode::spec::{DecoderSpec, PagedSpec};
use crate::device::Device;
use crate::error::{DecodeError, Result};

/// The block that rows without a sequence read and write; never held by a row.
const SINK: u32 = 0;

/// A paged decoder's blocks and block inputs.
#[derive(Debug)]
pub(super) struct PagedState {
    spec: &'static PagedSpec,
    // `[batch, blocks per row]`, room for `per_row` blocks per row.
    pub(super) tables: IndexSlot,
    // `[batch, new]`, room for `batch x capacity`.
    pub(super) slots: IndexSlot,
    // The most blocks a row holds: the capacity in blocks.
    per_row: usize,
    // Blocks no row holds (never the sink).
    free: Vec<u32>,
    // Blocks in the pool, besides the sink.
    total: usize,
    // Each row's blocks, in position order.
    held: Vec<Vec<u32>>,
    // Rows holding each block (index: block id; the sink's is unused).
    refs: Vec<u32>,
    // Copies of shared blocks a run needs before it writes (`take_blocks`), made by the
    // decoder in every cache ([`PagedState::copies`]).
    copies: Vec<RowMove>,
    // Scratch of `reorder` (each row's next block list).
    next: Vec<Vec<u32>>,
    // Blocks a row may still take that no other row may (continuous batching reserves a
    // request's whole need when it joins, so no later run finds the pool short).
    promised: Vec<usize>,
    // Rows with no sequence: they write to the sink and hold nothing.
    idle: Vec<bool>,
    // The width of the block table of the last run.
    pub(super) width: usize,
}

impl PagedState {
    /// The blocks of a decoder of `batch` rows of up to `capacity` positions, over a pool
    /// of `blocks` blocks besides the sink (`None`: enough for every row at full capacity).
    pub(super) fn new(
        spec: &'static DecoderSpec,
        batch: usize,
        capacity: usize,
        blocks: Option<usize>,
    ) -> Result<(Self, usize)> {
        let paged = spec
            .paged
            .ok_or(DecodeError::PagedMismatch { paged: false })?;
        if paged.block_size == 0 {
            return Err(crate::Error::SignatureMismatch {
                problem: "a paged spec with blocks of 0 positions".to_owned(),
            });
        }
        let per_row = capacity.div_ceil(paged.block_size);
        let blocks = match blocks {
            Some(b) => b,
            None => batch
                .checked_mul(per_row)
                .ok_or(DecodeError::Empty { batch, capacity })?,
        };
        // Every slot (`block * block_size + offset`, the sink block included) must fit the
        // model's index type.
        let slots_fit = (blocks as u128 + 1) * paged.block_size as u128 <= max_index(paged) as u128;
        if blocks == 0 || u32::try_from(blocks).is_err() || !slots_fit {
            return Err(DecodeError::PoolSize { blocks }.into());
        }
        let rows = batch
            .checked_mul(capacity)
            .ok_or(DecodeError::Empty { batch, capacity })?;
        let state = PagedState {
            spec: paged,
            tables: IndexSlot::new(
                &paged.block_tables,
                &[batch, 1],
                batch * per_row,
                i64::from(SINK),
            )?,
            slots: IndexSlot::new(&paged.slot_mapping, &[batch, 1], rows, 0)?,
            per_row,
            // Handed out from the end: block 1 first.
            free: (1..=blocks as u32).rev().collect(),
            total: blocks,
            held: (0..batch).map(|_| Vec::with_capacity(per_row)).collect(),
            refs: vec![0; blocks + 1],
            copies: Vec::with_capacity(2 * batch),
            next: Vec::new(),
            promised: vec![0; batch],
            idle: vec![false; batch],
            width: 1,
        };
        // The pool's blocks, the sink included.
        Ok((state, blocks + 1))
    }

    pub(super) fn block_size(&self) -> usize {
        self.spec.block_size
    }

    /// Free blocks that no row has been promised.
    pub(super) fn unpromised(&self) -> usize {
        let outstanding: usize = self
            .promised
            .iter()
            .zip(&self.held)
            .map(|(p, h)| p.saturating_sub(h.len()))
            .sum();
        self.free.len().saturating_sub(outstanding)
    }

    /// Blocks for `positions` positions.
    fn blocks_for(&self, positions: usize) -> usize {
        positions.div_ceil(self.block_size())
    }

    /// Promises row `row` the blocks for `positions` positions (continuous batching's
    /// admission): refused when the pool cannot keep the promise beside the others.
    pub(super) fn promise(&mut self, row: usize, positions: usize) -> Result<()> {
        let need = self.blocks_for(positions);
        let more = need.saturating_sub(self.held[row].len().max(self.promised[row]));
        let unpromised = self.unpromised();
        if more > unpromised {
            return Err(DecodeError::OutOfBlocks {
                needed: need,
                free: unpromised + self.promised[row].saturating_sub(self.held[row].len()),
                pool: self.pool(),
            }
            .into());
        }
        self.promised[row] = need.max(self.promised[row]);
        self.idle[row] = false;
        Ok(())
    }

    /// Blocks in the pool besides the sink.
    pub(super) fn pool(&self) -> usize {
        self.total
    }

    /// A free block, now held by one row.
    fn take(&mut self) -> u32 {
        let block = self.free.pop().expect("counted by the caller");
        self.refs[block as usize] = 1;
        block
    }

    /// One row fewer holds `block`; back in the pool when none does.
    fn release(refs: &mut [u32], free: &mut Vec<u32>, block: u32) {
        let r = &mut refs[block as usize];
        *r -= 1;
        if *r == 0 {
            free.push(block);
        }
    }

    /// Of row `row`'s blocks, those a run of `new` positions after `start` writes into
    /// (among those it holds already), as indices into its block list.
    fn written(&self, row: usize, start: usize, new: usize) -> std::ops::Range<usize> {
        let held = self.held[row].len();
        if new == 0 {
            return held..held;
        }
        let bs = self.block_size();
        (start / bs).min(held)..((start + new - 1) / bs + 1).min(held)
    }

    /// Blocks of row `row` that a run of `new` positions after `start` must copy first.
    fn shared_written(&self, row: usize, start: usize, new: usize) -> usize {
        self.written(row, start, new)
            .filter(|&i| self.refs[self.held[row][i] as usize] > 1)
            .count()
    }

    /// The copies of shared blocks the last `take_blocks` needs made in every
    /// cache before the run (block moves of [`PagedState::block_layout`]); cleared by the
    /// caller once made.
    pub(super) fn copies(&mut self) -> &mut Vec<RowMove> {
        &mut self.copies
    }

    /// A pool of `block` elements per block laid out as rows to move (the sink included).
    pub(super) fn block_layout(&self, block: usize) -> RowLayout {
        RowLayout {
            pre: 1,
            batch: self.total + 1,
            block,
            runs: 1,
            run_len: block,
            run_stride: block,
        }
    }

    /// Gives row `row` its own copy of every shared block a run of `new` positions after
    /// `start` writes into (recorded in `copies`; the caller made sure of free blocks).
    fn unshare(&mut self, row: usize, start: usize, new: usize) {
        for i in self.written(row, start, new) {
            let old = self.held[row][i];
            if self.refs[old as usize] > 1 {
                let copy = self.take();
                Self::release(&mut self.refs, &mut self.free, old);
                self.held[row][i] = copy;
                self.copies.push(RowMove::Copy {
                    from: old as usize,
                    to: copy as usize,
                });
            }
        }
    }

    /// Row `i` takes row `src[i]`'s blocks (shared from now on, counted), for every `i`.
    pub(super) fn reorder(&mut self, src: &[usize]) {
        if self.next.len() != self.held.len() {
            self.next = (0..self.held.len())
                .map(|_| Vec::with_capacity(self.per_row))
                .collect();
        }
        for (next, &from) in self.next.iter_mut().zip(src) {
            next.clear();
            next.extend_from_slice(&self.held[from]);
            for &b in next.iter() {
                self.refs[b as usize] += 1;
            }
        }
        for held in &mut self.held {
            for b in held.drain(..) {
                Self::release(&mut self.refs, &mut self.free, b);
            }
        }
        std::mem::swap(&mut self.held, &mut self.next);
    }

    /// Blocks no row holds.
    pub(super) fn free_blocks(&self) -> usize {
        self.free.len()
    }

    /// Blocks row `row` must take for a run of `new` positions after `start`: those beyond
    /// what it holds or was promised (a promise was kept for it), and a copy of each
    /// shared block the run writes into.
    fn missing(&self, row: usize, start: usize, new: usize) -> usize {
        let need = self.blocks_for(start + new);
        need.saturating_sub(self.held[row].len().max(self.promised[row]))
            + self.shared_written(row, start, new)
    }

    /// Gives each busy row of `rows` the blocks for a run of `new` positions after
    /// `start(row)`: its own copy of every shared block the run writes into (recorded in
    /// `copies`), then new blocks. Takes none and says how many are missing when the pool
    /// is short.
    pub(super) fn take_blocks(
        &mut self,
        rows: std::ops::Range<usize>,
        new: usize,
        start: impl Fn(usize) -> usize,
    ) -> Result<()> {
        let missing: usize = rows
            .clone()
            .filter(|&row| !self.idle[row])
            .map(|row| self.missing(row, start(row), new))
            .sum();
        let unpromised = self.unpromised();
        if missing > unpromised {
            return Err(DecodeError::OutOfBlocks {
                needed: missing,
                free: unpromised,
                pool: self.pool(),
            }
            .into());
        }
        for row in rows {
            if self.idle[row] {
                continue;
            }
            self.unshare(row, start(row), new);
            let need = self.blocks_for(start(row) + new);
            while self.held[row].len() < need {
                let block = self.take();
                self.held[row].push(block);
            }
        }
        Ok(())
    }

    /// Writes the block table of the first `rows` rows (`[rows, width]`, the widest row's
    /// blocks; shorter rows padded with their first block, whose extra positions the model
    /// masks by position) and the slots of `new` positions per row after `start(row)`.
    /// Returns the width.
    pub(super) fn write(
        &mut self,
        rows: usize,
        new: usize,
        start: impl Fn(usize) -> usize,
    ) -> Result<usize> {
        let bs = self.block_size();
        let width = self.held[..rows]
            .iter()
            .zip(&self.idle)
            .filter(|(_, idle)| !**idle)
            .map(|(h, _)| h.len())
            .max()
            .unwrap_or(0)
            .max(1);
        self.tables.buffer.set_dims(&[rows, width])?;
        self.slots.buffer.set_dims(&[rows, new])?;
        for (row, held) in self.held[..rows].iter().enumerate() {
            let pad = held.first().copied().unwrap_or(SINK);
            let table = held
                .iter()
                .copied()
                .chain(std::iter::repeat(pad))
                .take(width)
                .map(i64::from);
            self.tables.buffer.write(row * width, table);
            if self.idle[row] {
                // The sink's first positions: a free row's padding writes there.
                let sink = (0..new).map(|i| (SINK as usize * bs + i % bs) as i64);
                self.slots.buffer.write(row * new, sink);
            } else {
                let start = start(row);
                let slots =
                    (start..start + new).map(|p| (held[p / bs] as usize * bs + p % bs) as i64);
                self.slots.buffer.write(row * new, slots);
            }
        }
        self.width = width;
        Ok(width)
    }

    /// Keeps the blocks of the first `positions` positions of every row.
    pub(super) fn truncate(&mut self, positions: usize) {
        let keep = self.blocks_for(positions);
        for held in &mut self.held {
            if held.len() > keep {
                for b in held.drain(keep..).rev() {
                    Self::release(&mut self.refs, &mut self.free, b);
                }
            }
        }
    }

    /// Rows `a` and `b` trade their blocks, promises and states.
    pub(super) fn swap_rows(&mut self, a: usize, b: usize) {
        self.held.swap(a, b);
        self.promised.swap(a, b);
        self.idle.swap(a, b);
    }

    /// Row `row` holds nothing and writes to the sink until it is promised blocks again.
    pub(super) fn free_row(&mut self, row: usize) {
        for b in self.held[row].drain(..).rev() {
            Self::release(&mut self.refs, &mut self.free, b);
        }
        self.promised[row] = 0;
        self.idle[row] = true;
    }

    /// Every row holds nothing; `idle` says whether rows then wait for a promise
    /// (continuous batching) or run (a plain decoder).
    pub(super) fn clear(&mut self, idle: bool) {
        for row in 0..self.held.len() {
            self.free_row(row);
            self.idle[row] = idle;
        }
    }

    /// A row's blocks (a prefill writes its prompt there).
    pub(super) fn row_blocks(&self, row: usize) -> &[u32] {
        &self.held[row]
    }

    /// The capacity in blocks of a row.
    pub(super) fn per_row(&self) -> usize {
        self.per_row
    }
}

/// The largest value both block inputs' element types hold.
fn max_index(paged: &PagedSpec) -> i64 {
    let max = |elem| {
        if elem == ort_sys::ONNXTensorElementDataType::ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32 {
            i64::from(i32::MAX)
        } else {
            i64::MAX
        }
    };
    max(paged.block_tables.elem).min(max(paged.slot_mapping.elem))
}

impl<T: DecoderModel, D: Device> Decoder<T, Paged, D> {
    /// A paged decoder for `batch` rows of up to `capacity` positions each, over a pool of
    /// `blocks` blocks (each of the model's block size, shared by every row) on `device`.
    /// [`Decoder::new_on`] makes the pool big enough for every row at full capacity; a
    /// smaller one is the point of the mode when rows hold sequences of different lengths
    /// ([`Rows`](super::Rows) admits a request only when the pool can hold all of it).
    /// One more block is reserved for rows with no sequence.
    ///
    /// A run that needs more blocks than are free fails with
    /// [`DecodeError::OutOfBlocks`] before anything changes.
    pub fn with_blocks_on(
        session: &crate::Session,
        spec: &'static DecoderSpec,
        device: D,
        batch: usize,
        capacity: usize,
        blocks: usize,
    ) -> Result<Self> {
        Self::single(
            session,
            spec,
            device,
            batch,
            capacity,
            super::Room::Blocks(Some(blocks)),
        )
    }

    /// Blocks in the pool (besides the one kept for rows with no sequence).
    pub fn pool_blocks(&self) -> usize {
        self.paged.as_ref().map_or(0, PagedState::pool)
    }

    /// Blocks no row holds.
    pub fn free_blocks(&self) -> usize {
        self.paged.as_ref().map_or(0, PagedState::free_blocks)
    }

    /// Positions per block.
    pub fn block_size(&self) -> usize {
        self.paged.as_ref().map_or(0, PagedState::block_size)
    }
}
