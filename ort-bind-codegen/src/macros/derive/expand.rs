//! Step 5 of the derive: the impls, views and dims of a checked, planned struct.
//!
//! Fields are reached through the runtime's `Slot` trait, so a field whose type is an
//! alias binds like one written `Tensor<..>`; sizes come from the plan
//! ([`Planned`]): one dims expression per field, the dims struct, the pairs to swap.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::Field;
use super::plan::{Planned, bindable};
use crate::check::syntax::{FieldType, SlotKind, ValueSlot};
use crate::check::{self, FieldBinding, MAX_TUPLE_RANK, Role};
use crate::expand::dims;
use crate::expand::tokens::{Side, dims_expr, elem_tokens, io_type, spec_tokens};
use crate::plan::{PlannedValue, Storage};
use crate::signature::{Dim, ModelSignature, ValueKind};

/// The model a struct was planned against.
pub(super) struct Model<'a> {
    /// Its signature.
    pub sig: &'a ModelSignature,
    /// The struct's plan.
    pub planned: &'a Planned,
    /// Path of the model file (`MODEL_PATH`).
    pub path: &'a str,
    /// The path as the attribute wrote it, relative to the crate (`MODEL`).
    pub relative: &'a str,
}

/// The model's shape as a shape type (`(Fix<1>, Dyn)`, `AnyRank`), through the short
/// names the generated `const` block imports.
fn model_shape_tokens(dims: Option<&[Dim]>) -> TokenStream {
    match dims {
        Some(ds) if ds.len() <= MAX_TUPLE_RANK => {
            let axes = ds.iter().map(|d| match d {
                Dim::Fixed(n) => {
                    let n = proc_macro2::Literal::u64_unsuffixed(*n);
                    quote!(__Fix<#n>)
                }
                _ => quote!(__Dyn),
            });
            quote!((#(#axes,)*))
        }
        _ => quote!(__AnyRank),
    }
}

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
    /// through `StringTensorMut`; everything else is the field itself, read-only (its own
    /// methods read it; a new input value goes in through `Bound::modify`, which rebinds).
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

/// `(type, init expression)` of a field in the inputs (`mutable`) or outputs view.
fn view_field(krate: &syn::Path, f: &Field<'_>, mutable: bool) -> (TokenStream, TokenStream) {
    let ty = f.ty;
    let id = f.ident;
    match view_kind(f) {
        ViewKind::Parsed(kind) => {
            let args = &slot_args(ty).expect("checked by view_kind").args;
            let view = match (kind, mutable) {
                (SlotKind::Tensor, true) => quote!(#krate::TensorMut<'__a, #args>),
                (SlotKind::Tensor, false) => quote!(#krate::TensorRef<'__a, #args>),
                (SlotKind::Allocated, _) => {
                    quote!(::core::option::Option<#krate::TensorRef<'__a, #args>>)
                }
            };
            let init = if mutable {
                quote!(__Slot::slot_mut(&mut self.#id))
            } else {
                quote!(__Slot::slot_ref(&self.#id))
            };
            (view, init)
        }
        ViewKind::Projected => {
            if mutable {
                (
                    quote!(<#ty as #krate::Slot>::Mut<'__a>),
                    quote!(__Slot::slot_mut(&mut self.#id)),
                )
            } else {
                (
                    quote!(<#ty as #krate::Slot>::Ref<'__a>),
                    quote!(__Slot::slot_ref(&self.#id)),
                )
            }
        }
        ViewKind::Plain => {
            if mutable {
                (quote!(&'__a mut #ty), quote!(&mut self.#id))
            } else {
                (quote!(&'__a #ty), quote!(&self.#id))
            }
        }
        ViewKind::Absent => (
            quote!(::core::marker::PhantomData<&'__a ()>),
            quote!(::core::marker::PhantomData),
        ),
        ViewKind::Value => match (&f.spec.ty, mutable) {
            (FieldType::Value(v), true) if v.slot == ValueSlot::StringTensor => {
                let shape = string_shape(ty);
                (
                    quote!(#krate::StringTensorMut<'__a, #shape>),
                    quote!(self.#id.view_mut()),
                )
            }
            _ => (quote!(&'__a #ty), quote!(&self.#id)),
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

/// A model value as the plan would see it, with its declared dims (for the types the
/// checks and specs write): `None` when it cannot be bound.
fn declared(v: &crate::signature::ValueSig, role: Role) -> Option<PlannedValue> {
    let (form, elem, dims) = crate::plan::form_of(v)?;
    Some(PlannedValue {
        name: v.name.clone(),
        field: String::new(),
        form,
        elem,
        dims: dims.map(<[Dim]>::to_vec),
        onnx_type: v.kind.to_string(),
        doc: String::new(),
        storage: match role {
            Role::Input => Storage::Value,
            Role::Output => Storage::Allocated,
        },
    })
}

/// Everything the derive emits next to the struct. Without a model (see
/// [`fallback`](super::fallback)) the impls bind nothing and every field is in both views.
pub(super) fn expand(
    input: &syn::DeriveInput,
    krate: &syn::Path,
    fields: &[Field<'_>],
    model: Option<Model<'_>>,
    device: Option<&syn::Type>,
) -> TokenStream {
    let sig = model.as_ref().map(|m| m.sig);
    let planned = model.as_ref().map(|m| m.planned);
    let model_path = model.as_ref().map_or("", |m| m.path);
    let model_relative = model.as_ref().map_or("", |m| m.relative);
    let name = &input.ident;
    let vis = &input.vis;
    let inputs_name = format_ident!("{}Inputs", name);
    let outputs_name = format_ident!("{}Outputs", name);
    let dims_name = format_ident!("{}Dims", name);
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();

    // View structs: the struct's generics (with defaults) after a view lifetime.
    let mut view_generics = input.generics.clone();
    view_generics.params.insert(0, syn::parse_quote!('__a));
    {
        let wc = view_generics.make_where_clause();
        for f in fields {
            if matches!(view_kind(f), ViewKind::Projected | ViewKind::Value) {
                let ty = f.ty;
                wc.predicates.push(syn::parse_quote!(#ty: '__a));
            }
        }
    }
    let view_where = &view_generics.where_clause;
    let view_params = &view_generics.params;
    // The struct's own generic arguments, after the view lifetime (named or anonymous).
    let own_args: Vec<TokenStream> = input
        .generics
        .params
        .iter()
        .map(|p| match p {
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
        })
        .collect();
    let view_args = quote!(<'__a, #(#own_args),*>);
    let view_args_anon = quote!(<'_, #(#own_args),*>);

    let in_view = |f: &Field<'_>| {
        !matches!(
            f.binding,
            Some(FieldBinding {
                role: Role::Output,
                ..
            })
        )
    };
    let out_view = |f: &Field<'_>| {
        !matches!(
            f.binding,
            Some(FieldBinding {
                role: Role::Input,
                ..
            })
        )
    };
    let view_decl = |keep: &dyn Fn(&Field<'_>) -> bool, mutable: bool| {
        let decl = fields.iter().filter(|f| keep(f)).map(|f| {
            let id = f.ident;
            let (ty, _) = view_field(krate, f, mutable);
            let doc = field_doc(f, sig);
            quote!(#[doc = #doc] pub #id: #ty,)
        });
        quote!(#(#decl)*)
    };
    let view_init = |keep: &dyn Fn(&Field<'_>) -> bool, mutable: bool| {
        let init = fields.iter().filter(|f| keep(f)).map(|f| {
            let id = f.ident;
            let (_, init) = view_field(krate, f, mutable);
            quote!(#id: #init,)
        });
        quote!(#(#init)*)
    };
    let inputs_decl = view_decl(&in_view, true);
    let outputs_decl = view_decl(&out_view, false);
    let inputs_init = view_init(&in_view, true);
    let outputs_init = view_init(&out_view, false);

    // Specs: every model input and output (the session check compares them all).
    let spec = |v: &crate::signature::ValueSig, role: Role| {
        let planned = declared(v, role).expect("plan::refusals passed");
        if !planned.form.is_tensor() {
            return spec_tokens(krate, &planned);
        }
        let elem = elem_tokens(krate, planned.elem);
        let n = &v.name;
        match &planned.dims {
            Some(d) => {
                let r = d.len();
                quote!(__spec::<#elem>(#n, #r))
            }
            None => quote!(__spec_any_rank::<#elem>(#n)),
        }
    };
    let (input_specs, output_specs) = match sig {
        Some(sig) => (
            sig.inputs
                .iter()
                .map(|v| spec(v, Role::Input))
                .collect::<Vec<_>>(),
            sig.outputs
                .iter()
                .map(|v| spec(v, Role::Output))
                .collect::<Vec<_>>(),
        ),
        None => (Vec::new(), Vec::new()),
    };

    // Binding: inputs by model index; outputs by model index, in field order (the order
    // ONNX Runtime hands bound outputs back in).
    let bind_inputs = fields.iter().filter_map(|f| {
        let b = bindable(f)?;
        (b.role == Role::Input).then(|| {
            let (id, i) = (f.ident, b.index);
            let ty = f.ty;
            if f.value {
                quote_spanned!(ty.span()=> binder.value_input(#i, &self.#id)?;)
            } else {
                quote_spanned!(ty.span()=> __InputSlot::bind_input(&self.#id, binder, #i)?;)
            }
        })
    });
    let bound_outputs: Vec<(&Field<'_>, usize)> = fields
        .iter()
        .filter_map(|f| {
            let b = bindable(f)?;
            (b.role == Role::Output).then_some((f, b.index))
        })
        .collect();
    let bind_outputs = bound_outputs.iter().map(|(f, i)| {
        let id = f.ident;
        if f.value {
            quote!(binder.value_output(#i, &self.#id)?;)
        } else {
            quote!(__Slot::bind_output(&self.#id, binder, #i)?;)
        }
    });
    // Known from the syntax, or asked of the type.
    let allocated_flags = bound_outputs.iter().filter_map(|(f, _)| match &f.spec.ty {
        _ if f.value => Some(quote!(|| true)),
        FieldType::Tensor(t) if t.kind == SlotKind::Tensor => None,
        FieldType::Tensor(_) => Some(quote!(|| true)),
        _ => {
            let ty = f.ty;
            Some(quote!(|| <#ty as __Slot>::ALLOCATED))
        }
    });
    // Outputs that may be allocated by ONNX Runtime forget their value on a dims change
    // or a failed run (a `Tensor` forgets nothing: `Slot::clear` is a no-op for it).
    let clears: Vec<TokenStream> = bound_outputs
        .iter()
        .filter(|(f, _)| !matches!(&f.spec.ty, FieldType::Tensor(t) if t.kind == SlotKind::Tensor))
        .map(|(f, _)| {
            let id = f.ident;
            if f.value {
                quote!(#krate::OutputSlot::clear(&mut self.#id);)
            } else {
                quote!(__Slot::clear(&mut self.#id);)
            }
        })
        .collect();
    let clear_allocated = (!clears.is_empty()).then(|| {
        quote! {
            fn clear_allocated(&mut self) {
                #(#clears)*
            }
        }
    });
    let store_arms = bound_outputs.iter().enumerate().map(|(pos, (f, _))| {
        let id = f.ident;
        if f.value {
            quote!(#pos => value.store_in_slot(&mut self.#id),)
        } else {
            quote!(#pos => __Slot::store(&mut self.#id, value),)
        }
    });

    // Dims, from the plan: per field, the expression sizing it.
    let dims_tok = quote!(dims);
    let per_field: Vec<Option<TokenStream>> = fields
        .iter()
        .enumerate()
        .map(|(k, _)| {
            let planned = planned?;
            let u = planned.per_field[k]?;
            let (role, pos) = planned.plan.values[u];
            let v = match role {
                Role::Input => &planned.plan.plan.inputs[pos],
                Role::Output => &planned.plan.plan.outputs[pos],
            };
            (!matches!(v.storage, Storage::Allocated | Storage::Value))
                .then(|| dims_expr(&planned.plan.plan, v, &dims_tok))
        })
        .collect();
    let dims_fields = planned.map_or_else(Vec::new, |p| dims::fields(&p.plan.plan));
    // Without a plan (the fallback) the dims are unknown: `allocate` keeps its `dims`
    // parameter so calls written for the real struct do not fail a second time.
    let no_dims = planned.is_some() && dims_fields.is_empty();
    let dims_copy = planned.is_none_or(|p| p.plan.plan.dims_are_copy());
    let copy = dims_copy.then(|| quote!(::core::marker::Copy,));
    let resize = fields.iter().zip(&per_field).filter_map(|(f, d)| {
        let d = d.as_ref()?;
        let id = f.ident;
        if f.value {
            // A string tensor input: a new ONNX Runtime tensor when the dims change.
            Some(quote!(self.#id.resize(#d)?;))
        } else {
            Some(quote!(__Slot::resize(&mut self.#id, #d)?;))
        }
    });
    let from_input_shapes = planned
        .filter(|p| dims::solvable_from_inputs(&p.plan.plan))
        .map(|p| {
            let f =
                dims::from_input_shapes(&p.plan.plan, dims::Paths::Short, &dims_name, &quote!(pub));
            quote! {
                const _: () = {
                    use #krate::{
                        AxisRule as __AxisRule, DimsSolver as __DimsSolver, Result as __Result,
                    };
                    #[allow(dead_code, unreachable_pub, clippy::too_many_arguments)]
                    impl #dims_name {
                        #f
                    }
                };
            }
        });
    let locals: Vec<syn::Ident> = (0..fields.len())
        .map(|i| format_ident!("__field{}", i))
        .collect();
    let allocate_fields = fields
        .iter()
        .zip(&per_field)
        .zip(&locals)
        .map(|((f, d), local)| {
            let onnx = match (sig, f.binding) {
                (Some(sig), Some(b)) => match b.role {
                    Role::Input => sig.inputs[b.index].name.clone(),
                    Role::Output => sig.outputs[b.index].name.clone(),
                },
                _ => f.spec.ident.clone(),
            };
            let d = d.clone().unwrap_or_else(|| quote!(&[]));
            // The type, written out, lets rustc resolve each call at once (2,000 calls left to
            // inference until the struct literal cost 25 s of type checking).
            let ty = f.ty;
            if f.value {
                let declared = match (sig, f.binding) {
                    (Some(sig), Some(b)) if b.role == Role::Input => {
                        Some(&sig.inputs[b.index].kind)
                    }
                    _ => None,
                };
                let made = value_allocation(krate, f, &onnx, &d, declared)?;
                return Some(quote!(let #local: #ty = #made;));
            }
            Some(quote!(let #local: #ty = __Slot::allocate(#onnx, device, #d)?;))
        })
        .collect::<Option<Vec<TokenStream>>>();
    // One `let` per field, then the struct: a `?` inside a struct literal makes rustc drop
    // every field built so far on each error path separately (code quadratic in the
    // number of fields: 400k lines of LLVM IR for 200 fields); `let`s share one chain.
    let field_names: Vec<&syn::Ident> = fields.iter().map(|f| f.ident).collect();
    let field_inits = field_names
        .iter()
        .zip(&locals)
        .map(|(name, local)| quote!(#name: #local));
    // The device parameter: the device every field names, when the syntax shows one
    // (`D`, `Cpu`, or the default `Cpu`); otherwise a type parameter bounded per field.
    let common_device = {
        let mut texts = fields
            .iter()
            .filter(|f| !f.value)
            .map(|f| match &f.spec.ty {
                FieldType::Tensor(t) => Some(
                    t.device
                        .as_ref()
                        .map_or_else(|| quote!(#krate::Cpu), |d| quote!(#d)),
                ),
                _ => None,
            });
        let first = texts.next().flatten();
        let first_text = first.as_ref().map(ToString::to_string);
        let all_same = texts.all(|t| t.map(|t| t.to_string()) == first_text);
        if all_same { first } else { None }
    };
    let can_allocate = !fields.iter().any(|f| f.spec.ty.is_broken()) && allocate_fields.is_some();
    let allocate_fields = allocate_fields.unwrap_or_default();
    let allocate = can_allocate.then(|| {
        let doc = if no_dims {
            quote! {
                /// Allocates every field on `device`: the tensors a `Bound` binds once and
                /// reuses. The field types fix every dim, so there are no dims to give.
            }
        } else {
            quote! {
                /// Allocates every field on `device`, sized by `dims`: the tensors a `Bound`
                /// binds once and reuses.
            }
        };
        let dims_param = (!no_dims).then(|| quote!(dims: &#dims_name,));
        match &common_device {
            Some(device) => quote! {
                #doc
                #[allow(dead_code)]
                pub fn allocate(device: &#device, #dims_param) -> #krate::Result<Self> {
                    #(#allocate_fields)*
                    ::core::result::Result::Ok(Self { #(#field_inits),* })
                }
            },
            None => {
                let bounds = fields.iter().filter(|f| !f.value).map(|f| {
                    let ty = f.ty;
                    quote!(#ty: __Slot<Device = __Device>,)
                });
                quote! {
                    #doc
                    #[allow(dead_code)]
                    pub fn allocate<__Device: #krate::Device>(
                        device: &__Device,
                        #dims_param
                    ) -> #krate::Result<Self>
                    where
                        #(#bounds)*
                    {
                        #(#allocate_fields)*
                    ::core::result::Result::Ok(Self { #(#field_inits),* })
                    }
                }
            }
        }
    });

    // Trait-bound checks for what the syntax could not settle.
    let checks = fields.iter().filter_map(|f| {
        let sig = sig?;
        let b = bindable(f)?;
        let value = match b.role {
            Role::Input => &sig.inputs[b.index],
            Role::Output => &sig.outputs[b.index],
        };
        let ty = f.ty;
        if f.value || !crate::plan::form_of(value).is_some_and(|(form, _, _)| form.is_tensor()) {
            if !b.checks.value {
                return None;
            }
            let side = match b.role {
                Role::Input => Side::Input,
                Role::Output => Side::Output,
            };
            let m = io_type(krate, side, &declared(value, b.role)?, &quote!(#krate::Cpu));
            return Some(quote_spanned!(ty.span()=> __assert::binds_value::<#ty, #m>();));
        }
        let (elem, dims) = value.tensor()?;
        let e = elem_tokens(krate, elem);
        let m = model_shape_tokens(dims);
        let c = b.checks;
        let main = match (c.element, c.shape, b.role) {
            (true, true, Role::Input) => {
                quote_spanned!(ty.span()=> __assert::binds_input::<#ty, #e, #m>();)
            }
            (true, true, Role::Output) => {
                quote_spanned!(ty.span()=> __assert::binds_output::<#ty, #e, #m>();)
            }
            (true, false, _) => {
                quote_spanned!(ty.span()=> __assert::has_element::<#ty, #e>();)
            }
            (false, true, _) => quote_spanned!(ty.span()=> __assert::has_shape::<#ty, #m>();),
            (false, false, _) => quote!(),
        };
        let dev = match (c.device, device) {
            (true, Some(d)) => quote_spanned!(ty.span()=> __assert::on_device::<#ty, #d>();),
            _ => quote!(),
        };
        Some(quote!(#main #dev))
    });
    // A check on a type spelled like an earlier one (same tokens, same model type) proves
    // nothing new: models with thousands of alike values get one check per distinct kind.
    let mut seen = std::collections::HashSet::new();
    let checks: Vec<TokenStream> = checks.filter(|c| seen.insert(c.to_string())).collect();

    // Both views at once borrow disjoint fields, which holds only when every field is in
    // one view: not so for fields whose name did not resolve (already an error).
    let split = fields.iter().all(|f| f.binding.is_some()).then(|| {
        quote! {
            #[automatically_derived]
            impl #impl_generics __SplitIo for #name #ty_generics #where_clause {
                fn split(
                    &mut self,
                ) -> (#inputs_name #view_args_anon, #outputs_name #view_args_anon) {
                    (
                        #inputs_name { #inputs_init __marker: ::core::marker::PhantomData },
                        #outputs_name { #outputs_init __marker: ::core::marker::PhantomData },
                    )
                }
            }
        }
    });

    let inputs_mut_body = if split.is_some() {
        quote!(__SplitIo::split(self).0)
    } else {
        quote!(#inputs_name { #inputs_init __marker: ::core::marker::PhantomData })
    };

    let inputs_doc = format!(
        "The model inputs [`{name}`] binds, to fill in place before a run \
         (`Bound::inputs`)."
    );
    let outputs_doc = format!(
        "The model outputs [`{name}`] binds, read in place after a run (`Bound::outputs`)."
    );
    let dims_doc = if no_dims {
        format!(
            "The dims of [`{name}`]: none, since its field types fix every dimension of the \
             values it binds (`{name}::allocate` takes just the device)."
        )
    } else {
        format!(
            "Sizes of the dynamic dimensions of the values [`{name}`] binds that no field \
             type fixes: one field per symbolic dimension, one per unnamed dynamic axis. \
             `{name}::allocate` sizes the tensors from it; `Bound::set_dims` resizes them \
             (reusing capacity)."
        )
    };
    let feed_back = feed_back_methods(krate, fields, planned, sig);
    let model_path_doc = format!("Path of the ONNX model [`{name}`] was checked against.");

    quote! {
        #[doc = #dims_doc]
        #[derive(::core::fmt::Debug, ::core::clone::Clone, #copy ::core::cmp::PartialEq,
                 ::core::cmp::Eq, ::core::hash::Hash, ::core::default::Default)]
        #[allow(dead_code, unreachable_pub)]
        #vis struct #dims_name {
            #(#dims_fields)*
        }

        #from_input_shapes


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

        // Impls and checks reach the runtime through short imported names, which keeps
        // the expansion small for models with thousands of values.
        const _: () = {
        use #krate::{
            Slot as __Slot, InputSlot as __InputSlot, SplitIo as __SplitIo, Dyn as __Dyn,
            Fix as __Fix, AnyRank as __AnyRank, assert as __assert,
            slot::{spec as __spec, spec_any_rank as __spec_any_rank},
        };

        #[allow(dead_code, unreachable_pub)]
        impl #impl_generics #name #ty_generics #where_clause {
            #[doc = #model_path_doc]
            pub const MODEL_PATH: &'static str = #model_path;

            /// Where the model is looked for at run time (`MODEL.find()`): its environment
            /// variables, beside the executable, the current directory, then `MODEL_PATH`.
            pub const MODEL: #krate::ModelFile = #krate::ModelFile::new(#model_relative, #model_path);

            #allocate
            #feed_back
        }

        // SAFETY: the methods below only bind, resize (`set_dims`, which `Bound` follows
        // with a rebind) and hand out views that read and write elements in place; every
        // field is reached through `Slot`, which only ort-bind's tensor types implement.
        #[automatically_derived]
        unsafe impl #impl_generics #krate::BindingIo for #name #ty_generics #where_clause {
            const INPUTS: &'static [#krate::ValueSpec] = &[#(#input_specs),*];
            const OUTPUTS: &'static [#krate::ValueSpec] = &[#(#output_specs),*];
            const HAS_ALLOCATED_OUTPUTS: bool = false #(#allocated_flags)*;
            type Dims = #dims_name;
            type InputsMut<'__a> = #inputs_name #view_args where Self: '__a;
            type OutputsRef<'__a> = #outputs_name #view_args where Self: '__a;

            fn bind<'__io>(
                &'__io self,
                binder: &mut #krate::Binder<'_, '__io>,
            ) -> #krate::Result<()> {
                let _ = &binder;
                #(#bind_inputs)*
                #(#bind_outputs)*
                ::core::result::Result::Ok(())
            }

            fn set_dims(&mut self, dims: &#dims_name) -> #krate::Result<()> {
                let _ = dims;
                #(#resize)*
                ::core::result::Result::Ok(())
            }

            fn store_output(
                &mut self,
                index: usize,
                value: #krate::OutputValue,
            ) -> #krate::Result<()> {
                match index {
                    #(#store_arms)*
                    _ => {
                        ::core::mem::drop(value);
                        ::core::result::Result::Ok(())
                    }
                }
            }

            #clear_allocated

            fn inputs_mut(&mut self) -> #inputs_name #view_args_anon {
                #inputs_mut_body
            }

            fn outputs(&self) -> #outputs_name #view_args_anon {
                #outputs_name { #outputs_init __marker: ::core::marker::PhantomData }
            }
        }

        #split

        #[allow(dead_code, clippy::extra_unused_type_parameters)]
        fn __ort_bind_checks #impl_generics () #where_clause {
            #(#checks)*
        }
        };
    }
}

/// How `allocate` makes a string tensor, sequence, map or optional field named `onnx`:
/// a string tensor input of the dims `d` (empty strings), an empty output slot, or an
/// empty sequence or map input (to be set before `Bound::new`, which refuses it unset).
/// `None` where the syntax does not show how (an alias; an optional input).
fn value_allocation(
    krate: &syn::Path,
    f: &Field<'_>,
    onnx: &str,
    d: &TokenStream,
    declared: Option<&ValueKind>,
) -> Option<TokenStream> {
    let FieldType::Value(v) = &f.spec.ty else {
        return None;
    };
    let ty = f.ty;
    let input = f.binding.is_some_and(|b| b.role == Role::Input);
    Some(match v.slot {
        ValueSlot::StringTensor => quote!(<#ty>::new(#onnx, #d)?),
        // An optional input starts absent; its inner value is an empty placeholder that
        // `Optional::set_present` / `inner_mut` (or a whole new value) replaces.
        ValueSlot::Optional if input => {
            let inner = v.inner_written.as_ref()?;
            let made = match v.inner.as_deref()? {
                FieldType::Tensor(t) if t.kind != SlotKind::Allocated => {
                    let dims = placeholder_dims(declared);
                    quote!(<#inner>::new(#onnx, &[#(#dims),*])?)
                }
                FieldType::Value(i) if i.slot == ValueSlot::StringTensor => {
                    let dims = placeholder_dims(declared);
                    quote!(<#inner>::new(#onnx, &[#(#dims),*])?)
                }
                FieldType::Value(i) if i.slot == ValueSlot::Sequence => {
                    quote!(<#inner>::new(#onnx))
                }
                _ => return None,
            };
            quote!(#krate::Optional::none(#made))
        }
        ValueSlot::Optional => {
            let inner = v.inner_written.as_ref()?;
            let made = match v.inner.as_deref()? {
                FieldType::Tensor(t) if t.kind == SlotKind::Allocated => {
                    quote!(#krate::AllocatedOutput::new_in(#onnx, #krate::Cpu))
                }
                FieldType::Value(i) if i.slot != ValueSlot::Optional => {
                    quote!(<#inner>::new(#onnx))
                }
                _ => return None,
            };
            quote!(#krate::Optional::slot(#made))
        }
        _ => quote!(<#ty>::new(#onnx)),
    })
}

/// Dims of the empty tensor an absent optional input holds: the declared fixed dims, 0 on
/// every other axis (`[0]` when the rank is not declared).
fn placeholder_dims(declared: Option<&ValueKind>) -> Vec<usize> {
    match declared {
        Some(ValueKind::Optional(inner)) => match &**inner {
            ValueKind::Tensor {
                dims: Some(dims), ..
            } => dims
                .iter()
                .map(|d| match d {
                    Dim::Fixed(n) => usize::try_from(*n).unwrap_or(0),
                    _ => 0,
                })
                .collect(),
            _ => vec![0],
        },
        _ => vec![0],
    }
}

fn field_doc(f: &Field<'_>, sig: Option<&ModelSignature>) -> String {
    match (sig, f.binding) {
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

/// `feed_<output>_into_<input>(bound)` per pair that swaps, and `feed_back(bound)` for
/// all of them: buffers are exchanged inside `Bound::modify`, which rebinds; no copy.
fn feed_back_methods(
    krate: &syn::Path,
    fields: &[Field<'_>],
    planned: Option<&Planned>,
    sig: Option<&ModelSignature>,
) -> TokenStream {
    let (Some(planned), Some(sig)) = (planned, sig) else {
        return TokenStream::new();
    };
    let onnx = |k: usize| {
        fields[k]
            .binding
            .map_or_else(String::new, |b| match b.role {
                Role::Input => sig.inputs[b.index].name.clone(),
                Role::Output => sig.outputs[b.index].name.clone(),
            })
    };
    let mut names = std::collections::HashSet::new();
    let one = planned.swaps.iter().map(|&(o, i)| {
        let (of, inf) = (fields[o].ident, fields[i].ident);
        let base = format!(
            "feed_{}_into_{}",
            fields[o].spec.ident, fields[i].spec.ident
        );
        let mut name = base.clone();
        let mut n = 2;
        while !names.insert(name.clone()) {
            name = format!("{base}_{n}");
            n += 1;
        }
        let method = format_ident!("{}", name);
        let doc = format!(
            " Makes output `{}` (field `{}`) of the last run the next run's input `{}` (field \
             `{}`) without copying: the two buffers are exchanged and rebound.",
            onnx(o),
            fields[o].spec.ident,
            onnx(i),
            fields[i].spec.ident
        );
        quote! {
            #[doc = #doc]
            pub fn #method(bound: &mut #krate::Bound<Self>) -> #krate::Result<()> {
                bound.modify(|io| io.#of.swap_storage(&mut io.#inf))
            }
        }
    });
    let one: Vec<TokenStream> = one.collect();
    let all = (!planned.swaps.is_empty()).then(|| {
        let swaps = planned.swaps.iter().map(|&(o, i)| {
            let (of, inf) = (fields[o].ident, fields[i].ident);
            quote!(io.#of.swap_storage(&mut io.#inf)?;)
        });
        let pairs: Vec<String> = planned
            .swaps
            .iter()
            .map(|&(o, i)| format!("`{}` -> `{}`", onnx(o), onnx(i)))
            .collect();
        let doc = format!(
            " Feeds every recurrent output of the last run back into its input ({}) without \
             copying: buffers are exchanged, then rebound once. Allocates nothing.",
            pairs.join(", ")
        );
        quote! {
            #[doc = #doc]
            pub fn feed_back(bound: &mut #krate::Bound<Self>) -> #krate::Result<()> {
                bound.modify(|io| {
                    #(#swaps)*
                    ::core::result::Result::Ok(())
                })
            }
        }
    });
    quote!(#(#one)* #all)
}
