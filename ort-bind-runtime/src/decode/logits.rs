//! The logits of the last position, read in place, and greedy selection.

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
}

impl Logit for f32 {
    fn to_f32(self) -> f32 {
        self
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

/// The logits of the last position of every batch row after a run: one row of `vocab`
/// values per batch row, read in place (no copy).
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

    /// The logits of batch row `row` at the last position.
    ///
    /// # Panics
    /// When `row >= self.batch()`, as slice indexing does.
    pub fn row(&self, row: usize) -> &'a [L] {
        assert!(row < self.batch, "row {row} of {} rows", self.batch);
        let start = (row * self.new + self.new - 1) * self.vocab;
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
}

/// The index of the largest value (the first on ties; NaN is never the largest unless
/// every value is NaN, then 0).
pub fn argmax<L: Logit>(values: &[L]) -> usize {
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
    }
}
