//! Tensor data files: ONNX `TensorProto` (`.pb`) and numpy (`.npy`), read into and written
//! from [`HostArray`]s, and comparison with the tolerances ONNX's backend tests use; and
//! every other value (string tensors, `SequenceProto`, `MapProto`, `OptionalProto`) as a
//! [`DynValue`] ([`read_value`], [`write_value`], [`compare_values`]).
//!
//! Every element type ort-bind binds is read and written: the wide ones in both formats,
//! ONNX's narrow ones (`float8e4m3fn`, `float8e4m3fnuz`, `float8e5m2`, `float8e5m2fnuz`,
//! `float8e8m0`, and the packed `int4`, `uint4`, `float4e2m1`, `int2`, `uint2`) only as
//! `.pb`, since numpy has no dtype for them; [`compare`] compares them as the floats or
//! integers their elements are.
//!
//! These are the formats model zoos and ONNX's own backend test data ship inputs and
//! expected outputs in; `ort-bind run` and the conformance tests read them here.
//!
//! ```no_run
//! use ort_bind_cli::data::{self, Tolerance};
//! let input = data::read_array("test_data_set_0/input_0.pb")?;
//! let expected = data::read_array("expected.npy")?;
//! # let output = expected.clone();
//! data::compare(output.view(), expected.view(), Tolerance::ONNX_BACKEND)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod compare;
pub mod npy;
pub mod onnx_proto;
pub mod tensor_proto;
pub mod value_proto;

use std::path::Path;

pub use compare::{Mismatch, Tolerance, compare, compare_values};
pub use value_proto::ProtoKind;

use ort_bind_runtime::{DynValue, ElementType, HostArray, NumericType, ValueType};

/// Why a tensor data file could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DataError {
    /// The file could not be read or written.
    #[error("cannot access `{path}`: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The bytes are not a valid file of the expected format.
    #[error("`{origin}` is not a valid {format} file: {detail}")]
    Invalid {
        /// The file (or the caller-given origin of the bytes).
        origin: String,
        /// `TensorProto` or `.npy`.
        format: &'static str,
        /// What is wrong.
        detail: String,
    },
    /// The file is valid but holds something ort-bind does not bind (strings, complex
    /// numbers, external data, ...).
    #[error("`{origin}`: {detail}")]
    Unsupported {
        /// The file (or the caller-given origin of the bytes).
        origin: String,
        /// What is not supported.
        detail: String,
    },
    /// The file's extension names no format this module reads.
    #[error("`{path}`: unknown tensor file type; use `.npy` (numpy) or `.pb` (ONNX TensorProto)")]
    UnknownFormat {
        /// The file.
        path: String,
    },
}

/// Reads a tensor from `path`: numpy when it ends in `.npy`, an ONNX `TensorProto` when it
/// ends in `.pb`.
pub fn read_array(path: impl AsRef<Path>) -> Result<HostArray, DataError> {
    let path = path.as_ref();
    match path.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("npy") => npy::read(path),
        Some(e) if e.eq_ignore_ascii_case("pb") => tensor_proto::read(path).map(|(_, a)| a),
        _ => Err(DataError::UnknownFormat {
            path: path.display().to_string(),
        }),
    }
}

/// Reads any value from `path`: a `.npy` file (numbers or strings), or a `.pb` file holding
/// the ONNX message for `ty` (`TensorProto`, `SequenceProto`, `MapProto`, `OptionalProto`;
/// without `ty`, a `TensorProto`), as ONNX's backend test runner reads its data sets.
///
/// ```no_run
/// use ort_bind_cli::data;
/// use ort_bind_runtime::{DynamicBinding, Session, SessionOptions};
/// let session = Session::from_file("model.onnx", &SessionOptions::new())?;
/// let mut binding = DynamicBinding::new(&session)?;
/// let ty = binding.input_info().next().unwrap().ty.clone();
/// let value = data::read_value("test_data_set_0/input_0.pb", Some(&ty))?;
/// binding.set_input_value(0, &value)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_value(path: impl AsRef<Path>, ty: Option<&ValueType>) -> Result<DynValue, DataError> {
    let path = path.as_ref();
    match path.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("npy") => {
            if let Some(d) = ty.and_then(narrow_tensor) {
                return Err(DataError::Unsupported {
                    origin: path.display().to_string(),
                    detail: format!(
                        "the model's value is a tensor of {d}: {}",
                        npy::no_numpy_dtype(d)
                    ),
                });
            }
            npy::read_value(path)
        }
        Some(e) if e.eq_ignore_ascii_case("pb") => {
            value_proto::read(path, ty.map_or(ProtoKind::Tensor, ProtoKind::of))
        }
        _ => Err(DataError::UnknownFormat {
            path: path.display().to_string(),
        }),
    }
}

/// Decodes any value from the bytes of a `.npy` (`npy = true`) or `.pb` file (see
/// [`read_value`]); `origin` names the bytes in errors. For fuzzing and tests.
pub fn decode_value(
    bytes: &[u8],
    origin: &str,
    npy: bool,
    ty: Option<&ValueType>,
) -> Result<DynValue, DataError> {
    if npy {
        npy::decode_value(bytes, origin)
    } else {
        value_proto::decode(bytes, origin, ty.map_or(ProtoKind::Tensor, ProtoKind::of))
    }
}

/// Writes `value` to `path`: `.npy` for numeric and string tensors when `path` ends in
/// `.npy`, otherwise the ONNX message for it (`TensorProto`, `SequenceProto`, ...) named
/// `name`. Returns a note when values were widened (bfloat16 in `.npy`). A tensor of a
/// narrow type (`int4`, `float8e4m3fn`, ...) as `.npy` is an error that says to use `.pb`.
pub fn write_value(
    path: impl AsRef<Path>,
    name: &str,
    value: &DynValue,
) -> Result<Option<String>, DataError> {
    let path = path.as_ref();
    match path.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("npy") => npy::write_value(path, value),
        _ => value_proto::write(path, name, value).map(|()| None),
    }
}

/// The element type of `ty` when it is a tensor (or an optional one) of one of ONNX's
/// narrow types, which `.npy` cannot hold.
fn narrow_tensor(ty: &ValueType) -> Option<NumericType> {
    match ty {
        ValueType::Optional(inner) => narrow_tensor(inner),
        _ => match ty.as_tensor()? {
            (ElementType::Numeric(d), _) if tensor_proto::is_narrow(d) => Some(d),
            _ => None,
        },
    }
}

fn read_file(path: &Path) -> Result<Vec<u8>, DataError> {
    std::fs::read(path).map_err(|source| DataError::Io {
        path: path.display().to_string(),
        source,
    })
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), DataError> {
    std::fs::write(path, bytes).map_err(|source| DataError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// The product of `dims`, or `None` when it overflows.
fn element_count(dims: &[usize]) -> Option<usize> {
    dims.iter().try_fold(1usize, |n, &d| n.checked_mul(d))
}
