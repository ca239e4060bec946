//! Checking a user's binding struct against a model signature: the one validation layer
//! behind `#[derive(OnnxBinding)]` (and anything else that maps Rust fields to ONNX
//! values).
//!
//! The input is plain data ([`StructSpec`], [`FieldSpec`]) with the spans where each
//! piece is written; the output is every [`Diagnostic`] at once (so a build reports all
//! mistakes of a struct together) plus, per field, what it binds and which trait-bound
//! checks the derive still has to emit for what the syntax could not settle (see
//! [`FieldBinding`]). Messages speak the model's language: the ONNX name, its dtype as
//! numpy names it, its shape as `[batch, 3]`, and the exact Rust type to write.
//!
//! Rules:
//! - a field binds the model value named like the field (exactly, or as codegen would
//!   name the value's field: `gpu_0/data_0` is `gpu_0_data_0`), or the one named by
//!   `#[onnx(name = "...")]`; `#[onnx(input)]` / `#[onnx(output)]` pick a side;
//! - every model input is bound exactly once, at least one output is bound, and no value
//!   is bound twice; outputs may be left out (ONNX Runtime still computes them, because it
//!   runs the whole graph, and drops them);
//! - the element type equals the model's; the shape has the model's rank (unless the
//!   model declares none, or the field uses `AnyRank`); an axis the model fixes to `N` is
//!   `Fix<N>` or `Dyn`, and an axis the model leaves symbolic may be anything, so a field
//!   may fix a symbolic dim to a constant;
//! - inputs are `Tensor`s; outputs are `Tensor`s or `AllocatedOutput`s;
//! - with `#[onnx(device = X)]`, every field lives on `X`.

mod suggest;
pub mod syntax;

use std::collections::HashMap;

use proc_macro2::Span;

use crate::dtype::ElementType;
use crate::ident::IdentAllocator;
use crate::signature::{Dim, ModelSignature, ValueKind, ValueSig, format_dims};
pub use suggest::closest;
use syntax::{AxisSyntax, ElemSyntax, FieldType, Range, ShapeSyntax, SlotKind};

/// Largest rank a tuple shape can have; higher ranks need `AnyRank`.
pub const MAX_TUPLE_RANK: usize = 12;

pub use crate::plan::Role;

/// One field of the user's struct.
#[derive(Debug, Clone)]
pub struct FieldSpec {
    /// Field name, without `r#`.
    pub ident: String,
    /// Where the field name is written.
    pub ident_span: Span,
    /// `#[onnx(name = "...")]`: the ONNX name and where it is written.
    pub name: Option<(String, Span)>,
    /// `#[onnx(input)]` / `#[onnx(output)]` and where it is written.
    pub role: Option<(Role, Span)>,
    /// The field's type as written.
    pub written: syn::Type,
    /// What the syntax tells about the type.
    pub ty: FieldType,
    /// Where the type is written.
    pub ty_range: Range,
}

/// The struct being checked.
#[derive(Debug, Clone, Copy)]
pub struct StructSpec<'a> {
    /// Where the struct's name is written (model-wide problems such as a missing input
    /// are reported there).
    pub name_span: Span,
    /// Its fields, in order.
    pub fields: &'a [FieldSpec],
    /// `#[onnx(device = ...)]`: the device every field must use.
    pub device: Option<&'a syn::Type>,
}

/// One problem, at one place, with what to do about it.
#[derive(Debug, Clone)]
pub struct Diagnostic {
    /// Where it is.
    pub range: Range,
    /// What is wrong, in the model's terms.
    pub message: String,
    /// How to fix it (each rendered as a `help:` line).
    pub help: Vec<String>,
}

impl Diagnostic {
    fn new(at: impl Into<Range>, message: impl Into<String>) -> Self {
        Diagnostic {
            range: at.into(),
            message: message.into(),
            help: Vec::new(),
        }
    }

    fn help(mut self, help: impl Into<String>) -> Self {
        self.help.push(help.into());
        self
    }

    /// The message with its `help:` lines, as one text.
    pub fn render(&self) -> String {
        let mut out = self.message.clone();
        for h in &self.help {
            out.push_str("\n  help: ");
            out.push_str(h);
        }
        out
    }
}

/// Which trait-bound checks to emit for a field (those the syntax could not settle, or
/// settled as correct: emitting them then guards against shadowed names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraitChecks {
    /// Check the element type.
    pub element: bool,
    /// Check the shape.
    pub shape: bool,
    /// Check the device against `#[onnx(device = ...)]`.
    pub device: bool,
    /// Check a string tensor, sequence, map or optional field against the model's type
    /// (`assert::binds_value`), instead of the element and shape checks.
    pub value: bool,
}

impl TraitChecks {
    /// No checks: the field's type was refused with a diagnostic, or needs none.
    pub const NONE: TraitChecks = TraitChecks {
        element: false,
        shape: false,
        device: false,
        value: false,
    };
}

/// What one field binds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldBinding {
    /// Input or output.
    pub role: Role,
    /// Index in the model's inputs or outputs.
    pub index: usize,
    /// Trait checks still to emit.
    pub checks: TraitChecks,
}

/// Everything the check found.
#[derive(Debug, Clone, Default)]
pub struct CheckOutcome {
    /// Per field (same order as [`StructSpec::fields`]): what it binds, or `None` when its
    /// name did not resolve.
    pub fields: Vec<Option<FieldBinding>>,
    /// Every problem found, in source order of the fields, then struct-wide ones.
    pub diagnostics: Vec<Diagnostic>,
}

/// `float32 [batch, 3]`, `int64 scalar`, `float32 [..] (unknown rank)`.
pub fn describe(elem: ElementType, dims: Option<&[Dim]>) -> String {
    match dims {
        Some([]) => format!("{elem} scalar"),
        _ => format!("{elem} {}", format_dims(dims)),
    }
}

/// Describes a model value (`float32 [n]`) or says what unsupported thing it is.
pub fn describe_value(v: &ValueSig) -> String {
    match &v.kind {
        ValueKind::Tensor { elem, dims } => describe(*elem, dims.as_deref()),
        kind => kind.to_string(),
    }
}

/// The shape type that fits model dims exactly as the model declares them:
/// `(Dyn, Fix<3>)`, `()`, or `AnyRank` (unknown rank or too many axes).
pub fn shape_type_text(dims: Option<&[Dim]>) -> String {
    match dims {
        Some(ds) if ds.len() <= MAX_TUPLE_RANK => {
            let axes: Vec<String> = ds
                .iter()
                .map(|d| match d {
                    Dim::Fixed(n) => format!("Fix<{n}>"),
                    _ => "Dyn".to_owned(),
                })
                .collect();
            match axes.len() {
                0 => "()".into(),
                1 => format!("({},)", axes[0]),
                _ => format!("({})", axes.join(", ")),
            }
        }
        _ => "AnyRank".into(),
    }
}

/// The Rust type to write for a model value: `Tensor<f32, (Dyn, Fix<3>)>`.
pub fn suggested_type(kind: SlotKind, elem: ElementType, dims: Option<&[Dim]>) -> String {
    let slot = match kind {
        SlotKind::Tensor => "Tensor",
        SlotKind::Allocated => "AllocatedOutput",
    };
    format!("{slot}<{}, {}>", elem.rust_name(), shape_type_text(dims))
}

/// Renders a type the way rustfmt would (`Tensor<f32, (Dyn,)>`), for messages: the
/// token text without the spaces `TokenStream`'s `Display` puts around punctuation.
pub fn render_type(ty: &syn::Type) -> String {
    let text = quote::ToTokens::to_token_stream(ty).to_string();
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let glue_to_previous = matches!(c, ',' | '<' | '>' | ')' | ']' | ';' | ':');
        if glue_to_previous && out.ends_with(' ') {
            out.pop();
        }
        let previous = out.chars().last();
        let glued_after = matches!(previous, Some('<' | '(' | '[' | '&' | ':'));
        if c == ' ' && (glued_after || out.is_empty()) {
            continue;
        }
        out.push(c);
    }
    out
}

/// The generic arguments of a `Tensor<..>`/`AllocatedOutput<..>` type, to edit.
fn slot_args_mut(
    ty: &mut syn::Type,
) -> Option<&mut syn::punctuated::Punctuated<syn::GenericArgument, syn::Token![,]>> {
    let syn::Type::Path(p) = ty else {
        return None;
    };
    match &mut p.path.segments.last_mut()?.arguments {
        syn::PathArguments::AngleBracketed(args) => Some(&mut args.args),
        _ => None,
    }
}

struct Lookup<'s> {
    by_name: HashMap<&'s str, usize>,
    by_ident: HashMap<String, usize>,
    idents: Vec<String>,
}

impl<'s> Lookup<'s> {
    fn new(values: &'s [ValueSig]) -> Self {
        let mut alloc = IdentAllocator::new();
        let idents: Vec<String> = values.iter().map(|v| alloc.allocate(&v.name)).collect();
        Lookup {
            by_name: values
                .iter()
                .enumerate()
                .map(|(i, v)| (v.name.as_str(), i))
                .collect(),
            by_ident: idents
                .iter()
                .cloned()
                .enumerate()
                .map(|(i, s)| (s, i))
                .collect(),
            idents,
        }
    }
}

fn values(sig: &ModelSignature, role: Role) -> &[ValueSig] {
    match role {
        Role::Input => &sig.inputs,
        Role::Output => &sig.outputs,
    }
}

/// Lists values for a note: ``x` float32 [n], `y` float32 [n]`, at most `max`.
fn list_values(values: &[ValueSig], max: usize) -> String {
    let mut parts: Vec<String> = values
        .iter()
        .take(max)
        .map(|v| format!("`{}` {}", v.name, describe_value(v)))
        .collect();
    if values.len() > max {
        parts.push(format!("and {} more", values.len() - max));
    }
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(", ")
    }
}

/// Checks `s` against `sig`; see the [module docs](self) for the rules.
pub fn check_struct(sig: &ModelSignature, s: &StructSpec<'_>) -> CheckOutcome {
    let lookups = [Lookup::new(&sig.inputs), Lookup::new(&sig.outputs)];
    let side = |role: Role| match role {
        Role::Input => &lookups[0],
        Role::Output => &lookups[1],
    };
    let mut out = CheckOutcome::default();
    let mut bound: HashMap<(Role, usize), &str> = HashMap::new();
    // Values that fields with unresolved names were probably meant for: no second error
    // for the same mistake ("input `y` is not bound" after "no value `yy`, did you mean
    // `y`?").
    let mut meant: Vec<(Role, usize)> = Vec::new();

    for f in s.fields {
        let (wanted, explicit) = match &f.name {
            Some((n, span)) => (n.as_str(), Some(*span)),
            None => (f.ident.as_str(), None),
        };
        let name_span = explicit.unwrap_or(f.ident_span);
        let resolved = resolve(sig, &side, f, wanted, explicit.is_some(), name_span);
        let binding = match resolved {
            Ok(b) => b,
            Err(Unresolved { diag, meant: m }) => {
                out.diagnostics.push(diag);
                meant.extend(m);
                // The type can still be wrong in ways that do not depend on the name.
                if let FieldType::NotATensor(what) = &f.ty {
                    out.diagnostics.push(Diagnostic::new(
                        f.ty_range,
                        format!("field `{}` is {what}, which cannot hold an ONNX value", f.ident),
                    ).help("bind model values as `Tensor<T, Shape>` (or `AllocatedOutput<T, Shape>` for an output ONNX Runtime allocates)"));
                }
                out.fields.push(None);
                continue;
            }
        };
        let (role, index) = binding;
        let value = &values(sig, role)[index];
        if let Some(other) = bound.get(&(role, index)) {
            out.diagnostics.push(
                Diagnostic::new(
                    name_span,
                    format!(
                        "model {} `{}` is already bound by field `{other}`",
                        role.word(),
                        value.name
                    ),
                )
                .help(
                    "bind each model value with one field: remove one of them, or map this \
                     one to another value with `#[onnx(name = \"...\")]`",
                ),
            );
            out.fields.push(None);
            continue;
        }
        bound.insert((role, index), f.ident.as_str());
        let checks = check_type(f, role, value, s.device, &mut out.diagnostics);
        out.fields.push(Some(FieldBinding {
            role,
            index,
            checks,
        }));
    }

    // Every input bound.
    let missing: Vec<(usize, &ValueSig)> = sig
        .inputs
        .iter()
        .enumerate()
        .filter(|(i, _)| {
            !bound.contains_key(&(Role::Input, *i)) && !meant.contains(&(Role::Input, *i))
        })
        .collect();
    // The field to add: named like the value when that name is free (and then found by
    // name), else under another name with `#[onnx(name = ...)]`.
    let field_for = |i: usize, v: &ValueSig| {
        let ty = match crate::plan::form_of(v) {
            Some((form, elem, dims)) => suggested_value_type(Role::Input, form, elem, dims),
            None => suggested_type(SlotKind::Tensor, ElementType::F32, None),
        };
        let ident = &lookups[0].idents[i];
        if s.fields.iter().any(|f| &f.ident == ident) {
            format!("#[onnx(name = \"{}\")] {ident}_input: {ty}", v.name)
        } else {
            format!("{ident}: {ty}")
        }
    };
    match missing.as_slice() {
        [] => {}
        [(i, v)] => out.diagnostics.push(
            Diagnostic::new(
                s.name_span,
                format!(
                    "model input `{}` ({}) is not bound by any field: ONNX Runtime needs every input",
                    v.name,
                    describe_value(v)
                ),
            )
            .help(format!(
                "add a field `{}`, or map an existing field to it with `#[onnx(name = \"{}\")]`",
                field_for(*i, v),
                v.name
            )),
        ),
        many => {
            let shown: Vec<String> = many
                .iter()
                .take(12)
                .map(|(i, v)| format!("`{}` ({}) as `{}`", v.name, describe_value(v), field_for(*i, v)))
                .collect();
            let more = if many.len() > 12 {
                format!(", and {} more", many.len() - 12)
            } else {
                String::new()
            };
            out.diagnostics.push(
                Diagnostic::new(
                    s.name_span,
                    format!(
                        "{} model inputs are not bound by any field: ONNX Runtime needs every input",
                        many.len()
                    ),
                )
                .help(format!("add fields for {}{more}", shown.join(", "))),
            );
        }
    }

    // At least one output.
    let output_meant = meant.iter().any(|(r, _)| *r == Role::Output);
    if !sig.outputs.is_empty() && !bound.keys().any(|(r, _)| *r == Role::Output) && !output_meant {
        let v = &sig.outputs[0];
        let suggested = match crate::plan::form_of(v) {
            Some((form, elem, dims)) => suggested_value_type(Role::Output, form, elem, dims),
            None => suggested_type(SlotKind::Tensor, ElementType::F32, None),
        };
        out.diagnostics.push(
            Diagnostic::new(
                s.name_span,
                "the struct binds no model output: ONNX Runtime refuses to run a binding without one",
            )
            .help(format!(
                "add a field for one of the outputs ({}), e.g. `{}: {}`",
                list_values(&sig.outputs, 6),
                lookups[1].idents[0],
                suggested
            )),
        );
    }
    out
}

/// Finds the model value a field binds.
fn resolve<'a>(
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
struct Unresolved {
    diag: Diagnostic,
    meant: Vec<(Role, usize)>,
}

fn unknown_name<'a>(
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

/// Syntactic checks of a bound field's type; returns the trait checks still to emit.
fn check_type(
    f: &FieldSpec,
    role: Role,
    value: &ValueSig,
    device: Option<&syn::Type>,
    diags: &mut Vec<Diagnostic>,
) -> TraitChecks {
    let none = TraitChecks::NONE;
    let Some((form, elem, dims)) = crate::plan::form_of(value) else {
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
            if what.starts_with("a view") {
                d = d.help(
                    "the struct owns the tensors; `Bound::inputs()` and `Bound::outputs()` hand \
                     out views of them",
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
        let span = t.device.as_ref().map_or(f.ty_range, Range::of);
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

/// The Rust name of an element type inside the runtime's value types (`String` too).
fn value_elem_name(elem: ElementType) -> &'static str {
    elem.rust_name()
}

/// The type to write for a model value that is not a numeric tensor (or for any value
/// when `form` says so): `StringOutput<(Dyn,)>`, `MapSequence<String, f32>`,
/// `Optional<AllocatedOutput<f32, (Dyn,)>>`.
pub fn suggested_value_type(
    role: Role,
    form: crate::plan::Form,
    elem: ElementType,
    dims: Option<&[Dim]>,
) -> String {
    use crate::plan::Form;
    let shape = shape_type_text(dims);
    let strings = match role {
        Role::Input => format!("StringTensor<{shape}>"),
        Role::Output => format!("StringOutput<{shape}>"),
    };
    let e = value_elem_name(elem);
    match form {
        Form::Tensor => suggested_type(SlotKind::Tensor, elem, dims),
        Form::Strings => strings,
        Form::Sequence => format!("Sequence<{e}, {shape}>"),
        Form::MapSequence { key } => format!("MapSequence<{}, {e}>", value_elem_name(key)),
        Form::Map { key } => format!("Map<{}, {e}>", value_elem_name(key)),
        Form::OptionalTensor if elem == ElementType::String => format!("Optional<{strings}>"),
        Form::OptionalTensor => match role {
            Role::Input => format!("Optional<Tensor<{e}, {shape}>>"),
            Role::Output => format!("Optional<AllocatedOutput<{e}, {shape}>>"),
        },
        Form::OptionalSequence => format!("Optional<Sequence<{e}, {shape}>>"),
    }
}

/// What a value type holds, in words, for messages.
fn slot_words(slot: syntax::ValueSlot) -> &'static str {
    use syntax::ValueSlot as V;
    match slot {
        V::StringTensor => "a string tensor input",
        V::StringOutput => "a string tensor output",
        V::Sequence => "a sequence of tensors",
        V::MapSequence => "a sequence of maps",
        V::Map => "a map",
        V::Optional => "an optional value",
    }
}

/// Checks a field against a model value that is not a numeric tensor, or a value-typed
/// field against any model value: the kind of value, element / key / value types, the
/// shape of string tensors and of a sequence's tensors. What the syntax cannot settle (an
/// alias, an `Optional`'s contents) is left to `assert::binds_value`.
fn check_value(
    f: &FieldSpec,
    role: Role,
    value: &ValueSig,
    (form, elem, dims): (crate::plan::Form, ElementType, Option<&[Dim]>),
    diags: &mut Vec<Diagnostic>,
) -> TraitChecks {
    use crate::plan::Form;
    use syntax::ValueSlot as V;
    let none = TraitChecks::NONE;
    let trait_check = TraitChecks {
        value: true,
        ..none
    };
    let name = &value.name;
    let role_word = role.word();
    let model = match form {
        Form::Strings => format!("a string tensor {}", format_dims(dims)),
        Form::Tensor => describe_value(value),
        _ => value.kind.to_string(),
    };
    let expected = suggested_value_type(role, form, elem, dims);
    let t = match &f.ty {
        FieldType::Opaque => return trait_check,
        FieldType::NotATensor(what) => {
            diags.push(
                Diagnostic::new(
                    f.ty_range,
                    format!(
                        "field `{}` is {what}, which cannot hold model {role_word} `{name}` \
                         ({model})",
                        f.ident
                    ),
                )
                .help(format!("write `{expected}`")),
            );
            return none;
        }
        FieldType::Tensor(t) => {
            let slot = match t.kind {
                SlotKind::Tensor => "Tensor",
                SlotKind::Allocated => "AllocatedOutput",
            };
            let why = if form == Form::Strings {
                ": ONNX Runtime keeps strings in tensors of its own, which ort-bind copies \
                 strings into and out of"
            } else {
                ""
            };
            diags.push(
                Diagnostic::new(
                    t.kind_span,
                    format!(
                        "model {role_word} `{name}` is {model}; a `{slot}` holds a tensor of \
                         numbers{why}"
                    ),
                )
                .help(format!("write `{expected}`")),
            );
            return none;
        }
        FieldType::Value(v) => v,
    };
    let want = match (form, role) {
        (Form::Tensor, _) => None,
        (Form::Strings, Role::Input) => Some(V::StringTensor),
        (Form::Strings, Role::Output) => Some(V::StringOutput),
        (Form::Sequence, _) => Some(V::Sequence),
        (Form::MapSequence { .. }, _) => Some(V::MapSequence),
        (Form::Map { .. }, _) => Some(V::Map),
        (Form::OptionalTensor | Form::OptionalSequence, _) => Some(V::Optional),
    };
    if want != Some(t.slot) {
        let message = match (want, t.slot) {
            (Some(V::StringOutput), V::StringTensor) => format!(
                "model output `{name}` is {model}; `StringTensor` is for inputs: ONNX Runtime \
                 allocates string outputs, which `StringOutput` reads"
            ),
            (Some(V::StringTensor), V::StringOutput) => format!(
                "model input `{name}` is {model}; `StringOutput` is for outputs: inputs are \
                 `StringTensor`s you fill before each run"
            ),
            (None, _) => format!(
                "model {role_word} `{name}` is {model}, a tensor of numbers; `{}` is {}",
                t.slot.name(),
                slot_words(t.slot)
            ),
            _ => format!(
                "model {role_word} `{name}` is {model}; `{}` is {}",
                t.slot.name(),
                slot_words(t.slot)
            ),
        };
        diags.push(Diagnostic::new(t.slot_span, message).help(format!("write `{expected}`")));
        return none;
    }
    let mut ok = true;
    let elem_word = if matches!(form, Form::Map { .. } | Form::MapSequence { .. }) {
        "values"
    } else {
        "elements"
    };
    if let Some(ElemSyntax::Known(found, written, range)) = &t.elem
        && *found != elem
    {
        diags.push(
            Diagnostic::new(
                *range,
                format!(
                    "model {role_word} `{name}` is {model}; this field's {elem_word} are \
                     `{written}` ({found})"
                ),
            )
            .help(format!("write `{expected}`")),
        );
        ok = false;
    }
    if let (
        Form::Map { key } | Form::MapSequence { key },
        Some(ElemSyntax::Known(found, written, range)),
    ) = (form, &t.key)
        && *found != key
    {
        diags.push(
            Diagnostic::new(
                *range,
                format!(
                    "model {role_word} `{name}` is {model}, whose keys are {key}; this field's \
                     keys are `{written}` ({found})"
                ),
            )
            .help(format!("write `{expected}`")),
        );
        ok = false;
    }
    if let (Some(ShapeSyntax::Tuple(axes, range)), Some(ds)) = (&t.shape, dims) {
        let what = if form == Form::Sequence {
            "the tensors of the sequence have"
        } else {
            "it has"
        };
        if axes.len() != ds.len() {
            diags.push(
                Diagnostic::new(
                    *range,
                    format!(
                        "model {role_word} `{name}` is {model}: {what} rank {}; this shape has \
                         rank {}",
                        ds.len(),
                        axes.len()
                    ),
                )
                .help(format!("write `{expected}`")),
            );
            ok = false;
        } else {
            for (axis, (a, d)) in axes.iter().zip(ds).enumerate() {
                if let (AxisSyntax::Fixed(found, range), Dim::Fixed(want)) = (a, d)
                    && found != want
                {
                    diags.push(
                        Diagnostic::new(
                            *range,
                            format!(
                                "axis {axis} of model {role_word} `{name}` is fixed to {want} \
                                 by the model ({model}); `Fix<{found}>` contradicts it"
                            ),
                        )
                        .help(format!("write `Fix<{want}>` or `Dyn` for this axis")),
                    );
                    ok = false;
                }
            }
        }
    }
    if ok { trait_check } else { none }
}

/// Devices ort-bind defines; only these are compared syntactically (an alias or a
/// generic parameter is left to the trait check).
const KNOWN_DEVICES: &[&str] = &["Cpu", "Cuda", "CudaPinned"];

/// `Cpu`, `Cuda<0>`: a known device as written (its last path segment with arguments);
/// `None` written means the default, `Cpu`. `None` for anything else.
fn device_key(written: Option<&syn::Type>) -> Option<String> {
    let Some(ty) = written else {
        return Some("Cpu".to_owned());
    };
    let (name, text) = syntax::last_segment_text(ty)?;
    KNOWN_DEVICES.contains(&name.as_str()).then_some(text)
}

#[cfg(test)]
mod tests;
