//! Reading an ONNX model file into a [`ModelSignature`]. This is the crate's only file I/O.
//!
//! The file is read by the private `wire` module into messages that declare only the fields
//! ort-bind reads (the private `proto` module): the fields a message does not declare
//! (weights, node attributes) are sought past without being read, so a model of a few
//! GiB is read in milliseconds, and external data files are never opened.
//!
//! What the signature holds, and the rules of the conversion, are documented on
//! [`read_signature`].

mod decode;
pub(crate) use decode::NO_TYPE;
mod error;
pub(crate) mod proto;
#[cfg(test)]
pub(crate) mod tests;
pub(crate) mod wire;

use std::fs::File;
use std::io::{BufReader, ErrorKind};
use std::path::Path;

pub use self::error::ModelError;
use crate::sig::ModelSignature;

/// The deepest type nesting ort-bind reads: a graph value's own type is level 1,
/// `seq(float32)` has 2 levels, `seq(map(string, float32))` 3. Real models stay under 5;
/// the limit bounds the recursion of everything that walks a type (decoding, display,
/// code generation). protobuf decoding itself stops at 100 nested messages (`wire::RECURSION_LIMIT`) (about 47
/// levels of type nesting), which is a [`ModelError::Decode`] that says so.
pub const MAX_TYPE_DEPTH: usize = 16;

/// Reads the signature of the ONNX model at `path`.
///
/// Only what the signature needs is read (weights are sought past), decoded and
/// converted. Models with external data load without their data files.
///
/// What the signature holds:
/// - **inputs**: `graph.input` minus every name that is an initializer or sparse
///   initializer (before IR version 4 exporters list weights as inputs; from 4 on such
///   entries are overridable defaults, which ONNX Runtime does not require either);
/// - **outputs**: `graph.output`;
/// - **dims**: `dim_value >= 1` is [`Dim::Fixed`]; `dim_value <= 0` is [`Dim::Dynamic`]
///   (real exporters write `0` and `-1` for "any size"); a `dim_param` is [`Dim::Named`]
///   unless it is a placeholder without any letter or digit (`?`, `*`, blanks), which is
///   dynamic; a dimension with neither is dynamic. A tensor type without a `shape` has
///   unknown rank (`dims: None`); an empty shape is a scalar (`Some(vec![])`);
/// - **kinds**: tensors of an element type in [`ElementType`] (string included) are
///   [`ValueType::Tensor`]; `sequence_type`, `map_type` and `optional_type` are
///   [`ValueType::Sequence`], [`ValueType::Map`] and [`ValueType::Optional`], nested as
///   the model nests them, up to 16 levels (deeper is [`ModelError::TypeTooDeep`]); what
///   ort-bind cannot represent (other element types
///   such as `complex64`, sparse and opaque types, map keys other than integers and
///   strings, a nested type that is not set) is a [`ValueType::Unsupported`] leaf with a
///   readable description such as `tensor(complex64)` or `<no type>`.
///
/// Reading never panics on hostile bytes: truncated, random or malformed input,
/// invalid UTF-8 in names, and lengths that claim more bytes than exist are all a
/// [`ModelError`]. Nothing is allocated from a claimed length.
///
/// ```no_run
/// let sig = ort_bind_codegen::read_signature("models/add.onnx")?;
/// for input in &sig.inputs {
///     println!("{}: {:?}", input.name, input.kind);
/// }
/// # Ok::<(), ort_bind_codegen::ModelError>(())
/// ```
///
/// [`ElementType`]: crate::ElementType
/// [`Dim::Fixed`]: crate::Dim::Fixed
/// [`Dim::Named`]: crate::Dim::Named
/// [`Dim::Dynamic`]: crate::Dim::Dynamic
/// [`ValueType::Tensor`]: crate::ValueType::Tensor
/// [`ValueType::Unsupported`]: crate::ValueType::Unsupported
/// [`ValueType::Sequence`]: crate::ValueType::Sequence
/// [`ValueType::Map`]: crate::ValueType::Map
/// [`ValueType::Optional`]: crate::ValueType::Optional
///
/// # Errors
/// [`ModelError::NotFound`] / [`ModelError::Io`] / [`ModelError::NotAFile`] when the file
/// cannot be read, [`ModelError::Empty`] for an empty file, and [`ModelError::Decode`]
/// and the other errors of decoding for its contents.
pub fn read_signature(path: impl AsRef<Path>) -> Result<ModelSignature, ModelError> {
    read_signature_with(path.as_ref(), IN_MEMORY)
}

/// Embedded messages up to this size are read whole and decoded in memory; larger ones (a
/// graph, an initializer with its weights) are read field by field, seeking past the fields
/// ort-bind does not read.
const IN_MEMORY: u64 = 64 << 10;

/// [`read_signature`], reading embedded messages of up to `in_memory` bytes whole (tests
/// read every model with 0 too, so that each field is read from the file).
pub(crate) fn read_signature_with(
    path: &Path,
    in_memory: u64,
) -> Result<ModelSignature, ModelError> {
    let io_err = |source: std::io::Error| {
        if source.kind() == ErrorKind::NotFound {
            ModelError::NotFound {
                path: path.to_owned(),
                source,
            }
        } else {
            ModelError::Io {
                path: path.to_owned(),
                source,
            }
        }
    };
    let file = File::open(path).map_err(io_err)?;
    let meta = file.metadata().map_err(io_err)?;
    if !meta.is_file() {
        return Err(ModelError::NotAFile {
            path: path.to_owned(),
        });
    }
    let origin = path.display().to_string();
    if meta.len() == 0 {
        return Err(ModelError::Empty { origin });
    }
    let model =
        wire::decode_file::<proto::ModelProto, _>(&mut BufReader::new(file), meta.len(), in_memory);
    convert(model, &origin)
}

/// Decodes the signature of an ONNX model held in memory; `origin` (a path or any label)
/// names the model in error messages.
///
/// # Errors
/// [`ModelError::Empty`] for no bytes, [`ModelError::Decode`] when the bytes are not a
/// protobuf `ModelProto` (random data, truncation, invalid UTF-8 in a name),
/// [`ModelError::NoGraph`], and the per-value errors [`ModelError::EmptyName`],
/// [`ModelError::MissingType`], [`ModelError::DuplicateName`] and
/// [`ModelError::TypeTooDeep`].
pub fn signature_from_bytes(bytes: &[u8], origin: &str) -> Result<ModelSignature, ModelError> {
    if bytes.is_empty() {
        return Err(ModelError::Empty {
            origin: origin.to_owned(),
        });
    }
    convert(wire::decode::<proto::ModelProto>(bytes), origin)
}

/// The signature of a decoded model, or the decoding error in the model's terms.
fn convert(
    model: Result<proto::ModelProto, wire::WireError>,
    origin: &str,
) -> Result<ModelSignature, ModelError> {
    let model = model.map_err(|e| {
        let mut detail = e.to_string();
        if e.is_recursion_limit() {
            // Messages nest at most `wire::RECURSION_LIMIT` deep; in the fields ort-bind
            // reads only types nest.
            detail.push_str(&format!(
                " (a type nested too deeply: ort-bind reads types up to {MAX_TYPE_DEPTH} levels)"
            ));
        }
        ModelError::Decode {
            origin: origin.to_owned(),
            detail,
        }
    })?;
    decode::convert(model, origin)
}
