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
//! - an overridable input (one the model gives a default, from IR version 4 on) may be
//!   bound by an `Option<Tensor<..>>` field: `None` runs the default;
//! - with `#[onnx(device = X)]`, every field lives on `X`.

mod names;
mod overrides;
mod suggest;
pub mod syntax;
mod tensor;
mod value;

use std::collections::HashMap;
use std::fmt;

use proc_macro2::Span;

use crate::element::ElementType;
use crate::ident::IdentAllocator;
use crate::sig::{Dim, ModelSignature, ValueInfo, ValueType, format_dims};
use crate::written::Written;
use names::*;
pub use overrides::{OverrideBinding, option_inner};
pub use suggest::closest;
use syntax::{AxisSyntax, ElemSyntax, FieldType, Range, ShapeSyntax, SlotKind};
use tensor::*;
pub use value::*;

/// Largest rank a tuple shape can have; higher ranks need `AnyRank`.
pub const MAX_TUPLE_RANK: usize = 12;

pub use crate::planner::Role;

/// One field of the user's struct.
#[derive(Clone)]
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

impl fmt::Debug for FieldSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FieldSpec")
            .field("ident", &self.ident)
            .field("ident_span", &self.ident_span)
            .field("name", &self.name)
            .field("role", &self.role)
            .field("written", &Written(&self.written))
            .field("ty", &self.ty)
            .field("ty_range", &self.ty_range)
            .finish()
    }
}

/// The struct being checked.
#[derive(Clone, Copy)]
pub struct StructSpec<'a> {
    /// Where the struct's name is written (model-wide problems such as a missing input
    /// are reported there).
    pub name_span: Span,
    /// Its fields, in order.
    pub fields: &'a [FieldSpec],
    /// `#[onnx(device = ...)]`: the device every field must use.
    pub device: Option<&'a syn::Type>,
}

impl fmt::Debug for StructSpec<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StructSpec")
            .field("name_span", &self.name_span)
            .field("fields", &self.fields)
            .field("device", &self.device.map(Written))
            .finish()
    }
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
    /// Per field: the overridable input an `Option<Tensor<..>>` field binds (such a field
    /// has no entry in [`CheckOutcome::fields`]).
    pub overrides: Vec<Option<OverrideBinding>>,
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
pub fn describe_value(v: &ValueInfo) -> String {
    match &v.kind {
        ValueType::Tensor { elem, dims } => describe(*elem, dims.as_deref()),
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

/// Values by ONNX name and by the identifier codegen gives each (their positions in the
/// list given).
struct Lookup<'s> {
    by_name: HashMap<&'s str, usize>,
    by_ident: HashMap<String, usize>,
    idents: Vec<String>,
}

impl<'s> Lookup<'s> {
    fn new(values: impl IntoIterator<Item = &'s ValueInfo>) -> Self {
        let values: Vec<&ValueInfo> = values.into_iter().collect();
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

fn values(sig: &ModelSignature, role: Role) -> &[ValueInfo] {
    match role {
        Role::Input => &sig.inputs,
        Role::Output => &sig.outputs,
    }
}

/// Lists values for a note: ``x` float32 [n], `y` float32 [n]`, at most `max`.
fn list_values(values: &[ValueInfo], max: usize) -> String {
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

/// Checks `s` against `sig`; see the module docs for the rules.
pub fn check_struct(sig: &ModelSignature, s: &StructSpec<'_>) -> CheckOutcome {
    let lookups = [Lookup::new(&sig.inputs), Lookup::new(&sig.outputs)];
    let side = |role: Role| match role {
        Role::Input => &lookups[0],
        Role::Output => &lookups[1],
    };
    let mut out = CheckOutcome::default();
    let mut overridable = overrides::Overridable::new(sig);
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
        if let Some(inner) = option_inner(&f.written) {
            let named = (wanted, explicit.is_some(), name_span);
            match overridable.resolve(sig, f, inner, named, s.device, &mut out.diagnostics) {
                overrides::OverrideOutcome::Bound(b) => {
                    out.fields.push(None);
                    out.overrides.push(Some(b));
                    continue;
                }
                overrides::OverrideOutcome::Refused => {
                    out.fields.push(None);
                    out.overrides.push(None);
                    continue;
                }
                overrides::OverrideOutcome::NotAnOverride => {}
            }
        }
        out.overrides.push(None);
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
    let missing: Vec<(usize, &ValueInfo)> = sig
        .inputs
        .iter()
        .enumerate()
        .filter(|(i, _)| {
            !bound.contains_key(&(Role::Input, *i)) && !meant.contains(&(Role::Input, *i))
        })
        .collect();
    // The field to add: named like the value when that name is free (and then found by
    // name), else under another name with `#[onnx(name = ...)]`.
    let field_for = |i: usize, v: &ValueInfo| {
        let ty = match crate::planner::form_of(v) {
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
        let suggested = match crate::planner::form_of(v) {
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

#[cfg(test)]
mod tests;
