//! Shared pieces of the fuzz targets: an `Arbitrary` model signature whose names are
//! drawn from a vocabulary that collides after sanitising, and the oracle that checks
//! everything codegen produces for a signature.

use std::collections::HashSet;

use arbitrary::{Arbitrary, Unstructured};
use ort_bind_codegen::__private::expand::{ExpandOptions, expand};
use ort_bind_codegen::__private::plan::plan;
use ort_bind_codegen::{Dim, ElementType, ModelSignature, PlanError, ValueInfo, ValueType};

/// Name fragments that make sanitised identifiers collide, hit keywords and reserved
/// words, and build feed-back pairs (`state` / `stateN`, `x` / `x_into_y`).
const PIECES: &[&str] = &[
    "a", "b", "A", "B", "_", ".", "/", "-", ":", "0", "1", "state", "N", "_into_", "into", "feed",
    "type", "self", "Self", "super", "crate", "r#", "in", "out", "dims", "device", "_device",
    "inner", "shape", "dim0", "é", "\0", " ", "\r\n", "\"", "\\", "*/", "/*", "`", "[", "]",
    "async", "gen", "_2",
];

/// A name: free-form text, or a sequence of vocabulary pieces.
#[derive(Debug, Arbitrary)]
pub enum ArbName {
    /// Any string.
    Free(String),
    /// Concatenated [`PIECES`].
    Pieces(Vec<u8>),
}

impl ArbName {
    fn build(&self) -> String {
        match self {
            ArbName::Free(s) => s.clone(),
            ArbName::Pieces(p) => p
                .iter()
                .map(|&i| PIECES[usize::from(i) % PIECES.len()])
                .collect(),
        }
    }
}

/// One dimension.
#[derive(Debug, Arbitrary)]
pub enum ArbDim {
    /// `dim_value` (any `i64`, as on the wire; `<= 0` is dynamic).
    Value(i64),
    /// `dim_param`.
    Param(ArbName),
    /// Neither set.
    Unset,
}

/// A non-tensor kind, nested: the shapes `signature_from_bytes` can produce.
#[derive(Debug, Arbitrary)]
pub enum ArbKind {
    /// A tensor (element code, dims), possibly of an element type ort-bind does not know.
    Tensor(u8, Option<Vec<ArbDim>>),
    /// `seq(inner)`.
    Sequence(Box<ArbKind>),
    /// `map(key, value)`; a key code ONNX does not allow makes the map unsupported.
    Map(u8, Box<ArbKind>),
    /// `optional(inner)`.
    Optional(Box<ArbKind>),
    /// An unsupported leaf with this description.
    Unsupported(String),
}

/// One graph input or output.
#[derive(Debug, Arbitrary)]
pub struct ArbValue {
    name: ArbName,
    /// ONNX element code (0..=26 covers every code; others are unknown).
    elem: u8,
    /// `None`: unknown rank.
    dims: Option<Vec<ArbDim>>,
    /// A non-tensor kind instead (sequence, map, optional, unsupported leaf).
    other: Option<ArbKind>,
    doc: String,
}

fn tensor_kind(elem: u8, dims: Option<&Vec<ArbDim>>) -> ValueType {
    match ElementType::from_onnx(i32::from(elem)) {
        Some(elem) => ValueType::Tensor {
            elem,
            dims: dims.map(|ds| ds.iter().map(dim).collect()),
        },
        None => ValueType::Unsupported(format!("tensor({elem})")),
    }
}

/// The kind `k` stands for, as the decoder would build it (nesting cut at its limit).
fn kind(k: &ArbKind, depth: usize) -> ValueType {
    if depth >= ort_bind_codegen::__private::model::MAX_TYPE_DEPTH {
        return ValueType::Unsupported("<no type>".into());
    }
    match k {
        ArbKind::Tensor(elem, dims) => tensor_kind(*elem, dims.as_ref()),
        ArbKind::Sequence(inner) => ValueType::Sequence(Box::new(kind(inner, depth + 1))),
        ArbKind::Optional(inner) => ValueType::Optional(Box::new(kind(inner, depth + 1))),
        ArbKind::Map(key, value) => {
            let value = kind(value, depth + 1);
            match ElementType::from_onnx(i32::from(*key)).filter(|k| k.is_map_key()) {
                Some(key) => ValueType::Map {
                    key,
                    value: Box::new(value),
                },
                None => ValueType::Unsupported(format!("map({key}, {value})")),
            }
        }
        ArbKind::Unsupported(what) if what.is_empty() => ValueType::Unsupported("?".into()),
        ArbKind::Unsupported(what) => ValueType::Unsupported(what.clone()),
    }
}

/// A whole signature.
#[derive(Debug, Arbitrary)]
pub struct ArbSignature {
    inputs: Vec<ArbValue>,
    outputs: Vec<ArbValue>,
    opset: Option<i64>,
    producer_name: String,
    producer_version: String,
    doc_string: String,
    graph_name: String,
}

fn dim(d: &ArbDim) -> Dim {
    // The same classification the decoder applies.
    match d {
        ArbDim::Value(v) => match u64::try_from(*v) {
            Ok(n) if n >= 1 => Dim::Fixed(n),
            _ => Dim::Dynamic,
        },
        ArbDim::Param(p) => {
            let p = p.build();
            if p.chars().any(char::is_alphanumeric) {
                Dim::Named(p)
            } else {
                Dim::Dynamic
            }
        }
        ArbDim::Unset => Dim::Dynamic,
    }
}

/// Values of one role, with the decoder's invariants: non-empty, unique names.
fn values(list: &[ArbValue]) -> Vec<ValueInfo> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for v in list {
        let name = v.name.build();
        if name.is_empty() || !seen.insert(name.clone()) {
            continue;
        }
        let kind = match &v.other {
            None => tensor_kind(v.elem, v.dims.as_ref()),
            Some(k) => kind(k, 1),
        };
        out.push(ValueInfo {
            name,
            kind,
            doc_string: v.doc.clone(),
        });
    }
    out
}

impl ArbSignature {
    /// The signature this stands for (as the decoder could have produced it).
    pub fn build(&self) -> ModelSignature {
        ModelSignature {
            inputs: values(&self.inputs),
            outputs: values(&self.outputs),
            opsets: self.opset.map(|v| (String::new(), v)).into_iter().collect(),
            ir_version: 8,
            producer_name: self.producer_name.clone(),
            producer_version: self.producer_version.clone(),
            doc_string: self.doc_string.clone(),
            graph_name: self.graph_name.clone(),
            metadata: vec![],
            // No graph: nothing computed in place, no inferred shapes.
            ..ModelSignature::default()
        }
    }
}

/// Decodes `data` as an ONNX model, or failing that, generates a signature from it.
pub fn signature_for(data: &[u8]) -> Option<ModelSignature> {
    if let Ok(sig) = ort_bind_codegen::__private::model::signature_from_bytes(data, "fuzz.onnx") {
        return Some(sig);
    }
    ArbSignature::arbitrary_take_rest(Unstructured::new(data))
        .ok()
        .map(|a| a.build())
}

/// Whether ort-bind binds a value of `v`'s type, by the rules the runtime's `values` docs
/// state (written out here, apart from codegen's own classification, so the two check each
/// other): a tensor of any element type codegen knows, strings included; a sequence of
/// tensors or of maps; a map with `int64` or `string` keys and `int64`, `float32`,
/// `float64` or `string` values; an optional tensor or optional sequence of tensors.
fn bindable(v: &ValueInfo) -> bool {
    fn tensor(k: &ValueType) -> bool {
        matches!(k, ValueType::Tensor { .. })
    }
    fn map(k: &ValueType) -> bool {
        matches!(k, ValueType::Map { key, value }
            if matches!(key, ElementType::I64 | ElementType::String)
                && matches!(**value, ValueType::Tensor { elem, .. }
                    if matches!(elem, ElementType::I64 | ElementType::F32 | ElementType::F64
                        | ElementType::String)))
    }
    match &v.kind {
        k @ ValueType::Tensor { .. } => tensor(k),
        ValueType::Sequence(inner) => tensor(inner) || map(inner),
        k @ ValueType::Map { .. } => map(k),
        ValueType::Optional(inner) => match &**inner {
            ValueType::Sequence(t) => tensor(t),
            t => tensor(t),
        },
        _ => false,
    }
}

/// Runs plan + expand on `sig` and panics on anything wrong: a plan error that the
/// signature does not explain, generated code that does not parse (before or after
/// formatting), or a generated struct, impl or module with two items of one name.
pub fn check_codegen(sig: &ModelSignature) {
    let planned = plan(sig);
    let plan = match planned {
        Err(PlanError::NoOutputs) => {
            assert!(sig.outputs.is_empty(), "NoOutputs for a model with outputs");
            return;
        }
        Err(PlanError::Unsupported { role, name, .. }) => {
            let list = if role == "input" {
                &sig.inputs
            } else {
                &sig.outputs
            };
            let v = list
                .iter()
                .find(|v| v.name == name)
                .unwrap_or_else(|| panic!("Unsupported names unknown {role} {name:?}"));
            assert!(!bindable(v), "{role} {name:?} is bindable but was rejected");
            // The refusal names the value and shows its type.
            let message = planned_message(sig, role, &name);
            assert!(
                message.contains(&format!("{role} `{name}` is ")),
                "{message}"
            );
            if !matches!(v.kind, ValueType::Tensor { .. }) {
                assert!(message.contains(&v.kind.to_string()), "{message}");
            }
            return;
        }
        Err(e) => panic!("unexpected plan error: {e}"),
        Ok(p) => p,
    };
    assert!(!sig.outputs.is_empty());
    assert!(sig.inputs.iter().chain(&sig.outputs).all(bindable));
    assert_eq!(plan.inputs.len(), sig.inputs.len());
    assert_eq!(plan.outputs.len(), sig.outputs.len());
    for fb in &plan.feed_back {
        let (o, i) = (&plan.outputs[fb.output], &plan.inputs[fb.input]);
        assert_eq!(o.elem, i.elem, "feed-back pair of different element types");
    }

    let opts = ExpandOptions {
        model_path: "/models/fuzz \"model\".onnx".into(),
        label: "fuzz\n\"model\"".into(),
        ..ExpandOptions::default()
    };
    let tokens = expand(sig, &plan, &opts);
    // What `Builder` writes: formatted, with a header naming the file (any characters).
    // `format_source` falls back to the raw tokens when they do not parse, so a parse
    // failure of either kind surfaces here.
    let source = ort_bind_codegen::__private::builder::format_source(&tokens, "fuzz\n\r\u{0}.onnx");
    let file = syn::parse_file(&source)
        .unwrap_or_else(|e| panic!("generated code does not parse: {e}\n{source}"));
    check_unique_names(&file);
}

fn planned_message(sig: &ModelSignature, role: &str, name: &str) -> String {
    ort_bind_codegen::__private::plan::refusals(sig)
        .iter()
        .map(ToString::to_string)
        .find(|m| m.starts_with(&format!("{role} `{name}` ")))
        .unwrap_or_default()
}

fn ident_of_ty(ty: &syn::Type) -> String {
    match ty {
        syn::Type::Path(p) => p
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default(),
        _ => String::new(),
    }
}

/// No struct has two fields of one name, no inherent impl two methods of one name, and
/// the module no two items of one name (each would be a compile error).
pub fn check_unique_names(file: &syn::File) {
    let mut items = HashSet::new();
    let mut methods: HashSet<(String, String)> = HashSet::new();
    for item in &file.items {
        let name = match item {
            syn::Item::Struct(s) => {
                let mut fields = HashSet::new();
                for f in &s.fields {
                    if let Some(id) = &f.ident {
                        assert!(
                            fields.insert(id.to_string()),
                            "struct {} repeats field {id}",
                            s.ident
                        );
                    }
                }
                Some(s.ident.to_string())
            }
            syn::Item::Const(c) => Some(c.ident.to_string()),
            syn::Item::Impl(imp) => {
                let owner = format!(
                    "{}{}",
                    ident_of_ty(&imp.self_ty),
                    imp.trait_
                        .as_ref()
                        .map(|(_, p, _)| format!(" as {}", quote_path(p)))
                        .unwrap_or_default()
                );
                for it in &imp.items {
                    if let syn::ImplItem::Fn(f) = it {
                        let key = (owner.clone(), f.sig.ident.to_string());
                        assert!(
                            methods.insert(key.clone()),
                            "impl {owner} repeats fn {}",
                            key.1
                        );
                    }
                }
                None
            }
            _ => None,
        };
        if let Some(n) = name {
            assert!(items.insert(n.clone()), "module repeats item {n}");
        }
    }
}

fn quote_path(p: &syn::Path) -> String {
    p.segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect::<Vec<_>>()
        .join("::")
}

// ---- graphs for shape inference (`infer_shapes`) ------------------------------------------

/// Operators the generated graphs use: the ones shape inference covers, and a few it does
/// not or that are data-dependent.
const OPS: &[&str] = &[
    "Add", "Sub", "Mul", "Div", "MatMul", "Gemm", "Relu", "Softmax", "Concat", "Reshape",
    "Shape", "Gather", "Slice", "Squeeze", "Unsqueeze", "Transpose", "Flatten", "Expand", "Tile",
    "Pad", "Split", "Range", "ConstantOfShape", "Conv", "ConvTranspose", "MaxPool",
    "AveragePool", "GlobalAveragePool", "Resize", "ReduceSum", "ReduceMean", "ArgMax", "TopK",
    "LSTM", "GRU", "Einsum", "Where", "Cast", "Identity", "Size", "LayerNormalization",
    "DepthToSpace", "SpaceToDepth", "OneHot", "NonZero", "CumSum", "Equal", "Max", "Min", "Mod",
    "If", "Loop", "Frobnicate",
];

/// Attribute names the generated nodes carry (with arbitrary integer values).
const ATTRIBUTES: &[&str] = &[
    "axis", "axes", "perm", "kernel_shape", "strides", "pads", "dilations", "group",
    "keepdims", "ceil_mode", "transA", "transB", "hidden_size", "blocksize", "num_outputs",
    "split", "start", "end", "output_padding", "allowzero", "to", "layout", "k",
];

/// One dim of a graph input.
#[derive(Debug, Arbitrary)]
pub enum SpecDim {
    /// `dim_value`.
    Fixed(u8),
    /// A `dim_param` from a small vocabulary (so dims repeat across inputs).
    Named(u8),
    /// Unset.
    Open,
}

/// One node: operator, inputs (indices into the values so far), attributes.
#[derive(Debug, Arbitrary)]
pub struct SpecNode {
    op: u8,
    inputs: Vec<u8>,
    outputs: u8,
    attributes: Vec<(u8, Vec<i8>)>,
}

/// A graph to infer: inputs (each a list of dims), int64 constants, nodes; the last value
/// (and any value picked by `outputs`) is a graph output.
#[derive(Debug, Arbitrary)]
pub struct GraphSpec {
    inputs: Vec<Vec<SpecDim>>,
    constants: Vec<Vec<i8>>,
    nodes: Vec<SpecNode>,
    outputs: Vec<u8>,
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn field_bytes(out: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    varint(out, u64::from(field) << 3 | 2);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

fn field_varint(out: &mut Vec<u8>, field: u32, v: u64) {
    varint(out, u64::from(field) << 3);
    varint(out, v);
}

/// A float tensor `ValueInfoProto`, `dims: None` for unknown rank.
fn value_info(name: &str, dims: Option<&[SpecDim]>) -> Vec<u8> {
    let mut tensor = Vec::new();
    field_varint(&mut tensor, 1, 1);
    if let Some(dims) = dims {
        let mut shape = Vec::new();
        for d in dims {
            let mut dim = Vec::new();
            match d {
                SpecDim::Fixed(n) => field_varint(&mut dim, 1, u64::from(*n)),
                SpecDim::Named(k) => field_bytes(&mut dim, 2, format!("d{}", k % 4).as_bytes()),
                SpecDim::Open => {}
            }
            field_bytes(&mut shape, 1, &dim);
        }
        field_bytes(&mut tensor, 2, &shape);
    }
    let mut ty = Vec::new();
    field_bytes(&mut ty, 1, &tensor);
    let mut v = Vec::new();
    field_bytes(&mut v, 1, name.as_bytes());
    field_bytes(&mut v, 2, &ty);
    v
}

impl GraphSpec {
    /// The model's bytes, and the symbols its inputs' dims are (what inferred expressions
    /// may read).
    pub fn encode(&self) -> (Vec<u8>, Vec<String>) {
        let mut graph = Vec::new();
        let mut values: Vec<String> = Vec::new();
        let mut symbols = Vec::new();
        let inputs = &self.inputs[..self.inputs.len().min(4)];
        for (i, dims) in inputs.iter().enumerate() {
            let dims = &dims[..dims.len().min(6)];
            let name = format!("in{i}");
            for (axis, d) in dims.iter().enumerate() {
                match d {
                    SpecDim::Named(k) => symbols.push(format!("d{}", k % 4)),
                    // `dim_value: 0` reads as an unnamed dynamic axis, as exporters mean it.
                    SpecDim::Open | SpecDim::Fixed(0) => symbols.push(format!("{name}[{axis}]")),
                    SpecDim::Fixed(_) => {}
                }
            }
            graph.extend({
                let mut f = Vec::new();
                field_bytes(&mut f, 11, &value_info(&name, Some(dims)));
                f
            });
            values.push(name);
        }
        for (i, c) in self.constants.iter().take(8).enumerate() {
            let name = format!("c{i}");
            let mut t = Vec::new();
            field_varint(&mut t, 1, c.len().min(8) as u64);
            field_varint(&mut t, 2, 7);
            field_bytes(&mut t, 8, name.as_bytes());
            let raw: Vec<u8> = c.iter().take(8).flat_map(|&v| i64::from(v).to_le_bytes()).collect();
            field_bytes(&mut t, 9, &raw);
            field_bytes(&mut graph, 5, &t);
            values.push(name);
        }
        for (k, n) in self.nodes.iter().take(64).enumerate() {
            let mut node = Vec::new();
            for &i in n.inputs.iter().take(6) {
                let name = if values.is_empty() || i == 255 {
                    String::new()
                } else {
                    values[usize::from(i) % values.len()].clone()
                };
                field_bytes(&mut node, 1, name.as_bytes());
            }
            for o in 0..(n.outputs % 3 + 1) {
                let name = format!("v{k}_{o}");
                field_bytes(&mut node, 2, name.as_bytes());
                values.push(name);
            }
            field_bytes(&mut node, 4, OPS[usize::from(n.op) % OPS.len()].as_bytes());
            for (a, ints) in n.attributes.iter().take(6) {
                let mut attr = Vec::new();
                field_bytes(&mut attr, 1, ATTRIBUTES[usize::from(*a) % ATTRIBUTES.len()].as_bytes());
                if ints.len() == 1 {
                    field_varint(&mut attr, 3, i64::from(ints[0]) as u64);
                    field_varint(&mut attr, 20, 2);
                } else {
                    for &v in ints.iter().take(8) {
                        field_varint(&mut attr, 8, i64::from(v) as u64);
                    }
                    field_varint(&mut attr, 20, 7);
                }
                field_bytes(&mut node, 5, &attr);
            }
            field_bytes(&mut graph, 1, &node);
        }
        let mut outputs: Vec<&String> = self
            .outputs
            .iter()
            .take(4)
            .filter(|_| !values.is_empty())
            .map(|&o| &values[usize::from(o) % values.len()])
            .collect();
        if let Some(last) = values.last() {
            outputs.push(last);
        }
        outputs.sort();
        outputs.dedup();
        for o in outputs {
            field_bytes(&mut graph, 12, &value_info(o, None));
        }
        let mut model = Vec::new();
        field_varint(&mut model, 1, 8);
        field_bytes(&mut model, 7, &graph);
        let mut opset = Vec::new();
        field_varint(&mut opset, 2, 17);
        field_bytes(&mut model, 8, &opset);
        (model, symbols)
    }
}
