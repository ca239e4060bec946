//! Errors from reading an ONNX model's signature.

use std::fmt;
use std::path::PathBuf;

/// Why a model's signature could not be read. Every message names the file (or, for
/// [`signature_from_bytes`](super::signature_from_bytes), the origin the caller gave).
#[derive(Debug)]
#[non_exhaustive]
pub enum ModelError {
    /// The model file does not exist.
    NotFound {
        /// The path as given.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },

    /// The model file exists but could not be opened, inspected or memory-mapped.
    Io {
        /// The path as given.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },

    /// The path names a directory or other non-file.
    NotAFile {
        /// The path as given.
        path: PathBuf,
    },

    /// The model file (or byte buffer) is empty.
    Empty {
        /// The file path or caller-given origin.
        origin: String,
    },

    /// The bytes are not a protobuf `ModelProto`: not an ONNX file, or a truncated one.
    Decode {
        /// The file path or caller-given origin.
        origin: String,
        /// What the protobuf decoder reported.
        detail: String,
    },

    /// The model has no main graph (`ModelProto.graph` is absent).
    NoGraph {
        /// The file path or caller-given origin.
        origin: String,
    },

    /// A graph input or output has an empty name.
    EmptyName {
        /// The file path or caller-given origin.
        origin: String,
        /// `"input"` or `"output"`.
        role: &'static str,
        /// Position of the value in `graph.input` / `graph.output` (0-based).
        index: usize,
    },

    /// A graph input or output declares no type.
    MissingType {
        /// The file path or caller-given origin.
        origin: String,
        /// `"input"` or `"output"`.
        role: &'static str,
        /// The value's ONNX name.
        name: String,
    },

    /// Two graph inputs, or two graph outputs, share a name.
    DuplicateName {
        /// The file path or caller-given origin.
        origin: String,
        /// `"input"` or `"output"`.
        role: &'static str,
        /// The repeated ONNX name.
        name: String,
    },

    /// A graph input's or output's type nests sequences, maps and optionals deeper than
    /// [`MAX_TYPE_DEPTH`](super::MAX_TYPE_DEPTH) levels.
    TypeTooDeep {
        /// The file path or caller-given origin.
        origin: String,
        /// `"input"` or `"output"`.
        role: &'static str,
        /// The value's ONNX name.
        name: String,
        /// The limit, [`MAX_TYPE_DEPTH`](super::MAX_TYPE_DEPTH).
        limit: usize,
    },
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelError::NotFound { path, source } => write!(
                f,
                "ONNX model `{}` not found ({source}); relative paths are resolved against the \
         current directory",
                path.display()
            ),
            ModelError::Io { path, source } => {
                write!(f, "cannot read ONNX model `{}`: {source}", path.display())
            }
            ModelError::NotAFile { path } => write!(
                f,
                "ONNX model path `{}` is not a regular file",
                path.display()
            ),
            ModelError::Empty { origin } => write!(f, "ONNX model `{origin}` is empty (0 bytes)"),
            ModelError::Decode { origin, detail } => write!(
                f,
                "`{origin}` is not a readable ONNX model: protobuf decoding failed ({detail}); \
         is this an ONNX file, and is it complete (not truncated, not a Git LFS pointer)?"
            ),
            ModelError::NoGraph { origin } => write!(
                f,
                "ONNX model `{origin}` has no graph; is this an ONNX model file?"
            ),
            ModelError::EmptyName {
                origin,
                role,
                index,
            } => write!(
                f,
                "ONNX model `{origin}`: graph {role} #{index} has an empty name"
            ),
            ModelError::MissingType { origin, role, name } => write!(
                f,
                "ONNX model `{origin}`: graph {role} `{name}` has no type; ort-bind needs the type \
         of every graph input and output (run ONNX shape inference on the model first)"
            ),
            ModelError::DuplicateName { origin, role, name } => write!(
                f,
                "ONNX model `{origin}`: graph {role} name `{name}` appears more than once"
            ),
            ModelError::TypeTooDeep {
                origin,
                role,
                name,
                limit,
            } => write!(
                f,
                "ONNX model `{origin}`: the type of graph {role} `{name}` nests sequences, maps and \
         optionals more than {limit} levels deep; ort-bind reads types up to {limit} levels"
            ),
        }
    }
}

impl std::error::Error for ModelError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ModelError::NotFound { source, .. } => Some(source),
            ModelError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}
