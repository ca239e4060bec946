//! The derive's trait-bound checks: for what the syntactic checks could not settle (a
//! type alias, say), a call that compiles only when the field's type binds the model's
//! value (see `ort_bind_runtime::assert`).

use std::fmt::Write as _;

use proc_macro2::TokenStream;
use quote::{ToTokens, quote, quote_spanned};
use syn::spanned::Spanned;

use super::Ctx;
use crate::check::{MAX_TUPLE_RANK, Role};
use crate::expand::tokens::{Side, elem_tokens, io_type, token_key};
use crate::macros::derive::plan::bindable;
use crate::sig::Dim;

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
/// check per distinct kind. Whether a check is new is decided from a short key (the
/// field type's tokens and what the check compares) before its tokens are built: a
/// 1,000-input struct would otherwise quote and print 2,000 statements to keep two.
pub(super) fn checks(cx: &Ctx<'_, '_>) -> Vec<TokenStream> {
    let krate = cx.krate;
    let Some(sig) = cx.sig else {
        return Vec::new();
    };
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for f in cx.fields {
        // An overridable input's field: its `Option`'s tensor type, checked as an input.
        let over = f
            .over
            .zip(crate::check::option_inner(f.ty))
            .map(|(o, inner)| {
                let b = crate::check::FieldBinding {
                    role: Role::Input,
                    index: o.index,
                    checks: o.checks,
                };
                (b, &sig.initialized_inputs[o.index], inner)
            });
        let Some((b, value, ty)) = over.or_else(|| {
            let b = bindable(f)?;
            let value = match b.role {
                Role::Input => &sig.inputs[b.index],
                Role::Output => &sig.outputs[b.index],
            };
            Some((b, value, f.ty))
        }) else {
            continue;
        };
        if f.value || !crate::planner::form_of(value).is_some_and(|(form, _, _)| form.is_tensor()) {
            if !b.checks.value {
                continue;
            }
            let side = match b.role {
                Role::Input => Side::Input,
                Role::Output => Side::Output,
            };
            let Some(declared) = super::io::declared(value, b.role) else {
                continue;
            };
            let m = io_type(krate, side, &declared, &quote!(#krate::Cpu));
            let check = quote_spanned!(ty.span()=> __assert::binds_value::<#ty, #m>(););
            if seen.insert(check.to_string()) {
                out.push(check);
            }
            continue;
        }
        let Some((elem, dims)) = value.tensor() else {
            continue;
        };
        let c = b.checks;
        let main = match (c.element, c.shape, b.role) {
            (true, true, Role::Input) => Some("binds_input"),
            (true, true, Role::Output) => Some("binds_output"),
            (true, false, _) => Some("has_element"),
            (false, true, _) => Some("has_shape"),
            (false, false, _) => None,
        };
        let device = cx.device.filter(|_| c.device);
        if main.is_none() && device.is_none() {
            continue;
        }
        let mut key = String::new();
        key.push_str(main.unwrap_or("-"));
        key.push(if device.is_some() { 'd' } else { '-' });
        if c.element {
            key.push_str(elem.rust_name());
        }
        key.push(';');
        if c.shape {
            shape_key(dims, &mut key);
        }
        key.push(';');
        token_key(ty.to_token_stream(), &mut key);
        if !seen.insert(key) {
            continue;
        }
        let span = ty.span();
        let main = match main {
            Some("has_shape") => {
                let m = model_shape_tokens(dims);
                quote_spanned!(span=> __assert::has_shape::<#ty, #m>();)
            }
            Some(check) => {
                let check = syn::Ident::new(check, span);
                let e = elem_tokens(krate, elem);
                if c.shape {
                    let m = model_shape_tokens(dims);
                    quote_spanned!(span=> __assert::#check::<#ty, #e, #m>();)
                } else {
                    quote_spanned!(span=> __assert::#check::<#ty, #e>();)
                }
            }
            None => TokenStream::new(),
        };
        let dev = device.map(|d| quote_spanned!(span=> __assert::on_device::<#ty, #d>();));
        out.push(quote!(#main #dev));
    }
    out
}

/// What [`model_shape_tokens`] writes for `dims`, as key text.
fn shape_key(dims: Option<&[Dim]>, key: &mut String) {
    match dims {
        Some(ds) if ds.len() <= MAX_TUPLE_RANK => {
            for d in ds {
                match d {
                    Dim::Fixed(n) => {
                        let _ = write!(key, "{n},");
                    }
                    _ => key.push_str("_,"),
                }
            }
        }
        _ => key.push('*'),
    }
}
