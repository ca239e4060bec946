//! What the decode loop refuses, before anything runs: each leaves the decoder as it was.

use std::fmt;

/// A request the decoder refuses. The decoder is unchanged and usable afterwards.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeError {
    /// More positions than the capacity the decoder was created with.
    CapacityExceeded {
        /// Positions held now.
        len: usize,
        /// Positions asked for.
        adding: usize,
        /// The capacity.
        capacity: usize,
    },
    /// A token id outside the vocabulary (or negative).
    TokenOutOfRange {
        /// The id.
        token: i64,
        /// The vocabulary size (the logits' last axis).
        vocab: usize,
    },
    /// Token ids that do not fill every batch row equally.
    TokenCount {
        /// Ids given.
        count: usize,
        /// The batch size.
        batch: usize,
    },
    /// `step` was given more than one token per row.
    StepTokens {
        /// Ids given.
        count: usize,
        /// The batch size.
        batch: usize,
    },
    /// A rewind past the first position.
    RewindPastStart {
        /// Positions asked to drop.
        by: usize,
        /// Positions held.
        len: usize,
    },
    /// A rewind of a model with recurrent state further back than its last run (only the
    /// state before that run is kept).
    RecurrentState {
        /// The state's input name.
        state: &'static str,
    },
    /// Logits were asked for before a run produced them (or after a rewind, a reset or a
    /// failed run).
    NoLogits,
    /// The model cannot run in the requested cache mode.
    NotShareable {
        /// A cache input that is not written in place.
        cache: &'static str,
    },
    /// The shared-buffer mode on a CUDA session over a cache whose element type ONNX
    /// Runtime's CUDA `GroupQueryAttention` has no kernel for (it has float16 and
    /// bfloat16): the node would run on the CPU over copies of the cache, which no longer
    /// share one buffer, and the tokens would be wrong.
    NotSharedOnDevice {
        /// The cache input.
        cache: &'static str,
        /// Its element type, as ONNX names it.
        elem: &'static str,
    },
    /// A run before an input held for the sequence was given
    /// ([`Decoder::set_context`](crate::decode::Decoder::set_context), or an encoder run).
    MissingContext {
        /// The input.
        input: &'static str,
    },
    /// A batch other than the one the model fixes.
    FixedBatch {
        /// The model's batch.
        model: usize,
        /// The batch asked for.
        asked: usize,
    },
    /// Tokens that do not split into the new positions per run the model fixes.
    FixedStep {
        /// New positions per row given.
        new: usize,
        /// The model's positions per run.
        step: usize,
    },
    /// A decoder of no rows or no capacity.
    Empty {
        /// The batch asked for.
        batch: usize,
        /// The capacity asked for.
        capacity: usize,
    },
    /// Continuous batching ([`Rows`](crate::decode::Rows)) asked of a decoder it cannot
    /// serve; the reason says what is missing.
    RowsUnsupported {
        /// Why.
        reason: &'static str,
    },
    /// A request joined [`Rows`](crate::decode::Rows) whose rows are all busy.
    RowsFull {
        /// The rows.
        rows: usize,
    },
    /// A token stream (one token per item) asked of a decoder of more than one row.
    StreamBatch {
        /// The decoder's batch.
        batch: usize,
    },
    /// Speculative decoding with no draft tokens per round (`k == 0`).
    NoDraftTokens,
    /// A speculative pair whose vocabulary sizes differ (untyped decoders; typed ones
    /// do not compile).
    VocabMismatch {
        /// The target's vocabulary size.
        target: usize,
        /// The draft's.
        draft: usize,
    },
    /// A speculative pair whose token ids are of different element types (untyped
    /// decoders; typed ones do not compile).
    IdsMismatch {
        /// The target's ids, as ONNX names the type.
        target: &'static str,
        /// The draft's.
        draft: &'static str,
    },
    /// Speculative decoding over decoders of more than one batch row.
    SpeculativeBatch {
        /// The batch of the decoder that has more than one row.
        batch: usize,
    },
    /// A speculative target (or draft) that fixes its new positions per run: the target
    /// must verify all of a round's positions in one run.
    NotVerifiable {
        /// The model's positions per run.
        step: usize,
    },
    /// A reordering of batch rows ([`Decoder::reorder_rows`](crate::decode::Decoder::reorder_rows))
    /// that does not name one source row per row, or names a row the decoder does not have.
    RowIndex {
        /// The source rows given.
        given: usize,
        /// The offending source row (equal to `batch` when the count is wrong).
        index: usize,
        /// The decoder's batch.
        batch: usize,
    },
    /// Reordering batch rows asked of a decoder that cannot do it; the reason says why.
    ReorderUnsupported {
        /// Why.
        reason: &'static str,
    },
    /// Beam search ([`BeamSearch`](crate::decode::BeamSearch)) asked for no beams, or for
    /// more beams than the decoder has batch rows.
    BeamCount {
        /// The beams asked for.
        num_beams: usize,
        /// The decoder's batch.
        batch: usize,
    },
    /// A paged model in another cache mode, or another model in the paged mode.
    PagedMismatch {
        /// Whether the model's cache is paged.
        paged: bool,
    },
    /// A run, or a request joining [`Rows`](crate::decode::Rows), needs more blocks of a
    /// paged cache than the pool has free (not promised to requests already in rows).
    OutOfBlocks {
        /// Blocks needed.
        needed: usize,
        /// Blocks free for it.
        free: usize,
        /// Blocks in the pool.
        pool: usize,
    },
    /// A paged decoder of no blocks, or of more than its block inputs' index type can
    /// number (every slot, `block * block_size + offset`, must fit it).
    PoolSize {
        /// The blocks asked for.
        blocks: usize,
    },
    /// Beam-search options that cannot run ([`BeamOptions`](crate::decode::BeamOptions));
    /// the reason says which and why.
    BeamOptions {
        /// Why.
        reason: String,
    },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::CapacityExceeded {
                len,
                adding,
                capacity,
            } => write!(
                f,
                "the decoder holds {len} of {capacity} positions and cannot take {adding} more (create it with a larger capacity, or `rewind`/`reset`)"
            ),
            DecodeError::TokenOutOfRange { token, vocab } => {
                write!(f, "token id {token} is outside the vocabulary (0..{vocab})")
            }
            DecodeError::TokenCount { count, batch } => write!(
                f,
                "{count} token ids do not split into {batch} batch rows of at least one token each (give rows one after another, equal lengths)"
            ),
            DecodeError::StepTokens { count, batch } => write!(
                f,
                "`step` takes one token per batch row ({batch}); {count} given (use `append` for several)"
            ),
            DecodeError::RewindPastStart { by, len } => {
                write!(f, "cannot rewind {by} positions: the decoder holds {len}")
            }
            DecodeError::RecurrentState { state } => write!(
                f,
                "cannot rewind further back than the last run: `{state}` is recurrent state that the model overwrites each run, and only the state before the last run is kept (`reset` restarts it)"
            ),
            DecodeError::NoLogits => f.write_str(
                "no logits: append tokens first (a rewind, a reset or a failed run discards them)",
            ),
            DecodeError::NotShareable { cache } => write!(
                f,
                "the shared-buffer cache mode needs every growing cache written in place by the model (GroupQueryAttention); `{cache}` is not"
            ),
            DecodeError::NotSharedOnDevice { cache, elem } => write!(
                f,
                "the shared-buffer cache mode cannot run on this CUDA session: `{cache}` is {elem}, and ONNX Runtime's CUDA GroupQueryAttention has only float16 and bfloat16 kernels, so the node would run on the CPU over copies of the cache that no longer share a buffer; use the growing mode (`decoder_on`), a CPU session, or a float16 or bfloat16 model"
            ),
            DecodeError::MissingContext { input } => write!(
                f,
                "the decoder has no `{input}` for this sequence yet (give it with `set_context`, or run the encoder first)"
            ),
            DecodeError::FixedBatch { model, asked } => write!(
                f,
                "the model fixes the batch at {model}; a decoder of {asked} rows cannot run it"
            ),
            DecodeError::FixedStep { new, step } => write!(
                f,
                "the model takes {step} new positions per run; {new} per row do not split into runs of {step}"
            ),
            DecodeError::Empty { batch, capacity } => write!(
                f,
                "a decoder needs a batch and a capacity of at least 1 (got batch {batch}, capacity {capacity})"
            ),
            DecodeError::RowsUnsupported { reason } => {
                write!(f, "continuous batching cannot run this decoder: {reason}")
            }
            DecodeError::RowsFull { rows } => write!(
                f,
                "all {rows} rows are busy: a request joins when one finishes or leaves"
            ),
            DecodeError::StreamBatch { batch } => write!(
                f,
                "a token stream yields one token per item, so it needs a decoder of one row (this one has {batch}); use `generate`, whose callback gets every row's token"
            ),
            DecodeError::NoDraftTokens => f.write_str(
                "speculative decoding needs at least one draft token per round (k >= 1)",
            ),
            DecodeError::VocabMismatch { target, draft } => write!(
                f,
                "the draft's vocabulary ({draft} tokens) is not the target's ({target}): a draft proposes ids the target verifies"
            ),
            DecodeError::IdsMismatch { target, draft } => write!(
                f,
                "the draft's token ids are {draft} and the target's {target}: a speculative pair takes the same ids"
            ),
            DecodeError::SpeculativeBatch { batch } => write!(
                f,
                "speculative decoding runs one sequence: make both decoders with batch 1 (got {batch})"
            ),
            DecodeError::RowIndex {
                given,
                index,
                batch,
            } => {
                if given != batch {
                    write!(
                        f,
                        "a reordering names {given} source rows; the decoder has {batch} rows, and each takes one"
                    )
                } else {
                    write!(
                        f,
                        "source row {index} is not a row of this decoder (0..{batch})"
                    )
                }
            }
            DecodeError::ReorderUnsupported { reason } => {
                write!(f, "this decoder cannot reorder its rows: {reason}")
            }
            DecodeError::BeamCount { num_beams, batch } => write!(
                f,
                "beam search over {num_beams} beams needs a decoder of at least that many rows and at least 1 (this one has {batch})"
            ),
            DecodeError::PagedMismatch { paged: true } => f.write_str(
                "the model's cache is paged (a pool of blocks read through `block_tables`, written at `slot_mapping`): it runs only in the paged mode (`paged_decoder`, `Decoder<_, Paged>`)",
            ),
            DecodeError::PagedMismatch { paged: false } => f.write_str(
                "the paged cache mode needs a model that takes `block_tables` and `slot_mapping` with every cache a pool of blocks; this model's cache is per row (use the growing or shared-buffer mode)",
            ),
            DecodeError::OutOfBlocks { needed, free, pool } => {
                if needed > pool {
                    write!(
                        f,
                        "the paged cache needs {needed} blocks, more than its whole pool of {pool} (make the decoder with more blocks, or ask for fewer positions)"
                    )
                } else {
                    write!(
                        f,
                        "the paged cache needs {needed} blocks and only {free} of its {pool} are free: the rows in use hold (or are promised) the rest"
                    )
                }
            }
            DecodeError::PoolSize { blocks } => write!(
                f,
                "a paged decoder needs a pool of at least 1 block, and no more than the model's block table and slot mapping can number ({blocks} asked for)"
            ),
            DecodeError::BeamOptions { reason } => write!(f, "beam search cannot run: {reason}"),
            DecodeError::NotVerifiable { step } => write!(
                f,
                "the model takes {step} new position(s) per run, so it cannot verify a round of draft tokens in one run (as a speculative target or draft)"
            ),
        }
    }
}

impl std::error::Error for DecodeError {}
