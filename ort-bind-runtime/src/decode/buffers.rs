//! The decode loop's buffers: cache tensors of any element type behind one object-safe
//! trait (the element type is read from the model, one per cache), and the integer
//! inputs (ids, mask, positions) in the model's integer type.

use std::fmt::Debug;

use ort_sys::ONNXTensorElementDataType as Onnx;

use super::spec::RowLayout;
use crate::device::Device;
use crate::element::{Element, bf16, f16};
use crate::error::{Error, Result};
use crate::shape::AnyRank;
use crate::sys::Value;
use crate::tensor::{DimsChange, Tensor};

/// A cache tensor whose element type is known only at run time.
pub(crate) trait CacheBuffer<D: Device>: Send + Debug {
    /// Changes the dims within the reserved capacity (never allocates once reserved).
    fn set_dims(&mut self, dims: &[usize]) -> Result<DimsChange>;
    /// The ONNX Runtime value over the current dims.
    fn value(&self) -> &Value;
    /// Sets every element of the capacity to zero (fixed-shape state after a reset).
    fn zero(&mut self) -> Result<()>;
    /// Moves `outer` runs of `keep * inner` elements, now `old * inner` apart, to be
    /// `keep * inner` apart (what dropping the last positions of a sequence axis needs).
    /// Returns the bytes moved.
    fn compact(&mut self, outer: usize, inner: usize, old: usize, keep: usize) -> Result<usize>;
    /// Drops the first `drop` of the `old` positions of `outer` runs of `old * inner`
    /// elements: each run's last `old - drop` positions move to its start, the runs
    /// `(old - drop) * inner` apart. Returns the bytes moved.
    fn drop_front(&mut self, outer: usize, inner: usize, old: usize, drop: usize) -> Result<usize>;
    /// Moves whole batch rows of a tensor laid out as `layout` by `moves` (see
    /// [`RowMove`]), with the room after the tensor's elements as the saved row. Returns
    /// the bytes moved.
    fn move_rows(&mut self, layout: RowLayout, moves: &[RowMove]) -> Result<usize>;
    /// Makes the buffer's room at least `room` elements, keeping what it holds (one
    /// allocation, when it is smaller). Returns whether it reallocated.
    fn reserve_room(&mut self, room: usize) -> Result<bool>;
    /// Elements the buffer has room for.
    fn room(&self) -> usize;
}

/// One step of a reordering of batch rows, in an order that reads each row before it is
/// overwritten.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RowMove {
    /// Row `to` takes row `from`'s held elements.
    Copy { from: usize, to: usize },
    /// Row `from` is saved aside (the first row of a cycle of rows that trade places).
    Save { from: usize },
    /// Row `to` takes the row saved aside.
    Restore { to: usize },
}

impl<T: Element, D: Device> CacheBuffer<D> for Tensor<T, AnyRank, D> {
    fn set_dims(&mut self, dims: &[usize]) -> Result<DimsChange> {
        Tensor::set_dims(self, dims)
    }

    fn value(&self) -> &Value {
        Tensor::value(self)
    }

    fn zero(&mut self) -> Result<()> {
        let capacity = D::capacity(self.buffer());
        match D::host_slice_mut(self.buffer_mut(), capacity) {
            Some(all) => {
                all.fill(T::default());
                Ok(())
            }
            None => Err(device_only(self.name(), D::NAME, "reset recurrent state")),
        }
    }

    fn compact(&mut self, outer: usize, inner: usize, old: usize, keep: usize) -> Result<usize> {
        if outer <= 1 || keep == 0 || keep == old {
            return Ok(0);
        }
        let capacity = D::capacity(self.buffer());
        // Asked twice rather than naming the tensor up front: a rewind allocates nothing.
        if D::host_slice_mut(self.buffer_mut(), capacity).is_none() {
            return Err(device_only(self.name(), D::NAME, "rewind a growing cache"));
        }
        let all = D::host_slice_mut(self.buffer_mut(), capacity).expect("a host buffer");
        let run = keep * inner;
        // Row 0 is in place; each later row moves down (destination below source).
        for row in 1..outer {
            let from = row * old * inner;
            all.copy_within(from..from + run, row * run);
        }
        Ok((outer - 1) * run * size_of::<T>())
    }

    fn drop_front(&mut self, outer: usize, inner: usize, old: usize, drop: usize) -> Result<usize> {
        if drop == 0 {
            return Ok(0);
        }
        let capacity = D::capacity(self.buffer());
        if D::host_slice_mut(self.buffer_mut(), capacity).is_none() {
            return Err(device_only(
                self.name(),
                D::NAME,
                "drop the padding before its rows",
            ));
        }
        let all = D::host_slice_mut(self.buffer_mut(), capacity).expect("a host buffer");
        let keep = (old - drop) * inner;
        // Each run moves down (destination below source), in order.
        for run in 0..outer {
            let from = run * old * inner + drop * inner;
            all.copy_within(from..from + keep, run * keep);
        }
        Ok(outer * keep * size_of::<T>())
    }

    fn move_rows(&mut self, layout: RowLayout, moves: &[RowMove]) -> Result<usize> {
        if moves.is_empty() {
            return Ok(0);
        }
        let capacity = D::capacity(self.buffer());
        let (total, held) = (layout.total(), layout.held());
        if total + held > capacity {
            return Err(Error::Unsupported {
                role: "cache",
                name: self.name().to_owned(),
                kind: format!(
                    "a buffer of {capacity} elements with no room to save a row of {held} after its {total} (reserve it first: `Decoder::reserve_reorder`)"
                ),
            });
        }
        if D::host_slice_mut(self.buffer_mut(), capacity).is_none() {
            return Err(device_only(self.name(), D::NAME, "reorder its rows"));
        }
        let all = D::host_slice_mut(self.buffer_mut(), capacity).expect("a host buffer");
        let RowLayout {
            pre,
            batch,
            block,
            runs,
            run_len,
            run_stride,
        } = layout;
        // The start of run `k` of row `row` in block `p`, and of its place in the saved row.
        let at = |p: usize, row: usize, k: usize| (p * batch + row) * block + k * run_stride;
        let saved = |p: usize, k: usize| total + (p * runs + k) * run_len;
        for m in moves {
            for p in 0..pre {
                for k in 0..runs {
                    let (from, to) = match *m {
                        RowMove::Copy { from, to } => (at(p, from, k), at(p, to, k)),
                        RowMove::Save { from } => (at(p, from, k), saved(p, k)),
                        RowMove::Restore { to } => (saved(p, k), at(p, to, k)),
                    };
                    all.copy_within(from..from + run_len, to);
                }
            }
        }
        Ok(moves.len() * held * size_of::<T>())
    }

    fn reserve_room(&mut self, room: usize) -> Result<bool> {
        let capacity = D::capacity(self.buffer());
        if capacity >= room {
            return Ok(false);
        }
        let mut larger =
            Tensor::with_capacity_in(self.name(), self.device().clone(), self.dims(), room)?;
        match (
            D::host_slice(self.buffer(), capacity),
            D::host_slice_mut(larger.buffer_mut(), capacity),
        ) {
            (Some(from), Some(to)) => to.copy_from_slice(from),
            _ => return Err(device_only(self.name(), D::NAME, "reorder its rows")),
        }
        *self = larger;
        Ok(true)
    }

    fn room(&self) -> usize {
        D::capacity(self.buffer())
    }
}

fn device_only(tensor: &str, device: &str, what: &str) -> Error {
    Error::Unsupported {
        role: "cache",
        name: tensor.to_owned(),
        kind: format!(
            "memory on {device} that the host cannot write; the decoder cannot {what} there \
             (use the shared-buffer mode, which rewinds without moving data, or a host device)"
        ),
    }
}

/// A cache tensor of the element type `elem`, with `dims` and room for `capacity`
/// elements.
pub(crate) fn cache_buffer<D: Device>(
    name: &str,
    elem: Onnx,
    device: &D,
    dims: &[usize],
    capacity: usize,
) -> Result<Box<dyn CacheBuffer<D>>> {
    macro_rules! make {
        ($($code:ident => $t:ty),* $(,)?) => {
            match elem {
                $(Onnx::$code => Ok(Box::new(Tensor::<$t, AnyRank, D>::with_capacity_in(
                    name, device.clone(), dims, capacity,
                )?)),)*
                other => Err(Error::Unsupported {
                    role: "cache",
                    name: name.to_owned(),
                    kind: format!("{}", crate::element::onnx_type_name(other)),
                }),
            }
        };
    }
    make!(
        ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT => f32,
        ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16 => f16,
        ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16 => bf16,
        ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE => f64,
        ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8 => i8,
        ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8 => u8,
        ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32 => i32,
        ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64 => i64,
    )
}

/// An integer input (ids, mask, positions) in the model's integer type, on the host.
#[derive(Debug)]
pub(crate) enum IndexBuffer {
    I64(Tensor<i64, AnyRank>),
    I32(Tensor<i32, AnyRank>),
}

impl IndexBuffer {
    /// A buffer of `dims` with room for `capacity` elements, every element `fill`.
    pub(crate) fn new(
        name: &str,
        elem: Onnx,
        dims: &[usize],
        capacity: usize,
        fill: i64,
    ) -> Result<IndexBuffer> {
        let mut buffer = match elem {
            Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64 => IndexBuffer::I64(
                Tensor::with_capacity_in(name, crate::device::Cpu, &[capacity], capacity)?,
            ),
            Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32 => IndexBuffer::I32(
                Tensor::with_capacity_in(name, crate::device::Cpu, &[capacity], capacity)?,
            ),
            other => {
                return Err(Error::Unsupported {
                    role: "input",
                    name: name.to_owned(),
                    kind: format!(
                        "{} (the decoder takes int64 or int32 ids, mask and positions)",
                        crate::element::onnx_type_name(other)
                    ),
                });
            }
        };
        buffer.write(0, std::iter::repeat_n(fill, capacity));
        buffer.set_dims(dims)?;
        Ok(buffer)
    }

    pub(crate) fn set_dims(&mut self, dims: &[usize]) -> Result<DimsChange> {
        match self {
            IndexBuffer::I64(t) => t.set_dims(dims),
            IndexBuffer::I32(t) => t.set_dims(dims),
        }
    }

    pub(crate) fn value(&self) -> &Value {
        match self {
            IndexBuffer::I64(t) => t.value(),
            IndexBuffer::I32(t) => t.value(),
        }
    }

    /// Writes `values` from element `at` on (within the current dims). The values were
    /// checked to fit the type before (ids below the vocabulary, positions below the
    /// capacity), so the `int32` conversion cannot truncate.
    pub(crate) fn write(&mut self, at: usize, values: impl IntoIterator<Item = i64>) {
        match self {
            IndexBuffer::I64(t) => {
                for (slot, v) in t.as_mut_slice()[at..].iter_mut().zip(values) {
                    *slot = v;
                }
            }
            IndexBuffer::I32(t) => {
                for (slot, v) in t.as_mut_slice()[at..].iter_mut().zip(values) {
                    *slot = v as i32;
                }
            }
        }
    }

    /// Appends `count` values from element `at` on to `out`.
    pub(crate) fn read(&self, at: usize, count: usize, out: &mut Vec<i64>) {
        match self {
            IndexBuffer::I64(t) => out.extend_from_slice(&t.as_slice()[at..at + count]),
            IndexBuffer::I32(t) => {
                out.extend(t.as_slice()[at..at + count].iter().map(|&v| i64::from(v)))
            }
        }
    }

    /// The largest value the type holds.
    pub(crate) fn max(&self) -> i64 {
        match self {
            IndexBuffer::I64(_) => i64::MAX,
            IndexBuffer::I32(_) => i64::from(i32::MAX),
        }
    }
}
