//! The model signature: what ort-bind needs to know about an ONNX model to
//! generate and check bindings. Plain data, independent of how it was decoded.

use crate::element::ElementType;

/// Everything codegen and the checks read from an ONNX model file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ModelSignature {
    /// Graph inputs that are real inputs (initializers listed in `graph.input` are excluded).
    pub inputs: Vec<ValueInfo>,
    /// Graph outputs.
    pub outputs: Vec<ValueInfo>,
    /// Graph inputs that also have an initializer: the initializer is the input's default.
    /// From IR version 4 on, ONNX Runtime runs with the default unless the caller binds a
    /// value (an *overridable* input; LoRA adapter weights are exported this way). Before
    /// IR 4 exporters list every weight like this, and ONNX Runtime holds them constant
    /// (it refuses a value given for one), so bindings make none of them overridable.
    pub initialized_inputs: Vec<ValueInfo>,
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
    /// `(input, output)` pairs an operator of the graph writes in place when both are
    /// bound to one buffer (the past and present key/value of ONNX Runtime's
    /// `GroupQueryAttention`): what the shared-buffer decoder mode needs.
    pub in_place: Vec<(String, String)>,
    /// What shape inference computed for each output, in the order of `outputs` (empty
    /// when the graph was not read, as for a signature built by hand): the size of each
    /// axis as an expression of the inputs' dims (see [`InferredShape`](crate::InferredShape)).
    pub inferred: Vec<crate::shapes::InferredShape>,
}

/// One graph input or output, as the model declares it: its name and [`ValueType`].
/// (The runtime's `ort_bind::dynamic::ValueInfo` is the same, read from a loaded session.)
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueInfo {
    /// The ONNX name, exactly as in the file.
    pub name: String,
    /// Its type: a tensor, sequence, map or optional.
    pub kind: ValueType,
    /// Documentation string of the value, possibly empty.
    pub doc_string: String,
}

/// The type of a graph value, as the model declares it (ONNX's `TypeProto`). (The
/// runtime's `ort_bind::ValueType` is the same, read from a loaded session.)
///
/// Sequences, maps and optionals nest arbitrarily (up to
/// [`MAX_TYPE_DEPTH`](crate::onnx::MAX_TYPE_DEPTH) levels, past which reading the model
/// is an error). A part of a type that ort-bind cannot represent (an unknown element
/// type, a sparse or opaque type, a map key ONNX does not allow, a missing element type)
/// is an [`Unsupported`](ValueType::Unsupported) leaf, so the rest of the type stays
/// readable: `seq(tensor(complex64))` is a `Sequence` of an `Unsupported` leaf.
///
/// `Display` writes the compact form `ort-bind inspect` shows: `float32[1, ?]`, `string`,
/// `seq(map(int64, float32))`, `optional(seq(float32[n]))`.
///
/// New kinds may be added (`#[non_exhaustive]`): code outside this crate keeps a
/// wildcard arm, which should treat an unknown kind as not bindable.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ValueType {
    /// A dense tensor, string tensors included (`elem` [`ElementType::String`]).
    Tensor {
        /// Element type.
        elem: ElementType,
        /// Dimensions, or `None` when the model does not declare a shape (unknown rank).
        dims: Option<Vec<Dim>>,
    },
    /// `sequence(elem)`: any number of values of one type (ONNX's `sequence_type`).
    Sequence(Box<ValueType>),
    /// `map(key, value)` (ONNX's `map_type`). `key` is one of the types ONNX allows for
    /// map keys (see [`ElementType::is_map_key`]); a map with any other key is
    /// [`Unsupported`](ValueType::Unsupported).
    Map {
        /// Key type: an integer type or [`ElementType::String`].
        key: ElementType,
        /// Value type.
        value: Box<ValueType>,
    },
    /// `optional(elem)`: a value that may be absent (ONNX's `optional_type`).
    Optional(Box<ValueType>),
    /// A type ort-bind cannot represent: a tensor of an element type it does not know,
    /// a sparse tensor, an opaque type, a map whose key type ONNX does not allow, or a
    /// type that is not set (a sequence or optional without element type). The string
    /// describes it for error messages, e.g. `tensor(complex64)`, `<no type>`.
    Unsupported(String),
}

impl ValueType {
    /// Whether this is a tensor ort-bind binds as a typed buffer today (numeric or bool
    /// elements).
    pub fn is_bindable_tensor(&self) -> bool {
        matches!(self, ValueType::Tensor { elem, .. } if elem.is_bindable())
    }

    /// The first part of this type that ort-bind cannot represent, if any (depth first).
    pub fn unsupported_part(&self) -> Option<&str> {
        match self {
            ValueType::Tensor { .. } => None,
            ValueType::Sequence(inner) | ValueType::Optional(inner) => inner.unsupported_part(),
            ValueType::Map { value, .. } => value.unsupported_part(),
            ValueType::Unsupported(what) => Some(what),
        }
    }

    /// Levels of nesting: 1 for a tensor or an unsupported leaf, 2 for `seq(float32)`,
    /// 3 for `seq(map(int64, float32))`.
    pub fn depth(&self) -> usize {
        match self {
            ValueType::Tensor { .. } | ValueType::Unsupported(_) => 1,
            ValueType::Sequence(inner) | ValueType::Optional(inner) => 1 + inner.depth(),
            ValueType::Map { value, .. } => 1 + value.depth(),
        }
    }
}

impl std::fmt::Display for ValueType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ValueType::Tensor { elem, dims: None } => write!(f, "{elem}"),
            ValueType::Tensor {
                elem,
                dims: Some(dims),
            } => write!(f, "{elem}{}", format_dims(Some(dims))),
            ValueType::Sequence(inner) => write!(f, "seq({inner})"),
            ValueType::Map { key, value } => write!(f, "map({key}, {value})"),
            ValueType::Optional(inner) => write!(f, "optional({inner})"),
            ValueType::Unsupported(what) => f.write_str(what),
        }
    }
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
    pub fn input(&self, name: &str) -> Option<&ValueInfo> {
        self.inputs.iter().find(|v| v.name == name)
    }

    /// Looks up a graph input that has an initializer (a default) by its ONNX name.
    pub fn initialized_input(&self, name: &str) -> Option<&ValueInfo> {
        self.initialized_inputs.iter().find(|v| v.name == name)
    }

    /// Looks up an output by its ONNX name.
    pub fn output(&self, name: &str) -> Option<&ValueInfo> {
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

impl ValueInfo {
    /// Element type and dims when this value is a bindable tensor.
    pub fn tensor(&self) -> Option<(ElementType, Option<&[Dim]>)> {
        match &self.kind {
            ValueType::Tensor { elem, dims } => Some((*elem, dims.as_deref())),
            _ => None,
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
