//! Tensor data files: ONNX `TensorProto` (`.pb`) and numpy (`.npy`), read into and written
//! from [`HostArray`]s, and comparison with the tolerances ONNX's backend tests use.
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
pub mod tensor_proto;

use std::path::Path;

pub use compare::{Mismatch, Tolerance, compare};

use ort_bind_runtime::HostArray;

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
