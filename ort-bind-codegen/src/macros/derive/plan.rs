//! Step 4 of the derive: the struct planned through [`plan_struct`], the planner
//! `build.rs` and `bindings!` use, from the model plus what the fields say: the values
//! they bind, the sizes their types fix (`Fix<N>`), the dims their `#[onnx(dims = ..)]`
//! names, and the recurrent pairs `#[onnx(feed_back = ..)]` declares. Its refusals
//! become errors on the fields (or attributes) they are about.

use quote::ToTokens;

use super::Field;
use crate::check::syntax::{AxisSyntax, FieldType, Range, ShapeSyntax, SlotKind, ValueSlot};
use crate::check::{FieldBinding, Role};
use crate::macros::attr::{ContainerAttrs, Errors};
use crate::macros::spanned_error;
use crate::planner::{FieldUse, ModelOptions, PlanError, StructPlan, plan_struct};
use crate::sig::{Dim, ModelSignature};

/// The plan of a struct, and how its fields map onto it.
pub(super) struct Planned {
    /// The plan.
    pub plan: StructPlan,
    /// Per struct field: its index in `plan.values` (fields that bind nothing, or whose
    /// type cannot bind, have none).
    pub per_field: Vec<Option<usize>>,
    /// Recurrent pairs whose buffers can be swapped: `(output field, input field)`
    /// (struct field indices), in plan order.
    pub swaps: Vec<(usize, usize)>,
}

/// What a field binds, when its type can bind it at all.
pub(super) fn bindable(f: &Field<'_>) -> Option<FieldBinding> {
    let b = f.binding?;
    match &f.spec.ty {
        ty if ty.is_broken() => None,
        FieldType::Tensor(t) if b.role == Role::Input && t.kind == SlotKind::Allocated => None,
        // The wrong side's string type (already an error): binding it would only repeat it.
        FieldType::Value(v) if b.role == Role::Input && v.slot == ValueSlot::StringOutput => None,
        FieldType::Value(v) if b.role == Role::Output && v.slot == ValueSlot::StringTensor => None,
        _ => Some(b),
    }
}

/// Whether a bound field goes through the runtime's value API (`Binder::value_input` /
/// `value_output`, `ValueOutputSlot`) rather than `Slot`: a string tensor, sequence, map or
/// optional, by its syntax, or for a type the syntax cannot see through, by the model.
pub(super) fn value_path(f: &Field<'_>, sig: &ModelSignature) -> bool {
    match &f.spec.ty {
        FieldType::Tensor(_) | FieldType::NotATensor(_) => false,
        FieldType::Value(_) => true,
        FieldType::Opaque => f.binding.is_some_and(|b| {
            let v = match b.role {
                Role::Input => &sig.inputs[b.index],
                Role::Output => &sig.outputs[b.index],
            };
            crate::planner::form_of(v).is_some_and(|(form, _, _)| !form.is_tensor())
        }),
    }
}

/// One entry of `#[onnx(dims = "batch, 3, _")]`.
enum DimEntry {
    Name(String),
    Size(u64),
    Open,
}

/// Reads `dims = ".."` of a field bound to `dims` (the model's); errors sit on the
/// attribute. Names go to `options`; the sizes are returned as pins, one per axis.
fn dims_attr(
    lit: &syn::LitStr,
    value: &str,
    dims: Option<&[Dim]>,
    options: &mut ModelOptions,
    errors: &mut Errors,
) -> Option<Vec<Option<u64>>> {
    let text = lit.value();
    let entries: Vec<DimEntry> = text
        .split(',')
        .map(str::trim)
        .map(|e| match e {
            "_" | "?" => DimEntry::Open,
            e if !e.is_empty() && e.bytes().all(|b| b.is_ascii_digit()) => {
                e.parse().map_or(DimEntry::Open, DimEntry::Size)
            }
            e => DimEntry::Name(e.to_owned()),
        })
        .collect();
    let Some(dims) = dims else {
        errors.at(
            lit.span(),
            format!(
                "`dims`: the model leaves the rank of `{value}` open, so its axes cannot be \
                 named"
            ),
        );
        return None;
    };
    if entries.len() != dims.len() {
        errors.at(
            lit.span(),
            format!(
                "`dims` lists {} {}, but model value `{value}` has rank {} ({})\n  help: one \
                 entry per axis, separated by commas: a dim name, a size, or `_` to leave it as \
                 the model has it",
                entries.len(),
                if entries.len() == 1 { "axis" } else { "axes" },
                dims.len(),
                crate::sig::format_dims(Some(dims))
            ),
        );
        return None;
    }
    let mut ok = true;
    let mut pins = Vec::with_capacity(dims.len());
    for (axis, (e, d)) in entries.iter().zip(dims).enumerate() {
        match (e, d) {
            (DimEntry::Name(n), _) if n.is_empty() => {
                errors.at(
                    lit.span(),
                    format!("`dims`: axis {axis} is empty; write a dim name, a size, or `_`"),
                );
                ok = false;
            }
            (DimEntry::Name(n), Dim::Fixed(m)) => {
                errors.at(
                    lit.span(),
                    format!(
                        "`dims`: axis {axis} of `{value}` is fixed to {m} by the model; it \
                         cannot be the dim `{n}`\n  help: write `{m}` or `_` for this axis"
                    ),
                );
                ok = false;
            }
            (DimEntry::Size(n), Dim::Fixed(m)) if n != m => {
                errors.at(
                    lit.span(),
                    format!(
                        "`dims`: axis {axis} of `{value}` is fixed to {m} by the model; `{n}` \
                         contradicts it\n  help: write `{m}` or `_` for this axis"
                    ),
                );
                ok = false;
            }
            (DimEntry::Name(n), _) => {
                *options = std::mem::take(options).dim(value, axis, n);
                pins.push(None);
                continue;
            }
            (DimEntry::Size(n), _) => {
                pins.push(Some(*n));
                continue;
            }
            (DimEntry::Open, _) => {}
        }
        pins.push(None);
    }
    ok.then_some(pins)
}

/// The sizes a field's type fixes, axis by axis (`None` without a tuple shape).
fn type_pins(f: &Field<'_>) -> Option<Vec<Option<u64>>> {
    let shape = match &f.spec.ty {
        FieldType::Tensor(t) => Some(&t.shape),
        FieldType::Value(v) if v.slot == ValueSlot::StringTensor => v.shape.as_ref(),
        _ => None,
    };
    match shape {
        Some(ShapeSyntax::Tuple(axes, _)) => Some(
            axes.iter()
                .map(|a| match a {
                    AxisSyntax::Fixed(n, _) => Some(*n),
                    _ => None,
                })
                .collect(),
        ),
        _ => None,
    }
}

/// Where axis `axis` of a field's type is written (the whole type when not a tuple).
fn axis_range(f: &Field<'_>, axis: usize) -> Range {
    match &f.spec.ty {
        FieldType::Tensor(t) => match &t.shape {
            ShapeSyntax::Tuple(axes, _) => {
                axes.get(axis).map_or(f.spec.ty_range, AxisSyntax::range)
            }
            other => other.range(),
        },
        _ => f.spec.ty_range,
    }
}

/// Finds the field a `feed_back` side names: by ONNX name or by field name.
fn find_side(fields: &[Field<'_>], sig: &ModelSignature, role: Role, name: &str) -> Option<usize> {
    fields.iter().position(|f| {
        bindable(f).is_some_and(|b| {
            let values = match b.role {
                Role::Input => &sig.inputs,
                Role::Output => &sig.outputs,
            };
            b.role == role && (values[b.index].name == name || f.spec.ident == name)
        })
    })
}

/// Two field types that are the same type as written (tokens compared).
fn same_type(a: &syn::Type, b: &syn::Type) -> bool {
    a.to_token_stream().to_string() == b.to_token_stream().to_string()
}

/// Plans the struct; `None` (with the errors pushed) when the plan is refused.
pub(super) fn plan(
    sig: &ModelSignature,
    container: &ContainerAttrs,
    fields: &[Field<'_>],
    errors: &mut Errors,
) -> Option<Planned> {
    let mut options = ModelOptions::new();
    if container.no_auto_feed_back {
        options = options.no_auto_feed_back();
    }
    // Declared pairs: `output -> input`, each side an ONNX name or a field name. A
    // mistake in an attribute is reported and that attribute left out; the rest is still
    // planned, so every mistake shows in one build.
    let mut declared: Vec<(&syn::LitStr, usize, usize)> = Vec::new();
    for lit in &container.feed_back {
        let text = lit.value();
        let Some((out, inp)) = text.split_once("->").map(|(a, b)| (a.trim(), b.trim())) else {
            errors.at(
                lit.span(),
                format!(
                    "`feed_back = \"{text}\"`: expected `\"output -> input\"` (ONNX or field \
                     names), e.g. `feed_back = \"stateN -> state\"`"
                ),
            );
            continue;
        };
        let side = |role: Role, name: &str, errors: &mut Errors| {
            let found = find_side(fields, sig, role, name);
            if found.is_none() {
                let other = match role {
                    Role::Input => Role::Output,
                    Role::Output => Role::Input,
                };
                let hint = if find_side(fields, sig, other, name).is_some() {
                    format!(
                        " (`{name}` is bound as an {}: write `output -> input`)",
                        other.word()
                    )
                } else {
                    String::new()
                };
                errors.at(
                    lit.span(),
                    format!(
                        "`feed_back`: no field of this struct binds a model {} named `{name}`{hint}",
                        role.word()
                    ),
                );
            }
            found
        };
        let (o, i) = (
            side(Role::Output, out, errors),
            side(Role::Input, inp, errors),
        );
        let (Some(o), Some(i)) = (o, i) else {
            continue;
        };
        let onnx = |k: usize| {
            let b = fields[k].binding.expect("found fields are bound");
            match b.role {
                Role::Input => sig.inputs[b.index].name.clone(),
                Role::Output => sig.outputs[b.index].name.clone(),
            }
        };
        options = options.feed_back(&onnx(o), &onnx(i));
        declared.push((lit, o, i));
    }

    // The fields, with the sizes their types and `dims` attributes fix.
    let mut uses: Vec<FieldUse> = Vec::new();
    let mut per_field: Vec<Option<usize>> = Vec::with_capacity(fields.len());
    for f in fields {
        let Some(b) = bindable(f) else {
            per_field.push(None);
            continue;
        };
        let value = match b.role {
            Role::Input => &sig.inputs[b.index],
            Role::Output => &sig.outputs[b.index],
        };
        let model_dims = value.tensor().and_then(|(_, d)| d);
        let mut pins = type_pins(f);
        if let Some(lit) = &f.attrs.dims {
            match dims_attr(lit, &value.name, model_dims, &mut options, errors) {
                None => {}
                Some(named) => {
                    let merged: Vec<Option<u64>> = match &pins {
                        Some(p) if p.len() == named.len() => {
                            let mut merged = Vec::with_capacity(p.len());
                            for (axis, (t, a)) in p.iter().zip(&named).enumerate() {
                                match (t, a) {
                                    (Some(t), Some(a)) if t != a => {
                                        errors.at(
                                            lit.span(),
                                            format!(
                                                "`dims`: axis {axis} is `{a}` here but `Fix<{t}>` \
                                                 in the field's type"
                                            ),
                                        );
                                        merged.push(Some(*t));
                                    }
                                    _ => merged.push(t.or(*a)),
                                }
                            }
                            merged
                        }
                        _ => named,
                    };
                    pins = Some(merged);
                }
            }
        }
        per_field.push(Some(uses.len()));
        uses.push(FieldUse {
            field: f.spec.ident.clone(),
            role: b.role,
            index: b.index,
            allocated: matches!(&f.spec.ty, FieldType::Tensor(t) if t.kind == SlotKind::Allocated),
            pins,
        });
    }
    let field_of_use = |u: usize| per_field.iter().position(|p| *p == Some(u));

    let plan = match plan_struct(sig, &options, &uses) {
        Ok(p) => p,
        Err(problems) => {
            for p in problems {
                if let Some((at, axis)) = p.field_axis() {
                    let range = field_of_use(at)
                        .map_or(Range::of(&proc_macro2::TokenStream::new()), |k| {
                            axis_range(&fields[k], axis)
                        });
                    let help = if matches!(p, PlanError::PinsDisagree(_)) {
                        "\n  help: write the same size in both fields, or `Dyn` in one of them \
                         (it then takes the other's size)"
                    } else {
                        "\n  help: write that size, or `Dyn`"
                    };
                    errors.push(spanned_error(range, format!("{p}{help}")));
                    continue;
                }
                match &p {
                    PlanError::FeedBack {
                        output,
                        input,
                        reason,
                    } => {
                        let lit = declared.iter().find(|(_, o, i)| {
                            let name = |k: usize| {
                                let b = fields[k].binding.expect("declared fields are bound");
                                match b.role {
                                    Role::Input => &sig.inputs[b.index].name,
                                    Role::Output => &sig.outputs[b.index].name,
                                }
                            };
                            name(*o) == output && name(*i) == input
                        });
                        let message = format!(
                            "`feed_back`: output `{output}` cannot feed input `{input}`: {reason}"
                        );
                        match lit {
                            Some((lit, _, _)) => errors.at(lit.span(), message),
                            None => errors.at(proc_macro2::Span::call_site(), message),
                        }
                    }
                    other => errors.at(proc_macro2::Span::call_site(), other.to_string()),
                }
            }
            return None;
        }
    };

    // Pairs whose buffers swap: both fields of one `Tensor` type as written. A declared
    // pair must swap; a pair found by name that cannot is still unified (its output is
    // sized like its input) but gets no method.
    let mut swaps = Vec::new();
    let mut swap_ok = true;
    for fb in &plan.plan.feed_back {
        let value_field = |role: Role, pos: usize| {
            plan.values
                .iter()
                .position(|&(r, p)| r == role && p == pos)
                .and_then(field_of_use)
        };
        let (Some(o), Some(i)) = (
            value_field(Role::Output, fb.output),
            value_field(Role::Input, fb.input),
        ) else {
            continue;
        };
        let tensors = [o, i].iter().all(
            |&k| matches!(&fields[k].spec.ty, FieldType::Tensor(t) if t.kind == SlotKind::Tensor),
        );
        if tensors && same_type(fields[o].ty, fields[i].ty) {
            swaps.push((o, i));
        } else if let Some((lit, _, _)) = declared.iter().find(|(_, a, b)| *a == o && *b == i) {
            errors.at(
                lit.span(),
                format!(
                    "`feed_back`: fields `{}` and `{}` must have the same type, written as a \
                     `Tensor<..>`, to exchange buffers (found `{}` and `{}`)\n  help: write \
                     both as `{}`",
                    fields[o].spec.ident,
                    fields[i].spec.ident,
                    crate::check::render_type(fields[o].ty),
                    crate::check::render_type(fields[i].ty),
                    crate::check::render_type(fields[i].ty),
                ),
            );
            swap_ok = false;
        }
    }
    swap_ok.then_some(Planned {
        plan,
        per_field,
        swaps,
    })
}
