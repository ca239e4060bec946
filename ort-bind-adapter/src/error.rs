//! Why an adapter file was refused.

/// Why [`read`](crate::read) refused an adapter file.
///
/// Every check that can fail on hostile input ends here; none panics. Parameters are named
/// by their name in the file, or by their index where they have none.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AdapterError {
    /// Shorter than 8 bytes, or bytes 4..8 are not the file identifier `TORT`.
    NotAnAdapter {
        /// Bytes 4..8 of the file; `None` when it is shorter than 8 bytes.
        found: Option<[u8; 4]>,
    },
    /// The flatbuffer failed verification (an offset or length out of bounds, a misaligned
    /// vector, a name that is not UTF-8, a missing `parameters`, `dims` or `raw_data`, ...).
    Invalid {
        /// The verifier's account of what is wrong and where.
        reason: String,
    },
    /// The file's `format_version` is not one this crate reads.
    UnsupportedFormatVersion {
        /// The version in the file.
        found: i32,
        /// The version this crate reads ([`FORMAT_VERSION`](crate::FORMAT_VERSION)).
        supported: i32,
    },
    /// A parameter has no name (ONNX Runtime's writer leaves an empty name out).
    UnnamedParameter {
        /// Its position among the file's parameters.
        index: usize,
    },
    /// Two parameters have the same name.
    DuplicateName {
        /// The repeated name.
        param: String,
    },
    /// A parameter's element type has no fixed size this crate knows (strings, complex
    /// numbers, `UNDEFINED`, codes outside the schema); see
    /// [`element_size`](crate::element_size).
    UnsupportedElement {
        /// The parameter.
        param: String,
        /// Its ONNX `TensorProto.DataType` code.
        code: i32,
    },
    /// A parameter has a negative dimension.
    NegativeDim {
        /// The parameter.
        param: String,
        /// The axis.
        axis: usize,
        /// Its value.
        dim: i64,
    },
    /// A parameter's size in bytes (the product of its dims times its element size) does not
    /// fit in `usize`.
    SizeOverflow {
        /// The parameter.
        param: String,
        /// Its dims.
        dims: Vec<i64>,
    },
    /// A parameter's data is not the size its dims and element type call for.
    SizeMismatch {
        /// The parameter.
        param: String,
        /// The product of its dims times its element size.
        expected_bytes: usize,
        /// The length of its `raw_data`.
        found_bytes: usize,
    },
}

// Written out rather than derived: `thiserror`'s proc macro (and the `syn` it builds) would
// sit on the build path of every crate that reads adapters, the runtime's included.
impl std::fmt::Display for AdapterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AdapterError::NotAnAdapter { found } => write!(
                f,
                "not an ONNX Runtime adapter file: {}",
                describe_identifier(found)
            ),
            AdapterError::Invalid { reason } => write!(f, "corrupt adapter file: {reason}"),
            AdapterError::UnsupportedFormatVersion { found, supported } => write!(
                f,
                "adapter format version {found} is not supported (this reader knows version \
                 {supported})"
            ),
            AdapterError::UnnamedParameter { index } => {
                write!(f, "adapter parameter #{index} has no name")
            }
            AdapterError::DuplicateName { param } => {
                write!(f, "adapter parameter `{param}` appears more than once")
            }
            AdapterError::UnsupportedElement { param, code } => write!(
                f,
                "adapter parameter `{param}` has element type {code}, which is not supported"
            ),
            AdapterError::NegativeDim { param, axis, dim } => write!(
                f,
                "adapter parameter `{param}` has negative dimension {dim} on axis {axis}"
            ),
            AdapterError::SizeOverflow { param, dims } => write!(
                f,
                "adapter parameter `{param}` with dims {dims:?} is too large to address"
            ),
            AdapterError::SizeMismatch {
                param,
                expected_bytes,
                found_bytes,
            } => write!(
                f,
                "adapter parameter `{param}` holds {found_bytes} bytes of data, but its dims and \
                 element type call for {expected_bytes}"
            ),
        }
    }
}

impl std::error::Error for AdapterError {}

fn describe_identifier(found: &Option<[u8; 4]>) -> String {
    match found {
        None => "shorter than 8 bytes, so it has no file identifier".to_owned(),
        Some(id) => format!(
            "its file identifier is \"{}\", not \"TORT\"",
            id.escape_ascii()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::AdapterError;

    #[test]
    fn messages_name_what_is_wrong() {
        let short = AdapterError::NotAnAdapter { found: None };
        assert!(
            short.to_string().contains("shorter than 8 bytes"),
            "{short}"
        );
        let wrong = AdapterError::NotAnAdapter {
            found: Some(*b"ORT\0"),
        };
        assert_eq!(
            wrong.to_string(),
            "not an ONNX Runtime adapter file: its file identifier is \"ORT\\x00\", not \"TORT\""
        );
        let mismatch = AdapterError::SizeMismatch {
            param: "lora_a.0".into(),
            expected_bytes: 64,
            found_bytes: 60,
        };
        assert_eq!(
            mismatch.to_string(),
            "adapter parameter `lora_a.0` holds 60 bytes of data, but its dims and element type \
             call for 64"
        );
    }
}
