//! Recurrent pairs: `feed_<output>_into_<input>()` per pair and `feed_back()` for all,
//! each swapping buffers (no copy) inside `Binding::modify`.

use std::collections::HashSet;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::{in_field, out_field};
use crate::planner::Plan;

/// The `Binding` methods for the plan's recurrent pairs.
pub(crate) fn methods(plan: &Plan, rt: &syn::Path) -> TokenStream {
    // Names are unique (see `method_name`).
    let mut feed_names: HashSet<String> = HashSet::new();
    let feed_back = plan.feed_back.iter().map(|fb| {
        let o = &plan.outputs[fb.output];
        let i = &plan.inputs[fb.input];
        let method = method_name(
            &mut feed_names,
            o.field.trim_start_matches("r#"),
            i.field.trim_start_matches("r#"),
        );
        let of = out_field(o);
        let inf = in_field(i);
        let doc = format!(
            " Makes output `{}` of the last run the next run's input `{}` without copying: \
             the two buffers are exchanged and rebound (the output's new buffer holds the \
             old input, which the next run overwrites).",
            o.name, i.name
        );
        quote! {
            #[doc = #doc]
            pub fn #method(&mut self) -> #rt::Result<()> {
                self.inner.modify(|io| io.#of.swap_storage(&mut io.#inf))
            }
        }
    });
    let feed_back: Vec<TokenStream> = feed_back.collect();
    let all = all(plan, |o, i| {
        let of = out_field(&plan.outputs[o]);
        let inf = in_field(&plan.inputs[i]);
        quote!(io.#of.swap_storage(&mut io.#inf)?;)
    })
    .map(|(doc, swaps)| {
        quote! {
            #[doc = #doc]
            pub fn feed_back(&mut self) -> #rt::Result<()> {
                self.inner.modify(|io| {
                    #swaps
                    ::core::result::Result::Ok(())
                })
            }
        }
    });
    quote!(#(#feed_back)* #all)
}

/// For `feed_back()`: its doc and the swaps (one `swap(output, input)` per pair), or
/// `None` when there are no pairs or two pairs share a value.
pub(crate) fn all(
    plan: &Plan,
    swap: impl Fn(usize, usize) -> TokenStream,
) -> Option<(String, TokenStream)> {
    let (mut fed_out, mut fed_in) = (HashSet::new(), HashSet::new());
    let distinct = plan
        .feed_back
        .iter()
        .all(|fb| fed_out.insert(fb.output) && fed_in.insert(fb.input));
    if plan.feed_back.is_empty() || !distinct {
        return None;
    }
    let swaps = plan.feed_back.iter().map(|fb| swap(fb.output, fb.input));
    let doc = feed_back_doc(plan.feed_back.iter().map(|fb| {
        (
            plan.outputs[fb.output].name.as_str(),
            plan.inputs[fb.input].name.as_str(),
        )
    }));
    Some((doc, quote!(#(#swaps)*)))
}

/// The name of the method feeding `output` into `input` (names of the fields or values):
/// `feed_{output}_into_{input}`, unique among `taken` (it can read the same for two pairs:
/// output `a` into `ab_into_a`, output `a_into_ab` into `a`; later ones get `_2`, ...).
/// Shared by the generated module and the derive.
pub(crate) fn method_name(taken: &mut HashSet<String>, output: &str, input: &str) -> syn::Ident {
    let base = format!("feed_{output}_into_{input}");
    let mut name = base.clone();
    let mut n = 2;
    while !taken.insert(name.clone()) {
        name = format!("{base}_{n}");
        n += 1;
    }
    format_ident!("{}", name)
}

/// The doc of `feed_back()`, naming each pair by its model names `(output, input)`.
/// Shared by the generated module and the derive.
pub(crate) fn feed_back_doc<'a>(pairs: impl Iterator<Item = (&'a str, &'a str)>) -> String {
    let pairs: Vec<String> = pairs.map(|(o, i)| format!("`{o}` -> `{i}`")).collect();
    format!(
        " Feeds every recurrent output of the last run back into its input ({}) \
         without copying: buffers are exchanged, then rebound once. Allocates nothing.",
        pairs.join(", ")
    )
}
