//! What each value binds as ([`Form`], element type, dims), or why it cannot.

use super::*;

/// Key types ONNX Runtime's C API makes and reads maps of.
pub(super) fn runtime_map_key(t: ElementType) -> bool {
    matches!(t, ElementType::I64 | ElementType::String)
}

/// Value types ONNX Runtime's C API makes and reads maps of.
pub(super) fn runtime_map_value(t: ElementType) -> bool {
    matches!(
        t,
        ElementType::I64 | ElementType::F32 | ElementType::F64 | ElementType::String
    )
}

/// How a value binds: its form, the element type and dims of the tensors it holds; or why
/// it cannot.
pub(super) fn classify<'a>(
    v: &'a ValueInfo,
    role: &'static str,
) -> Result<(Form, ElementType, Option<&'a [Dim]>), PlanError> {
    let refuse = |reason: &str| PlanError::Unsupported {
        role,
        name: v.name.clone(),
        kind: describe_kind(&v.kind),
        reason: reason.to_owned(),
    };
    if let Some(part) = v.kind.unsupported_part() {
        let whole = v.kind.to_string();
        let why = why_unsupported(part);
        let reason = if whole == part {
            why.to_owned()
        } else {
            format!("it holds {part}, and {why}")
        };
        return Err(PlanError::Unsupported {
            role,
            name: v.name.clone(),
            kind: whole,
            reason,
        });
    }
    let map_of = |key: ElementType, value: &ValueType| -> Result<ElementType, PlanError> {
        match value {
            ValueType::Tensor { elem, .. } if runtime_map_key(key) && runtime_map_value(*elem) => {
                Ok(*elem)
            }
            ValueType::Tensor { .. } => Err(refuse(
                "ONNX Runtime's C API makes and reads maps with int64 or string keys and \
                 int64, float32, float64 or string values only",
            )),
            _ => Err(refuse(
                "ort-bind binds maps whose values are single numbers or strings only",
            )),
        }
    };
    match &v.kind {
        ValueType::Tensor { elem, dims } => {
            let form = if *elem == ElementType::String {
                Form::Strings
            } else {
                Form::Tensor
            };
            Ok((form, *elem, dims.as_deref()))
        }
        ValueType::Sequence(inner) => match &**inner {
            ValueType::Tensor { elem, dims } => Ok((Form::Sequence, *elem, dims.as_deref())),
            ValueType::Map { key, value } => {
                let elem = map_of(*key, value)?;
                Ok((Form::MapSequence { key: *key }, elem, None))
            }
            _ => Err(refuse(
                "ort-bind binds sequences of tensors and sequences of maps only",
            )),
        },
        ValueType::Map { key, value } => {
            let elem = map_of(*key, value)?;
            Ok((Form::Map { key: *key }, elem, None))
        }
        ValueType::Optional(inner) => match &**inner {
            ValueType::Tensor { elem, dims } => Ok((Form::OptionalTensor, *elem, dims.as_deref())),
            ValueType::Sequence(t) => match &**t {
                ValueType::Tensor { elem, dims } => {
                    Ok((Form::OptionalSequence, *elem, dims.as_deref()))
                }
                _ => Err(refuse(
                    "ort-bind binds optional tensors and optional sequences of tensors only",
                )),
            },
            _ => Err(refuse(
                "ort-bind binds optional tensors and optional sequences of tensors only",
            )),
        },
        ValueType::Unsupported(what) => Err(refuse(&format!("ort-bind cannot represent {what}"))),
    }
}

/// `a string tensor [n]`, `a sequence seq(float32)`, ...: what a value is, in words.
pub(super) fn describe_kind(kind: &ValueType) -> String {
    match kind {
        ValueType::Tensor { elem, dims } => {
            let elem = elem.to_string();
            let a = crate::ident::a_or_an(&elem);
            format!("{a} {elem} tensor {}", format_dims(dims.as_deref()))
        }
        other => kind_word(other),
    }
}

/// `a sequence seq(float32)`, `an optional optional(float32)`, ...: what a non-tensor
/// kind is.
pub(super) fn kind_word(kind: &ValueType) -> String {
    let word = match kind {
        ValueType::Sequence(_) => "a sequence",
        ValueType::Map { .. } => "a map",
        ValueType::Optional(_) => "an optional",
        _ => "a value",
    };
    format!("{word} {kind}")
}

/// Why a leaf of a type cannot be represented, from its description.
pub(super) fn why_unsupported(part: &str) -> &'static str {
    if part.starts_with("map(") {
        "ONNX allows map keys of integer types and string only"
    } else if part == crate::onnx::NO_TYPE {
        "the model leaves that element type unset"
    } else if part.starts_with("sparse_tensor(") || part.starts_with("opaque(") {
        "ort-bind does not bind sparse or opaque types"
    } else {
        "ort-bind does not bind that element type"
    }
}

/// How value `v` binds: its form and the element type and dims of the tensors it holds
/// (a map's value type, no dims); `None` when it cannot be bound.
pub fn form_of(v: &ValueInfo) -> Option<(Form, ElementType, Option<&[Dim]>)> {
    classify(v, "value").ok()
}

/// Why value `v` (on side `role`) cannot be bound, if it cannot.
pub fn value_refusal(v: &ValueInfo, role: Role) -> Option<PlanError> {
    classify(v, role.word()).err()
}

/// Every reason `sig` cannot be bound at all, in model order (a value that is not a
/// bindable tensor, no outputs); empty when it can.
pub fn refusals(sig: &ModelSignature) -> Vec<PlanError> {
    let mut out = Vec::new();
    for (role, values) in [("input", &sig.inputs), ("output", &sig.outputs)] {
        for v in values {
            if let Err(e) = classify(v, role) {
                out.push(e);
            }
        }
    }
    if sig.outputs.is_empty() {
        out.push(PlanError::NoOutputs);
    }
    out
}
