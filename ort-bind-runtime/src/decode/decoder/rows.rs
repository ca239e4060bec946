//! Continuous batching: many sequences in one decoder, each in a row of its own, joining
//! and leaving while the others go on.
//!
//! Each decoding run feeds every busy row one token: the token it picked last. Rows hold
//! different numbers of positions; the attention mask says how many (ones for the row's
//! positions, zeros after) and the position ids are each row's own, so a model that reads
//! per-row lengths from its mask (ONNX Runtime's `GroupQueryAttention`, over the
//! shared-buffer cache where each row writes at its own position) computes each row as it
//! would alone. A free row runs a padding token at position 0 of its own slice.
//!
//! A request joins ([`Joining`]) by a **prefill**: its whole prompt in one run of batch 1
//! whose cache inputs and outputs are values over its row's part of the shared
//! `[batch, ..]` buffers (the batch is the outer axis, so a row is one block); the other
//! rows' caches are untouched (0 bytes copied), and its last position's logits give its
//! first token. The prefill runs at the next [`Rows::step`] (not in [`Rows::join`]): `join`
//! only checks and queues, so it never blocks or fails on a run; every joined request's
//! prefill then runs in that step, and stops and timeouts of the step cover them. A model
//! where a row cannot run alone (a cache whose outer axis is not the batch, a fixed batch
//! or step) joins the old way, [`Joining::TokenByToken`]: the prompt is fed one token per
//! run beside the other rows.
//!
//! Over a [`Paged`] cache the rows share one pool of blocks instead of a capacity each:
//! the block table and the positions tell rows apart (no mask needed), a request is
//! admitted when the pool can hold all of its positions (prompt and budget; it waits in a
//! [`Scheduler`](crate::decode::Scheduler) until then), takes blocks as it grows and gives
//! them back when it ends. Its prefill writes into its own blocks of the whole pool. A
//! request's place in the run (its *lane*) is not tied to memory there, so the busy
//! requests are kept in the first lanes and a run is only as wide as they are: when a
//! request ends, the last lane's request takes its lane (its block list and length move,
//! no cache byte does). In the shared-buffer mode a row's cache is its part of the
//! buffers, so lane and row are one and every row runs.
//!
//! Over a [`Growing`] cache (a model that appends with `Concat` and masks by its
//! attention mask) every row holds the same number of cache positions, the run's: a row's
//! sequence starts where the run was when its request joined, and the positions before it
//! are left padding, zeros in its mask (its position ids are its own, from 0). Requests join
//! token by token. When a request would not fit in what is left of the capacity, the
//! padding that every busy row has (the positions before the earliest start) is dropped
//! first: each cache's positions move down in place.
//!
//! `ort-bind-tests/tests/fixtures/decoders/rows_check.py` shows the model side in Python
//! (`make_paged.py` for the paged model).

use std::sync::Arc;

use super::{CacheMode, Decoder, DecoderModel, Growing, Paged, SharedBuffer};
use crate::cancel::{RunControl, Terminator};
use crate::decode::argmax;
use crate::decode::spec::PositionAxis;
use crate::device::Device;
use crate::error::{DecodeError, Result};

mod prefill;
use prefill::Prefill;

/// What happened to a row in a [`Rows::step`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowEvent {
    /// Nothing: the row is free, still taking its prompt, or sat out a step of prefills.
    Idle,
    /// The row's request got its next token.
    Token(i64),
    /// The row's request got its last token (its budget, or a stop token); the row is free
    /// from now on.
    Last(i64),
}

/// How a request's prompt enters its row ([`Rows::set_joining`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Joining {
    /// The whole prompt in one run of batch 1 over the row's part of the shared cache, at
    /// the next [`Rows::step`], whose event for the row is the request's first token. The
    /// default where the model allows it.
    Prefill,
    /// The prompt fed one token per run beside the other rows (a prompt of `n` tokens
    /// takes `n` steps to its first token). Any model [`Rows`] serves can join so.
    TokenByToken,
}

#[derive(Debug, Clone)]
enum Row {
    Free,
    Busy {
        prompt: Vec<i64>,
        fed: usize,
        produced: usize,
        max_new: usize,
        stop: Option<i64>,
        last: i64,
    },
}

impl Row {
    /// Waiting for its prefill run: joined, nothing fed yet.
    fn waits_for_prefill(&self) -> bool {
        matches!(self, Row::Busy { fed: 0, .. })
    }
}

/// The cache modes continuous batching runs over: each row's positions in its part of a
/// [`SharedBuffer`] (right-padded), its blocks of a [`Paged`] pool, or after left padding
/// in a [`Growing`] cache (the model must mask by its attention mask).
pub trait RowsCache: CacheMode + private::Sealed {}

impl RowsCache for SharedBuffer {}
impl RowsCache for Paged {}
impl RowsCache for Growing {}

mod private {
    pub trait Sealed {}
    impl Sealed for super::SharedBuffer {}
    impl Sealed for super::Paged {}
    impl Sealed for super::Growing {}
}

/// Continuous batching over a shared-buffer, paged or growing decoder (see the module
/// docs for how each holds rows of different lengths): one request per row, joining
/// ([`join`](Self::join)) and leaving (its budget, a stop token, or
/// [`leave`](Self::leave)) between runs, every busy row advanced by one token per run
/// ([`step`](Self::step)). Each request's tokens are its greedy tokens alone.
///
/// ```no_run
/// # fn demo(decoder: ort_bind_runtime::decode::Decoder<f32, ort_bind_runtime::decode::SharedBuffer>)
/// # -> ort_bind_runtime::Result<()> {
/// use ort_bind_runtime::decode::{RowEvent, Rows};
///
/// let mut rows = Rows::new(decoder)?; // a decoder of batch 8: 8 requests at a time
/// let a = rows.join(&[5, 42, 79], 16, None)?;
/// let b = rows.join(&[7, 9], 16, None)?;
/// while rows.busy() > 0 {
///     // The first step prefills both prompts (their first tokens); each step after
///     // runs one token of every busy row.
///     for (row, event) in rows.step()?.iter().enumerate() {
///         if let RowEvent::Token(t) | RowEvent::Last(t) = event {
///             println!("request in row {row}: {t}");
///         }
///     }
/// }
/// # let _ = (a, b); Ok(()) }
/// ```
#[derive(Debug)]
pub struct Rows<T: DecoderModel, D: Device = crate::device::Cpu, M: RowsCache = SharedBuffer> {
    // Declared before `decoder`: its binding points into the decoder's caches and is
    // released first. `None`: the model cannot prefill a row alone.
    prefill: Option<Prefill<T::Logits>>,
    joining: Joining,
    decoder: Decoder<T, M, D>,
    rows: Vec<Row>,
    events: Vec<RowEvent>,
    tokens: Vec<i64>,
    // First tokens of a step's prefills, committed once all of them ran.
    firsts: Vec<i64>,
    // Rows whose request ended in a step, freed after it (reused).
    freed: Vec<usize>,
    // Each row's lane of the decoder (`NO_LANE` while free) and each lane's row: the
    // identity in the shared-buffer mode; in the paged mode the busy rows hold lanes
    // `0..lanes`.
    lane_of: Vec<usize>,
    row_of: Vec<usize>,
    lanes: usize,
}

/// A free row's lane in the paged mode.
const NO_LANE: usize = usize::MAX;

impl<T: DecoderModel, D: Device, M: RowsCache> Rows<T, D, M> {
    /// One row per batch row of `decoder`, all free, joining by [`Joining::Prefill`] where
    /// the model allows it ([`Joining::TokenByToken`] otherwise). Refused (a
    /// [`DecodeError::RowsUnsupported`]): a model without an attention mask (it cannot
    /// tell rows' lengths apart; a paged model needs none) or position ids, with recurrent
    /// state, inputs held for a sequence, an embedding model or a head in parts, or
    /// position ids of another layout than `[batch, sequence]`; over a growing cache, a
    /// model whose attention reads lengths rather than masks (`GroupQueryAttention`: serve
    /// it over the shared buffer).
    pub fn new(mut decoder: Decoder<T, M, D>) -> Result<Self> {
        let spec = decoder.spec;
        let reason = if !M::SHARED && spec.shared_buffer {
            Some(
                "its attention (GroupQueryAttention) reads each row's length from the mask and wants the row's positions first, which a growing cache's left padding is not; serve it over the shared buffer",
            )
        } else if spec.attention_mask.is_none() && !M::PAGED {
            Some("the model takes no attention mask, which is what tells rows' lengths apart")
        } else if spec.position_ids.is_none() {
            Some("the model takes no position ids, so a row's positions would be the longest row's")
        } else if spec.caches.iter().any(|c| !c.grows()) {
            Some("the model carries recurrent state")
        } else if !spec.context.is_empty() || spec.embedder.is_some() || spec.head.is_some() {
            Some("the model needs inputs held for a sequence, or runs in parts")
        } else if spec
            .position_axes
            .iter()
            .any(|a| matches!(a, PositionAxis::Extra(_)))
            || !spec.sequence_axis
            || !spec.scalars.is_empty()
            || spec.fixed_new.is_some_and(|n| n != 1)
        {
            Some("its position ids, scalars or step are not per row")
        } else {
            None
        };
        if let Some(reason) = reason {
            return Err(DecodeError::RowsUnsupported { reason }.into());
        }
        let batch = decoder.batch;
        decoder.reset()?;
        decoder.row_lens = vec![0; batch];
        if !M::SHARED {
            decoder.row_starts = vec![0; batch];
        }
        if let Some(paged) = &mut decoder.paged {
            // Every row free: none holds a block until a request joins it.
            paged.clear(true);
        }
        let prefill = match unsupported_prefill::<M>(spec) {
            None => Some(Prefill::new(&decoder)?),
            Some(_) => None,
        };
        Ok(Rows {
            joining: if prefill.is_some() {
                Joining::Prefill
            } else {
                Joining::TokenByToken
            },
            prefill,
            decoder,
            rows: vec![Row::Free; batch],
            events: vec![RowEvent::Idle; batch],
            tokens: vec![0; batch],
            firsts: vec![0; batch],
            freed: Vec::with_capacity(batch),
            lane_of: (0..batch)
                .map(|r| if M::PAGED { NO_LANE } else { r })
                .collect(),
            row_of: (0..batch).collect(),
            lanes: if M::PAGED { 0 } else { batch },
        })
    }

    /// Rows in all.
    pub fn rows(&self) -> usize {
        self.rows.len()
    }

    /// Rows with a request.
    pub fn busy(&self) -> usize {
        self.rows
            .iter()
            .filter(|r| matches!(r, Row::Busy { .. }))
            .count()
    }

    /// How requests join now.
    pub fn joining(&self) -> Joining {
        self.joining
    }

    /// Sets how requests join from now on (a request already taking its prompt token by
    /// token goes on so). Refused ([`DecodeError::RowsUnsupported`], nothing changed):
    /// [`Joining::Prefill`] for a model whose rows cannot run alone (a cache whose outer
    /// axis is not the batch, a fixed batch or a fixed number of tokens per run).
    pub fn set_joining(&mut self, joining: Joining) -> Result<()> {
        if joining == Joining::Prefill
            && self.prefill.is_none()
            && let Some(reason) = unsupported_prefill::<M>(self.decoder.spec)
        {
            return Err(DecodeError::RowsUnsupported { reason }.into());
        }
        self.joining = joining;
        Ok(())
    }

    /// A handle that stops the step in progress from another thread (a shutdown, a
    /// client gone), or else the next step: whichever run of that step is running (a
    /// prefill, or the decoding run) stops, and [`step`](Self::step) returns
    /// [`Error::Terminated`] with every row as it was before the step, so calling `step`
    /// again goes on where it was (and [`leave`](Self::leave) ends requests instead). Once
    /// that step has ended the handle does nothing (see [`Terminator`]).
    ///
    /// [`Error::Terminated`]: crate::Error::Terminated
    pub fn terminator(&self) -> Terminator {
        Terminator::new(Arc::clone(&self.decoder.control))
    }

    /// The run control of every step's runs (for a [`Scheduler`](crate::decode::Scheduler)
    /// that stops steps from its own side).
    pub(crate) fn control(&self) -> Arc<RunControl> {
        Arc::clone(&self.decoder.control)
    }

    /// Starts a request in a free row, returned: greedy decoding after `prompt`, at most
    /// `max_new` tokens, ending early after `stop` (if given). Nothing runs here: with
    /// [`Joining::Prefill`] the whole prompt runs at the next [`step`](Self::step), whose
    /// event for the row is the first token; with [`Joining::TokenByToken`] it is fed one
    /// token per step. Refused, with every row as it was: no free row
    /// ([`DecodeError::RowsFull`]), an empty prompt or a budget of 0, an id outside the
    /// vocabulary, or more positions than the decoder's capacity; and until requests in
    /// rows end, a paged pool short of the request's blocks ([`DecodeError::OutOfBlocks`],
    /// `needed <= pool`) or a growing cache whose positions the busy rows still hold
    /// ([`DecodeError::CapacityExceeded`] with `len > 0`). A [`Scheduler`](crate::decode::Scheduler)
    /// keeps such a request waiting.
    pub fn join(&mut self, prompt: &[i64], max_new: usize, stop: Option<i64>) -> Result<usize> {
        self.decoder.check_ids(prompt)?;
        if prompt.is_empty() || max_new == 0 {
            return Err(DecodeError::TokenCount {
                count: prompt.len().min(max_new),
                batch: 1,
            }
            .into());
        }
        // The positions it holds at its last run: the prompt and all but the last token.
        let needs = prompt.len().checked_add(max_new - 1);
        if needs.is_none_or(|needs| needs > self.decoder.capacity) {
            return Err(DecodeError::CapacityExceeded {
                len: 0,
                adding: needs.unwrap_or(usize::MAX),
                capacity: self.decoder.capacity,
            }
            .into());
        }
        let Some(row) = self.rows.iter().position(|r| matches!(r, Row::Free)) else {
            return Err(DecodeError::RowsFull {
                rows: self.rows.len(),
            }
            .into());
        };
        if !M::SHARED {
            // Left padding: the request starts where the run is, after dropping the padding
            // every busy row has if that makes room.
            self.make_room(needs.unwrap_or(usize::MAX))?;
            self.decoder.row_starts[row] = self.decoder.len;
        }
        // In the paged mode the next lane; otherwise the row's own.
        let lane = if M::PAGED { self.lanes } else { row };
        if let Some(paged) = &mut self.decoder.paged {
            // The blocks of every position it may hold, kept for it from now on.
            paged.promise(lane, prompt.len() + max_new - 1)?;
        }
        if M::PAGED {
            self.lane_of[row] = lane;
            self.row_of[lane] = row;
            self.lanes += 1;
        }
        self.rows[row] = Row::Busy {
            prompt: prompt.to_vec(),
            fed: 0,
            produced: 0,
            max_new,
            stop,
            last: 0,
        };
        self.decoder.row_lens[lane] = 0;
        Ok(row)
    }

    /// Ends the request in `row` (its client left): the row is free for the next one and
    /// the other rows go on unchanged.
    pub fn leave(&mut self, row: usize) {
        if let Some(r) = self.rows.get_mut(row)
            && matches!(r, Row::Busy { .. })
        {
            *r = Row::Free;
            self.free(row);
        }
    }

    /// Over a growing cache: makes room for a request of `needs` positions after the run's
    /// positions, dropping the left padding every busy row has (all of them when no row is
    /// busy); refused ([`DecodeError::CapacityExceeded`], with the positions held) when
    /// that is not enough until requests end.
    fn make_room(&mut self, needs: usize) -> Result<()> {
        let d = &mut self.decoder;
        if needs <= d.capacity - d.len {
            return Ok(());
        }
        let padding = self
            .rows
            .iter()
            .enumerate()
            .filter(|(_, r)| matches!(r, Row::Busy { .. }))
            .map(|(i, _)| d.row_starts[i])
            .min()
            .unwrap_or(d.len);
        if needs > d.capacity - (d.len - padding) {
            return Err(DecodeError::CapacityExceeded {
                len: d.len - padding,
                adding: needs,
                capacity: d.capacity,
            }
            .into());
        }
        d.drop_padding(padding)
    }

    /// Frees `row`'s lane (its request ended or left): in the paged mode the last busy
    /// lane's request moves into it, so the busy lanes stay `0..lanes`.
    fn free(&mut self, row: usize) {
        let lane = self.lane_of[row];
        if !M::PAGED {
            self.decoder.free_row(lane);
            return;
        }
        if lane == NO_LANE {
            return;
        }
        let last = self.lanes - 1;
        if lane != last {
            self.decoder.swap_rows(lane, last);
            let moved = self.row_of[last];
            self.row_of[lane] = moved;
            self.lane_of[moved] = lane;
        }
        self.decoder.free_row(last);
        self.lane_of[row] = NO_LANE;
        self.lanes = last;
    }

    /// The decoder's free blocks, for a paged decoder (0 otherwise): what requests joining
    /// now can be promised.
    pub fn free_blocks(&self) -> usize {
        self.decoder.paged.as_ref().map_or(0, |p| p.unpromised())
    }

    /// One step. While a request that joined by [`Joining::Prefill`] waits for its
    /// prefill, the step is those prefills (one run of batch 1 each; each such row's event
    /// is its first token, the other rows' [`RowEvent::Idle`]); otherwise it is one run in
    /// which every busy row takes one token (its prompt's next, joining token by token, or
    /// the token it picked last). Returns what happened to each row. With no busy row,
    /// nothing runs.
    ///
    /// A failed step (a stop from [`terminator`](Self::terminator), ONNX Runtime's error)
    /// is returned; every row keeps what it had before the step (a prefill that ran is
    /// run again), and `step` may be called again.
    pub fn step(&mut self) -> Result<&[RowEvent]> {
        self.events.fill(RowEvent::Idle);
        if self.busy() == 0 {
            return Ok(&self.events);
        }
        // The step's runs share one epoch of the run control, as a generation's do: a
        // terminator taken before or during the step stops whichever of them is running,
        // and none after it.
        self.decoder.begin(None)?;
        let ran = if self.joining == Joining::Prefill
            && self.prefill.is_some()
            && self.rows.iter().any(Row::waits_for_prefill)
        {
            self.prefill_waiting()
        } else {
            self.decode()
        };
        let stop = self.decoder.end();
        match ran {
            Ok(()) => Ok(&self.events),
            // A run that stopped on request says why.
            Err(e) => Err(stop.unwrap_or(e)),
        }
    }

    /// Runs the prefill of every row waiting for one; commits their first tokens only
    /// once all ran.
    fn prefill_waiting(&mut self) -> Result<()> {
        let Some(prefill) = &mut self.prefill else {
            return Ok(());
        };
        for (r, row) in self.rows.iter().enumerate() {
            if let Row::Busy { prompt, fed: 0, .. } = row {
                self.firsts[r] = prefill.run(&mut self.decoder, self.lane_of[r], prompt)?;
            }
        }
        for (r, row) in self.rows.iter_mut().enumerate() {
            if row.waits_for_prefill() {
                let Row::Busy { prompt, fed, .. } = row else {
                    continue;
                };
                *fed = prompt.len();
                self.decoder.row_lens[self.lane_of[r]] = prompt.len();
                self.events[r] = picked(row, self.firsts[r]);
                if matches!(self.events[r], RowEvent::Last(_)) {
                    self.freed.push(r);
                }
            }
        }
        // After every lane was read (freeing one moves another into it).
        for i in 0..self.freed.len() {
            self.free(self.freed[i]);
        }
        self.freed.clear();
        Ok(())
    }

    /// One run of one token per row.
    fn decode(&mut self) -> Result<()> {
        let lanes = self.lanes;
        for (lane, token) in self.tokens[..lanes].iter_mut().enumerate() {
            *token = match &self.rows[self.row_of[lane]] {
                Row::Free => 0,
                Row::Busy {
                    prompt, fed, last, ..
                } => prompt.get(*fed).copied().unwrap_or(*last),
            };
        }
        // The run's mask spans the longest row; each row's own length says the rest (over a
        // growing cache every row holds the run's positions, left-padded).
        let d = &mut self.decoder;
        if M::SHARED {
            d.len = d.row_lens[..lanes].iter().copied().max().unwrap_or(0);
        }
        // The run is as wide as the lanes (all rows but in the paged mode).
        let batch = std::mem::replace(&mut d.batch, lanes);
        let ran = d.append(&self.tokens[..lanes]);
        d.batch = batch;
        ran?;
        let logits = Decoder::<T, M, D>::view(&d.logits, lanes, d.new, d.vocab)?;
        for lane in 0..lanes {
            let r = self.row_of[lane];
            let row = &mut self.rows[r];
            let Row::Busy { prompt, fed, .. } = row else {
                continue;
            };
            d.row_lens[lane] += 1;
            if *fed < prompt.len() {
                *fed += 1;
                if *fed < prompt.len() {
                    continue;
                }
            }
            self.events[r] = picked(row, argmax(logits.row(lane)) as i64);
            if matches!(self.events[r], RowEvent::Last(_)) {
                self.freed.push(r);
            }
        }
        // After the logits' last use (they borrow the decoder), and after every lane was
        // read (freeing one moves another into it).
        for i in 0..self.freed.len() {
            self.free(self.freed[i]);
        }
        self.freed.clear();
        Ok(())
    }

    /// The decoder back, every row forgotten (a plain decoder again).
    pub fn into_decoder(mut self) -> Result<Decoder<T, M, D>> {
        // The prefill's binding points into the decoder's caches: released first.
        self.prefill = None;
        self.decoder.row_lens.clear();
        self.decoder.row_starts.clear();
        self.decoder.reset_mask();
        self.decoder.reset()?;
        Ok(self.decoder)
    }
}

/// Why rows over cache mode `M` cannot join by a prefill run, if they cannot: a growing
/// cache's row is not a block of its own (its positions sit among the run's), and see
/// [`prefill::unsupported`].
fn unsupported_prefill<M: RowsCache>(spec: &crate::decode::DecoderSpec) -> Option<&'static str> {
    if !M::SHARED {
        Some(
            "over a growing cache a row's positions are the run's, left-padded, so a prompt joins token by token",
        )
    } else {
        prefill::unsupported(spec)
    }
}

/// A busy row picked `token`: its event, and the row freed after its last (the caller
/// frees its positions: [`Decoder::free_row`]).
fn picked(row: &mut Row, token: i64) -> RowEvent {
    let Row::Busy {
        produced,
        max_new,
        stop,
        last,
        ..
    } = row
    else {
        return RowEvent::Idle;
    };
    *last = token;
    *produced += 1;
    if *produced == *max_new || Some(token) == *stop {
        *row = Row::Free;
        RowEvent::Last(token)
    } else {
        RowEvent::Token(token)
    }
}

impl<T: DecoderModel, M: super::CacheMode, D: Device> Decoder<T, M, D> {
    /// Writes each row's length into the mask (`total` wide: ones for the row's positions
    /// and the new one, zeros after) and its position, for a run of one token per row.
    pub(super) fn write_row_lengths(&mut self, total: usize) {
        // The rows of this run (a paged `Rows` runs only its busy lanes).
        let lens = &self.row_lens[..self.batch];
        if let Some(mask) = &mut self.mask {
            if self.row_starts.is_empty() {
                // Right padding: the row's positions first.
                for (row, &len) in lens.iter().enumerate() {
                    mask.buffer
                        .write(row * total, (0..total).map(|j| i64::from(j <= len)));
                }
            } else {
                // Left padding: the row's positions last, from where it started.
                for (row, &start) in self.row_starts.iter().enumerate() {
                    mask.buffer
                        .write(row * total, (0..total).map(|j| i64::from(j >= start)));
                }
            }
        }
        if let Some(positions) = &mut self.positions {
            for (row, &len) in lens.iter().enumerate() {
                positions.buffer.write(row, [len as i64]);
            }
        }
    }

    /// Row `row` holds nothing from now on: its length 0, and in the paged mode its blocks
    /// back in the pool (the row then writes to the sink until a request joins it).
    pub(super) fn free_row(&mut self, row: usize) {
        if let Some(len) = self.row_lens.get_mut(row) {
            *len = 0;
        }
        if let Some(paged) = &mut self.paged {
            paged.free_row(row);
        }
    }

    /// Drops the first `drop` cache positions of every row (left padding all rows have):
    /// each cache's later positions move down in place. Refused on device memory before
    /// anything moves.
    fn drop_padding(&mut self, drop: usize) -> Result<()> {
        if drop == 0 {
            return Ok(());
        }
        if !D::HOST_ACCESSIBLE {
            return Err(crate::Error::Unsupported {
                role: "cache",
                name: self.spec.caches.first().map_or("", |c| c.past).to_owned(),
                kind: format!(
                    "memory on {} that the host cannot move; continuous batching over a growing cache drops its left padding there",
                    D::NAME
                ),
            });
        }
        let (batch, len) = (self.batch, self.len);
        for cache in self.caches.iter_mut().filter(|c| c.spec.grows()) {
            let (outer, inner) = cache.spec.outer_inner(batch);
            let moved = cache.past.drop_front(outer, inner, len, drop)?;
            self.stats.cache_bytes_moved += moved as u64;
            cache.spec.dims(batch, len - drop, &mut self.dims);
            cache.past.set_dims(&self.dims)?;
        }
        self.len = len - drop;
        for start in &mut self.row_starts {
            *start = start.saturating_sub(drop);
        }
        Ok(())
    }

    /// Rows `a` and `b` trade what they hold: their lengths and, in the paged mode, their
    /// blocks (nothing is copied).
    pub(super) fn swap_rows(&mut self, a: usize, b: usize) {
        self.row_lens.swap(a, b);
        if let Some(paged) = &mut self.paged {
            paged.swap_rows(a, b);
        }
    }

    /// Every element of the mask 1 again, as a decoder of uniform rows expects.
    fn reset_mask(&mut self) {
        if let Some(mask) = &mut self.mask {
            let capacity = self.batch * self.capacity;
            let _ = mask.buffer.set_dims(&[capacity]);
            mask.buffer.write(0, std::iter::repeat_n(1, capacity));
        }
    }
}
