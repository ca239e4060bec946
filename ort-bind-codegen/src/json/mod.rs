//! The JSON form of a [`ModelSignature`]: one codec, used by every place that writes a
//! signature (or its values) as JSON or reads one back: the offline signature cache
//! ([`crate::cache`], through [`encode`] / [`decode`]), `ort-bind inspect --json`
//! ([`summary`], via [`crate::report::to_json`]), and the `dump_signature` example
//! ([`dims`]).
//!
//! A dim is written the same way everywhere ([`dims`]): an integer when fixed, a string
//! when named, `null` when unnamed; an element type by its numpy name.

mod value;

pub use value::{MAX_DEPTH, ParseError, Value, write_string};

use crate::element::ElementType;
use crate::shapes::{DimExpr, InferredShape, Op, Stop, StopReason};
use crate::sig::{Dim, ModelSignature, ValueInfo, ValueType};

/// A tensor's dims: `null` for unknown rank, otherwise a list whose entries are an
/// integer (fixed), a string (named) or `null` (unnamed dynamic).
pub fn dims(dims: Option<&[Dim]>) -> Value {
    match dims {
        None => Value::Null,
        Some(ds) => ds
            .iter()
            .map(|d| match d {
                Dim::Fixed(n) => Value::from(*n),
                Dim::Named(s) => Value::from(s),
                Dim::Dynamic => Value::Null,
            })
            .collect(),
    }
}

fn value_json(v: &ValueInfo) -> Value {
    match &v.kind {
        ValueType::Tensor { elem, dims } => Value::object([
            ("name", v.name.as_str().into()),
            ("dtype", elem.numpy_name().into()),
            ("shape", self::dims(dims.as_deref())),
            ("doc", v.doc_string.as_str().into()),
        ]),
        kind => Value::object([
            ("name", v.name.as_str().into()),
            ("type", kind_json(kind)),
            ("doc", v.doc_string.as_str().into()),
        ]),
    }
}

/// A value's kind, nested: `{"tensor": {"dtype", "shape"}}`, `{"sequence": kind}`,
/// `{"map": {"key": dtype, "value": kind}}`, `{"optional": kind}`, `{"unsupported": text}`.
fn kind_json(kind: &ValueType) -> Value {
    match kind {
        ValueType::Tensor { elem, dims } => Value::object([(
            "tensor",
            Value::object([
                ("dtype", elem.numpy_name().into()),
                ("shape", self::dims(dims.as_deref())),
            ]),
        )]),
        ValueType::Sequence(inner) => Value::object([("sequence", kind_json(inner))]),
        ValueType::Map { key, value } => Value::object([(
            "map",
            Value::object([
                ("key", key.numpy_name().into()),
                ("value", kind_json(value)),
            ]),
        )]),
        ValueType::Optional(inner) => Value::object([("optional", kind_json(inner))]),
        ValueType::Unsupported(what) => Value::object([("unsupported", what.into())]),
    }
}

/// The signature as JSON: what an offline signature cache stores (`cache::to_cache_json`
/// lays it out one value per line and hashes it). Producer, graph name, doc string,
/// opsets, and every input and output with its doc string: a tensor as
/// `{"name", "dtype", "shape", "doc"}` (the dtype's numpy name, the shape as [`dims`]), any
/// other kind as `{"name", "type", "doc"}` with the type nested: `{"tensor": {"dtype",
/// "shape"}}`, `{"sequence": type}`, `{"map": {"key": dtype, "value": type}}`,
/// `{"optional": type}`, `{"unsupported": text}`. `in_place` pairs only where the graph has
/// some. `metadata_props` are not written. [`decode`] reads it back.
pub fn encode(sig: &ModelSignature) -> Value {
    let mut json = Value::object([
        ("ir_version", sig.ir_version.into()),
        ("producer_name", sig.producer_name.as_str().into()),
        ("producer_version", sig.producer_version.as_str().into()),
        ("graph_name", sig.graph_name.as_str().into()),
        ("doc_string", sig.doc_string.as_str().into()),
        (
            "opsets",
            sig.opsets
                .iter()
                .map(|(d, v)| Value::from(vec![d.into(), (*v).into()]))
                .collect(),
        ),
        ("inputs", sig.inputs.iter().map(value_json).collect()),
        ("outputs", sig.outputs.iter().map(value_json).collect()),
    ]);
    // Only where the model has some, so caches of other models (and their hashes) are what
    // they were before overridable inputs were read.
    if !sig.initialized_inputs.is_empty() {
        json.insert(
            "initialized_inputs",
            sig.initialized_inputs.iter().map(value_json).collect(),
        );
    }
    // Only where the graph has in-place pairs, so caches of other models (and their
    // hashes) are what they were before decoders were recognised.
    if !sig.in_place.is_empty() {
        let pairs = sig
            .in_place
            .iter()
            .map(|(i, o)| Value::from(vec![i.into(), o.into()]))
            .collect();
        json.insert("in_place", pairs);
    }
    if sig
        .inferred
        .iter()
        .any(|s| s.dims.is_some() || s.stop.is_some())
    {
        json.insert("inferred", sig.inferred.iter().map(inferred_json).collect());
    }
    json
}

/// One output's inferred shape: `{"dims": [expr or null, ..] or null, "stop": {"node",
/// "op", "reason"}}` (`stop` only when inference stopped), each expression as its postfix
/// program: integers, `"s:<dim>"` for a named dim, and `"+"`, `"*"`, `"/"` (floor),
/// `"min"`, `"max"`.
fn inferred_json(s: &InferredShape) -> Value {
    let expr = |e: &DimExpr| -> Value {
        let symbols = e.symbols();
        let names: Vec<&str> = symbols.iter().map(|s| &**s).collect();
        let program = e.program(&names).unwrap_or_default();
        program
            .iter()
            .map(|op| match *op {
                Op::Const(c) => Value::from(c),
                Op::Dim(i) => Value::from(format!("s:{}", names[i])),
                Op::Add => "+".into(),
                Op::Mul => "*".into(),
                Op::FloorDiv => "/".into(),
                Op::Min => "min".into(),
                Op::Max => "max".into(),
            })
            .collect()
    };
    let dims = match &s.dims {
        None => Value::Null,
        Some(d) => d
            .iter()
            .map(|a| a.as_ref().map_or(Value::Null, expr))
            .collect(),
    };
    let mut json = Value::object([("dims", dims)]);
    if let Some(stop) = &s.stop {
        let reason = match &stop.reason {
            StopReason::DataDependent => "data-dependent".to_owned(),
            StopReason::NotCovered => "not-covered".to_owned(),
            StopReason::Other(why) => format!("other: {why}"),
        };
        json.insert(
            "stop",
            Value::object([
                ("node", stop.node.as_str().into()),
                ("op", stop.op.as_str().into()),
                ("reason", reason.into()),
            ]),
        );
    }
    json
}

/// The inverse of [`inferred_json`].
fn inferred_from_json(v: &Value) -> Result<InferredShape, String> {
    let expr = |e: &Value| -> Result<DimExpr, String> {
        let wrong = || bad(format!("bad inferred expression {e}"));
        let mut stack: Vec<DimExpr> = Vec::new();
        for step in e.as_array().ok_or_else(wrong)? {
            let value = match step {
                Value::String(s) if s.starts_with("s:") => DimExpr::sym(&s[2..]),
                Value::String(op) => {
                    let b = stack.pop().ok_or_else(wrong)?;
                    let a = stack.pop().ok_or_else(wrong)?;
                    match op.as_str() {
                        "+" => a.add(&b),
                        "*" => a.mul(&b),
                        "/" => a.floor_div(&b),
                        "min" => a.min_with(&b),
                        "max" => a.max_with(&b),
                        _ => None,
                    }
                    .ok_or_else(wrong)?
                }
                n => DimExpr::int(n.as_i64().ok_or_else(wrong)?),
            };
            stack.push(value);
        }
        match stack.as_slice() {
            [one] => Ok(one.clone()),
            _ => Err(wrong()),
        }
    };
    let dims = match v.get("dims") {
        None | Some(Value::Null) => None,
        Some(d) => Some(
            d.as_array()
                .ok_or_else(|| bad("bad inferred dims"))?
                .iter()
                .map(|a| match a {
                    Value::Null => Ok(None),
                    e => expr(e).map(Some),
                })
                .collect::<Result<Vec<_>, _>>()?,
        ),
    };
    let stop = match v.get("stop") {
        None => None,
        Some(s) => {
            let reason = str_field(s, "reason")?;
            Some(Stop {
                node: str_field(s, "node")?.to_owned(),
                op: str_field(s, "op")?.to_owned(),
                reason: match reason {
                    "data-dependent" => StopReason::DataDependent,
                    "not-covered" => StopReason::NotCovered,
                    other => {
                        StopReason::Other(other.strip_prefix("other: ").unwrap_or(other).to_owned())
                    }
                },
            })
        }
    };
    Ok(InferredShape { dims, stop })
}

/// `{"inputs": [{"name", "dtype", "shape"}], "outputs": [...]}`: dtype as the numpy
/// name, the shape as [`dims`]. A sequence, map or optional has its whole type as `dtype`
/// (`seq(map(string, float32))`) and a `null` shape. The form `ort-bind inspect --json`
/// prints; doc strings, producer and opsets are left out (see [`encode`] for all). A model
/// with overridable inputs (inputs with a default, IR version 4 and later) also has
/// `"overridable"`, listed the same way.
pub fn summary(sig: &ModelSignature) -> Value {
    let value = |v: &ValueInfo| match &v.kind {
        ValueType::Tensor { elem, dims: d } => Value::object([
            ("name", v.name.as_str().into()),
            ("dtype", elem.numpy_name().into()),
            ("shape", dims(d.as_deref())),
        ]),
        kind => Value::object([
            ("name", v.name.as_str().into()),
            ("dtype", kind.to_string().into()),
            ("shape", Value::Null),
        ]),
    };
    let mut json = Value::object([
        ("inputs", sig.inputs.iter().map(value).collect()),
        ("outputs", sig.outputs.iter().map(value).collect()),
    ]);
    if sig.ir_version >= 4 && !sig.initialized_inputs.is_empty() {
        json.insert(
            "overridable",
            sig.initialized_inputs.iter().map(value).collect(),
        );
    }
    json
}

fn bad(detail: impl Into<String>) -> String {
    detail.into()
}

pub(crate) fn str_field<'v>(v: &'v Value, key: &str) -> Result<&'v str, String> {
    v.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| bad(format!("`{key}` is missing or not a string")))
}

fn value_from_json(v: &Value) -> Result<ValueInfo, String> {
    let name = str_field(v, "name")?.to_owned();
    let doc_string = str_field(v, "doc")?.to_owned();
    if let Some(kind) = v.get("unsupported") {
        let kind = kind
            .as_str()
            .ok_or_else(|| bad(format!("value `{name}`: `unsupported` is not a string")))?;
        return Ok(ValueInfo {
            name,
            kind: ValueType::Unsupported(kind.to_owned()),
            doc_string,
        });
    }
    if let Some(kind) = v.get("type") {
        let kind = kind_from_json(kind, &name, 1)?;
        return Ok(ValueInfo {
            name,
            kind,
            doc_string,
        });
    }
    let (elem, dims) = tensor_from_json(v, &name)?;
    Ok(ValueInfo {
        name,
        kind: ValueType::Tensor { elem, dims },
        doc_string,
    })
}

fn dtype_from_json(dtype: &str, name: &str) -> Result<ElementType, String> {
    ElementType::all()
        .find(|t| t.numpy_name() == dtype)
        .ok_or_else(|| bad(format!("value `{name}`: unknown dtype `{dtype}`")))
}

/// `{"dtype", "shape"}` of a tensor.
fn tensor_from_json(v: &Value, name: &str) -> Result<(ElementType, Option<Vec<Dim>>), String> {
    let elem = dtype_from_json(str_field(v, "dtype")?, name)?;
    let dims = match v.get("shape") {
        None => return Err(bad(format!("value `{name}`: `shape` is missing"))),
        Some(Value::Null) => None,
        Some(Value::Array(ds)) => Some(
            ds.iter()
                .map(|d| match d {
                    Value::Null => Ok(Dim::Dynamic),
                    Value::String(s) => Ok(Dim::Named(s.clone())),
                    Value::Int(n) => u64::try_from(*n)
                        .ok()
                        .filter(|&n| n >= 1)
                        .map(Dim::Fixed)
                        .ok_or_else(|| bad(format!("value `{name}`: bad dim {n}"))),
                    other => Err(bad(format!("value `{name}`: bad dim {other}"))),
                })
                .collect::<Result<Vec<_>, _>>()?,
        ),
        Some(other) => return Err(bad(format!("value `{name}`: bad shape {other}"))),
    };
    Ok((elem, dims))
}

/// The inverse of [`kind_json`], with the decoder's depth limit.
fn kind_from_json(v: &Value, name: &str, depth: usize) -> Result<ValueType, String> {
    if depth > crate::onnx::MAX_TYPE_DEPTH {
        return Err(bad(format!("value `{name}`: type nested too deeply")));
    }
    let entry = match v.as_object() {
        Some([(k, v)]) => Some((k.as_str(), v)),
        _ => None,
    }
    .ok_or_else(|| bad(format!("value `{name}`: bad type {v}")))?;
    Ok(match entry {
        ("tensor", t) => {
            let (elem, dims) = tensor_from_json(t, name)?;
            ValueType::Tensor { elem, dims }
        }
        ("sequence", inner) => {
            ValueType::Sequence(Box::new(kind_from_json(inner, name, depth + 1)?))
        }
        ("optional", inner) => {
            ValueType::Optional(Box::new(kind_from_json(inner, name, depth + 1)?))
        }
        ("map", m) => {
            let key = dtype_from_json(str_field(m, "key")?, name)?;
            if !key.is_map_key() {
                return Err(bad(format!("value `{name}`: map key type `{key}`")));
            }
            let value = m
                .get("value")
                .ok_or_else(|| bad(format!("value `{name}`: map `value` is missing")))?;
            ValueType::Map {
                key,
                value: Box::new(kind_from_json(value, name, depth + 1)?),
            }
        }
        ("unsupported", Value::String(what)) => ValueType::Unsupported(what.clone()),
        _ => return Err(bad(format!("value `{name}`: bad type {v}"))),
    })
}

/// Reads what [`encode`] wrote (and what older caches hold: no `in_place` means no pair; a
/// value may carry its kind as `unsupported` text). `Err` says what is wrong. Metadata is
/// not stored, so it reads empty.
pub fn decode(s: &Value) -> Result<ModelSignature, String> {
    let list = |key: &str| -> Result<Vec<ValueInfo>, String> {
        s.get(key)
            .and_then(Value::as_array)
            .ok_or_else(|| bad(format!("`{key}` is missing")))?
            .iter()
            .map(value_from_json)
            .collect()
    };
    let opsets = s
        .get("opsets")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("`opsets` is missing"))?
        .iter()
        .map(|o| match o.as_array() {
            Some([Value::String(d), v @ Value::Int(_)]) => v
                .as_i64()
                .map(|v| (d.clone(), v))
                .ok_or_else(|| bad("bad opset version")),
            _ => Err(bad("bad opset entry")),
        })
        .collect::<Result<Vec<_>, _>>()?;
    // Absent in caches written before decoders were recognised: no pair.
    let in_place = match s.get("in_place") {
        None => Vec::new(),
        Some(v) => v
            .as_array()
            .ok_or_else(|| bad("`in_place` is not a list"))?
            .iter()
            .map(|p| match p.as_array() {
                Some([Value::String(i), Value::String(o)]) => Ok((i.clone(), o.clone())),
                _ => Err(bad("bad in_place entry")),
            })
            .collect::<Result<Vec<_>, _>>()?,
    };
    Ok(ModelSignature {
        inputs: list("inputs")?,
        outputs: list("outputs")?,
        // Absent in caches written before overridable inputs were read, and for models
        // with none.
        initialized_inputs: match s.get("initialized_inputs") {
            None => Vec::new(),
            Some(_) => list("initialized_inputs")?,
        },
        opsets,
        ir_version: s
            .get("ir_version")
            .and_then(Value::as_i64)
            .ok_or_else(|| bad("`ir_version` is missing"))?,
        producer_name: str_field(s, "producer_name")?.to_owned(),
        producer_version: str_field(s, "producer_version")?.to_owned(),
        doc_string: str_field(s, "doc_string")?.to_owned(),
        graph_name: str_field(s, "graph_name")?.to_owned(),
        metadata: Vec::new(),
        in_place,
        inferred: match s.get("inferred") {
            None => Vec::new(),
            Some(v) => v
                .as_array()
                .ok_or_else(|| bad("`inferred` is not a list"))?
                .iter()
                .map(inferred_from_json)
                .collect::<Result<Vec<_>, _>>()?,
        },
    })
}
