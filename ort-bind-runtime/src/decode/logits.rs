//! The logits of a run's new positions, read in place, and greedy selection.

use std::fmt;

use crate::element::{Element, bf16, f16};

/// An element type logits come in: `f32`, `f16`, `bf16` or `f64`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a logits element type",
    note = "the decoder reads logits of f32, f16, bf16 or f64",
    note = "a `Decoder` is typed by its model: generic code over decoders takes `T: DecoderModel` (not `L: Logit`) and reads the logits type as `T::Logits`"
)]
pub trait Logit: Element + PartialOrd {
    /// The value as `f32` (for samplers that compute in one type).
    fn to_f32(self) -> f32;

    /// The index of the largest of `values` (see [`argmax`]); types override it with a
    /// faster search that gives the same index.
    fn argmax(values: &[Self]) -> usize {
        serial_argmax(values)
    }
}

impl Logit for f32 {
    fn to_f32(self) -> f32 {
        self
    }

    fn argmax(values: &[f32]) -> usize {
        argmax_f32(values)
    }
}
impl Logit for f64 {
    fn to_f32(self) -> f32 {
        self as f32
    }
}
impl Logit for f16 {
    fn to_f32(self) -> f32 {
        f16::to_f32(self)
    }
}
impl Logit for bf16 {
    fn to_f32(self) -> f32 {
        bf16::to_f32(self)
    }
}

/// The logits of a run, read in place (no copy): `vocab` values for each new position of
/// each batch row. [`row`](Self::row) is a row's last position (what the next token is
/// picked from); [`at`](Self::at) reads any position of the run, as a speculative
/// verification does after appending several tokens at once.
///
/// ```no_run
/// # fn demo(decoder: &mut ort_bind_runtime::decode::Decoder<f32>) -> ort_bind_runtime::Result<()> {
/// decoder.append(&[17, 4, 9])?;            // batch 1: three new positions in one run
/// let logits = decoder.logits()?;
/// assert_eq!(logits.positions(), 3);
/// let after_17 = logits.argmax_at(0, 0);   // the pick after token 17
/// let next = logits.argmax(0);             // the pick after token 9 (= argmax_at(0, 2))
/// # let _ = (after_17, next); Ok(()) }
/// ```
#[derive(Clone, Copy)]
pub struct Logits<'a, L: Logit> {
    pub(crate) data: &'a [L],
    pub(crate) batch: usize,
    pub(crate) new: usize,
    pub(crate) vocab: usize,
}

impl<L: Logit> fmt::Debug for Logits<'_, L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Logits")
            .field("batch", &self.batch)
            .field("positions", &self.new)
            .field("vocab", &self.vocab)
            .finish()
    }
}

impl<'a, L: Logit> Logits<'a, L> {
    /// Batch rows.
    pub fn batch(&self) -> usize {
        self.batch
    }

    /// Values per row (the vocabulary size).
    pub fn vocab(&self) -> usize {
        self.vocab
    }

    /// New positions per row in the run (the tokens each row was given by the last
    /// `append`; 1 after a `step`). A model that fixes its positions per run takes a
    /// longer `append` in several runs, and holds only the last run's positions.
    pub fn positions(&self) -> usize {
        self.new
    }

    /// The logits of batch row `row` at the last position.
    ///
    /// # Panics
    /// When `row >= self.batch()`, as slice indexing does.
    pub fn row(&self, row: usize) -> &'a [L] {
        self.at(row, self.new - 1)
    }

    /// The logits of batch row `row` at new position `position` of the run (0: after the
    /// first token given, [`positions`](Self::positions)` - 1`: the last, as
    /// [`row`](Self::row)).
    ///
    /// # Panics
    /// When `row >= self.batch()` or `position >= self.positions()`, as slice indexing
    /// does.
    pub fn at(&self, row: usize, position: usize) -> &'a [L] {
        assert!(row < self.batch, "row {row} of {} rows", self.batch);
        assert!(
            position < self.new,
            "position {position} of {} new positions",
            self.new
        );
        let start = (row * self.new + position) * self.vocab;
        &self.data[start..start + self.vocab]
    }

    /// Every row, in batch order.
    pub fn rows(&self) -> impl Iterator<Item = &'a [L]> + 'a {
        let this = *self;
        (0..self.batch).map(move |r| this.row(r))
    }

    /// The index of the largest logit of `row` (the first one on ties; NaN never wins).
    pub fn argmax(&self, row: usize) -> usize {
        argmax(self.row(row))
    }

    /// The index of the largest logit of `row` at new position `position` (see
    /// [`at`](Self::at); the first on ties, NaN never wins).
    pub fn argmax_at(&self, row: usize, position: usize) -> usize {
        argmax(self.at(row, position))
    }
}

/// The index of the largest value (the first on ties; NaN is never the largest unless
/// every value is NaN, then 0).
pub fn argmax<L: Logit>(values: &[L]) -> usize {
    L::argmax(values)
}

/// [`argmax`] for `f32` in two passes the compiler vectorises: the largest value, kept
/// per lane of 16 (a compare and select, no branch: NaN never replaces a number), then the
/// first 16-value block holding it and its place there. The same index as the one-pass
/// search, several times faster over a vocabulary.
fn argmax_f32(values: &[f32]) -> usize {
    const LANES: usize = 16;
    let mut lanes = [f32::NEG_INFINITY; LANES];
    let blocks = values.chunks_exact(LANES);
    let rest = blocks.remainder();
    for block in blocks {
        for (m, &v) in lanes.iter_mut().zip(block) {
            *m = if v > *m { v } else { *m };
        }
    }
    let max = lanes
        .iter()
        .chain(rest)
        .fold(f32::NEG_INFINITY, |m, &v| if v > m { v } else { m });
    // Every value is NaN (or there are none): nothing equals `max` below but a real -inf.
    let mut base = 0;
    for block in values.chunks(LANES) {
        if block.iter().fold(false, |hit, &v| hit | (v == max)) {
            return base + block.iter().position(|&v| v == max).unwrap_or(0);
        }
        base += block.len();
    }
    0
}

/// The one-pass search: the reference every faster one matches.
fn serial_argmax<L: Logit>(values: &[L]) -> usize {
    let mut best = 0;
    let mut best_value: Option<L> = None;
    for (i, &v) in values.iter().enumerate() {
        // `v > best` is false for NaN on either side: NaN never replaces a number.
        let better = match best_value {
            None => v.partial_cmp(&v).is_some(), // false for NaN only
            Some(b) => v > b,
        };
        if better {
            best = i;
            best_value = Some(v);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argmax_first_of_ties_and_skips_nan() {
        assert_eq!(argmax(&[1.0f32, 3.0, 3.0, 2.0]), 1);
        assert_eq!(argmax(&[f32::NAN, 1.0, 0.5]), 1);
        assert_eq!(argmax(&[0.5f32, f32::NAN, 2.0]), 2);
        assert_eq!(argmax(&[f32::NAN, f32::NAN]), 0);
        assert_eq!(argmax(&[f16::from_f32(-1.0), f16::from_f32(4.0)]), 1);
        assert_eq!(argmax(&[bf16::from_f32(7.0), bf16::from_f32(4.0)]), 0);
    }

    /// The vectorised `f32` search gives the one-pass search's index on every input:
    /// ties, NaN anywhere, infinities, signed zeros, every length around the lane width.
    #[test]
    fn the_fast_f32_search_finds_what_the_serial_one_does() {
        let specials = [
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            0.0,
            -0.0,
            1.0,
            -1.0,
            3.5,
        ];
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for len in 0..80 {
            for _ in 0..200 {
                let values: Vec<f32> = (0..len)
                    .map(|_| {
                        let r = next();
                        if r % 4 == 0 {
                            specials[(r >> 8) as usize % specials.len()]
                        } else {
                            ((r >> 16) % 7) as f32 - 3.0
                        }
                    })
                    .collect();
                assert_eq!(argmax_f32(&values), serial_argmax(&values), "{values:?}");
            }
        }
        assert_eq!(argmax_f32(&[f32::NAN; 40]), 0);
        assert_eq!(argmax_f32(&[f32::NAN, f32::NEG_INFINITY]), 1);
    }

    #[test]
    fn rows_pick_the_last_position() {
        // batch 2, 3 new positions, vocab 2: rows are positions 2 and 5.
        let data = [0., 0., 0., 0., 1., 9., 0., 0., 0., 0., 8., 2.];
        let logits = Logits {
            data: &data[..],
            batch: 2,
            new: 3,
            vocab: 2,
        };
        assert_eq!(logits.row(0), &[1., 9.]);
        assert_eq!(logits.row(1), &[8., 2.]);
        assert_eq!(logits.argmax(0), 1);
        assert_eq!(logits.argmax(1), 0);
        assert_eq!(logits.rows().count(), 2);
        assert_eq!(logits.positions(), 3);
    }

    #[test]
    fn every_new_position_is_readable() {
        // batch 2, 3 new positions, vocab 2: position p of row r starts at (3r + p) * 2.
        let data: Vec<f32> = (0..12).map(|i| i as f32).collect();
        let logits = Logits {
            data: &data[..],
            batch: 2,
            new: 3,
            vocab: 2,
        };
        for row in 0..2 {
            for position in 0..3 {
                let start = ((3 * row + position) * 2) as f32;
                assert_eq!(logits.at(row, position), &[start, start + 1.0]);
                assert_eq!(logits.argmax_at(row, position), 1);
            }
            assert_eq!(logits.at(row, 2), logits.row(row));
        }
    }

    #[test]
    #[should_panic(expected = "position 3 of 3 new positions")]
    fn a_position_past_the_run_panics() {
        let data = [0.0f32; 6];
        let logits = Logits {
            data: &data[..],
            batch: 1,
            new: 3,
            vocab: 2,
        };
        let _ = logits.at(0, 3);
    }
}
