//! Generative decoding: a typed decode loop over a decoder model with a key/value cache.
//!
//! Every token, a decoder model's `present` outputs become the next run's `past` inputs
//! while the sequence grows by one. [`Decoder`] keeps that cache in buffers of the full
//! capacity, bound to ONNX Runtime once, and rebinds only what changes shape:
//!
//! - [`Growing`]: two buffers per past/present pair that trade places after each run
//!   (no copy by ort-bind; the model's `Concat` copies what it asks for);
//! - [`SharedBuffer`]: one buffer bound as both past and present, written in place by
//!   ONNX Runtime's `GroupQueryAttention`; a step rebinds only the attention mask;
//! - [`Paged`]: one pool of fixed-size blocks per cache shared by every row, bound as
//!   both past and present and read through a block table (paged attention); rows take
//!   blocks as they grow and give them back when they end;
//! - fixed-shape recurrent state (`past_conv.N` -> `present_conv.N`) ping-pongs between
//!   two buffers in either mode.
//!
//! A whole generation, greedy from a prompt to a stop token, a budget or a timeout, is
//! [`Decoder::generate`] (a callback per token) or [`Decoder::stream`] (an iterator that
//! runs a token only when the next is read, so dropping it stops the generation); a
//! [`Decoder::terminator`] stops one from another thread. Either way the decoder then
//! serves the next request. For async handlers, [`Decoder::stream_async`] is the same
//! generation as a `Stream` (each run made on ort-bind's worker threads, so no executor
//! thread blocks on one), and [`Decoder::step_async`] and its kin are single runs as
//! futures; a [`DecoderPool`] lends decoders to concurrent requests.
//!
//! [`BeamSearch`] keeps `num_beams` beams in the decoder's batch rows (onnxruntime-genai's
//! and Hugging Face's beam search: log-softmax plus beam score, the best `2 x num_beams`
//! candidates, finished sequences scored with a length penalty; [`BeamOptions`], [`Beam`]).
//! After each step the rows follow their beams through [`Decoder::reorder_rows`]: row `i`
//! takes the cache (and recurrent state) of row `src[i]`, copied in place within the cache
//! buffers, only the positions held (in the paged mode, its block list: the beams share
//! blocks, and a run copies only a shared block it writes into).
//!
//! Codegen recognises decoder signatures (the conventions exporters use) and writes a
//! [`DecoderSpec`] and typed aliases (`Decoder`, `SharedDecoder`) into the generated
//! module; the mask and position ids are the decoder's business, never the user's.
//!
//! Pipelines of models (the facade's `pipeline!`) add two things:
//!
//! - [`EncoderDecoder`]: an encoder's binding and a decoder as one generator. The decoder's
//!   inputs held for a sequence (encoder states and mask, cross-attention caches; see
//!   [`ContextSpec`]) are the encoder's own buffers, bound once per source.
//! - a decoder fed embeddings ([`EmbedderSpec`]): the embedding model runs before each
//!   decoder run, writing into the buffer the decoder reads
//!   ([`Decoder::with_parts_on`]); a vision model feeding it is an `EncoderDecoder`'s
//!   encoder.
//!
//! [`Speculative`] is greedy decoding with a draft model: each round a small draft decoder
//! proposes `k` tokens, the target runs all of them in one [`Decoder::append`] and reads
//! the logits of every position ([`Logits::at`]); the proposals it would have picked
//! itself are kept, the rest rewound in both decoders, and the target's own pick follows.
//! The tokens are the target's greedy tokens; what changes is how many target runs they
//! take. The pair's vocabulary (size and id type, [`DecoderModel::Vocab`]) is checked at
//! compile time for generated models.

//! # The decoder and the binding core
//!
//! A decoder runs on the same core as a [`Binding`](crate::Binding): the same I/O binding
//! layer of `sys`, the same run control (so [`Terminator`](crate::Terminator)s and
//! timeouts stop either), the same worker threads and completion protocol for
//! asynchronous runs, and the same pool ([`PoolOf`](crate::PoolOf), which lends bindings
//! and decoders alike). What it keeps of its own is its slots: a step changes the shape of
//! the mask and, in the growing mode, of every cache each token, and trades buffers between
//! past and present, where a `Binding` keeps recently used shapes bound for reuse. A step
//! costs within a few percent of the fewest C API calls it can make (`ort-bind-bench
//! decode`, its floor table).

mod beam;
mod buffers;
mod context;
mod decoder;
mod encoder_decoder;
mod logits;
mod pool;
mod scheduler;
mod spec;
mod speculative;
mod tokens;

pub use crate::error::DecodeError;
pub use beam::{Beam, BeamOptions, BeamSearch};
pub use decoder::{
    AppendFuture, AsyncTokenStream, CacheMode, DecodeStats, Decoder, DecoderModel, GenerateOptions,
    Generated, Growing, Joining, Paged, RowEvent, Rows, RowsCache, SharedBuffer, StepGreedyFuture,
    TokenStream,
};
pub use encoder_decoder::{Edge, EncoderDecoder};
pub use logits::{Logit, Logits, argmax};
pub use pool::{DecoderPool, PooledDecoder};
pub use scheduler::{Scheduler, SubmitOptions};
pub use spec::{
    CacheAxis, CacheSpec, ContextSpec, DecoderSpec, EmbedderSpec, HeadSpec, IndexInput, PagedSpec,
    PositionAxis, ScalarRole, ScalarSpec,
};
pub use speculative::{AnyVocab, SameVocab, Speculative, SpeculativeStats, Vocab, Vocabulary};
pub use tokens::Tokens;
