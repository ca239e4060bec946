//! Which model value each field binds: by name, by `#[onnx(name = ..)]`, or an error
//! with the names it probably meant.

use super::*;

/// Finds the model value a field binds.
pub(super) fn resolve<'a>(
    sig: &ModelSignature,
    side: &impl Fn(Role) -> &'a Lookup<'a>,
    f: &FieldSpec,
    wanted: &str,
    explicit: bool,
    name_span: Span,
) -> Result<(Role, usize), Unresolved> {
    // Exact ONNX names first; then, for a field without `name = ...`, the identifier
    // codegen gives each value.
    let exact = |r: Role| side(r).by_name.get(wanted).copied();
    let by_ident = |r: Role| {
        if explicit {
            None
        } else {
            side(r).by_ident.get(wanted).copied()
        }
    };
    let (mut i, mut o) = (exact(Role::Input), exact(Role::Output));
    if i.is_none() && o.is_none() {
        i = by_ident(Role::Input);
        o = by_ident(Role::Output);
    }
    let name_of = |r: Role, idx: usize| values(sig, r)[idx].name.as_str();
    match (f.role, i, o) {
        (Some((Role::Input, _)), Some(i), _) => Ok((Role::Input, i)),
        (Some((Role::Output, _)), _, Some(o)) => Ok((Role::Output, o)),
        (Some((asked, span)), i, o) if i.is_some() || o.is_some() => {
            let (actual, idx) = match (i, o) {
                (Some(i), _) => (Role::Input, i),
                (_, Some(o)) => (Role::Output, o),
                _ => unreachable!("guarded by the match arm"),
            };
            let diag = Diagnostic::new(
                span,
                format!(
                    "`{}` is an {} of the model, not an {}",
                    name_of(actual, idx),
                    actual.word(),
                    asked.word()
                ),
            )
            .help(format!(
                "remove `#[onnx({})]`, or write `#[onnx({})]`",
                asked.word(),
                actual.word()
            ));
            Err(Unresolved {
                diag,
                meant: vec![(actual, idx)],
            })
        }
        (None, Some(i), Some(o)) => Err(Unresolved {
            diag: Diagnostic::new(
                name_span,
                format!(
                    "the model has both an input `{}` and an output `{}`: say which this field \
                     binds",
                    name_of(Role::Input, i),
                    name_of(Role::Output, o)
                ),
            )
            .help("add `#[onnx(input)]` or `#[onnx(output)]` to the field"),
            meant: vec![(Role::Input, i), (Role::Output, o)],
        }),
        (None, Some(i), None) => Ok((Role::Input, i)),
        (None, None, Some(o)) => Ok((Role::Output, o)),
        _ => Err(unknown_name(sig, side, f, wanted, explicit, name_span)),
    }
}

/// A field whose name did not resolve: the error, and the model values it was probably
/// meant for (so struct-wide errors do not repeat the same mistake; empty when unknown).
pub(super) struct Unresolved {
    pub(super) diag: Diagnostic,
    pub(super) meant: Vec<(Role, usize)>,
}

pub(super) fn unknown_name<'a>(
    sig: &ModelSignature,
    side: &impl Fn(Role) -> &'a Lookup<'a>,
    f: &FieldSpec,
    wanted: &str,
    explicit: bool,
    name_span: Span,
) -> Unresolved {
    let roles: Vec<Role> = match f.role {
        Some((r, _)) => vec![r],
        None => vec![Role::Input, Role::Output],
    };
    let what = match f.role {
        Some((r, _)) => format!("{} named", r.word()),
        None => "input or output named".to_owned(),
    };
    let mut d = Diagnostic::new(name_span, format!("the model has no {what} `{wanted}`"));
    // Candidates: every ONNX name, and the identifier codegen gives it.
    let mut candidates: Vec<(String, String, (Role, usize))> = Vec::new();
    for &r in &roles {
        for (i, (v, ident)) in values(sig, r).iter().zip(&side(r).idents).enumerate() {
            candidates.push((v.name.clone(), v.name.clone(), (r, i)));
            if !explicit && ident != &v.name {
                candidates.push((ident.clone(), v.name.clone(), (r, i)));
            }
        }
    }
    let best = closest(wanted, candidates.iter().map(|(c, _, _)| c.as_str()));
    let mut meant = Vec::new();
    if let Some(best) = best {
        let (_, onnx, target) = candidates
            .iter()
            .find(|(c, _, _)| c == best)
            .expect("from candidates");
        meant.push(*target);
        d = if explicit {
            d.help(format!("did you mean `#[onnx(name = \"{onnx}\")]`?"))
        } else if best == onnx {
            d.help(format!(
                "did you mean `{best}`? Rename the field, or map it with `#[onnx(name = \"{onnx}\")]`"
            ))
        } else {
            d.help(format!(
                "did you mean `{best}` (the model's `{onnx}`)? Rename the field, or map it with \
                 `#[onnx(name = \"{onnx}\")]`"
            ))
        };
    }
    let mut listing = Vec::new();
    for &r in &roles {
        listing.push(format!("{}s: {}", r.word(), list_values(values(sig, r), 8)));
    }
    Unresolved {
        diag: d.help(format!("the model's {}", listing.join("; "))),
        meant,
    }
}
