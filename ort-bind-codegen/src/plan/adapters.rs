//! LoRA adapter files named with [`ModelOptions::adapter`], checked against the model's
//! overridable inputs when the bindings are generated (the same rule the runtime applies
//! when an adapter is set: `ort_bind_adapter::match_parameters`).

use ort_bind_adapter::{ExpectedAxis, ExpectedParameter};

use super::*;

/// Checks the adapter file whose bytes are `bytes` against `plan`'s overridable inputs:
/// every parameter must name one and have its element type, rank and fixed sizes, and each
/// named dim (the LoRA rank) one size across parameters. `Err` says what does not fit.
pub fn check_adapter(plan: &Plan, bytes: &[u8]) -> Result<(), String> {
    let view = ort_bind_adapter::read(bytes).map_err(|e| e.to_string())?;
    let axes: Vec<Option<Vec<ExpectedAxis<'_>>>> = plan
        .overridable
        .iter()
        .map(|v| {
            v.dims.as_ref().map(|dims| {
                dims.iter()
                    .map(|d| match d {
                        Dim::Fixed(n) => ExpectedAxis::Fixed(*n),
                        Dim::Named(name) => ExpectedAxis::Named(name),
                        Dim::Dynamic => ExpectedAxis::Any,
                    })
                    .collect()
            })
        })
        .collect();
    let expected: Vec<ExpectedParameter<'_>> = plan
        .overridable
        .iter()
        .zip(&axes)
        .map(|(v, axes)| ExpectedParameter {
            name: &v.name,
            element: v.elem.onnx_code(),
            dims: axes.as_deref(),
        })
        .collect();
    let params: Vec<(&str, i32, &[i64])> = view
        .parameters
        .iter()
        .map(|p| (p.name, p.element, p.dims.as_slice()))
        .collect();
    ort_bind_adapter::match_parameters(&params, &expected)
        .map(drop)
        .map_err(|e| e.describe(crate::element::onnx_code_name))
}
