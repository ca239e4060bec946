//! What the decode loop refuses, before anything runs: each leaves the decoder as it was.

/// A request the decoder refuses. The decoder is unchanged and usable afterwards.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// More positions than the capacity the decoder was created with.
    #[error(
        "the decoder holds {len} of {capacity} positions; {adding} more do not fit (create it with a larger capacity, or `rewind`/`reset`)"
    )]
    CapacityExceeded {
        /// Positions held now.
        len: usize,
        /// Positions asked for.
        adding: usize,
        /// The capacity.
        capacity: usize,
    },
    /// A token id outside the vocabulary (or negative).
    #[error("token id {token} is outside the vocabulary (0..{vocab})")]
    TokenOutOfRange {
        /// The id.
        token: i64,
        /// The vocabulary size (the logits' last axis).
        vocab: usize,
    },
    /// Token ids that do not fill every batch row equally.
    #[error(
        "{count} token ids do not split into {batch} batch rows of at least one token each (give rows one after another, equal lengths)"
    )]
    TokenCount {
        /// Ids given.
        count: usize,
        /// The batch size.
        batch: usize,
    },
    /// `step` was given more than one token per row.
    #[error(
        "`step` takes one token per batch row ({batch}); {count} given (use `append` for several)"
    )]
    StepTokens {
        /// Ids given.
        count: usize,
        /// The batch size.
        batch: usize,
    },
    /// A rewind past the first position.
    #[error("cannot rewind {by} positions: the decoder holds {len}")]
    RewindPastStart {
        /// Positions asked to drop.
        by: usize,
        /// Positions held.
        len: usize,
    },
    /// A rewind on a model with recurrent state, which cannot be undone.
    #[error(
        "cannot rewind: `{state}` is recurrent state that the model overwrites each step (only `reset` restarts it)"
    )]
    RecurrentState {
        /// The state's input name.
        state: &'static str,
    },
    /// Logits were asked for before a run produced them (or after a rewind, a reset or a
    /// failed run).
    #[error("no logits: append tokens first (a rewind, a reset or a failed run discards them)")]
    NoLogits,
    /// The model cannot run in the requested cache mode.
    #[error(
        "the shared-buffer cache mode needs every growing cache written in place by the model (GroupQueryAttention); `{cache}` is not"
    )]
    NotShareable {
        /// A cache input that is not written in place.
        cache: &'static str,
    },
    /// A decoder of no rows or no capacity.
    #[error(
        "a decoder needs a batch and a capacity of at least 1 (got batch {batch}, capacity {capacity})"
    )]
    Empty {
        /// The batch asked for.
        batch: usize,
        /// The capacity asked for.
        capacity: usize,
    },
}
