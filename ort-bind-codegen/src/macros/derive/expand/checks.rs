//! The derive's trait-bound checks: for what the syntactic checks could not settle (a
//! type alias, say), a call that compiles only when the field's type binds the model's
//! value (see `ort_bind_runtime::assert`).

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::Ctx;
use crate::check::{MAX_TUPLE_RANK, Role};
use crate::expand::tokens::{Side, elem_tokens, io_type};
use crate::macros::derive::plan::bindable;
use crate::signature::Dim;

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

/// One statement per check; a check on a type spelled like an earlier one (same tokens,
/// same model type) proves nothing new, so models with thousands of alike values get one
/// check per distinct kind.
pub(super) fn checks(cx: &Ctx<'_, '_>) -> Vec<TokenStream> {
    let krate = cx.krate;
    let checks = cx.fields.iter().filter_map(|f| {
        let sig = cx.sig?;
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
            let m = io_type(
                krate,
                side,
                &super::io::declared(value, b.role)?,
                &quote!(#krate::Cpu),
            );
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
        let dev = match (c.device, cx.device) {
            (true, Some(d)) => quote_spanned!(ty.span()=> __assert::on_device::<#ty, #d>();),
            _ => quote!(),
        };
        Some(quote!(#main #dev))
    });
    let mut seen = std::collections::HashSet::new();
    checks.filter(|c| seen.insert(c.to_string())).collect()
}
