//! Errors from reading an ONNX model's signature.

use std::path::PathBuf;

/// Why a model's signature could not be read. Every message names the file (or, for
/// [`signature_from_bytes`](super::signature_from_bytes), the origin the caller gave).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// The model file does not exist.
    #[error(
        "ONNX model `{}` not found ({source}); relative paths are resolved against the \
         current directory",
        path.display()
    )]
    NotFound {
        /// The path as given.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },

    /// The model file exists but could not be opened, inspected or memory-mapped.
    #[error("cannot read ONNX model `{}`: {source}", path.display())]
    Io {
        /// The path as given.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },

    /// The path names a directory or other non-file.
    #[error("ONNX model path `{}` is not a regular file", path.display())]
    NotAFile {
        /// The path as given.
        path: PathBuf,
    },

    /// The model file (or byte buffer) is empty.
    #[error("ONNX model `{origin}` is empty (0 bytes)")]
    Empty {
        /// The file path or caller-given origin.
        origin: String,
    },

    /// The bytes are not a protobuf `ModelProto`: not an ONNX file, or a truncated one.
    #[error(
        "`{origin}` is not a readable ONNX model: protobuf decoding failed ({detail}); \
         is this an ONNX file, and is it complete (not truncated, not a Git LFS pointer)?"
    )]
    Decode {
        /// The file path or caller-given origin.
        origin: String,
        /// What the protobuf decoder reported.
        detail: String,
    },

    /// The model has no main graph (`ModelProto.graph` is absent).
    #[error("ONNX model `{origin}` has no graph; is this an ONNX model file?")]
    NoGraph {
        /// The file path or caller-given origin.
        origin: String,
    },

    /// A graph input or output has an empty name.
    #[error("ONNX model `{origin}`: graph {role} #{index} has an empty name")]
    EmptyName {
        /// The file path or caller-given origin.
        origin: String,
        /// `"input"` or `"output"`.
        role: &'static str,
        /// Position of the value in `graph.input` / `graph.output` (0-based).
        index: usize,
    },

    /// A graph input or output declares no type.
    #[error(
        "ONNX model `{origin}`: graph {role} `{name}` has no type; ort-bind needs the type \
         of every graph input and output (run ONNX shape inference on the model first)"
    )]
    MissingType {
        /// The file path or caller-given origin.
        origin: String,
        /// `"input"` or `"output"`.
        role: &'static str,
        /// The value's ONNX name.
        name: String,
    },

    /// Two graph inputs, or two graph outputs, share a name.
    #[error("ONNX model `{origin}`: graph {role} name `{name}` appears more than once")]
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
    #[error(
        "ONNX model `{origin}`: the type of graph {role} `{name}` nests sequences, maps and \
         optionals more than {limit} levels deep; ort-bind reads types up to {limit} levels"
    )]
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
