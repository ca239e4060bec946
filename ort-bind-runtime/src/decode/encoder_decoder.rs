//! An encoder-decoder generator: an encoder's [`Binding`] and a [`Decoder`] whose inputs
//! held for a sequence (the encoder's hidden states, its mask, cross-attention caches) are
//! the encoder's own buffers, bound into the decoder with nothing copied.

use std::ops::{Deref, DerefMut};

use super::decoder::{CacheMode, Decoder, DecoderModel, Growing};
use crate::binding::{Binding, BindingIo};
use crate::device::{Cpu, Device};
use crate::error::{Error, Result};

/// One edge from the encoder to the decoder: the encoder's output (or input: a source
/// mask both models read) `from` is the decoder's input `to`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Edge {
    /// The encoder's output or input.
    pub from: &'static str,
    /// The decoder's input held for a sequence.
    pub to: &'static str,
}

/// An edge resolved to the encoder's binding index.
#[derive(Debug, Clone, Copy)]
struct Resolved {
    output: bool,
    index: usize,
    to: &'static str,
}

/// An encoder and a decoder run as one generator: [`encode`](Self::encode) runs the
/// encoder once per source and binds its outputs into the decoder (the same memory: 0
/// bytes copied, [`Decoder::context_address`] shows it), then the decoder's API
/// ([`prefill`](Decoder::prefill), [`step_greedy`](Decoder::step_greedy), [`rewind`](Decoder::rewind),
/// ...) runs through `Deref`.
///
/// Generated pipeline modules name it for their two models; written by hand:
///
/// ```no_run
/// # fn demo<E: ort_bind_runtime::BindingIo, T: ort_bind_runtime::decode::DecoderModel>(
/// #     encoder: ort_bind_runtime::Binding<E>,
/// #     decoder: ort_bind_runtime::decode::Decoder<T>,
/// # ) -> ort_bind_runtime::Result<()> {
/// use ort_bind_runtime::decode::{Edge, EncoderDecoder};
/// let edges = &[Edge { from: "encoder_hidden_states", to: "encoder_hidden_states" }];
/// let mut generator = EncoderDecoder::new(encoder, decoder, edges)?;
/// // fill generator.encoder_inputs() in place, then:
/// generator.encode()?;
/// generator.prefill(&[2])?;
/// let token = generator.step_greedy()?[0];
/// # let _ = token; Ok(()) }
/// ```
///
/// Everything that could move or resize the encoder's buffers goes through this type,
/// which forgets the decoder's view of them until the next `encode`: a decoder run in
/// between is a [`DecodeError::MissingContext`](crate::decode::DecodeError::MissingContext).
pub struct EncoderDecoder<E: BindingIo, T: DecoderModel, M: CacheMode = Growing, D: Device = Cpu> {
    // Declared first: the decoder (whose binding points at the encoder's memory) is
    // dropped before the encoder that owns that memory.
    decoder: Decoder<T, M, D>,
    encoder: Binding<E>,
    edges: Vec<Resolved>,
}

impl<E: BindingIo, T: DecoderModel, M: CacheMode, D: Device> std::fmt::Debug
    for EncoderDecoder<E, T, M, D>
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EncoderDecoder")
            .field("decoder", &self.decoder)
            .field("edges", &self.edges)
            .finish_non_exhaustive()
    }
}

impl<E: BindingIo, T: DecoderModel, M: CacheMode, D: Device> EncoderDecoder<E, T, M, D> {
    /// Pairs `encoder` (a generated module's `Binding`, or the runtime's) and `decoder`
    /// along `edges`. Each edge names an output (or input)
    /// of the encoder and an input the decoder holds for a sequence; every such decoder
    /// input that the model does not compute itself must be fed by one.
    pub fn new(
        encoder: impl Into<Binding<E>>,
        decoder: Decoder<T, M, D>,
        edges: &[Edge],
    ) -> Result<Self> {
        let encoder = encoder.into();
        let mut resolved = Vec::with_capacity(edges.len());
        for edge in edges {
            let (output, index) = match encoder.index_of(true, edge.from) {
                Some(i) => (true, i),
                None => (
                    false,
                    encoder.index_of(false, edge.from).ok_or_else(|| Error::SignatureMismatch {
                        problem: format!(
                            "the encoder has no output or input `{}` to feed the decoder's `{}`",
                            edge.from, edge.to
                        ),
                    })?,
                ),
            };
            let extra = decoder.spec().embedder.map_or(&[][..], |e| e.extra);
            let spec = decoder
                .spec()
                .context
                .iter()
                .chain(extra)
                .find(|c| c.name == edge.to && c.present.is_none())
                .ok_or_else(|| Error::SignatureMismatch {
                    problem: format!(
                        "the decoder holds no input `{}` for a sequence (the encoder's `{}` cannot feed it)",
                        edge.to, edge.from
                    ),
                })?;
            resolved.push(Resolved {
                output,
                index,
                to: spec.name,
            });
        }
        if let Some(unfed) = decoder
            .spec()
            .context
            .iter()
            .find(|c| c.present.is_none() && !resolved.iter().any(|r| r.to == c.name))
        {
            return Err(Error::SignatureMismatch {
                problem: format!(
                    "no edge feeds the decoder's `{}` (name the encoder's output for it)",
                    unfed.name
                ),
            });
        }
        Ok(EncoderDecoder {
            decoder,
            encoder,
            edges: resolved,
        })
    }

    /// The encoder's inputs, to fill in place before [`encode`](Self::encode).
    pub fn encoder_inputs(&mut self) -> E::InputsMut<'_> {
        self.decoder.clear_context();
        self.encoder.inputs()
    }

    /// Gives the encoder's symbolic dims new values (the source's length, say), reusing
    /// capacity; then fill [`encoder_inputs`](Self::encoder_inputs) and
    /// [`encode`](Self::encode).
    pub fn set_encoder_dims(&mut self, dims: &E::Dims) -> Result<()> {
        self.decoder.clear_context();
        self.encoder.set_dims(dims)
    }

    /// The encoder's outputs after the last [`encode`](Self::encode), read in place.
    pub fn encoder_outputs(&self) -> E::OutputsRef<'_> {
        self.encoder.outputs()
    }

    /// The encoder's binding.
    pub fn encoder(&self) -> &Binding<E> {
        &self.encoder
    }

    /// Runs the encoder on its inputs and binds its outputs into the decoder, which starts
    /// a new sequence (as after [`Decoder::reset`]).
    pub fn encode(&mut self) -> Result<()> {
        self.decoder.clear_context();
        self.encoder.run()?;
        for edge in &self.edges {
            // SAFETY: the alias views memory of a tensor the encoder binding holds. Only
            // `encoder_inputs`, `set_encoder_dims` and `encode` can move or resize that
            // memory, and each first clears the decoder's context (dropping every alias
            // and unbinding nothing it will run with: a run without context refuses);
            // the decoder is dropped before the encoder (field order).
            let value = unsafe { self.encoder.alias(edge.output, edge.index)? };
            // SAFETY: as above, the memory stays in place until the context is set again.
            unsafe { self.decoder.set_context_value(edge.to, value)? };
        }
        self.decoder.reset()
    }

    /// Splits into the encoder's binding and the decoder.
    pub fn into_parts(self) -> (Binding<E>, Decoder<T, M, D>) {
        let EncoderDecoder {
            mut decoder,
            encoder,
            ..
        } = self;
        decoder.clear_context();
        (encoder, decoder)
    }
}

impl<E: BindingIo, T: DecoderModel, M: CacheMode, D: Device> Deref for EncoderDecoder<E, T, M, D> {
    type Target = Decoder<T, M, D>;

    fn deref(&self) -> &Decoder<T, M, D> {
        &self.decoder
    }
}

impl<E: BindingIo, T: DecoderModel, M: CacheMode, D: Device> DerefMut
    for EncoderDecoder<E, T, M, D>
{
    fn deref_mut(&mut self) -> &mut Decoder<T, M, D> {
        &mut self.decoder
    }
}
