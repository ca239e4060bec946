//! What an encoder-decoder's decoder holds besides its cache: inputs held for a whole
//! sequence (the encoder's hidden states and mask, cross-attention caches) and the scalars
//! the loop writes before each run (lengths, a merged decoder's branch flag).

use std::fmt::Debug;

use ort_sys::ONNXTensorElementDataType as Onnx;

use super::buffers::{CacheBuffer, cache_buffer};
use super::spec::{CacheAxis, ContextSpec, ScalarRole, ScalarSpec};
use crate::device::{Cpu, Device};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::shape::{AnyRank, Shape};
use crate::sys::Value;
use crate::tensor::Tensor;

/// A value bound as a context input: a tensor the decoder owns (given by the user), or a
/// value over memory that a pipeline owns next to the decoder (an encoder's output).
pub(crate) trait Held: Send + Debug {
    fn value(&self) -> &Value;
}

impl<T: Element, S: Shape, D: Device> Held for Tensor<T, S, D> {
    fn value(&self) -> &Value {
        Tensor::value(self)
    }
}

/// A value over memory owned by whoever made it (see [`Held`]).
#[derive(Debug)]
pub(crate) struct Borrowed(pub(crate) Value);

impl Held for Borrowed {
    fn value(&self) -> &Value {
        &self.0
    }
}

/// A cross-attention cache a merged decoder computes on a sequence's first run: written
/// into `keep` that run (read from `sink` with no positions), read from `keep` after
/// (with the model's pass-through written into `sink`). Both are the decoder's, reused
/// across sequences and grown only for a longer encoder sequence.
#[derive(Debug)]
pub(crate) struct FirstRunCache<D: Device> {
    pub(crate) keep: Box<dyn CacheBuffer<D>>,
    pub(crate) sink: Box<dyn CacheBuffer<D>>,
    pub(crate) room: usize,
    // The encoder positions of the sequence `keep` holds.
    pub(crate) encoder_len: usize,
}

impl<D: Device> FirstRunCache<D> {
    /// Buffers of the spec's dims for `batch` rows over `encoder_len` encoder positions,
    /// reusing `old` when it has room.
    pub(crate) fn ensure(
        old: Option<FirstRunCache<D>>,
        spec: &ContextSpec,
        device: &D,
        batch: usize,
        encoder_len: usize,
        dims: &mut Vec<usize>,
    ) -> Result<FirstRunCache<D>> {
        context_dims(spec, batch, encoder_len, dims);
        let room = crate::shape::element_count(dims).ok_or_else(|| Error::TooLarge {
            tensor: spec.name.to_owned(),
            dims: dims.clone(),
        })?;
        match old {
            Some(mut old) if old.room >= room => {
                old.encoder_len = encoder_len;
                Ok(old)
            }
            _ => Ok(FirstRunCache {
                keep: cache_buffer(spec.name, spec.elem, device, dims, room)?,
                sink: cache_buffer(spec.name, spec.elem, device, dims, room)?,
                room,
                encoder_len,
            }),
        }
    }
}

/// The dims of a context input for `batch` rows over `encoder_len` encoder positions.
pub(crate) fn context_dims(
    spec: &ContextSpec,
    batch: usize,
    encoder_len: usize,
    out: &mut Vec<usize>,
) {
    out.clear();
    out.extend(spec.axes.iter().map(|a| match *a {
        CacheAxis::Batch => batch,
        // Context is never paged (codegen writes no `Blocks` axis here).
        CacheAxis::Sequence | CacheAxis::Blocks => encoder_len,
        CacheAxis::Fixed(n) => n,
    }));
}

/// Checks that `dims` fit `spec` for `batch` rows (rank, batch, fixed sizes); returns the
/// encoder positions (the sequence axis; 0 where there is none).
pub(crate) fn check_context(spec: &ContextSpec, dims: &[usize], batch: usize) -> Result<usize> {
    let wrong = |why: String| Error::Shape {
        tensor: spec.name.to_owned(),
        found: dims.to_vec(),
        reason: why,
    };
    if dims.len() != spec.axes.len() {
        return Err(wrong(format!(
            "rank {}, the model's input has rank {}",
            dims.len(),
            spec.axes.len()
        )));
    }
    let mut encoder_len = 0;
    for (axis, (&d, a)) in dims.iter().zip(spec.axes).enumerate() {
        match *a {
            CacheAxis::Batch if d != batch => {
                return Err(wrong(format!(
                    "axis {axis} is the batch, {batch} rows for this decoder"
                )));
            }
            CacheAxis::Fixed(n) if d != n => {
                return Err(wrong(format!("axis {axis} is {n} in the model")));
            }
            CacheAxis::Sequence => encoder_len = d,
            _ => {}
        }
    }
    Ok(encoder_len)
}

/// A scalar input and its one-element buffer.
#[derive(Debug)]
pub(crate) enum ScalarBuffer {
    I64(Tensor<i64, AnyRank>),
    I32(Tensor<i32, AnyRank>),
    Bool(Tensor<bool, AnyRank>),
}

impl ScalarBuffer {
    pub(crate) fn new(spec: &ScalarSpec) -> Result<ScalarBuffer> {
        Ok(match spec.elem {
            Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64 => {
                ScalarBuffer::I64(Tensor::new_in(spec.name, Cpu, spec.dims)?)
            }
            Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32 => {
                ScalarBuffer::I32(Tensor::new_in(spec.name, Cpu, spec.dims)?)
            }
            Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL => {
                ScalarBuffer::Bool(Tensor::new_in(spec.name, Cpu, spec.dims)?)
            }
            other => {
                return Err(Error::Unsupported {
                    role: "input",
                    name: spec.name.to_owned(),
                    kind: format!(
                        "{} (the decoder writes int64, int32 or bool scalars)",
                        crate::element::onnx_type_name(other)
                    ),
                });
            }
        })
    }

    /// Writes what `role` holds for a run of `new` positions after `past`.
    pub(crate) fn write(&mut self, role: ScalarRole, past: usize, new: usize) {
        let n = match role {
            ScalarRole::PastSequenceLength => past as i64,
            ScalarRole::TotalSequenceLength => (past + new) as i64,
            ScalarRole::UseCacheBranch => i64::from(past > 0),
        };
        // Lengths are below the capacity, which fits `i32` for an `int32` model (checked
        // when the decoder is made).
        match self {
            ScalarBuffer::I64(t) => t.as_mut_slice().fill(n),
            ScalarBuffer::I32(t) => t.as_mut_slice().fill(n as i32),
            ScalarBuffer::Bool(t) => t.as_mut_slice().fill(n != 0),
        }
    }

    pub(crate) fn value(&self) -> &Value {
        match self {
            ScalarBuffer::I64(t) => t.value(),
            ScalarBuffer::I32(t) => t.value(),
            ScalarBuffer::Bool(t) => t.value(),
        }
    }
}
