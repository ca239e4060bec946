//! The decode loop's buffers: cache tensors of any element type behind one object-safe
//! trait (the element type is read from the model, one per cache), and the integer
//! inputs (ids, mask, positions) in the model's integer type.

use std::fmt::Debug;

use ort_sys::ONNXTensorElementDataType as Onnx;

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
