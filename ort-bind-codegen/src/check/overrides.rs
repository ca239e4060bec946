//! Fields of type `Option<Tensor<..>>` that bind an overridable input (an input the model
//! gives a default, [`crate::planner::overridable_inputs`]): `None` runs the model's default,
//! `Some` binds the field's tensor in its place.

use super::*;

/// What an `Option<..>` field binds: overridable input `index` (in the model's
/// `initialized_inputs`), with the trait checks its inner type still needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OverrideBinding {
    /// Index in [`ModelSignature::initialized_inputs`].
    pub index: usize,
    /// Trait checks still to emit for the type inside the `Option`.
    pub checks: TraitChecks,
}

/// The type inside `Option<T>` as written (any path ending in `Option` with one type
/// argument), else `None`.
pub fn option_inner(ty: &syn::Type) -> Option<&syn::Type> {
    let syn::Type::Path(p) = ty else {
        return None;
    };
    let seg = p.path.segments.last()?;
    if p.qself.is_some() || seg.ident != "Option" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &seg.arguments else {
        return None;
    };
    match args.args.iter().collect::<Vec<_>>().as_slice() {
        [syn::GenericArgument::Type(inner)] => Some(inner),
        _ => None,
    }
}

/// How an `Option<..>` field's name resolved.
pub(super) enum OverrideOutcome {
    /// It binds overridable input `index`; its type is checked.
    Bound(OverrideBinding),
    /// It names a value with a default that cannot be overridden (reported).
    Refused,
    /// It names no value with a default: resolve it as any other field.
    NotAnOverride,
}

/// The overridable inputs by ONNX name and by the identifier codegen would give them.
pub(super) struct Overridable<'s> {
    values: Vec<(usize, &'s ValueInfo)>,
    lookup: Lookup<'s>,
    taken: HashMap<usize, String>,
}

impl<'s> Overridable<'s> {
    pub(super) fn new(sig: &'s ModelSignature) -> Self {
        let values: Vec<(usize, &ValueInfo)> = crate::planner::overridable_inputs(sig).collect();
        Overridable {
            lookup: Lookup::new(values.iter().map(|&(_, v)| v)),
            values,
            taken: HashMap::new(),
        }
    }

    /// Resolves field `f` of type `Option<inner>` wanting the value `wanted` (`explicit`:
    /// named by `#[onnx(name = ..)]`, so by ONNX name only).
    pub(super) fn resolve(
        &mut self,
        sig: &ModelSignature,
        f: &FieldSpec,
        inner: &syn::Type,
        (wanted, explicit, name_span): (&str, bool, Span),
        device: Option<&syn::Type>,
        diags: &mut Vec<Diagnostic>,
    ) -> OverrideOutcome {
        let found = self
            .lookup
            .by_name
            .get(wanted)
            .or_else(|| {
                (!explicit)
                    .then(|| self.lookup.by_ident.get(wanted))
                    .flatten()
            })
            .copied();
        let Some(k) = found else {
            // A default ONNX Runtime holds constant: say so rather than "no such value".
            if let Some(v) = sig.initialized_inputs.iter().find(|v| v.name == wanted) {
                let why = if sig.ir_version < 4 {
                    format!(
                        "the model's IR version is {} (before 4, every weight is listed as an \
                         input and ONNX Runtime refuses a value for one)",
                        sig.ir_version
                    )
                } else {
                    format!("it is {}, not a numeric tensor", describe_value(v))
                };
                diags.push(
                    Diagnostic::new(
                        name_span,
                        format!(
                            "model input `{wanted}` has a default that cannot be overridden: {why}"
                        ),
                    )
                    .help("remove the field: the model always runs with its default"),
                );
                return OverrideOutcome::Refused;
            }
            return OverrideOutcome::NotAnOverride;
        };
        let (index, value) = self.values[k];
        if let Some((Role::Output, span)) = f.role {
            diags.push(
                Diagnostic::new(
                    span,
                    format!(
                        "`{}` is an overridable input of the model, not an output",
                        value.name
                    ),
                )
                .help("remove `#[onnx(output)]`"),
            );
            return OverrideOutcome::Refused;
        }
        if let Some(other) = self.taken.get(&k) {
            diags.push(
                Diagnostic::new(
                    name_span,
                    format!(
                        "overridable input `{}` is already bound by field `{other}`",
                        value.name
                    ),
                )
                .help("bind each model value with one field"),
            );
            return OverrideOutcome::Refused;
        }
        self.taken.insert(k, f.ident.clone());
        let inner_spec = FieldSpec {
            written: inner.clone(),
            ty: syntax::parse_field_type(inner),
            ty_range: Range::of_type(inner),
            ..f.clone()
        };
        let checks = check_type(&inner_spec, Role::Input, value, device, diags);
        match &inner_spec.ty {
            FieldType::Tensor(t) if t.kind == SlotKind::Tensor && !t.device_is_not_a_device => {
                OverrideOutcome::Bound(OverrideBinding { index, checks })
            }
            // An alias: the views need the tensor's arguments as written.
            FieldType::Opaque => {
                diags.push(
                    Diagnostic::new(
                        inner_spec.ty_range,
                        format!(
                            "the type inside the `Option` of overridable input `{}` must be \
                             written as a `Tensor<..>`",
                            value.name
                        ),
                    )
                    .help(format!(
                        "write `Option<{}>`",
                        value
                            .tensor()
                            .map(|(e, d)| suggested_type(SlotKind::Tensor, e, d))
                            .unwrap_or_default()
                    )),
                );
                OverrideOutcome::Refused
            }
            // Reported by `check_type`.
            _ => OverrideOutcome::Refused,
        }
    }
}
