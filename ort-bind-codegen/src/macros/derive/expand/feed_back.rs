//! The derive's recurrent-pair methods: `feed_<output>_into_<input>(bound)` per pair
//! whose buffers swap, and `feed_back(bound)` for all of them.

use proc_macro2::TokenStream;
use quote::quote;

use super::Ctx;
use crate::check::Role;
use crate::expand::feed_back;

/// `feed_<output>_into_<input>(bound)` per pair that swaps, and `feed_back(bound)` for
/// all of them: buffers are exchanged inside `Binding::modify`, which rebinds; no copy.
pub(super) fn methods(cx: &Ctx<'_, '_>) -> TokenStream {
    let (krate, fields) = (cx.krate, cx.fields);
    let (Some(planned), Some(sig)) = (cx.planned, cx.sig) else {
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
        let method =
            feed_back::method_name(&mut names, &fields[o].spec.ident, &fields[i].spec.ident);
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
            pub fn #method(bound: &mut #krate::Binding<Self>) -> #krate::Result<()> {
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
        let names: Vec<(String, String)> = planned
            .swaps
            .iter()
            .map(|&(o, i)| (onnx(o), onnx(i)))
            .collect();
        let doc = feed_back::feed_back_doc(names.iter().map(|(o, i)| (o.as_str(), i.as_str())));
        quote! {
            #[doc = #doc]
            pub fn feed_back(bound: &mut #krate::Binding<Self>) -> #krate::Result<()> {
                bound.modify(|io| {
                    #(#swaps)*
                    ::core::result::Result::Ok(())
                })
            }
        }
    });
    quote!(#(#one)* #all)
}
