//! The derive's `<Struct>Inputs` / `<Struct>Outputs`: one view field per struct field,
//! typed from the field's type as written, described to the emitter the generated module
//! uses ([`crate::expand::views`]).

use quote::{format_ident, quote};

use super::Ctx;
use crate::check::syntax::{FieldType, SlotKind, ValueSlot};
use crate::check::{self, FieldBinding, Role};
use crate::expand::views::{ViewField, ViewKind, Views};
use crate::macros::derive::Field;

/// Generic arguments of a `Tensor<..>`/`AllocatedOutput<..>` as written.
fn slot_args(ty: &syn::Type) -> Option<&syn::AngleBracketedGenericArguments> {
    let syn::Type::Path(p) = ty else {
        return None;
    };
    match &p.path.segments.last()?.arguments {
        syn::PathArguments::AngleBracketed(a) => Some(a),
        _ => None,
    }
}

/// What field `f` hands out in the inputs (`inputs`) or outputs view, and whether it is
/// reached through `Slot`.
fn view_kind(f: &Field<'_>, inputs: bool) -> (ViewKind, bool) {
    let ty = f.ty;
    if f.over.is_some() {
        // `Option<Tensor<..>>`: `Some` while set, to fill in place.
        let inner = check::option_inner(ty).and_then(slot_args);
        return match inner {
            Some(a) => {
                let args = &a.args;
                let kind = ViewKind::Override {
                    args: quote!(#args),
                    nested: false,
                };
                (kind, false)
            }
            None => (ViewKind::Absent, false),
        };
    }
    if f.value {
        let kind = match (&f.spec.ty, inputs, f.binding.map(|b| b.role)) {
            (FieldType::Value(v), true, _) if v.slot == ValueSlot::StringTensor => {
                ViewKind::Strings(string_shape(ty))
            }
            // A map, sequence or optional input: filled in place (`set_pairs`, ...); the
            // binding binds the new value before the next run (`HAS_VALUE_INPUTS`).
            (_, true, Some(Role::Input)) => ViewKind::ValueInput(quote!(#ty)),
            // An output ONNX Runtime allocates: read with `get()`, as in generated modules.
            (_, false, Some(Role::Output)) => ViewKind::Allocated(quote!(#ty)),
            _ => ViewKind::Field {
                ty: quote!(#ty),
                mutable: false,
            },
        };
        return (kind, false);
    }
    match &f.spec.ty {
        // Its device argument is not a device (rustc reports it on the struct): naming its
        // type again would repeat that error.
        FieldType::Tensor(t) if t.device_is_not_a_device => (ViewKind::Absent, false),
        FieldType::Tensor(t) => match (slot_args(ty), t.kind) {
            (Some(a), SlotKind::Tensor) => {
                let args = &a.args;
                (ViewKind::Tensor(quote!(#args)), true)
            }
            // Read with `get()`, like every output ONNX Runtime allocates.
            (Some(_), SlotKind::Allocated) => (ViewKind::Allocated(quote!(#ty)), true),
            // Written without arguments (an alias): only `Slot` knows its views.
            (None, _) => (ViewKind::Slot(quote!(#ty)), true),
        },
        // Not a tensor at all (already an error): a plain reference, so nothing else fails.
        FieldType::NotATensor(_) => (
            ViewKind::Field {
                ty: quote!(#ty),
                mutable: true,
            },
            false,
        ),
        _ => (ViewKind::Slot(quote!(#ty)), true),
    }
}

/// The shape argument of a `StringTensor<S>` as written (`AnyRank` when left out).
fn string_shape(ty: &syn::Type) -> proc_macro2::TokenStream {
    match slot_args(ty).and_then(|a| a.args.first()) {
        Some(arg) => quote!(#arg),
        None => quote!(__AnyRank),
    }
}

fn field_doc(cx: &Ctx<'_, '_>, f: &Field<'_>) -> String {
    if let (Some(sig), Some(o)) = (cx.sig, f.over) {
        let v = &sig.initialized_inputs[o.index];
        return format!(
            "Overridable input `{}`: `{}`. `Some` while the field is set, to fill in place; \
             `None` while the model runs with its default.",
            v.name,
            check::describe_value(v)
        );
    }
    match (cx.sig, f.binding) {
        (Some(sig), Some(b)) => {
            let v = match b.role {
                Role::Input => &sig.inputs[b.index],
                Role::Output => &sig.outputs[b.index],
            };
            format!(
                "Model {} `{}`: `{}`.",
                b.role.word(),
                v.name,
                check::describe_value(v)
            )
        }
        _ => format!("Field `{}`.", f.spec.ident),
    }
}

/// Whether field `f` is in the inputs (`inputs`) or outputs view: all but those bound to
/// the other side.
fn in_view(f: &Field<'_>, inputs: bool) -> bool {
    if f.over.is_some() {
        return inputs;
    }
    let other = if inputs { Role::Output } else { Role::Input };
    !matches!(f.binding, Some(FieldBinding { role, .. }) if role == other)
}

/// The two views of the struct. Their generics are the struct's (with defaults) after a
/// view lifetime `'__a`, which every field type the views name through `Slot` or as a value
/// must outlive.
pub(super) fn of_struct<'a>(cx: &Ctx<'a, '_>) -> Views<'a> {
    let name = &cx.input.ident;
    let (_, ty_generics, _) = cx.input.generics.split_for_impl();
    let mut generics = cx.input.generics.clone();
    let bounds = &mut generics.make_where_clause().predicates;
    let (mut input_fields, mut output_fields) = (Vec::new(), Vec::new());
    for f in cx.fields {
        let mut bound = f.value;
        for (inputs, list) in [(true, &mut input_fields), (false, &mut output_fields)] {
            if !in_view(f, inputs) {
                continue;
            }
            let (kind, via_slot) = view_kind(f, inputs);
            bound |= matches!(kind, ViewKind::Slot(_));
            list.push(ViewField {
                name: f.ident.clone(),
                source: f.ident.clone(),
                doc: field_doc(cx, f),
                kind,
                via_slot,
            });
        }
        if bound {
            let ty = f.ty;
            bounds.push(syn::parse_quote!(#ty: '__a));
        }
    }
    let vis = &cx.input.vis;
    Views {
        rt: cx.krate,
        vis: quote!(#vis),
        inputs: (
            cx.inputs_name.clone(),
            format!(
                "The model inputs [`{name}`] binds, to fill in place before a run \
                 (`Binding::inputs`)."
            ),
        ),
        outputs: (
            cx.outputs_name.clone(),
            format!(
                "The model outputs [`{name}`] binds, read in place after a run \
                 (`Binding::outputs`)."
            ),
        ),
        lifetime: syn::parse_quote!('__a),
        generics,
        marker: (format_ident!("__marker"), quote!(#name #ty_generics)),
        input_fields,
        output_fields,
    }
}
