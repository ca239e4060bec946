//! The derive's `<Struct>Inputs` / `<Struct>Outputs`: the views a binding hands out, one
//! field per struct field, typed from the field's type as written.

use proc_macro2::TokenStream;
use quote::quote;

use super::Ctx;
use crate::check::syntax::{FieldType, SlotKind, ValueSlot};
use crate::check::{self, FieldBinding, Role};
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

/// How a field appears in the views.
enum ViewKind {
    /// Parsed `Tensor<..>` / `AllocatedOutput<..>`: direct view types.
    Parsed(SlotKind),
    /// Through the `Slot` trait's view types.
    Projected,
    /// Not a tensor at all (already an error): a plain reference, so nothing else fails.
    Plain,
    /// A tensor whose device argument is not a device (rustc reports it on the struct):
    /// left out of the views, since naming its type again would repeat that error.
    Absent,
    /// A string tensor, sequence, map or optional: a string tensor input fills in place
    /// through `StringTensorMut`, another input is the field itself, mutable (filled in
    /// place; the binding rebinds it), and an output is an `OutputRef` read with `get()`.
    Value,
}

fn view_kind(f: &Field<'_>) -> ViewKind {
    if f.value {
        return ViewKind::Value;
    }
    match &f.spec.ty {
        FieldType::Tensor(t) if t.device_is_not_a_device => ViewKind::Absent,
        FieldType::Tensor(t) if slot_args(f.ty).is_some() => ViewKind::Parsed(t.kind),
        FieldType::NotATensor(_) => ViewKind::Plain,
        _ => ViewKind::Projected,
    }
}

/// Whether the views' generics must bound the field's type by the view lifetime.
pub(super) fn needs_lifetime_bound(f: &Field<'_>) -> bool {
    matches!(view_kind(f), ViewKind::Projected | ViewKind::Value)
}

/// The type of a field in the inputs (`mutable`) or outputs view.
fn view_type(krate: &syn::Path, f: &Field<'_>, mutable: bool) -> TokenStream {
    let ty = f.ty;
    match view_kind(f) {
        ViewKind::Parsed(kind) => {
            let args = &slot_args(ty).expect("checked by view_kind").args;
            match (kind, mutable) {
                (SlotKind::Tensor, true) => quote!(#krate::TensorMut<'__a, #args>),
                (SlotKind::Tensor, false) => quote!(#krate::TensorRef<'__a, #args>),
                // Read with `get()`, like every output ONNX Runtime allocates.
                (SlotKind::Allocated, _) => quote!(#krate::OutputRef<'__a, #ty>),
            }
        }
        ViewKind::Projected if mutable => quote!(<#ty as #krate::__private::Slot>::Mut<'__a>),
        ViewKind::Projected => quote!(<#ty as #krate::__private::Slot>::Ref<'__a>),
        ViewKind::Plain if mutable => quote!(&'__a mut #ty),
        ViewKind::Plain => quote!(&'__a #ty),
        ViewKind::Absent => quote!(::core::marker::PhantomData<&'__a ()>),
        ViewKind::Value => match (&f.spec.ty, mutable, f.binding.map(|b| b.role)) {
            (FieldType::Value(v), true, _) if v.slot == ValueSlot::StringTensor => {
                let shape = string_shape(ty);
                quote!(#krate::StringTensorMut<'__a, #shape>)
            }
            // A map, sequence or optional input: filled in place (`set_pairs`, ...); the
            // binding binds the new value before the next run (`HAS_VALUE_INPUTS`).
            (_, true, Some(Role::Input)) => quote!(&'__a mut #ty),
            // An output ONNX Runtime allocates: read with `get()`, as in generated modules.
            (_, false, Some(Role::Output)) => quote!(#krate::OutputRef<'__a, #ty>),
            _ => quote!(&'__a #ty),
        },
    }
}

/// The expression that makes a field of the inputs (`mutable`) or outputs view from
/// `self` (the same cases as [`view_type`]).
fn view_init(krate: &syn::Path, f: &Field<'_>, mutable: bool) -> TokenStream {
    let id = f.ident;
    match view_kind(f) {
        ViewKind::Parsed(_) | ViewKind::Projected if mutable => {
            quote!(__Slot::slot_mut(&mut self.#id))
        }
        ViewKind::Parsed(_) | ViewKind::Projected => quote!(__Slot::slot_ref(&self.#id)),
        ViewKind::Plain if mutable => quote!(&mut self.#id),
        ViewKind::Plain => quote!(&self.#id),
        ViewKind::Absent => quote!(::core::marker::PhantomData),
        ViewKind::Value => match (&f.spec.ty, mutable, f.binding.map(|b| b.role)) {
            (FieldType::Value(v), true, _) if v.slot == ValueSlot::StringTensor => {
                quote!(self.#id.view_mut())
            }
            (_, true, Some(Role::Input)) => quote!(&mut self.#id),
            (_, false, Some(Role::Output)) => quote!(#krate::OutputRef::new(&self.#id)),
            _ => quote!(&self.#id),
        },
    }
}

/// The shape argument of a `StringTensor<S>` as written (`AnyRank` when left out).
fn string_shape(ty: &syn::Type) -> TokenStream {
    match slot_args(ty).and_then(|a| a.args.first()) {
        Some(arg) => quote!(#arg),
        None => quote!(__AnyRank),
    }
}

fn field_doc(cx: &Ctx<'_, '_>, f: &Field<'_>) -> String {
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

/// Fields in the inputs view: all but those bound to outputs.
fn in_view(f: &Field<'_>) -> bool {
    !matches!(
        f.binding,
        Some(FieldBinding {
            role: Role::Output,
            ..
        })
    )
}

/// Fields in the outputs view: all but those bound to inputs.
fn out_view(f: &Field<'_>) -> bool {
    !matches!(
        f.binding,
        Some(FieldBinding {
            role: Role::Input,
            ..
        })
    )
}

/// The inputs (`mutable`) or outputs view, as a struct literal built from `self`.
pub(super) fn init(cx: &Ctx<'_, '_>, mutable: bool) -> TokenStream {
    let keep = if mutable { in_view } else { out_view };
    let name = if mutable {
        &cx.inputs_name
    } else {
        &cx.outputs_name
    };
    let init = cx.fields.iter().filter(|f| keep(f)).map(|f| {
        let id = f.ident;
        let init = view_init(cx.krate, f, mutable);
        quote!(#id: #init,)
    });
    quote!(#name { #(#init)* __marker: ::core::marker::PhantomData })
}

/// The two view structs.
pub(super) fn structs(cx: &Ctx<'_, '_>) -> TokenStream {
    let name = &cx.input.ident;
    let vis = &cx.input.vis;
    let (_, ty_generics, _) = cx.input.generics.split_for_impl();
    let decl = |keep: fn(&Field<'_>) -> bool, mutable: bool| {
        let decl = cx.fields.iter().filter(|f| keep(f)).map(|f| {
            let id = f.ident;
            let ty = view_type(cx.krate, f, mutable);
            let doc = field_doc(cx, f);
            quote!(#[doc = #doc] pub #id: #ty,)
        });
        quote!(#(#decl)*)
    };
    let inputs_decl = decl(in_view, true);
    let outputs_decl = decl(out_view, false);
    let (inputs_name, outputs_name) = (&cx.inputs_name, &cx.outputs_name);
    let view_where = &cx.view_generics.where_clause;
    let view_params = &cx.view_generics.params;
    let inputs_doc = format!(
        "The model inputs [`{name}`] binds, to fill in place before a run \
         (`Binding::inputs`)."
    );
    let outputs_doc = format!(
        "The model outputs [`{name}`] binds, read in place after a run (`Binding::outputs`)."
    );
    quote! {
        #[doc = #inputs_doc]
        #[derive(::core::fmt::Debug)]
        #[allow(dead_code, unreachable_pub)]
        #vis struct #inputs_name<#view_params> #view_where {
            #inputs_decl
            #[doc(hidden)]
            pub __marker: ::core::marker::PhantomData<&'__a #name #ty_generics>,
        }

        #[doc = #outputs_doc]
        #[derive(::core::fmt::Debug)]
        #[allow(dead_code, unreachable_pub)]
        #vis struct #outputs_name<#view_params> #view_where {
            #outputs_decl
            #[doc(hidden)]
            pub __marker: ::core::marker::PhantomData<&'__a #name #ty_generics>,
        }
    }
}
