//! Numeric tensors: a field's `Tensor<..>` / `AllocatedOutput<..>` type against the
//! model's element type, rank, fixed dims and the required device.

use super::*;

/// Syntactic checks of a bound field's type; returns the trait checks still to emit.
pub(super) fn check_type(
    f: &FieldSpec,
    role: Role,
    value: &ValueInfo,
    device: Option<&syn::Type>,
    diags: &mut Vec<Diagnostic>,
) -> TraitChecks {
    let none = TraitChecks::NONE;
    let Some((form, elem, dims)) = crate::planner::form_of(value) else {
        // Unreachable after `plan::refusals`; nothing more to say about the type.
        return none;
    };
    if !form.is_tensor() || matches!(f.ty, FieldType::Value(_)) {
        return check_value(f, role, value, (form, elem, dims), diags);
    }
    let model = describe(elem, dims);
    let name = &value.name;
    let role_word = role.word();
    let t = match &f.ty {
        FieldType::Opaque => {
            return TraitChecks {
                element: true,
                shape: true,
                device: device.is_some(),
                value: false,
            };
        }
        FieldType::Value(_) => return none,
        FieldType::NotATensor(what) => {
            let mut d = Diagnostic::new(
                f.ty_range,
                format!(
                    "field `{}` is {what}, which cannot hold model {role_word} `{name}` ({model})",
                    f.ident
                ),
            )
            .help(format!(
                "write `{}`",
                suggested_type(SlotKind::Tensor, elem, dims)
            ));
            if what == "an `Option`" {
                d = d.help(
                    "only an overridable input (one the model gives a default) is bound by an \
                     `Option<Tensor<..>>` field; `ort-bind inspect` lists them",
                );
            }
            if what.starts_with("a view") {
                d = d.help(
                    "the struct owns the tensors; `Binding::inputs()` and `Binding::outputs()` \
                     hand out views of them",
                );
            }
            diags.push(d);
            return none;
        }
        // rustc reports the device on the struct's own field type.
        FieldType::Tensor(t) if t.device_is_not_a_device => return none,
        FieldType::Tensor(t) => t,
    };
    if role == Role::Input && t.kind == SlotKind::Allocated {
        diags.push(
            Diagnostic::new(
                t.kind_span,
                format!(
                    "model input `{name}` cannot be an `AllocatedOutput`: inputs are `Tensor`s \
                     you fill before each run"
                ),
            )
            .help(format!(
                "write `{}`",
                suggested_type(SlotKind::Tensor, elem, dims)
            )),
        );
        return none;
    }
    let mut checks = TraitChecks {
        element: true,
        shape: true,
        device: device.is_some(),
        value: false,
    };

    // What is wrong, then one corrected type to suggest for all of it.
    let wrong_elem = match &t.elem {
        ElemSyntax::Known(found, written, range) if *found != elem => {
            Some((*found, written.clone(), *range))
        }
        _ => None,
    };
    enum ShapeProblem {
        TooManyAxes(usize, Range),
        Rank(usize, Range),
        Axes(Vec<(usize, u64, u64, Range)>),
    }
    let shape_problem = match (dims, &t.shape) {
        (Some(ds), ShapeSyntax::Tuple(axes, range)) if ds.len() > MAX_TUPLE_RANK => {
            Some(ShapeProblem::TooManyAxes(axes.len(), *range))
        }
        (Some(ds), ShapeSyntax::Tuple(axes, range)) if axes.len() != ds.len() => {
            Some(ShapeProblem::Rank(axes.len(), *range))
        }
        (Some(ds), ShapeSyntax::Tuple(axes, _)) => {
            let bad: Vec<(usize, u64, u64, Range)> = axes
                .iter()
                .zip(ds)
                .enumerate()
                .filter_map(|(axis, (a, d))| match (a, d) {
                    (AxisSyntax::Fixed(found, range), Dim::Fixed(want)) if found != want => {
                        Some((axis, *found, *want, *range))
                    }
                    _ => None,
                })
                .collect();
            (!bad.is_empty()).then_some(ShapeProblem::Axes(bad))
        }
        _ => None,
    };
    // Rendering costs tens of microseconds: only for a field that has something to fix.
    let corrected = if wrong_elem.is_none() && shape_problem.is_none() {
        String::new()
    } else {
        let mut ty = f.written.clone();
        if let Some(args) = slot_args_mut(&mut ty) {
            if wrong_elem.is_some()
                && let Some(arg) = args.iter_mut().next()
                && let Ok(e) = syn::parse_str(elem.rust_name())
            {
                *arg = syn::GenericArgument::Type(e);
            }
            match &shape_problem {
                Some(ShapeProblem::Rank(..) | ShapeProblem::TooManyAxes(..)) => {
                    if let Some(arg) = args.iter_mut().nth(1)
                        && let Ok(shape) = syn::parse_str(&shape_type_text(dims))
                    {
                        *arg = syn::GenericArgument::Type(shape);
                    }
                }
                Some(ShapeProblem::Axes(bad)) => {
                    if let Some(syn::GenericArgument::Type(syn::Type::Tuple(tuple))) =
                        args.iter_mut().nth(1)
                    {
                        for (axis, _, want, _) in bad {
                            if let Some(slot) = tuple.elems.iter_mut().nth(*axis)
                                && let Ok(fix) = syn::parse_str(&format!("Fix<{want}>"))
                            {
                                *slot = fix;
                            }
                        }
                    }
                }
                None => {}
            }
        }
        render_type(&ty)
    };

    if let Some((found, written, range)) = wrong_elem {
        diags.push(
            Diagnostic::new(
                range,
                format!(
                    "model {role_word} `{name}` is {model}; this field holds `{written}` ({found}) \
                     elements"
                ),
            )
            .help(format!("write `{corrected}`")),
        );
        checks.element = false;
    }
    match shape_problem {
        Some(ShapeProblem::TooManyAxes(rank, range)) => {
            diags.push(
                Diagnostic::new(
                    range,
                    format!(
                        "model {role_word} `{name}` has rank {}, more than a tuple shape can hold \
                         ({MAX_TUPLE_RANK}); this shape has rank {rank}",
                        dims.map_or(0, <[Dim]>::len)
                    ),
                )
                .help(format!(
                    "write `{corrected}` and size the tensor at run time"
                )),
            );
            checks.shape = false;
        }
        Some(ShapeProblem::Rank(rank, range)) => {
            diags.push(
                Diagnostic::new(
                    range,
                    format!(
                        "model {role_word} `{name}` is {model}, of rank {}; this shape has rank \
                         {rank}",
                        dims.map_or(0, <[Dim]>::len)
                    ),
                )
                .help(format!(
                    "write `{corrected}`: one axis per model dimension, `Fix<N>` where the model \
                     fixes the size to N, `Dyn` (or a `Fix<N>` of your choice) where it is \
                     symbolic"
                )),
            );
            checks.shape = false;
        }
        Some(ShapeProblem::Axes(bad)) => {
            for (axis, found, want, range) in bad {
                diags.push(
                    Diagnostic::new(
                        range,
                        format!(
                            "axis {axis} of model {role_word} `{name}` is fixed to {want} by the \
                             model ({model}); `Fix<{found}>` contradicts it"
                        ),
                    )
                    .help(format!("write `Fix<{want}>` or `Dyn` for this axis")),
                );
            }
            checks.shape = false;
        }
        None => {}
    }

    if let Some(required) = device
        && let (Some(field_key), Some(required_key)) =
            (device_key(t.device.as_ref()), device_key(Some(required)))
        && field_key != required_key
    {
        let span = t.device.as_ref().map_or(f.ty_range, Range::of_type);
        diags.push(
            Diagnostic::new(
                span,
                format!(
                    "this binding requires device `{required_key}` (`#[onnx(device = ...)]`); \
                     field `{}` lives on `{field_key}`",
                    f.ident
                ),
            )
            .help(format!("write the field's device as `{required_key}`")),
        );
        checks.device = false;
    }
    checks
}

/// Devices ort-bind defines; only these are compared syntactically (an alias or a
/// generic parameter is left to the trait check).
pub(super) const KNOWN_DEVICES: &[&str] = &["Cpu", "Cuda", "CudaPinned"];

/// `Cpu`, `Cuda<0>`: a known device as written (its last path segment with arguments);
/// `None` written means the default, `Cpu`. `None` for anything else.
pub(super) fn device_key(written: Option<&syn::Type>) -> Option<String> {
    let Some(ty) = written else {
        return Some("Cpu".to_owned());
    };
    let (name, text) = syntax::last_segment_text(ty)?;
    KNOWN_DEVICES.contains(&name.as_str()).then_some(text)
}
