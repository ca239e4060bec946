//! The derive's `<Struct>Dims` (the dynamic dims no field type fixes), its
//! `from_input_shapes` (where the input shapes determine the dims), and the expression that
//! sizes each field.

use proc_macro2::TokenStream;
use quote::quote;

use super::Ctx;
use crate::check::Role;
use crate::expand::dims;
use crate::expand::tokens::dims_expr;
use crate::planner::Storage;

/// Per struct field, the expression sizing it from `dims` (`None`: not sized by dims).
pub(super) fn per_field(cx: &Ctx<'_, '_>) -> Vec<Option<TokenStream>> {
    let dims_tok = quote!(dims);
    (0..cx.fields.len())
        .map(|k| {
            let planned = cx.planned?;
            let u = planned.per_field[k]?;
            let (role, pos) = planned.plan.values[u];
            let v = match role {
                Role::Input => &planned.plan.plan.inputs[pos],
                Role::Output => &planned.plan.plan.outputs[pos],
            };
            (!matches!(v.storage, Storage::Allocated | Storage::Value))
                .then(|| dims_expr(cx.krate, &planned.plan.plan, v, &dims_tok))
        })
        .collect()
}

/// Whether the field types fix every dim (the dims struct is empty), with a plan.
pub(super) fn none_left(cx: &Ctx<'_, '_>) -> bool {
    cx.planned.is_some_and(|p| p.plan.plan.dims.is_empty())
}

/// The dims struct, with `from_input_shapes` where the input shapes determine it.
pub(super) fn items(cx: &Ctx<'_, '_>) -> TokenStream {
    let name = &cx.input.ident;
    let vis = &cx.input.vis;
    let krate = cx.krate;
    let dims_name = &cx.dims_name;
    let dims_fields = cx
        .planned
        .map_or_else(Vec::new, |p| dims::fields(&p.plan.plan));
    let copy = cx
        .planned
        .is_none_or(|p| p.plan.plan.dims_are_copy())
        .then(|| quote!(::core::marker::Copy,));
    let doc = if none_left(cx) {
        format!(
            "The dims of [`{name}`]: none, since its field types fix every dimension of the \
             values it binds (`{name}::allocate` takes just the device)."
        )
    } else {
        format!(
            "Sizes of the dynamic dimensions of the values [`{name}`] binds that no field \
             type fixes: one field per symbolic dimension, one per unnamed dynamic axis. \
             `{name}::allocate` sizes the tensors from it; `Binding::set_dims` resizes them \
             (reusing capacity)."
        )
    };
    // Whether to emit it was decided with the plan (`emits_from_input_shapes`).
    let from_input_shapes = cx.planned.filter(|_| cx.from_input_shapes).map(|p| {
        let f = dims::from_input_shapes(&p.plan.plan, dims::Paths::Short, dims_name, &quote!(pub));
        quote! {
            const _: () = {
                use #krate::{
                    Result as __Result,
                    __private::{AxisRule as __AxisRule, solve_dims as __solve_dims},
                };
                #[allow(dead_code, unreachable_pub, clippy::too_many_arguments)]
                impl #dims_name {
                    #f
                }
            };
        }
    });
    quote! {
        #[doc = #doc]
        #[derive(::core::fmt::Debug, ::core::clone::Clone, #copy ::core::cmp::PartialEq,
                 ::core::cmp::Eq, ::core::hash::Hash, ::core::default::Default)]
        #[allow(dead_code, unreachable_pub)]
        #vis struct #dims_name {
            #(#dims_fields)*
        }

        #from_input_shapes
    }
}
