//! The derive's `BindingIo` / `SplitIo` impls: the struct's fields as the shared
//! emitter's recipes ([`crate::expand::binding_io`]), the specs of every model value.

use proc_macro2::TokenStream;
use quote::quote;
use syn::spanned::Spanned;

use super::Ctx;
use crate::check::Role;
use crate::check::syntax::{FieldType, SlotKind};
use crate::expand::binding_io::{self, Allocation, BindingImpl, FieldRecipe, SetDims, SlotRecipe};
use crate::expand::tokens::{elem_tokens, field_call, spec_tokens};
use crate::expand::views::Views;
use crate::macros::derive::plan::bindable;
use crate::planner::{PlannedValue, Storage};
use crate::sig::{Dim, ValueInfo};

/// A model value as the plan would see it, with its declared dims (for the types the
/// checks and specs write): `None` when it cannot be bound.
pub(super) fn declared(v: &ValueInfo, role: Role) -> Option<PlannedValue> {
    let (form, elem, dims) = crate::planner::form_of(v)?;
    Some(PlannedValue {
        name: v.name.clone(),
        field: String::new(),
        form,
        elem,
        declared_rank: dims.map(<[Dim]>::len),
        inference: None,
        dims: dims.map(<[Dim]>::to_vec),
        onnx_type: v.kind.to_string(),
        doc: String::new(),
        storage: match role {
            Role::Input => Storage::Value,
            Role::Output => Storage::Allocated,
        },
    })
}

/// The `ValueSpec` of model value `v`: numeric tensors through the short `__spec`
/// helpers the derive imports (small tokens for models with thousands of values).
fn spec(krate: &syn::Path, v: &ValueInfo, role: Role) -> TokenStream {
    let (form, elem, dims) = crate::planner::form_of(v).expect("plan::refusals passed");
    if !form.is_tensor() {
        let planned = declared(v, role).expect("plan::refusals passed");
        return spec_tokens(krate, &planned);
    }
    let elem = elem_tokens(krate, elem);
    let n = &v.name;
    match dims {
        Some(d) => {
            let r = d.len();
            quote!(__spec::<#elem>(#n, #r))
        }
        None => quote!(__spec_any_rank::<#elem>(#n)),
    }
}

/// The bound fields as recipes: inputs, then outputs, each in field order (the order
/// ONNX Runtime hands bound outputs back in); `dims` holds each field's sizing expression.
fn recipes(cx: &Ctx<'_, '_>, dims: &[Option<TokenStream>]) -> Vec<FieldRecipe> {
    let recipe = |(f, d): (&crate::macros::derive::Field<'_>, &Option<TokenStream>)| {
        let b = bindable(f)?;
        let slot = if f.value {
            match &f.spec.ty {
                FieldType::Value(v)
                    if b.role == Role::Input
                        && v.slot != crate::check::syntax::ValueSlot::StringTensor =>
                {
                    SlotRecipe::ValueInput
                }
                _ => SlotRecipe::Value,
            }
        } else {
            // Known from the syntax, or asked of the type.
            SlotRecipe::Slot(match &f.spec.ty {
                FieldType::Tensor(t) => Allocation::Known(t.kind == SlotKind::Allocated),
                _ => {
                    let ty = f.ty;
                    Allocation::OfType(quote!(#ty))
                }
            })
        };
        Some(FieldRecipe {
            field: f.ident.clone(),
            input: b.role == Role::Input,
            index: b.index,
            slot,
            dims: d.clone(),
            span: f.ty.span(),
        })
    };
    let all: Vec<FieldRecipe> = cx.fields.iter().zip(dims).filter_map(recipe).collect();
    let (inputs, outputs): (Vec<_>, Vec<_>) = all.into_iter().partition(|r| r.input);
    inputs.into_iter().chain(outputs).collect()
}

/// `dims_of_inputs`'s body, when a field sized by the binding holds every sized input of
/// the plan (else a field is missing or mistyped, already an error). Through `Slot` as the
/// views do, so a field that is no tensor adds no error of its own.
fn dims_of_inputs(
    cx: &Ctx<'_, '_>,
    plan: &crate::planner::Plan,
    values: &[FieldRecipe],
) -> Option<TokenStream> {
    let (krate, dims_name) = (cx.krate, &cx.dims_name);
    // The sized inputs by field name (a lookup per input: wide models have thousands).
    let sized: std::collections::HashMap<String, &FieldRecipe> = values
        .iter()
        .filter(|r| r.input && r.dims.is_some())
        .map(|r| (r.field.to_string(), r))
        .collect();
    crate::expand::dims::of_inputs(plan, krate, &quote!(#dims_name), false, |v| {
        let r = sized.get(v.field.as_str())?;
        let f = &r.field;
        Some(match r.slot {
            SlotRecipe::Slot(_) => field_call("__Slot", "slot_dims", false, f),
            _ => quote!(#krate::__private::InputShape::input_dims(&self.#f)),
        })
    })
}

/// The impls, for fields sized by `dims` (per field, as [`super::dims::per_field`]).
pub(super) fn impls(
    cx: &Ctx<'_, '_>,
    dims: &[Option<TokenStream>],
    views: &Views<'_>,
) -> TokenStream {
    let (impl_generics, ty_generics, where_clause) = cx.input.generics.split_for_impl();
    let name = &cx.input.ident;
    // Specs: every model input and output (the session check compares them all).
    let (input_specs, output_specs) = match cx.sig {
        Some(sig) => (
            sig.inputs
                .iter()
                .map(|v| spec(cx.krate, v, Role::Input))
                .collect(),
            sig.outputs
                .iter()
                .map(|v| spec(cx.krate, v, Role::Output))
                .collect(),
        ),
        None => (Vec::new(), Vec::new()),
    };
    let own_args = cx.input.generics.params.iter().map(|p| match p {
        syn::GenericParam::Lifetime(l) => {
            let l = &l.lifetime;
            quote!(#l)
        }
        syn::GenericParam::Type(t) => {
            let i = &t.ident;
            quote!(#i)
        }
        syn::GenericParam::Const(c) => {
            let i = &c.ident;
            quote!(#i)
        }
    });
    let values = recipes(cx, dims);
    let (inputs_name, outputs_name, dims_name) = (&cx.inputs_name, &cx.outputs_name, &cx.dims_name);
    binding_io::binding_impl(&BindingImpl {
        rt: cx.krate,
        impl_generics: quote!(#impl_generics),
        self_ty: quote!(#name #ty_generics),
        where_clause: quote!(#where_clause),
        derived: true,
        dims: quote!(#dims_name),
        inputs: quote!(#inputs_name),
        outputs: quote!(#outputs_name),
        view_args: own_args.collect(),
        inputs_init: views.init(true),
        outputs_init: views.init(false),
        // Both views at once borrow disjoint fields, which holds only when every field is
        // in one view: not so for fields whose name did not resolve (already an error).
        split: cx
            .fields
            .iter()
            .all(|f| f.binding.is_some() || f.over.is_some()),
        input_specs,
        output_specs,
        values: &values,
        // The struct keeps no dims to go back to.
        set_dims: SetDims::Direct,
        rebind_allocated: false,
        dims_of_inputs: cx
            .planned
            .filter(|_| cx.from_input_shapes)
            .and_then(|p| dims_of_inputs(cx, &p.plan.plan, &values)),
        overridable: overridable(cx),
    })
}

/// The `Option<Tensor<..>>` fields that bind overridable inputs: bound after the inputs
/// (binder index `INPUTS.len() + k`, `k` in field order) while `Some`; unset, the model's
/// default. The struct holds no adapter: its `set_adapter` says so.
fn overridable(cx: &Ctx<'_, '_>) -> binding_io::Overridable {
    let Some(sig) = cx.sig else {
        return Default::default();
    };
    let krate = cx.krate;
    let first = sig.inputs.len();
    let mut out = binding_io::Overridable::default();
    for (k, f) in cx.fields.iter().filter(|f| f.over.is_some()).enumerate() {
        let o = f.over.expect("filtered");
        let v = &sig.initialized_inputs[o.index];
        let declared = declared(v, Role::Input).expect("overridable inputs are tensors");
        out.specs.push(spec_tokens(krate, &declared));
        let (field, i) = (f.ident, first + k);
        out.binds.push(quote! {
            if let ::core::option::Option::Some(t) = &self.#field {
                binder.input(#i, t)?;
            }
        });
        out.resized
            .push(quote!(self.#field.as_mut().is_some_and(|t| t.take_resized())));
    }
    if !out.specs.is_empty() {
        out.items = quote! {
            fn set_adapter(
                &mut self,
                adapter: ::core::option::Option<#krate::__private::BoundAdapter>,
            ) -> #krate::Result<()> {
                match adapter {
                    ::core::option::Option::None => ::core::result::Result::Ok(()),
                    ::core::option::Option::Some(a) => ::core::result::Result::Err(#krate::Error::Adapter {
                        adapter: ::std::string::ToString::to_string(a.source()),
                        problem: ::std::string::ToString::to_string(
                            "a struct deriving `OnnxBinding` holds its overridable inputs in its \
                             own `Option` fields: set them (`Binding::modify`), or bind the model \
                             with `bindings!` or `build.rs`, whose bindings take adapters"
                        ),
                    }),
                }
            }
        };
    }
    out
}
