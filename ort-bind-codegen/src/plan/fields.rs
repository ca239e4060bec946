//! The plan of a user's struct (`#[derive(OnnxBinding)]`): [`plan_with`]'s plan over
//! the values its fields bind, with the dims its field types fix taken out.

use super::*;

/// One field of a user's struct (`#[derive(OnnxBinding)]`), as the plan needs it: what
/// it binds and what its type fixes.
#[derive(Debug, Clone)]
pub struct FieldUse {
    /// Rust field name (without `r#`).
    pub field: String,
    /// Which side of the model it binds.
    pub role: Role,
    /// Index among the model's inputs or outputs.
    pub index: usize,
    /// Whether ONNX Runtime allocates it (an `AllocatedOutput`).
    pub allocated: bool,
    /// Per axis of the field's type, the size it fixes (`Fix<N>`), or `None` (`Dyn`,
    /// or not readable); `None` for the whole when the type shows no tuple shape.
    pub pins: Option<Vec<Option<u64>>>,
}

/// A plan for a user's struct: [`Plan`] over the values its fields bind, with the dims
/// its field types fix taken out of the dims struct.
#[derive(Debug, Clone)]
pub struct StructPlan {
    /// The plan: inputs in model order, then the bound outputs in model order.
    pub plan: Plan,
    /// Per field (same order as given): its value's position in `plan.inputs` or
    /// `plan.outputs`.
    pub values: Vec<(Role, usize)>,
    /// Per planned output, its index among the model's outputs.
    pub output_index: Vec<usize>,
}

/// How a dim reads in messages: ``dim `batch` ``, ``unnamed axis 1 of `state` ``.
pub(super) fn dim_words(d: &DimField) -> String {
    match &d.source {
        DimSource::Named(n) if d.note.is_some() => format!("dim `{}` (the model's `{n}`)", d.field),
        DimSource::Named(n) => format!("dim `{n}`"),
        DimSource::Axis { input, axis } => format!("unnamed axis {axis} of input `{input}`"),
        DimSource::OutputAxis { output, axis } => {
            format!("unnamed axis {axis} of output `{output}`")
        }
        DimSource::Shape { input } => format!("the shape of input `{input}`"),
        DimSource::OutputShape { output } => format!("the shape of output `{output}`"),
    }
}

/// Plans the struct whose fields are `fields`: the same plan as [`plan_with`] (dims,
/// recurrent pairs, who allocates what), restricted to the outputs the struct binds, with
/// every output written as a `Tensor` pre-allocated (its dims no input gives become dims
/// fields), and every dim a field type fixes with `Fix<N>` fixed for the whole struct.
///
/// Errors: everything [`plan_with`] refuses, and two fields fixing one dim to different
/// sizes ([`PlanError::PinsDisagree`]) or fixing an axis a recurrent pair sizes
/// otherwise ([`PlanError::PinContradicts`]), each naming the field ([`FieldUse`] index).
/// Fields the model fixes to another size are not reported here: checking field types
/// against the model (the `check` module) does that.
pub fn plan_struct(
    sig: &ModelSignature,
    options: &ModelOptions,
    fields: &[FieldUse],
) -> Result<StructPlan, Vec<PlanError>> {
    let refused = refusals(sig);
    if !refused.is_empty() {
        return Err(refused);
    }
    let mut out_field: HashMap<usize, usize> = HashMap::new();
    let mut in_field: HashMap<usize, usize> = HashMap::new();
    for (k, f) in fields.iter().enumerate() {
        match f.role {
            Role::Input => in_field.entry(f.index).or_insert(k),
            Role::Output => out_field.entry(f.index).or_insert(k),
        };
    }
    let use_of = |index: usize| match out_field.get(&index) {
        None => OutputUse::Skip,
        Some(&k) if fields[k].allocated => OutputUse::Allocated,
        Some(_) => OutputUse::Owned,
    };
    let field_of = |role: Role, index: usize| {
        let k = match role {
            Role::Input => in_field.get(&index),
            Role::Output => out_field.get(&index),
        }?;
        Some(fields[*k].field.clone())
    };
    let (mut plan, output_index) =
        plan_core_named(sig, options, &use_of, &field_of).map_err(|e| vec![e])?;
    let values: Vec<(Role, usize)> = fields
        .iter()
        .map(|f| match f.role {
            Role::Input => (Role::Input, f.index),
            Role::Output => (
                Role::Output,
                output_index.iter().position(|&i| i == f.index).unwrap_or(0),
            ),
        })
        .collect();

    // Sizes the field types fix, per dims field: the first (field, axis, size) seen.
    let mut pinned: Vec<Option<(usize, usize, u64)>> = vec![None; plan.dims.len()];
    let mut errors = Vec::new();
    for (k, (f, &(role, pos))) in fields.iter().zip(&values).enumerate() {
        let v = match role {
            Role::Input => &plan.inputs[pos],
            Role::Output => &plan.outputs[pos],
        };
        let (Some(pins), Storage::Owned(axes)) = (&f.pins, &v.storage) else {
            continue;
        };
        if pins.len() != axes.len() {
            continue; // a rank mismatch, reported by the check
        }
        for (axis, (pin, size)) in pins.iter().zip(axes).enumerate() {
            let Some(n) = *pin else { continue };
            match *size {
                AxisSize::Field(i) => match pinned[i] {
                    None => pinned[i] = Some((k, axis, n)),
                    Some((first, first_axis, m)) if m != n => {
                        errors.push(PlanError::PinsDisagree(Box::new(PinsDisagree {
                            dim: dim_words(&plan.dims[i]),
                            at: k,
                            field: f.field.clone(),
                            axis,
                            size: n,
                            other_field: fields[first].field.clone(),
                            other_axis: first_axis,
                            other_size: m,
                        })));
                    }
                    Some(_) => {}
                },
                AxisSize::Fixed(m) if m != n => {
                    let model_fixes = matches!(
                        v.dims.as_ref().and_then(|d| d.get(axis)),
                        Some(Dim::Fixed(_))
                    );
                    // The model's own fixed axes are the check's to report.
                    if model_fixes {
                        continue;
                    }
                    let why = match plan
                        .feed_back
                        .iter()
                        .find(|fb| role == Role::Output && fb.output == pos)
                    {
                        Some(fb) => format!(
                            "output `{}` feeds back into input `{}`, whose axis {axis} the \
                             model fixes to {m}",
                            v.name, plan.inputs[fb.input].name
                        ),
                        None => format!("the model fixes it to {m}"),
                    };
                    errors.push(PlanError::PinContradicts(Box::new(PinContradicts {
                        at: k,
                        field: f.field.clone(),
                        axis,
                        size: n,
                        want: m,
                        why,
                    })));
                }
                AxisSize::Fixed(_) | AxisSize::Expr(_) => {}
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }

    // Fixed dims leave the dims struct; the others are renumbered.
    let sizes: Vec<Option<u64>> = pinned.iter().map(|p| p.map(|(_, _, n)| n)).collect();
    let mut used = vec![false; plan.dims.len()];
    for v in plan.inputs.iter().chain(&plan.outputs) {
        match &v.storage {
            Storage::Owned(axes) => {
                for a in axes {
                    if let AxisSize::Field(i) = a {
                        used[*i] = sizes[*i].is_none();
                    }
                }
            }
            Storage::OwnedAnyRank(i) => used[*i] = true,
            Storage::Allocated | Storage::Value => {}
        }
    }
    // Expressions name dims fields: a field the types fix becomes its size there.
    let fixed_by_name: HashMap<String, u64> = plan
        .dims
        .iter()
        .zip(&sizes)
        .filter_map(|(d, s)| s.map(|n| (d.field.clone(), n)))
        .collect();
    if !fixed_by_name.is_empty() {
        for v in plan.outputs.iter_mut() {
            if let Storage::Owned(axes) = &mut v.storage {
                for a in axes.iter_mut() {
                    if let AxisSize::Expr(e) = a {
                        let pinned = e.substitute(&|s| {
                            fixed_by_name
                                .get(s)
                                .map(|&n| crate::shapes::DimExpr::int(n as i64))
                        });
                        if let Some(p) = pinned {
                            *e = p;
                        }
                    }
                }
            }
        }
    }
    let mut renumber = vec![usize::MAX; plan.dims.len()];
    let mut kept = Vec::new();
    for (i, d) in std::mem::take(&mut plan.dims).into_iter().enumerate() {
        if used[i] {
            renumber[i] = kept.len();
            kept.push(d);
        }
    }
    plan.dims = kept;
    for v in plan.inputs.iter_mut().chain(plan.outputs.iter_mut()) {
        match &mut v.storage {
            Storage::Owned(axes) => {
                for a in axes {
                    if let AxisSize::Field(i) = *a {
                        *a = match sizes[i] {
                            Some(n) => AxisSize::Fixed(n),
                            None => AxisSize::Field(renumber[i]),
                        };
                    }
                }
            }
            Storage::OwnedAnyRank(i) => *i = renumber[*i],
            Storage::Allocated | Storage::Value => {}
        }
    }
    Ok(StructPlan {
        plan,
        values,
        output_index,
    })
}
