//! Reordering batch rows: row `i` takes the cache of row `src[i]` (what beam search does
//! after each step, when the best continuations come from some beams more than once and
//! from others not at all).
//!
//! The rows move in place, in each cache buffer the decoder already has: the copies are
//! ordered so that every row is read before it is overwritten, and each cycle of rows that
//! trade places goes through one saved row, kept in room after the buffer's elements
//! (reserved once, [`Decoder::reserve_reorder`]). Only the positions held move: a
//! shared-buffer cache `[batch, heads, capacity, head]` copies `heads x len x head`
//! elements per moved row, not the capacity.

use super::super::buffers::RowMove;
use super::{CacheMode, Decoder, DecoderModel};
use crate::device::Device;
use crate::error::{DecodeError, Result};

/// The plan's scratch, reserved for the decoder's batch: nothing is allocated per
/// reordering.
#[derive(Debug)]
pub(crate) struct ReorderScratch {
    moves: Vec<RowMove>,
    readers: Vec<usize>,
    pending: Vec<bool>,
    ready: Vec<usize>,
}

impl ReorderScratch {
    fn new(batch: usize) -> Self {
        ReorderScratch {
            // A row is copied once, and each cycle adds a save and a restore: at most
            // `batch + batch / 2 + 1` moves.
            moves: Vec::with_capacity(2 * batch + 1),
            readers: Vec::with_capacity(batch),
            pending: Vec::with_capacity(batch),
            ready: Vec::with_capacity(batch),
        }
    }

    /// Plans `out[i] = in[src[i]]` in place (every `src[i] < src.len()`): first each row
    /// that no row still to be written reads, then what is left, which is cycles of rows
    /// that trade places, each through the saved row.
    fn plan(&mut self, src: &[usize]) {
        let n = src.len();
        self.moves.clear();
        self.pending.clear();
        self.pending
            .extend(src.iter().enumerate().map(|(i, &j)| i != j));
        self.readers.clear();
        self.readers.resize(n, 0);
        for (i, &j) in src.iter().enumerate() {
            if self.pending[i] {
                self.readers[j] += 1;
            }
        }
        self.ready.clear();
        for i in 0..n {
            if self.pending[i] && self.readers[i] == 0 {
                self.ready.push(i);
            }
        }
        while let Some(i) = self.ready.pop() {
            let j = src[i];
            self.moves.push(RowMove::Copy { from: j, to: i });
            self.pending[i] = false;
            self.readers[j] -= 1;
            if self.pending[j] && self.readers[j] == 0 {
                self.ready.push(j);
            }
        }
        // Every row still pending is read by exactly one pending row and reads one: they
        // form cycles.
        for i in 0..n {
            if !self.pending[i] {
                continue;
            }
            self.moves.push(RowMove::Save { from: i });
            let mut at = i;
            while src[at] != i {
                self.moves.push(RowMove::Copy {
                    from: src[at],
                    to: at,
                });
                self.pending[at] = false;
                at = src[at];
            }
            self.moves.push(RowMove::Restore { to: at });
            self.pending[at] = false;
        }
    }
}

impl<T: DecoderModel, M: CacheMode, D: Device> Decoder<T, M, D> {
    /// Makes the decoder ready to [`reorder_rows`](Self::reorder_rows) without allocating
    /// there: each cache buffer gets room for one row more than it holds (where it lacks
    /// it: one allocation and copy per buffer, now), and the plan's scratch is reserved.
    /// [`BeamSearch::new`](super::super::BeamSearch::new) calls it; calling it again does
    /// nothing.
    ///
    /// Refused ([`DecodeError::ReorderUnsupported`]): a decoder of inputs held for a
    /// sequence (an encoder's states, cross-attention caches: they are per row too), one
    /// serving continuous batching, or a cache without a batch axis; a cache in memory the
    /// host cannot write is an [`Error::Unsupported`](crate::Error::Unsupported).
    pub fn reserve_reorder(&mut self) -> Result<()> {
        // An asynchronous run still in flight uses the buffers this may replace.
        self.settle();
        if self.reorder.is_some() {
            return Ok(());
        }
        let reason = if !self.context.is_empty()
            || self.embedder.as_ref().is_some_and(|e| !e.extra.is_empty())
        {
            Some(
                "it holds inputs for the sequence (an encoder's states or cross-attention caches), which would need reordering too",
            )
        } else if self.paged.is_some() && !D::HOST_ACCESSIBLE {
            Some(
                "its paged pool is in device memory, where ort-bind cannot copy a block that rows share before a run writes into it",
            )
        } else if !self.row_lens.is_empty() {
            Some("its rows hold sequences of different lengths (continuous batching)")
        } else if self.paged.is_none() && self.caches.iter().any(|c| c.spec.rows(1, 0, 0).is_none())
        {
            Some("a cache has no batch axis")
        } else {
            None
        };
        if let Some(reason) = reason {
            return Err(DecodeError::ReorderUnsupported { reason }.into());
        }
        let batch = self.batch;
        if self.paged.is_some() {
            // Rows trade block lists; a pool was made with the room a block copy needs.
            self.reorder = Some(ReorderScratch::new(0));
            return Ok(());
        }
        for cache in &mut self.caches {
            let mut grew = false;
            for buffer in std::iter::once(&mut cache.past).chain(cache.present.as_mut()) {
                let room = buffer.room();
                grew |= buffer.reserve_room(room + room.div_ceil(batch))?;
            }
            if grew {
                // New values over new memory: bind them whatever the addresses.
                cache.past_slot.forget();
                cache.present_slot.forget();
            }
        }
        self.reorder = Some(ReorderScratch::new(batch));
        Ok(())
    }

    /// Reorders the batch rows: row `i` takes what row `src[i]` holds (its cache and any
    /// recurrent state), for every `i` at once; a row may be the source of several rows or
    /// of none. Rows stay where their memory is: the held positions are copied within each
    /// cache buffer, nothing is reallocated (after [`reserve_reorder`](Self::reserve_reorder),
    /// which the first call makes if it was not), and a row that keeps its own cache moves
    /// nothing. In the [`Paged`](super::Paged) mode nothing is copied here: row `i` takes
    /// row `src[i]`'s block list, the blocks shared, and a later run copies only a shared
    /// block it writes into. The bytes copied are counted in [`DecodeStats::cache_bytes_moved`](super::DecodeStats::cache_bytes_moved).
    ///
    /// The last run's logits are of the rows before the reordering, so they are gone
    /// afterwards ([`logits`](Self::logits) is [`DecodeError::NoLogits`] until the next
    /// run), and so is rewinding into the last run of a model with recurrent state.
    ///
    /// Refused, the decoder unchanged: `src` not of `batch` entries or naming a row outside
    /// the batch ([`DecodeError::RowIndex`]), or what [`reserve_reorder`](Self::reserve_reorder)
    /// refuses.
    ///
    /// ```no_run
    /// # fn demo(mut decoder: ort_bind_runtime::decode::Decoder<f32>) -> ort_bind_runtime::Result<()> {
    /// // Batch 3: rows 0 and 1 continue row 1's sequence, row 2 continues row 0's.
    /// decoder.prefill(&[5, 6, 7, 8, 9, 10])?;
    /// decoder.reorder_rows(&[1, 1, 0])?;
    /// decoder.step(&[11, 12, 13])?;
    /// # Ok(()) }
    /// ```
    pub fn reorder_rows(&mut self, src: &[usize]) -> Result<()> {
        // An asynchronous run still in flight uses the buffers this moves.
        self.settle();
        let batch = self.batch;
        if src.len() != batch {
            return Err(DecodeError::RowIndex {
                given: src.len(),
                index: batch,
                batch,
            }
            .into());
        }
        if let Some(&index) = src.iter().find(|&&j| j >= batch) {
            return Err(DecodeError::RowIndex {
                given: batch,
                index,
                batch,
            }
            .into());
        }
        self.reserve_reorder()?;
        if let Some(paged) = &mut self.paged {
            // Row `i` holds row `src[i]`'s blocks, shared until a run writes into one.
            paged.reorder(src);
            self.new = 0;
            return Ok(());
        }
        let scratch = self.reorder.as_mut().expect("reserved above");
        scratch.plan(src);
        if scratch.moves.is_empty() {
            return Ok(());
        }
        let (len, capacity) = (self.len, self.capacity);
        let mut moved = 0;
        for cache in &mut self.caches {
            let layout = match (cache.spec.grows(), cache.present.is_none()) {
                // Shared buffer: the capacity along the sequence, `len` positions held.
                (true, true) => cache.spec.rows(batch, capacity, len),
                // Growing: the past holds exactly `len` positions.
                (true, false) => cache.spec.rows(batch, len, len),
                // Recurrent state: all of it.
                (false, _) => cache.spec.rows(batch, 0, 0),
            }
            .expect("checked by reserve_reorder");
            moved += cache.past.move_rows(layout, &scratch.moves)?;
        }
        self.stats.cache_bytes_moved += moved as u64;
        self.new = 0;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Applies a plan to rows of one value each, with one saved row.
    fn apply(moves: &[RowMove], rows: &mut [u32]) {
        let mut saved = None;
        for m in moves {
            match *m {
                RowMove::Copy { from, to } => rows[to] = rows[from],
                RowMove::Save { from } => {
                    assert!(saved.is_none(), "one saved row at a time");
                    saved = Some(rows[from]);
                }
                RowMove::Restore { to } => rows[to] = saved.take().expect("a saved row"),
            }
        }
    }

    #[test]
    fn every_reordering_gathers_in_place() {
        // Every map of 1..=5 rows onto themselves (5^5 for 5 rows): the plan gives
        // out[i] = in[src[i]], copies each row at most once, and keeps rows that stay.
        for n in 1..=5usize {
            let mut scratch = ReorderScratch::new(n);
            let count = n.pow(n as u32);
            for code in 0..count {
                let mut c = code;
                let src: Vec<usize> = (0..n)
                    .map(|_| {
                        let j = c % n;
                        c /= n;
                        j
                    })
                    .collect();
                scratch.plan(&src);
                let mut rows: Vec<u32> = (0..n as u32).map(|i| 100 + i).collect();
                apply(&scratch.moves, &mut rows);
                let want: Vec<u32> = src.iter().map(|&j| 100 + j as u32).collect();
                assert_eq!(rows, want, "src {src:?}: {:?}", scratch.moves);
                let changed = src.iter().enumerate().filter(|&(i, &j)| i != j).count();
                let copies = scratch
                    .moves
                    .iter()
                    .filter(|m| !matches!(m, RowMove::Save { .. }))
                    .count();
                assert_eq!(copies, changed, "src {src:?}");
                assert!(scratch.moves.len() <= 2 * n + 1);
            }
        }
    }

    #[test]
    fn the_plan_allocates_nothing_once_reserved() {
        let mut scratch = ReorderScratch::new(8);
        let caps = (
            scratch.moves.capacity(),
            scratch.readers.capacity(),
            scratch.pending.capacity(),
            scratch.ready.capacity(),
        );
        for src in [
            [1, 2, 3, 4, 5, 6, 7, 0],
            [1, 0, 3, 2, 5, 4, 7, 6],
            [0, 0, 0, 0, 0, 0, 0, 0],
            [7, 6, 5, 4, 3, 2, 1, 0],
        ] {
            scratch.plan(&src);
        }
        assert_eq!(
            caps,
            (
                scratch.moves.capacity(),
                scratch.readers.capacity(),
                scratch.pending.capacity(),
                scratch.ready.capacity(),
            )
        );
    }
}
