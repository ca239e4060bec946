//! `bindings!("models/model.onnx")`: the module build-time codegen writes, generated
//! inside the compiler from the model (or its offline signature cache), with no
//! `build.rs`. Optionally `bindings!("path", crate = "::my_ort_bind")`.

use std::path::Path;

use proc_macro2::TokenStream;
use quote::quote;
use syn::parse::{Parse, ParseStream};

use super::{MacroEnv, resolve_model};
use crate::expand::{ExpandOptions, expand};
use crate::plan::plan;

struct Args {
    path: syn::LitStr,
    krate: Option<syn::Path>,
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
        while !input.is_empty() {
            input.parse::<syn::Token![,]>()?;
            if input.is_empty() {
                break;
            }
            let key: syn::Ident = input.call(syn::ext::IdentExt::parse_any)?;
            if key != "crate" {
                return Err(syn::Error::new(
                    key.span(),
                    format!("unknown option `{key}`; expected `crate = \"path\"`"),
                ));
            }
            input.parse::<syn::Token![=]>()?;
            let lit: syn::LitStr = input.parse()?;
            krate = Some(lit.parse::<syn::Path>().map_err(|_| {
                syn::Error::new(lit.span(), format!("`{}` is not a Rust path", lit.value()))
            })?);
        }
        Ok(Args { path, krate })
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
    let plan = match plan(&resolved.signature) {
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
