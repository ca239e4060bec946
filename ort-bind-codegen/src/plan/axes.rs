//! How each axis is sized in the bindings (`axes`): what `ort-bind inspect` shows
//! and the derive suggests in `#[onnx(dims = ..)]`.

use super::*;

/// How one axis of a value is sized in the bindings: what `ort-bind inspect` shows next
/// to it (`axes`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AxisBinding {
    /// Fixed by the model: no field.
    Fixed(u64),
    /// Sized by this field of `Dims`.
    Field(String),
    /// Computed from `Dims` fields: the expression shape inference derived from the graph.
    Expr(String),
    /// Decided by ONNX Runtime during each run (the output is allocated by it).
    Runtime,
}

/// One axis of one input or output, as the generated bindings see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AxisInfo {
    /// Input or output.
    pub role: Role,
    /// ONNX name of the value.
    pub value: String,
    /// Axis index.
    pub axis: usize,
    /// The axis as the model declares it.
    pub declared: Dim,
    /// How the bindings size it.
    pub binding: AxisBinding,
    /// The option that names (or renames) the dim, in the words `ModelOptions` and
    /// `bindings!` share (`dim("x", 0, "NAME")`, `rename_dim("N", "NAME")`); `None` for an
    /// axis the model fixes.
    pub rename: Option<String>,
    /// Why ONNX Runtime sizes it ([`AxisBinding::Runtime`]): where shape inference stopped,
    /// or which other axis of the output it could not settle. `None` otherwise.
    pub why: Option<String>,
}

/// Every axis of every input and output of `sig` under `options`, in model order: the
/// `Dims` field it becomes (or why it has none) and the option that renames it. Values
/// of unknown rank have no axes listed. Pure: for `ort-bind inspect`.
///
/// ```
/// use ort_bind_codegen::__private::plan::{AxisBinding, axes};
/// use ort_bind_codegen::{Dim, ModelOptions, ElementType, ModelSignature, ValueInfo, ValueType};
/// let t = |name: &str, dims| ValueInfo {
///     name: name.into(),
///     kind: ValueType::Tensor { elem: ElementType::F32, dims: Some(dims) },
///     doc_string: String::new(),
/// };
/// let sig = ModelSignature {
///     inputs: vec![t("x", vec![Dim::Named("p2o.DynamicDimension.0".into()), Dim::Fixed(3)])],
///     outputs: vec![t("y", vec![Dim::Named("p2o.DynamicDimension.1".into())])],
///     ..Default::default()
/// };
/// let a = axes(&sig, &ModelOptions::new()).unwrap();
/// assert_eq!(a[0].binding, AxisBinding::Field("x_dim0".into()));
/// assert_eq!(a[0].rename.as_deref(), Some(r#"rename_dim("p2o.DynamicDimension.0", "NAME")"#));
/// assert_eq!(a[1].binding, AxisBinding::Fixed(3));
/// assert_eq!(a[2].binding, AxisBinding::Runtime);
/// ```
pub fn axes(sig: &ModelSignature, options: &ModelOptions) -> Result<Vec<AxisInfo>, PlanError> {
    let plan = plan_with(sig, options)?;
    let mut out = Vec::new();
    let inferred_of = |name: &str| {
        sig.outputs
            .iter()
            .position(|o| o.name == name)
            .and_then(|i| sig.inferred.get(i))
    };
    for (role, values) in [(Role::Input, &plan.inputs), (Role::Output, &plan.outputs)] {
        for v in values {
            let Some(dims) = &v.dims else { continue };
            // The tensors inside sequences and optionals have no axes of the binding's.
            if !v.form.is_sized() {
                continue;
            }
            for (axis, d) in dims.iter().enumerate() {
                let binding = match &v.storage {
                    Storage::Owned(axes) => match axes.get(axis) {
                        Some(AxisSize::Fixed(n)) => AxisBinding::Fixed(*n),
                        Some(AxisSize::Field(i)) => AxisBinding::Field(plan.dims[*i].field.clone()),
                        Some(AxisSize::Expr(e)) => AxisBinding::Expr(e.to_string()),
                        None => AxisBinding::Runtime,
                    },
                    Storage::OwnedAnyRank(i) => AxisBinding::Field(plan.dims[*i].field.clone()),
                    Storage::Allocated | Storage::Value => match d {
                        Dim::Fixed(n) => AxisBinding::Fixed(*n),
                        _ => AxisBinding::Runtime,
                    },
                };
                let why = (role == Role::Output && binding == AxisBinding::Runtime)
                    .then(|| runtime_reason(inferred_of(&v.name), axis, v.inference.is_some()))
                    .flatten();
                let rename = match d {
                    Dim::Fixed(_) => None,
                    Dim::Named(n) => Some(format!("rename_dim({n:?}, \"NAME\")")),
                    Dim::Dynamic => Some(format!("dim({:?}, {axis}, \"NAME\")", v.name)),
                };
                out.push(AxisInfo {
                    role,
                    value: v.name.clone(),
                    axis,
                    declared: d.clone(),
                    binding,
                    rename,
                    why,
                });
            }
        }
    }
    Ok(out)
}

/// Why an axis of an output ONNX Runtime allocates has no size before the run.
/// `declared_wrong`: the model declares a shape the graph does not compute.
fn runtime_reason(
    inferred: Option<&crate::shapes::InferredShape>,
    axis: usize,
    declared_wrong: bool,
) -> Option<String> {
    let inferred = inferred?;
    let stop = inferred.stop.as_ref().map(ToString::to_string);
    match inferred.dims.as_ref().and_then(|d| d.get(axis)) {
        Some(Some(e)) => Some(match &inferred.stop {
            Some(stop) => format!("the graph computes `{e}`, but another axis is open ({stop})"),
            None if declared_wrong => format!(
                "the graph computes `{e}`, and ONNX Runtime refuses a pre-allocated output \
                 that breaks the model's declared size"
            ),
            None => format!("the graph computes `{e}` from dims no input gives"),
        }),
        _ => stop,
    }
}

/// The derive's way to name the axes of `value` (`axes` of one value): the
/// `#[onnx(dims = "..")]` attribute a field binding it would carry to get the same dims
/// fields as the generated module (fixed axes as their size, axes ONNX Runtime sizes as
/// `_`), as a template to edit: `dims = "x_dim0, 3, x_dim2, x_dim3"`. `None` when `axes`
/// lists no axis of that value.
pub fn dims_attribute(axes: &[AxisInfo], role: Role, value: &str) -> Option<String> {
    let entries: Vec<String> = axes
        .iter()
        .filter(|a| a.role == role && a.value == value)
        .map(|a| match &a.binding {
            AxisBinding::Fixed(n) => n.to_string(),
            AxisBinding::Field(f) => f.clone(),
            AxisBinding::Runtime | AxisBinding::Expr(_) => "_".to_owned(),
        })
        .collect();
    (!entries.is_empty()).then(|| format!("dims = \"{}\"", entries.join(", ")))
}
