//! Tokens and doc text shared by every generated item: element and shape types, the
//! dims expression that sizes a tensor, and model text made safe for rustdoc.

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

use crate::dtype::ElementType;
use crate::ident::to_ident;
use crate::plan::{AxisSize, Plan, PlannedValue, Storage};
use crate::signature::format_dims;

/// The Rust element type: a primitive, or the runtime's (`f16`, `bf16`, the narrow types
/// such as `Float8E4M3FN` and `Int4x2`).
pub(crate) fn elem_tokens(rt: &syn::Path, elem: ElementType) -> TokenStream {
    let id = format_ident!("{}", elem.rust_name());
    if elem.is_runtime_type() {
        quote!(#rt::#id)
    } else {
        quote!(#id)
    }
}

/// Largest rank with a tuple shape type; higher ranks use `AnyRank`.
pub(crate) const MAX_TUPLE_RANK: usize = 12;

/// The shape type of a planned value: `Fix<N>` where the plan fixes an axis, `Dyn`
/// elsewhere, `AnyRank` for unknown or high ranks.
pub(crate) fn shape_tokens(rt: &syn::Path, v: &PlannedValue) -> TokenStream {
    let axes: Option<Vec<Option<u64>>> = match &v.storage {
        Storage::Owned(axes) => Some(
            axes.iter()
                .map(|a| match a {
                    AxisSize::Fixed(n) => Some(*n),
                    AxisSize::Field(_) => None,
                })
                .collect(),
        ),
        Storage::OwnedAnyRank(_) => None,
        Storage::Allocated => v.dims.as_ref().map(|ds| {
            ds.iter()
                .map(|d| match d {
                    crate::Dim::Fixed(n) => Some(*n),
                    _ => None,
                })
                .collect()
        }),
    };
    match axes {
        Some(axes) if axes.len() <= MAX_TUPLE_RANK => {
            let axes = axes.iter().map(|a| match a {
                Some(n) => {
                    let n = Literal::u64_unsuffixed(*n);
                    quote!(#rt::Fix<#n>)
                }
                None => quote!(#rt::Dyn),
            });
            quote!((#(#axes,)*))
        }
        _ => quote!(#rt::AnyRank),
    }
}

/// Free text from the model, made safe for rustdoc: brackets would otherwise read as
/// (broken) intra-doc links, and HTML-like tags as HTML.
pub(crate) fn model_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.trim().chars() {
        match c {
            '[' | ']' | '<' | '>' | '`' | '*' | '_' | '#' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// `` `float32[batch, 3]` ``.
pub(crate) fn type_doc(v: &PlannedValue) -> String {
    format!("`{}{}`", v.elem, format_dims(v.dims.as_deref()))
}

/// The dims a tensor is sized with, read from the dims value `dims`: `&[dims.batch, 3]`,
/// `&dims.x_shape`, or `&[]` for an output ONNX Runtime allocates.
pub(crate) fn dims_expr(plan: &Plan, v: &PlannedValue, dims: &TokenStream) -> TokenStream {
    match &v.storage {
        Storage::Owned(axes) => {
            let parts = axes.iter().map(|a| match a {
                AxisSize::Fixed(n) => {
                    let n = Literal::u64_unsuffixed(*n);
                    quote!(#n)
                }
                AxisSize::Field(i) => {
                    let f = to_ident(&plan.dims[*i].field);
                    quote!(#dims.#f)
                }
            });
            quote!(&[#(#parts),*])
        }
        Storage::OwnedAnyRank(i) => {
            let f = to_ident(&plan.dims[*i].field);
            quote!(&#dims.#f)
        }
        Storage::Allocated => quote!(&[]),
    }
}

#[cfg(test)]
mod tests {
    use super::model_text;

    #[test]
    fn model_doc_text_cannot_form_links_or_html() {
        assert_eq!(
            model_text("  y = x[0] <b>see [doc](u)</b>  "),
            r"y = x\[0\] \<b\>see \[doc\](u)\</b\>"
        );
    }
}
