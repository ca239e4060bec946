//! The batch dim: the dims field items batch along (`Model::batcher`), for
//! `expand/serving.rs`.

use super::*;

/// Dim names taken as the batch dim when the options name none.
pub(super) const BATCH_NAMES: &[&str] = &["batch", "batch_size"];

/// The dims field items batch along: the one `declared` names, else one named like a
/// batch; it must be axis 0 of every input and of every output ONNX Runtime does not
/// allocate, and appear on no other axis (so a row is one item).
pub(super) fn batch_field(plan: &Plan, declared: Option<&str>) -> Result<Option<usize>, PlanError> {
    let named = |i: usize| match &plan.dims[i].source {
        DimSource::Named(n) => Some(n.as_str()),
        _ => None,
    };
    let candidate = match declared {
        Some(name) => (0..plan.dims.len())
            .find(|&i| named(i) == Some(name) || plan.dims[i].field == name)
            .ok_or_else(|| PlanError::BatchDim {
                dim: name.to_owned(),
                reason: format!(
                    "the model has no dim of that name (dims fields: {})",
                    plan.dims
                        .iter()
                        .map(|d| format!("`{}`", d.field))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            })?,
        None => match (0..plan.dims.len()).find(|&i| {
            named(i).is_some_and(|n| BATCH_NAMES.contains(&n.to_ascii_lowercase().as_str()))
        }) {
            Some(i) => i,
            None => return Ok(None),
        },
    };
    let misfit = plan
        .inputs
        .iter()
        .map(|v| ("input", v))
        .chain(plan.outputs.iter().map(|v| ("output", v)))
        .find_map(|(role, v)| {
            if !v.form.is_tensor() {
                return Some(format!(
                    "{role} `{}` is {}: batching gathers rows of numeric tensors only",
                    v.name, v.onnx_type
                ));
            }
            let axes = match &v.storage {
                Storage::Owned(axes) => axes,
                Storage::Allocated if role == "output" => return None,
                _ => return Some(format!("{role} `{}` has no fixed rank", v.name)),
            };
            let first = axes.first() == Some(&AxisSize::Field(candidate));
            let elsewhere = axes
                .iter()
                .skip(1)
                .any(|a| a == &AxisSize::Field(candidate));
            (!first || elsewhere).then(|| {
                format!(
                    "{role} `{}` is {}: the batch dim must be its axis 0 and no other",
                    v.name,
                    format_dims(v.dims.as_deref())
                )
            })
        });
    // A batcher reads an item's dims from its shapes, so every dim must follow from them.
    let misfit = misfit.or_else(|| {
        plan.dims_unsized_by_inputs().next().map(|d| {
            format!(
                "a batcher reads every dim from its items' shapes, but {} sizes no input axis",
                dim_words(d)
            )
        })
    });
    match (misfit, declared) {
        (None, _) => Ok(Some(candidate)),
        (Some(_), None) => Ok(None),
        (Some(reason), Some(name)) => Err(PlanError::BatchDim {
            dim: name.to_owned(),
            reason,
        }),
    }
}
