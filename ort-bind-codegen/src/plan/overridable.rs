//! Overridable inputs: graph inputs whose initializer is a default the caller may replace
//! (LoRA adapter weights are exported this way). They are planned apart from the inputs:
//! nothing sizes them (no dims field), and a binding binds one only while it is set.

use super::*;

/// Plans the overridable inputs of `sig`, after the inputs (`inputs`, whose field names
/// the new fields must not take): from IR version 4 on, every graph input that has an
/// initializer and is a numeric tensor. Before IR 4, exporters list every weight as an
/// input and ONNX Runtime holds them all constant (a value given for one is refused as
/// an unknown input), so there are none; another kind of value keeps its default.
pub(super) fn plan_overridable(sig: &ModelSignature, inputs: &[PlannedValue]) -> Vec<PlannedValue> {
    let mut idents = IdentAllocator::new();
    for v in inputs {
        idents.reserve(&v.field);
    }
    let mut planned = Vec::new();
    for (_, v) in overridable_inputs(sig) {
        let Ok((Form::Tensor, elem, dims)) = classify(v, "input") else {
            continue;
        };
        planned.push(PlannedValue {
            name: v.name.clone(),
            field: idents.allocate(&v.name),
            form: Form::Tensor,
            elem,
            dims: dims.map(<[Dim]>::to_vec),
            onnx_type: v.kind.to_string(),
            doc: v.doc_string.clone(),
            storage: Storage::Value,
            declared_rank: dims.map(<[Dim]>::len),
            inference: None,
        });
    }
    planned
}

/// The model's overridable inputs, each with its index in `sig.initialized_inputs`: from
/// IR version 4 on, the graph inputs that have an initializer and are numeric tensors
/// (what the plan makes typed overrides of, and what a derive's `Option<Tensor<..>>` field may
/// bind).
pub fn overridable_inputs(sig: &ModelSignature) -> impl Iterator<Item = (usize, &ValueInfo)> {
    let from = if sig.ir_version < 4 {
        sig.initialized_inputs.len()
    } else {
        0
    };
    sig.initialized_inputs
        .iter()
        .enumerate()
        .skip(from)
        .filter(|(_, v)| matches!(classify(v, "input"), Ok((Form::Tensor, _, _))))
}
