//! `bindings!("models/model.onnx")`: the module build-time codegen writes, generated
//! inside the compiler from the model (or its offline signature cache), with no
//! `build.rs`.
//!
//! After the path come the options `Builder::model_with` takes ([`ModelOptions`]), in the
//! same words, and the facade path:
//!
//! ```text
//! bindings!(
//!     "models/silero_vad.onnx",
//!     dim("input", 0, "batch"),
//!     rename_dim("N", "batch"),
//!     feed_back("stateN", "state"),
//!     no_auto_feed_back,
//!     embed,               // the model's bytes in the binary: no file needed at run time
//!     crate = "::ort_bind",
//! )
//! ```

use std::path::Path;

use proc_macro2::TokenStream;
use quote::quote;
use syn::parse::{Parse, ParseStream};

use super::{MacroEnv, resolve_model};
use crate::check::closest;
use crate::expand::{ExpandOptions, expand};
use crate::plan::{ModelOptions, plan_with};

struct Args {
    path: syn::LitStr,
    krate: Option<syn::Path>,
    options: ModelOptions,
}

const OPTIONS: &[&str] = &[
    "dim",
    "rename_dim",
    "feed_back",
    "no_auto_feed_back",
    "embed",
    "crate",
];

/// `("a", 0, "b")`-style arguments: string literals and integers, as written.
fn call_args(input: ParseStream<'_>) -> syn::Result<Vec<syn::Lit>> {
    let content;
    syn::parenthesized!(content in input);
    let args = syn::punctuated::Punctuated::<syn::Lit, syn::Token![,]>::parse_terminated(&content)?;
    Ok(args.into_iter().collect())
}

fn string(lit: &syn::Lit) -> syn::Result<String> {
    match lit {
        syn::Lit::Str(s) => Ok(s.value()),
        other => Err(syn::Error::new(other.span(), "expected a string literal")),
    }
}

impl Parse for Args {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        if input.is_empty() {
            return Err(input.error(
                "expected the model path: `bindings!(\"models/model.onnx\")`, relative to the \
                 crate's Cargo.toml",
            ));
        }
        let path: syn::LitStr = input.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                "expected the model path as a string literal: `bindings!(\"models/model.onnx\")`",
            )
        })?;
        let mut krate = None;
        let mut options = ModelOptions::new();
        while !input.is_empty() {
            input.parse::<syn::Token![,]>()?;
            if input.is_empty() {
                break;
            }
            let key: syn::Ident = input.call(syn::ext::IdentExt::parse_any)?;
            let arity = |args: &[syn::Lit], n: usize, usage: &str| {
                if args.len() == n {
                    Ok(())
                } else {
                    Err(syn::Error::new(key.span(), format!("expected `{usage}`")))
                }
            };
            match key.to_string().as_str() {
                "crate" => {
                    input.parse::<syn::Token![=]>()?;
                    let lit: syn::LitStr = input.parse()?;
                    krate = Some(lit.parse::<syn::Path>().map_err(|_| {
                        syn::Error::new(lit.span(), format!("`{}` is not a Rust path", lit.value()))
                    })?);
                }
                "no_auto_feed_back" => options = options.no_auto_feed_back(),
                "embed" => options = options.embed(),
                "rename_dim" => {
                    let a = call_args(input)?;
                    arity(&a, 2, "rename_dim(\"from\", \"to\")")?;
                    options = options.rename_dim(&string(&a[0])?, &string(&a[1])?);
                }
                "feed_back" => {
                    let a = call_args(input)?;
                    arity(&a, 2, "feed_back(\"output\", \"input\")")?;
                    options = options.feed_back(&string(&a[0])?, &string(&a[1])?);
                }
                "dim" => {
                    let a = call_args(input)?;
                    arity(&a, 3, "dim(\"value\", axis, \"dim\")")?;
                    let axis = match &a[1] {
                        syn::Lit::Int(i) => i.base10_parse::<usize>()?,
                        other => {
                            return Err(syn::Error::new(other.span(), "expected an axis number"));
                        }
                    };
                    options = options.dim(&string(&a[0])?, axis, &string(&a[2])?);
                }
                other => {
                    let mut message = format!(
                        "unknown option `{other}`; expected {}",
                        OPTIONS
                            .iter()
                            .map(|o| format!("`{o}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    );
                    if let Some(best) = closest(other, OPTIONS.iter().copied()) {
                        message.push_str(&format!("\n  help: did you mean `{best}`?"));
                    }
                    return Err(syn::Error::new(key.span(), message));
                }
            }
        }
        Ok(Args {
            path,
            krate,
            options,
        })
    }
}

/// Expands `bindings!(...)`.
pub fn bindings(input: TokenStream, env: &MacroEnv) -> TokenStream {
    let args: Args = match syn::parse2(input) {
        Ok(a) => a,
        Err(e) => return e.to_compile_error(),
    };
    let resolved = match resolve_model(env, &args.path) {
        Ok(r) => r,
        Err(e) => return e.to_compile_error(),
    };
    if args.options.embeds() && !resolved.model_present {
        return syn::Error::new(
            args.path.span(),
            format!(
                "`embed` needs the model file at compile time, and `{}` is absent (only its \
                 offline signature cache is here)",
                args.path.value()
            ),
        )
        .to_compile_error();
    }
    let plan = match plan_with(&resolved.signature, &args.options) {
        Ok(p) => p,
        Err(e) => {
            return syn::Error::new(
                args.path.span(),
                format!("`{}` cannot be bound: {e}", args.path.value()),
            )
            .to_compile_error();
        }
    };
    let krate = args.krate.unwrap_or_else(|| syn::parse_quote!(::ort_bind));
    let label = Path::new(&args.path.value())
        .file_name()
        .map_or_else(|| args.path.value(), |n| n.to_string_lossy().into_owned());
    let opts = ExpandOptions {
        runtime: krate.clone(),
        model_path: resolved.model.to_string_lossy().into_owned(),
        model_relative: args.path.value(),
        embed: args.options.embeds(),
        label,
    };
    let module = expand(&resolved.signature, &plan, &opts);
    let tracking = super::track::tokens(
        &krate,
        resolved.model_present.then_some(resolved.model.as_path()),
        resolved.cache.as_deref(),
        &env.site,
    );
    quote! {
        #module
        #tracking
    }
}
