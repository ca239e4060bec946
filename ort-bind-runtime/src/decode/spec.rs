//! What a decoder model looks like to the decode loop: which inputs carry the tokens,
//! the mask and the positions, which output is the logits, and which inputs and outputs
//! form the cache. Codegen writes one [`DecoderSpec`] per decoder model (a `static` in the
//! generated module); the decode loop reads it and never guesses from names at run time.

use ort_sys::ONNXTensorElementDataType as Onnx;

use crate::error::{Error, Result};
use crate::session::{Session, ValueSpec};

/// The roles of a decoder model's inputs and outputs.
#[derive(Debug, Clone, Copy)]
pub struct DecoderSpec {
    /// Every input and output of the model, as the generated bindings declare them: the
    /// decoder checks the session against them as `Model::load` does.
    pub inputs: &'static [ValueSpec],
    /// See [`DecoderSpec::inputs`].
    pub outputs: &'static [ValueSpec],
    /// The token ids, `[batch, new]` (`int64` or `int32`).
    pub input_ids: IndexInput,
    /// The attention mask, `[batch, past + new]`, if the model takes one.
    pub attention_mask: Option<IndexInput>,
    /// The position ids, `[batch, new]`, if the model takes them.
    pub position_ids: Option<IndexInput>,
    /// The logits output, `[batch, new, vocab]`.
    pub logits: &'static str,
    /// The vocabulary size: the last axis of the logits, when the model fixes it (token
    /// ids at or above it are refused before a run).
    pub vocab: Option<usize>,
    /// The cache: one entry per past/present pair.
    pub caches: &'static [CacheSpec],
    /// Outputs that are neither logits nor cache (ONNX Runtime allocates them each run).
    pub other_outputs: &'static [&'static str],
    /// Whether every growing cache is written in place by an operator that recognises a
    /// shared past/present buffer (ONNX Runtime's `GroupQueryAttention`): only then may
    /// one capacity buffer be bound as both past and present ([`SharedBuffer`](super::SharedBuffer)).
    pub shared_buffer: bool,
    /// What each axis of the position ids holds (empty without position ids):
    /// `[Batch, Sequence]`, or with one [`PositionAxis::Extra`] axis first or last.
    pub position_axes: &'static [PositionAxis],
    /// Inputs held for a whole sequence: an encoder's hidden states and mask, and
    /// cross-attention caches.
    pub context: &'static [ContextSpec],
    /// Scalars the loop writes before each run (lengths, a merged decoder's branch flag).
    pub scalars: &'static [ScalarSpec],
    /// The batch, when the model fixes it.
    pub fixed_batch: Option<usize>,
    /// New positions per run, when the model fixes them: a prompt runs in steps of this
    /// many.
    pub fixed_new: Option<usize>,
    /// Whether the token ids and logits have a sequence axis (`[batch, new]`,
    /// `[batch, new, vocab]`); without it they are `[batch]` and `[batch, vocab]`, one
    /// token per run.
    pub sequence_axis: bool,
    /// For a decoder fed embeddings (`inputs_embeds`): the embedding model that makes them
    /// from the ids (`input_ids` above are that model's), run before every decoder run
    /// into the buffer the decoder reads.
    pub embedder: Option<&'static EmbedderSpec>,
    /// For a decoder split before its language-model head: the head model that turns the
    /// decoder's hidden states into the logits (`logits` above is the head's output), run
    /// after every decoder run on the buffer the decoder wrote.
    pub head: Option<&'static HeadSpec>,
    /// For a model whose cache is a pool of blocks read through a block table (paged
    /// attention): the inputs that say where each row's positions are. Such a model runs
    /// only in the [`Paged`](super::Paged) mode, and only it.
    pub paged: Option<&'static PagedSpec>,
}

/// The block inputs of a model with a paged cache: every cache is
/// `[blocks, block_size, ..]` (a pool shared by all rows, [`CacheAxis::Blocks`] first),
/// and each run says which blocks a row holds and where its new positions go.
#[derive(Debug, Clone, Copy)]
pub struct PagedSpec {
    /// Each row's blocks in order, `[batch, blocks per row]` (`block_tables`): position
    /// `p` of a row is at offset `p % block_size` of its block `p / block_size`.
    pub block_tables: IndexInput,
    /// Where each new position's keys and values go, `[batch, new]` (`slot_mapping`): the
    /// pool slot `block * block_size + offset`.
    pub slot_mapping: IndexInput,
    /// Positions per block (the caches' second axis).
    pub block_size: usize,
}

/// The language-model head after a decoder split before it.
#[derive(Debug, Clone, Copy)]
pub struct HeadSpec {
    /// Every input and output of the head model (its session is checked against them).
    pub inputs: &'static [ValueSpec],
    /// See [`HeadSpec::inputs`].
    pub outputs: &'static [ValueSpec],
    /// The decoder's output the head reads (`hidden_states`, `[batch, new, hidden]`).
    pub from: &'static str,
    /// The head's input that reads it.
    pub input: &'static str,
    /// Their element type.
    pub elem: Onnx,
    /// The hidden size.
    pub hidden: usize,
}

/// The embedding model in front of a decoder fed `inputs_embeds` (a multimodal model's
/// text embedding, a split decoder's first part).
#[derive(Debug, Clone, Copy)]
pub struct EmbedderSpec {
    /// Every input and output of the embedding model (its session is checked against them).
    pub inputs: &'static [ValueSpec],
    /// See [`EmbedderSpec::inputs`].
    pub outputs: &'static [ValueSpec],
    /// Its output, the embeddings (`[batch, new, hidden]`).
    pub output: &'static str,
    /// The decoder's input that reads them.
    pub embeds: &'static str,
    /// Their element type.
    pub elem: Onnx,
    /// The hidden size.
    pub hidden: usize,
    /// The embedding model's other inputs (image features): given for a sequence's first
    /// run (the prompt), with no positions after it.
    pub extra: &'static [ContextSpec],
}

/// What one axis of the position ids holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PositionAxis {
    /// The batch.
    Batch,
    /// The new positions.
    Sequence,
    /// An extra axis of this size (multimodal rotary sections: `[3, batch, sequence]`):
    /// every entry along it gets the position.
    Extra(usize),
}

/// An input the decoder holds for a whole sequence.
#[derive(Debug, Clone, Copy)]
pub struct ContextSpec {
    /// ONNX name (`encoder_hidden_states`, `past_key_cross_0`,
    /// `past_key_values.0.encoder.key`).
    pub name: &'static str,
    /// Element type.
    pub elem: Onnx,
    /// What each axis holds: the batch, the encoder's sequence
    /// ([`CacheAxis::Sequence`]), or a fixed size.
    pub axes: &'static [CacheAxis],
    /// The output that returns it, for a cross-attention cache a merged decoder computes
    /// on a sequence's first run (`present.0.encoder.key`): the decoder keeps it in its
    /// own buffer and binds it as this input from then on. `None`: set from outside
    /// ([`Decoder::set_context`](super::Decoder::set_context), or an encoder's output).
    pub present: Option<&'static str>,
}

/// A scalar input the loop writes before each run.
#[derive(Debug, Clone, Copy)]
pub struct ScalarSpec {
    /// ONNX name.
    pub name: &'static str,
    /// Element type: `int64`, `int32`, or `bool` for a branch flag.
    pub elem: Onnx,
    /// Dims: `[]` or `[1]`.
    pub dims: &'static [usize],
    /// What it holds.
    pub role: ScalarRole,
}

/// What a scalar input holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalarRole {
    /// Positions held before the run.
    PastSequenceLength,
    /// Positions held after the run (past + new).
    TotalSequenceLength,
    /// `false` on a sequence's first run, `true` after (Optimum's merged decoders).
    UseCacheBranch,
}

/// An integer input of the decoder (token ids, mask, positions).
#[derive(Debug, Clone, Copy)]
pub struct IndexInput {
    /// ONNX name.
    pub name: &'static str,
    /// Element type: `int64` or `int32`.
    pub elem: Onnx,
}

/// One past/present pair of the cache.
#[derive(Debug, Clone, Copy)]
pub struct CacheSpec {
    /// The input that takes the cache (`past_key_values.0.key`, `past_0`, `past_conv.0`).
    pub past: &'static str,
    /// The output that returns it (`present.0.key`, `present_0`, `present_conv.0`).
    pub present: &'static str,
    /// Element type of both.
    pub elem: Onnx,
    /// What each axis holds.
    pub axes: &'static [CacheAxis],
}

/// What one axis of a cache tensor holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheAxis {
    /// The batch (sized by the decoder's batch).
    Batch,
    /// The sequence: the past length on the input, past + new on the output (in the
    /// shared-buffer mode: the capacity on both).
    Sequence,
    /// A size the model fixes (heads, head size, channels, the stacked key/value axis).
    Fixed(usize),
    /// The blocks of a paged cache's pool ([`PagedSpec`]): sized by the pool the decoder
    /// was made with, shared by every row.
    Blocks,
}

impl CacheSpec {
    /// Whether this cache grows with the sequence (a key/value cache, paged or not) rather
    /// than being fixed-shape recurrent state.
    pub fn grows(&self) -> bool {
        self.axes
            .iter()
            .any(|a| matches!(a, CacheAxis::Sequence | CacheAxis::Blocks))
    }

    /// Whether this cache is a paged pool ([`CacheAxis::Blocks`]).
    pub fn paged(&self) -> bool {
        self.axes.contains(&CacheAxis::Blocks)
    }

    /// The dims of this cache for `batch` rows holding `len` positions (for a paged
    /// cache, `len` is the pool's blocks).
    pub(crate) fn dims(&self, batch: usize, len: usize, out: &mut Vec<usize>) {
        out.clear();
        out.extend(self.axes.iter().map(|a| match *a {
            CacheAxis::Batch => batch,
            CacheAxis::Sequence | CacheAxis::Blocks => len,
            CacheAxis::Fixed(n) => n,
        }));
    }

    /// Elements before and after the sequence axis, for `batch` rows: a cache of `len`
    /// positions is `outer` runs of `len * inner` contiguous elements.
    pub(crate) fn outer_inner(&self, batch: usize) -> (usize, usize) {
        let seq = self.axes.iter().position(|a| *a == CacheAxis::Sequence);
        let size = |a: &CacheAxis| match *a {
            CacheAxis::Batch => batch,
            CacheAxis::Sequence | CacheAxis::Blocks => 1,
            CacheAxis::Fixed(n) => n,
        };
        match seq {
            Some(s) => (
                self.axes[..s].iter().map(size).product(),
                self.axes[s + 1..].iter().map(size).product(),
            ),
            None => (1, self.axes.iter().map(size).product()),
        }
    }
}

/// Where each batch row of a cache tensor lies, for moving whole rows
/// ([`CacheSpec::rows`]): `pre` blocks of `batch` rows of `block` elements each (`pre`:
/// the axes before the batch axis), and within a row's block `runs` runs of `run_len`
/// held elements, `run_stride` apart (the positions held of each head).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RowLayout {
    pub(crate) pre: usize,
    pub(crate) batch: usize,
    pub(crate) block: usize,
    pub(crate) runs: usize,
    pub(crate) run_len: usize,
    pub(crate) run_stride: usize,
}

impl RowLayout {
    /// Elements of the whole tensor.
    pub(crate) fn total(&self) -> usize {
        self.pre * self.batch * self.block
    }

    /// Elements one row holds (what a copy of a row moves).
    pub(crate) fn held(&self) -> usize {
        self.pre * self.runs * self.run_len
    }
}

impl CacheSpec {
    /// The rows of this cache for `batch` rows, the sequence axis `seq` long and the first
    /// `held` positions of it in use (`seq == held` for a cache of the held positions; the
    /// capacity and the positions held for a shared buffer). `None`: no batch axis.
    pub(crate) fn rows(&self, batch: usize, seq: usize, held: usize) -> Option<RowLayout> {
        let size = |a: &CacheAxis| match *a {
            CacheAxis::Batch => batch,
            CacheAxis::Sequence | CacheAxis::Blocks => seq,
            CacheAxis::Fixed(n) => n,
        };
        let b = self.axes.iter().position(|a| *a == CacheAxis::Batch)?;
        let pre = self.axes[..b].iter().map(size).product();
        let after = &self.axes[b + 1..];
        let block = after.iter().map(size).product();
        let (runs, run_len, run_stride) = match after.iter().position(|a| *a == CacheAxis::Sequence)
        {
            // Only the held positions of each run along the sequence move.
            Some(s) => {
                let inner: usize = after[s + 1..].iter().map(size).product();
                (
                    after[..s].iter().map(size).product(),
                    held * inner,
                    seq * inner,
                )
            }
            // Fixed-shape state (or a sequence axis before the batch): the whole block.
            None => (1, block, block),
        };
        Some(RowLayout {
            pre,
            batch,
            block,
            runs,
            run_len,
            run_stride,
        })
    }
}

impl DecoderSpec {
    /// Checks `session` against the model this spec was generated from.
    pub(crate) fn check(&self, session: &Session) -> Result<()> {
        session.check_signature(self.inputs, self.outputs)?;
        // Names, types and ranks agree; the sizes the spec fixes must too (a model of the
        // same names with other head counts is another model).
        let fixed = |output: bool, name: &str, want: &mut dyn Iterator<Item = Option<usize>>| {
            let declared = session.declared_dims(output, name).unwrap_or_default();
            for (axis, (want, &got)) in want.zip(&declared).enumerate() {
                if let Some(want) = want
                    && got >= 0
                    && got as usize != want
                {
                    return Err(Error::SignatureMismatch {
                        problem: format!(
                            "axis {axis} of `{name}` is {got} in the model, the decoder expects {want}"
                        ),
                    });
                }
            }
            Ok(())
        };
        for cache in self.caches {
            let axes = || {
                cache.axes.iter().map(|a| match a {
                    CacheAxis::Fixed(n) => Some(*n),
                    _ => None,
                })
            };
            fixed(false, cache.past, &mut axes())?;
            fixed(true, cache.present, &mut axes())?;
        }
        let logits_axes: &[Option<usize>] = if self.sequence_axis {
            &[None, None, self.vocab]
        } else {
            &[None, self.vocab]
        };
        fixed(true, self.logits, &mut logits_axes.iter().copied())
    }

    /// The element type of a value the spec names.
    pub(crate) fn output_elem(&self, name: &str) -> Result<Onnx> {
        let head = self.head.map_or(&[][..], |h| h.outputs);
        self.outputs
            .iter()
            .chain(head)
            .find(|s| s.name == name)
            .map(|s| s.elem)
            .ok_or_else(|| Error::SignatureMismatch {
                problem: format!("the decoder's output `{name}` is not among the model's outputs"),
            })
    }
}
