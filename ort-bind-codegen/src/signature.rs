//! The model signature: what ort-bind needs to know about an ONNX model to
//! generate and check bindings. Plain data, independent of how it was decoded.

use crate::dtype::ElementType;

/// Everything codegen and the checks read from an ONNX model file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ModelSignature {
    /// Graph inputs that are real inputs (initializers listed in `graph.input` are excluded).
    pub inputs: Vec<ValueSig>,
    /// Graph outputs.
    pub outputs: Vec<ValueSig>,
    /// Operator set imports: `(domain, version)`; the default domain is `""`.
    pub opsets: Vec<(String, i64)>,
    /// ONNX IR version of the file.
    pub ir_version: i64,
    /// Tool that produced the model (`producer_name`), possibly empty.
    pub producer_name: String,
    /// Version of that tool (`producer_version`), possibly empty.
    pub producer_version: String,
    /// Model-level documentation string.
    pub doc_string: String,
    /// Name of the main graph.
    pub graph_name: String,
    /// Free-form `metadata_props`, in file order.
    pub metadata: Vec<(String, String)>,
}

/// One graph input or output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueSig {
    /// The ONNX name, exactly as in the file.
    pub name: String,
    /// What kind of value flows here.
    pub kind: ValueKind,
    /// Documentation string of the value, possibly empty.
    pub doc_string: String,
}

/// The type of a graph value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValueKind {
    /// A dense tensor.
    Tensor {
        /// Element type.
        elem: ElementType,
        /// Dimensions, or `None` when the model does not declare a shape (unknown rank).
        dims: Option<Vec<Dim>>,
    },
    /// Any other ONNX type (sequence, map, optional, sparse tensor) or a tensor whose
    /// element type ort-bind cannot bind; the string says what it is, for error messages.
    Unsupported(String),
}

/// One dimension of a tensor shape.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Dim {
    /// A fixed size (`dim_value` >= 1). `0` and negative values are read as dynamic,
    /// as some exporters write them for dynamic axes.
    Fixed(u64),
    /// A named symbolic dimension (`dim_param`), e.g. `batch`.
    Named(String),
    /// A dynamic dimension with no name: unset, `-1`, or `?`-like placeholders.
    Dynamic,
}

impl ModelSignature {
    /// Looks up an input by its ONNX name.
    pub fn input(&self, name: &str) -> Option<&ValueSig> {
        self.inputs.iter().find(|v| v.name == name)
    }

    /// Looks up an output by its ONNX name.
    pub fn output(&self, name: &str) -> Option<&ValueSig> {
        self.outputs.iter().find(|v| v.name == name)
    }

    /// The default-domain (`ai.onnx`) opset version, if imported.
    pub fn default_opset(&self) -> Option<i64> {
        self.opsets
            .iter()
            .find(|(d, _)| d.is_empty() || d == "ai.onnx")
            .map(|(_, v)| *v)
    }
}

impl ValueSig {
    /// Element type and dims when this value is a bindable tensor.
    pub fn tensor(&self) -> Option<(ElementType, Option<&[Dim]>)> {
        match &self.kind {
            ValueKind::Tensor { elem, dims } => Some((*elem, dims.as_deref())),
            ValueKind::Unsupported(_) => None,
        }
    }
}

impl std::fmt::Display for Dim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Dim::Fixed(n) => write!(f, "{n}"),
            Dim::Named(s) => write!(f, "{s}"),
            Dim::Dynamic => f.write_str("?"),
        }
    }
}

/// Formats dims as `[1, batch, ?]` (or `[..]` for unknown rank), the way error messages show shapes.
pub fn format_dims(dims: Option<&[Dim]>) -> String {
    match dims {
        None => "[..] (unknown rank)".to_owned(),
        Some(d) => {
            let parts: Vec<String> = d.iter().map(ToString::to_string).collect();
            format!("[{}]", parts.join(", "))
        }
    }
}
