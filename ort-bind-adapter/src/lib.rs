//! Reads ONNX Runtime's LoRA adapter files (`.onnx_adapter`): verified, zero-copy views of
//! the parameters they hold.
//!
//! An adapter file is a flatbuffer (file identifier `TORT`) that ONNX Runtime writes with
//! `onnxruntime.AdapterFormat.export_adapter` (Python) or its C++ `AdapterFormatBuilder`: a
//! format version, an adapter version, a model version, and named tensors (dims, ONNX
//! element type, raw little-endian data) that a run feeds to the model's inputs of the same
//! names. [`read`] verifies the whole file first, then hands out views that borrow names and
//! data from the caller's bytes.
//!
//! ```no_run
//! let bytes = std::fs::read("math.onnx_adapter")?;
//! let adapter = ort_bind_adapter::read(&bytes)?;
//! for p in &adapter.parameters {
//!     // e.g. "lora_a.0 [8, 2] element 1: 64 bytes"
//!     println!("{} {:?} element {}: {} bytes", p.name, p.dims, p.element, p.data.len());
//! }
//! let a0 = adapter.parameter("lora_a.0").expect("the adapter has lora_a.0");
//! assert_eq!(a0.element_count(), Some(16));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! What a file must be to be read, beyond a well-formed flatbuffer: `format_version` 1 (the
//! only one ONNX Runtime has written), named parameters with no name twice, non-negative
//! dims, an element type of fixed size ([`element_size`]), and data of exactly
//! `product(dims) * element size` bytes. Anything else is an [`AdapterError`]; hostile
//! input never panics.
//!
//! Whether the parameters fit a model is [`match_parameters`]: the one rule, over plain
//! descriptions of the model's overridable inputs ([`ExpectedParameter`]), that codegen
//! applies at compile time and the runtime when an adapter is set, so the two agree. The
//! crate knows nothing of ONNX Runtime.

mod error;
mod expected;
mod schema;

use std::collections::HashSet;

use ort_bind_elements::ElementType;

pub use error::AdapterError;
pub use expected::{ExpectedAxis, ExpectedParameter, Mismatch, match_parameters};

/// The adapter format version this crate reads (ONNX Runtime's `kAdapterFormatVersion`).
pub const FORMAT_VERSION: i32 = 1;

/// The file identifier at bytes 4..8 of every adapter file.
pub const FILE_IDENTIFIER: &str = "TORT";

/// The file extension ONNX Runtime uses for adapter files (without the dot).
pub const FILE_EXTENSION: &str = "onnx_adapter";

/// A verified adapter file: its versions and its parameters, in file order.
///
/// Made by [`read`]; names and data borrow the bytes it was given.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AdapterView<'a> {
    /// The file format's version; always [`FORMAT_VERSION`] once read.
    pub format_version: i32,
    /// The adapter's own version, as its writer set it.
    pub adapter_version: i32,
    /// The version of the model the adapter was made for, as its writer set it.
    pub model_version: i32,
    /// The parameters in file order; names are unique.
    pub parameters: Vec<Parameter<'a>>,
}

impl<'a> AdapterView<'a> {
    /// The parameter called `name`, if the adapter has one.
    pub fn parameter(&self, name: &str) -> Option<&Parameter<'a>> {
        self.parameters.iter().find(|p| p.name == name)
    }
}

/// One named tensor of an adapter file.
///
/// Once read, `data.len()` is exactly `product(dims) * element_size(element)`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Parameter<'a> {
    /// The name of the model input it feeds (not empty, unique in its file).
    pub name: &'a str,
    /// Its shape; no dim is negative, and `[]` is a scalar.
    pub dims: Vec<i64>,
    /// Its element type as an ONNX `TensorProto.DataType` code (1 float, 10 float16, ...);
    /// one [`element_size`] knows.
    pub element: i32,
    /// Its elements, packed, little-endian, borrowed from the file. Do not count on their
    /// alignment: the schema asks for 8 bytes (`force_align`), but ONNX Runtime's writer
    /// does not apply it (in its files tested here the data of every parameter starts 4
    /// bytes past a multiple of 8), and other writers may put it anywhere. Copy, or check
    /// the alignment before viewing it as a wider type.
    pub data: &'a [u8],
}

impl Parameter<'_> {
    /// The number of elements, the product of [`dims`](Self::dims) (1 for a scalar); `None`
    /// if it does not fit in `usize`, or if a dim is negative (never, once read). A dim of 0
    /// makes it 0, however large the others.
    pub fn element_count(&self) -> Option<usize> {
        element_count(&self.dims)
    }
}

/// The size in bytes of one element of ONNX element type `code`, for the fixed-size types
/// an adapter can hold: float (1), uint8 (2), int8 (3), uint16 (4), int16 (5), int32 (6),
/// int64 (7), bool (9), float16 (10), double (11), uint32 (12), uint64 (13), bfloat16 (16)
/// and the four float8 types (17 to 20). `None` for the rest: undefined (0), string (8),
/// the complex types (14, 15), which ONNX Runtime cannot make tensors of, and codes the
/// adapter schema does not have (the 4-bit and 2-bit types among them).
///
/// ```
/// use ort_bind_adapter::element_size;
/// assert_eq!(element_size(1), Some(4)); // float
/// assert_eq!(element_size(16), Some(2)); // bfloat16
/// assert_eq!(element_size(8), None); // string
/// ```
pub const fn element_size(code: i32) -> Option<usize> {
    if code > LAST_SCHEMA_CODE {
        return None;
    }
    match ElementType::from_onnx(code) {
        Some(t) if t.packing() == 1 => t.size(),
        _ => None,
    }
}

/// The last element code of the adapter schema's `TensorDataType` (`FLOAT8E5M2FNUZ`); the
/// codes ONNX added after it (the 4-bit and 2-bit types, `float8e8m0`) are not in it.
const LAST_SCHEMA_CODE: i32 = 20;

/// Verifies an adapter file and returns a view of it that borrows `bytes`.
///
/// Checks, in order: the `TORT` identifier, the flatbuffer (every offset and length, UTF-8
/// names, and the presence of `parameters` and each parameter's `dims` and `raw_data`), the
/// format version, then each parameter: a name, not seen before, an element type of fixed
/// size, non-negative dims, and data of exactly the size they call for.
///
/// ```
/// use ort_bind_adapter::{AdapterError, read};
/// assert_eq!(read(b"short"), Err(AdapterError::NotAnAdapter { found: None }));
/// assert!(matches!(
///     read(b"\x08\0\0\0ORTMfoo"),
///     Err(AdapterError::NotAnAdapter { found: Some(id) }) if &id == b"ORTM"
/// ));
/// ```
pub fn read(bytes: &[u8]) -> Result<AdapterView<'_>, AdapterError> {
    let found = bytes.get(4..8).map(|id| [id[0], id[1], id[2], id[3]]);
    if found != Some(schema::IDENTIFIER) {
        return Err(AdapterError::NotAnAdapter { found });
    }
    let raw = schema::verify(bytes)
        .map_err(|e| AdapterError::Invalid {
            reason: e.to_string().trim_end().to_owned(),
        })?
        .read();
    if raw.format_version != FORMAT_VERSION {
        return Err(AdapterError::UnsupportedFormatVersion {
            found: raw.format_version,
            supported: FORMAT_VERSION,
        });
    }
    let mut seen = HashSet::with_capacity(raw.parameters.len());
    let mut parameters = Vec::with_capacity(raw.parameters.len());
    for (index, p) in raw.parameters.into_iter().enumerate() {
        let name = match p.name {
            Some(name) if !name.is_empty() => name,
            _ => return Err(AdapterError::UnnamedParameter { index }),
        };
        if !seen.insert(name) {
            return Err(AdapterError::DuplicateName { param: name.into() });
        }
        let Some(size) = element_size(p.data_type) else {
            return Err(AdapterError::UnsupportedElement {
                param: name.into(),
                code: p.data_type,
            });
        };
        let dims: Vec<i64> = p.dims.iter().collect();
        if let Some((axis, &dim)) = dims.iter().enumerate().find(|(_, d)| **d < 0) {
            return Err(AdapterError::NegativeDim {
                param: name.into(),
                axis,
                dim,
            });
        }
        let Some(expected_bytes) = element_count(&dims).and_then(|n| n.checked_mul(size)) else {
            return Err(AdapterError::SizeOverflow {
                param: name.into(),
                dims,
            });
        };
        if expected_bytes != p.raw_data.len() {
            return Err(AdapterError::SizeMismatch {
                param: name.into(),
                expected_bytes,
                found_bytes: p.raw_data.len(),
            });
        }
        parameters.push(Parameter {
            name,
            dims,
            element: p.data_type,
            data: p.raw_data,
        });
    }
    Ok(AdapterView {
        format_version: raw.format_version,
        adapter_version: raw.adapter_version,
        model_version: raw.model_version,
        parameters,
    })
}

/// The product of `dims`: 0 when any dim is 0 (whatever the others), `None` when a dim is
/// negative or the product overflows `usize`.
fn element_count(dims: &[i64]) -> Option<usize> {
    let mut count = Some(1usize);
    let mut empty = false;
    for &dim in dims {
        let dim = usize::try_from(dim).ok()?;
        empty |= dim == 0;
        count = count.and_then(|c| c.checked_mul(dim));
    }
    if empty { Some(0) } else { count }
}

#[cfg(test)]
mod tests {
    use super::{Parameter, element_count, element_size};

    #[test]
    fn element_sizes_cover_the_fixed_size_codes() {
        let sizes: Vec<(i32, usize)> = (-2..=40)
            .filter_map(|code| element_size(code).map(|size| (code, size)))
            .collect();
        assert_eq!(
            sizes,
            [
                (1, 4),
                (2, 1),
                (3, 1),
                (4, 2),
                (5, 2),
                (6, 4),
                (7, 8),
                (9, 1),
                (10, 2),
                (11, 8),
                (12, 4),
                (13, 8),
                (16, 2),
                (17, 1),
                (18, 1),
                (19, 1),
                (20, 1),
            ]
        );
        assert_eq!(element_size(i32::MIN), None);
        assert_eq!(element_size(i32::MAX), None);
    }

    #[test]
    fn element_count_is_overflow_safe() {
        assert_eq!(element_count(&[]), Some(1));
        assert_eq!(element_count(&[8, 2]), Some(16));
        assert_eq!(element_count(&[8, 0]), Some(0));
        assert_eq!(element_count(&[0, 8]), Some(0));
        assert_eq!(element_count(&[i64::MAX, i64::MAX]), None);
        // Overflow before a zero is no overflow: the tensor is empty.
        assert_eq!(element_count(&[i64::MAX, i64::MAX, 0]), Some(0));
        assert_eq!(element_count(&[0, -1]), None);
        assert_eq!(element_count(&[-1, 0]), None);
        assert_eq!(element_count(&[i64::MIN]), None);
    }

    #[test]
    fn parameter_element_count_follows_dims() {
        let p = Parameter {
            name: "w",
            dims: vec![3, 4, 2],
            element: 1,
            data: &[0; 96],
        };
        assert_eq!(p.element_count(), Some(24));
        let scalar = Parameter {
            dims: vec![],
            ..p.clone()
        };
        assert_eq!(scalar.element_count(), Some(1));
    }
}
