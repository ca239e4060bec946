//! Decoded protobuf messages -> [`ModelSignature`].

use std::collections::HashSet;

use super::MAX_TYPE_DEPTH;
use super::error::ModelError;
use super::proto::{self, tensor_shape_proto::dimension, type_proto};
use crate::element::{ElementType, onnx_code_name};
use crate::sig::{Dim, ModelSignature, ValueInfo, ValueType};

/// Converts a decoded model into its signature; `origin` names the file in errors.
pub(crate) fn convert(
    model: proto::ModelProto,
    origin: &str,
) -> Result<ModelSignature, ModelError> {
    let proto::ModelProto {
        ir_version,
        producer_name,
        producer_version,
        doc_string,
        graph,
        opset_import,
        metadata_props,
    } = model;
    let graph = graph.ok_or_else(|| ModelError::NoGraph {
        origin: origin.to_owned(),
    })?;

    // Initializers may be listed in `graph.input` (always before IR 4, optionally after, as
    // overridable defaults); they are weights, not inputs a caller must bind.
    let initializers: HashSet<&str> = graph
        .initializer
        .iter()
        .map(|t| t.name.as_str())
        .chain(
            graph
                .sparse_initializer
                .iter()
                .filter_map(|s| s.values.as_ref())
                .map(|t| t.name.as_str()),
        )
        .filter(|name| !name.is_empty())
        .collect();

    let (with_default, inputs): (Vec<_>, Vec<_>) = graph
        .input
        .iter()
        .enumerate()
        .partition(|(_, v)| initializers.contains(v.name.as_str()));
    let inputs = values(inputs.into_iter(), "input", origin)?;
    let initialized_inputs = values(with_default.into_iter(), "input", origin)?;
    let outputs = values(graph.output.iter().enumerate(), "output", origin)?;
    let in_place = in_place_pairs(&graph.node, &inputs, &outputs);
    let opset = opset_import
        .iter()
        .find(|o| o.domain.is_empty() || o.domain == "ai.onnx")
        .map_or(0, |o| o.version);
    let inferred = crate::shapes::infer::infer_graph(&graph, &inputs, &outputs, opset);

    Ok(ModelSignature {
        inputs,
        outputs,
        initialized_inputs,
        opsets: opset_import
            .into_iter()
            .map(|o| (o.domain, o.version))
            .collect(),
        ir_version,
        producer_name,
        producer_version,
        doc_string: lossy(doc_string),
        graph_name: graph.name,
        metadata: metadata_props
            .into_iter()
            .map(|e| (e.key, e.value))
            .collect(),
        in_place,
        inferred,
    })
}

/// Graph input -> graph output pairs that an operator writes in place when both are bound
/// to one buffer: ONNX Runtime's `GroupQueryAttention` (`com.microsoft`) reads its past
/// key and value (inputs 3 and 4) and writes its present key and value (outputs 1 and 2)
/// into the same memory when the pointers are equal; `ScatterND` from a graph input to a
/// graph output writes only its updates when they are.
fn in_place_pairs(
    nodes: &[proto::NodeProto],
    inputs: &[ValueInfo],
    outputs: &[ValueInfo],
) -> Vec<(String, String)> {
    let is_input = |n: &str| inputs.iter().any(|v| v.name == n);
    let is_output = |n: &str| outputs.iter().any(|v| v.name == n);
    let mut pairs = Vec::new();
    for node in nodes {
        // ScatterND (no reduction) copies its data to its output only when they are
        // different buffers, then writes the updates: bound to one, it writes only those
        // (a paged cache's new positions).
        if node.op_type == "ScatterND"
            && node.domain.is_empty()
            && !node
                .attribute
                .iter()
                .any(|a| a.name == "reduction" && a.s != b"none")
        {
            if let (Some(data), Some(out)) = (node.input.first(), node.output.first())
                && is_input(data)
                && is_output(out)
            {
                pairs.push((data.clone(), out.clone()));
            }
            continue;
        }
        if node.op_type != "GroupQueryAttention" || node.domain != "com.microsoft" {
            continue;
        }
        for (past, present) in [(3, 1), (4, 2)] {
            if let (Some(past), Some(present)) = (node.input.get(past), node.output.get(present))
                && is_input(past)
                && is_output(present)
            {
                pairs.push((past.clone(), present.clone()));
            }
        }
    }
    pairs
}

/// Converts graph inputs or outputs, checking names are present and unique.
fn values<'a>(
    list: impl Iterator<Item = (usize, &'a proto::ValueInfoProto)>,
    role: &'static str,
    origin: &str,
) -> Result<Vec<ValueInfo>, ModelError> {
    let mut seen: HashSet<&str> = HashSet::new();
    let mut out = Vec::new();
    for (index, value) in list {
        if value.name.is_empty() {
            return Err(ModelError::EmptyName {
                origin: origin.to_owned(),
                role,
                index,
            });
        }
        if !seen.insert(value.name.as_str()) {
            return Err(ModelError::DuplicateName {
                origin: origin.to_owned(),
                role,
                name: value.name.clone(),
            });
        }
        let missing = || ModelError::MissingType {
            origin: origin.to_owned(),
            role,
            name: value.name.clone(),
        };
        let ty = value.r#type.as_ref().ok_or_else(missing)?;
        let kind = value_kind(ty)
            .map_err(|()| ModelError::TypeTooDeep {
                origin: origin.to_owned(),
                role,
                name: value.name.clone(),
                limit: MAX_TYPE_DEPTH,
            })?
            .ok_or_else(missing)?;
        out.push(ValueInfo {
            name: value.name.clone(),
            kind,
            doc_string: lossy(value.doc_string.clone()),
        });
    }
    Ok(out)
}

/// The kind of a graph value, or `None` when its `TypeProto` has no type set.
/// `Err(())` when the type nests deeper than [`MAX_TYPE_DEPTH`].
fn value_kind(ty: &proto::TypeProto) -> Result<Option<ValueType>, ()> {
    if ty.value.is_none() {
        return Ok(None);
    }
    kind_at(ty, 1).map(Some)
}

/// The kind of `ty`, which sits at nesting level `depth` (1 for a graph value's own type).
fn kind_at(ty: &proto::TypeProto, depth: usize) -> Result<ValueType, ()> {
    if depth > MAX_TYPE_DEPTH {
        return Err(());
    }
    // The element sits one level deeper, also when its type is unset (described as
    // `<no type>`): a sequence at the last level with no element type is one too deep.
    let inner = |t: Option<&proto::TypeProto>| match t {
        _ if depth == MAX_TYPE_DEPTH => Err(()),
        Some(t) if t.value.is_some() => kind_at(t, depth + 1).map(Box::new),
        _ => Ok(Box::new(ValueType::Unsupported(NO_TYPE.to_owned()))),
    };
    Ok(match &ty.value {
        None => ValueType::Unsupported(NO_TYPE.to_owned()),
        Some(type_proto::Value::Tensor(t)) => match ElementType::from_onnx(t.elem_type) {
            Some(elem) => ValueType::Tensor {
                elem,
                dims: t.shape.as_ref().map(dims),
            },
            None => ValueType::Unsupported(format!("tensor({})", onnx_code_name(t.elem_type))),
        },
        Some(type_proto::Value::Sequence(s)) => ValueType::Sequence(inner(s.elem_type.as_deref())?),
        Some(type_proto::Value::Optional(o)) => ValueType::Optional(inner(o.elem_type.as_deref())?),
        Some(type_proto::Value::Map(m)) => {
            let value = inner(m.value_type.as_deref())?;
            match ElementType::from_onnx(m.key_type).filter(|k| k.is_map_key()) {
                Some(key) => ValueType::Map { key, value },
                // ONNX allows integer and string keys only; the map is described whole.
                None => {
                    ValueType::Unsupported(format!("map({}, {value})", onnx_code_name(m.key_type)))
                }
            }
        }
        Some(type_proto::Value::SparseTensor(t)) => {
            ValueType::Unsupported(format!("sparse_tensor({})", onnx_code_name(t.elem_type)))
        }
        Some(type_proto::Value::Opaque(o)) => {
            let mut what = String::from("opaque(");
            if !o.domain.is_empty() {
                what.push_str(&o.domain);
                what.push('.');
            }
            what.push_str(&o.name);
            what.push(')');
            ValueType::Unsupported(what)
        }
    })
}

/// How an unset nested type (a sequence, optional or map value without element type) is
/// described.
pub(crate) const NO_TYPE: &str = "<no type>";

/// Classifies each dimension of a declared shape.
fn dims(shape: &proto::TensorShapeProto) -> Vec<Dim> {
    shape.dim.iter().map(dim).collect()
}

/// Classifies one dimension.
///
/// - `dim_value >= 1` is fixed; `dim_value <= 0` is dynamic, because real exporters write
///   `0` and `-1` to mean "any size".
/// - a `dim_param` is a named dimension, unless it is a placeholder with no letter or digit
///   in it (`?`, `*`, blanks, empty), which is dynamic.
/// - neither set is dynamic.
pub(crate) fn dim(d: &proto::tensor_shape_proto::Dimension) -> Dim {
    match &d.value {
        Some(dimension::Value::DimValue(v)) => match u64::try_from(*v) {
            Ok(n) if n >= 1 => Dim::Fixed(n),
            _ => Dim::Dynamic,
        },
        Some(dimension::Value::DimParam(p)) if is_named_param(p) => Dim::Named(p.clone()),
        Some(dimension::Value::DimParam(_)) | None => Dim::Dynamic,
    }
}

/// Whether a `dim_param` is a real name rather than a placeholder such as `?`.
pub(crate) fn is_named_param(param: &str) -> bool {
    param.chars().any(char::is_alphanumeric)
}

/// Doc strings are decoded as bytes so that a non-UTF-8 one cannot make a model unreadable.
fn lossy(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}
