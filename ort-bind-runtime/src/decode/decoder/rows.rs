//! Continuous batching: many sequences in one decoder, each in a row of its own, joining
//! and leaving while the others go on.
//!
//! Each run feeds every busy row one token: the next of its prompt while it joins, then
//! the token it picked last. Rows hold different numbers of positions; the attention mask
//! says how many (ones for the row's positions, zeros after) and the position ids are each
//! row's own, so a model that reads per-row lengths from its mask (ONNX Runtime's
//! `GroupQueryAttention`, over the shared-buffer cache where each row writes at its own
//! position) computes each row as it would alone. A row that joins starts over at
//! position 0 of its slice of the cache; the other rows' caches are untouched (0 bytes
//! copied), and a free row runs a padding token at position 0 of its own slice.
//! `ort-bind-tests/tests/fixtures/decoders/rows_check.py` shows the model side in Python.

use super::{Decoder, DecoderModel, SharedBuffer};
use crate::decode::argmax;
use crate::decode::spec::PositionAxis;
use crate::device::Device;
use crate::error::{DecodeError, Result};

/// What happened to a row in a [`Rows::step`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowEvent {
    /// Nothing: the row is free, or still taking its prompt.
    Idle,
    /// The row's request got its next token.
    Token(i64),
    /// The row's request got its last token (its budget, or a stop token); the row is free
    /// from now on.
    Last(i64),
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

/// Continuous batching over a shared-buffer decoder: one request per row, joining
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
///     for (row, event) in rows.step()?.iter().enumerate() {
///         if let RowEvent::Token(t) | RowEvent::Last(t) = event {
///             println!("request in row {row}: {t}");
///         }
///     }
/// }
/// # let _ = (a, b); Ok(()) }
/// ```
#[derive(Debug)]
pub struct Rows<T: DecoderModel, D: Device = crate::device::Cpu> {
    decoder: Decoder<T, SharedBuffer, D>,
    rows: Vec<Row>,
    events: Vec<RowEvent>,
    tokens: Vec<i64>,
}

impl<T: DecoderModel, D: Device> Rows<T, D> {
    /// One row per batch row of `decoder`, all free. Refused (a
    /// [`DecodeError::RowsUnsupported`]): a model without an attention mask (it cannot
    /// tell rows' lengths apart) or position ids, with recurrent state, inputs held for a sequence, an
    /// embedding model or a head in parts, or position ids of another layout than
    /// `[batch, sequence]`.
    pub fn new(mut decoder: Decoder<T, SharedBuffer, D>) -> Result<Self> {
        let spec = decoder.spec;
        let reason = if spec.attention_mask.is_none() {
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
        Ok(Rows {
            decoder,
            rows: vec![Row::Free; batch],
            events: vec![RowEvent::Idle; batch],
            tokens: vec![0; batch],
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

    /// Starts a request in a free row, returned: greedy decoding after `prompt`, at most
    /// `max_new` tokens, ending early after `stop` (if given). The prompt is fed one token
    /// per [`step`](Self::step), alongside the other rows. Refused, with every row as it
    /// was: no free row ([`DecodeError::RowsFull`]), an empty prompt or a budget of 0, an
    /// id outside the vocabulary, or more positions than the decoder's capacity.
    pub fn join(&mut self, prompt: &[i64], max_new: usize, stop: Option<i64>) -> Result<usize> {
        let vocab = self.decoder.vocab;
        if let Some(&token) = prompt.iter().find(|&&t| t < 0 || t as u64 >= vocab as u64) {
            return Err(DecodeError::TokenOutOfRange { token, vocab }.into());
        }
        if prompt.is_empty() || max_new == 0 {
            return Err(DecodeError::TokenCount {
                count: prompt.len().min(max_new),
                batch: 1,
            }
            .into());
        }
        // The positions it holds at its last run: the prompt and all but the last token.
        let needs = prompt.len() + max_new - 1;
        if needs > self.decoder.capacity {
            return Err(DecodeError::CapacityExceeded {
                len: 0,
                adding: needs,
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
        self.rows[row] = Row::Busy {
            prompt: prompt.to_vec(),
            fed: 0,
            produced: 0,
            max_new,
            stop,
            last: 0,
        };
        self.decoder.row_lens[row] = 0;
        Ok(row)
    }

    /// Ends the request in `row` (its client left): the row is free for the next one and
    /// the other rows go on unchanged.
    pub fn leave(&mut self, row: usize) {
        if let Some(r) = self.rows.get_mut(row) {
            *r = Row::Free;
            self.decoder.row_lens[row] = 0;
        }
    }

    /// One run: every busy row takes one token (its prompt's next, or the token it picked
    /// last). Returns what happened to each row. With no busy row, nothing runs.
    ///
    /// A failed run (a stop request, a timeout, ONNX Runtime's error) is returned; the
    /// rows keep the positions they had, and `step` may be called again.
    pub fn step(&mut self) -> Result<&[RowEvent]> {
        self.events.fill(RowEvent::Idle);
        if self.busy() == 0 {
            return Ok(&self.events);
        }
        for (token, row) in self.tokens.iter_mut().zip(&self.rows) {
            *token = match row {
                Row::Free => 0,
                Row::Busy {
                    prompt, fed, last, ..
                } => prompt.get(*fed).copied().unwrap_or(*last),
            };
        }
        // The run's mask spans the longest row; each row's own length says the rest.
        let d = &mut self.decoder;
        d.len = d.row_lens.iter().copied().max().unwrap_or(0);
        let tokens = std::mem::take(&mut self.tokens);
        let ran = d.append(&tokens);
        self.tokens = tokens;
        ran?;
        let logits = Decoder::<T, SharedBuffer, D>::view(&d.logits, d.batch, d.new, d.vocab)?;
        let lens = &mut d.row_lens;
        for (r, row) in self.rows.iter_mut().enumerate() {
            let Row::Busy {
                prompt,
                fed,
                produced,
                max_new,
                stop,
                last,
            } = row
            else {
                continue;
            };
            lens[r] += 1;
            if *fed < prompt.len() {
                *fed += 1;
                if *fed < prompt.len() {
                    continue;
                }
            }
            *last = argmax(logits.row(r)) as i64;
            *produced += 1;
            if *produced == *max_new || Some(*last) == *stop {
                self.events[r] = RowEvent::Last(*last);
                *row = Row::Free;
                lens[r] = 0;
            } else {
                self.events[r] = RowEvent::Token(*last);
            }
        }
        Ok(&self.events)
    }

    /// The decoder back, every row forgotten (a plain decoder again).
    pub fn into_decoder(mut self) -> Result<Decoder<T, SharedBuffer, D>> {
        self.decoder.row_lens.clear();
        self.decoder.reset_mask();
        self.decoder.reset()?;
        Ok(self.decoder)
    }
}

impl<T: DecoderModel, M: super::CacheMode, D: Device> Decoder<T, M, D> {
    /// Writes each row's length into the mask (`total` wide: ones for the row's positions
    /// and the new one, zeros after) and its position, for a run of one token per row.
    pub(super) fn write_row_lengths(&mut self, total: usize) {
        if let Some(mask) = &mut self.mask {
            for (row, &len) in self.row_lens.iter().enumerate() {
                mask.buffer
                    .write(row * total, (0..total).map(|j| i64::from(j <= len)));
            }
        }
        if let Some(positions) = &mut self.positions {
            for (row, &len) in self.row_lens.iter().enumerate() {
                positions.buffer.write(row, [len as i64]);
            }
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
