//! `pipeline!(...)`: several models bound at compile time as one pipeline, with the edges
//! between them checked against both model files (element type, rank, fixed sizes; a
//! decoder's inputs held for a sequence all fed).
//!
//! ```text
//! pipeline!(
//!     encoder = "models/encoder.onnx",
//!     decoder = ("models/decoder.onnx", decoder),      // a model with `bindings!` options
//!     encoder.present_key_cross_0 -> decoder.past_key_cross_0,   // declared edges;
//!     encoder["present.0.key"] -> decoder["past.0.key"],         // names with dots
//!     crate = "::ort_bind",
//! )
//! ```
//!
//! Each model becomes a module of that name (what `bindings!` generates for it). Edges not
//! declared are found by name (see [`crate::planner::pipeline::infer_source`]). Two models
//! where the second is a decoder fed by the first also get `Pipeline` (both models,
//! `Pipeline::load`) and `Generator` (`decode::EncoderDecoder` over them): the encoder's
//! buffers are the decoder's inputs, nothing copied.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::parse::{Parse, ParseStream};

use super::MacroEnv;
use super::bindings::model_in_pipeline;
use crate::expand::pipeline::{Part, generate};
use crate::planner::pipeline::EdgeDecl;

/// A model entry: `name = "path"` or `name = ("path", options...)`.
struct ModelEntry {
    name: syn::Ident,
    args: TokenStream,
}

/// An edge: `model.value -> model.value` (a value as an identifier or `["name"]`).
struct EdgeEntry {
    decl: EdgeDecl,
    span: Span,
}

struct Args {
    models: Vec<ModelEntry>,
    edges: Vec<EdgeEntry>,
    krate: Option<syn::Path>,
}

/// `model.value` or `model["value"]`.
fn endpoint(input: ParseStream<'_>) -> syn::Result<(String, String, Span)> {
    let model: syn::Ident = input.parse()?;
    let value = if input.peek(syn::token::Bracket) {
        let content;
        syn::bracketed!(content in input);
        let lit: syn::LitStr = content.parse()?;
        lit.value()
    } else {
        input.parse::<syn::Token![.]>()?;
        let ident: syn::Ident = input.call(syn::ext::IdentExt::parse_any)?;
        ident.to_string()
    };
    Ok((model.to_string(), value, model.span()))
}

impl Parse for Args {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let mut args = Args {
            models: Vec::new(),
            edges: Vec::new(),
            krate: None,
        };
        if input.is_empty() {
            return Err(input.error(
                "expected models and edges: `pipeline!(encoder = \"models/encoder.onnx\", decoder = \"models/decoder.onnx\")`",
            ));
        }
        while !input.is_empty() {
            if input.peek(syn::Token![crate]) {
                input.parse::<syn::Token![crate]>()?;
                input.parse::<syn::Token![=]>()?;
                let lit: syn::LitStr = input.parse()?;
                args.krate = Some(lit.parse()?);
            } else if input.peek2(syn::Token![=]) {
                let name: syn::Ident = input.parse()?;
                input.parse::<syn::Token![=]>()?;
                let tokens = if input.peek(syn::token::Paren) {
                    let content;
                    syn::parenthesized!(content in input);
                    content.parse::<TokenStream>()?
                } else {
                    let lit: syn::LitStr = input.parse().map_err(|e| {
                        syn::Error::new(
                            e.span(),
                            "expected the model's path as a string literal, or `(\"path\", options...)`",
                        )
                    })?;
                    quote!(#lit)
                };
                args.models.push(ModelEntry { name, args: tokens });
            } else {
                let (from_model, from, span) = endpoint(input).map_err(|e| {
                    syn::Error::new(
                        e.span(),
                        "expected a model (`name = \"path\"`), an edge (`model.output -> model.input`) or `crate = \"...\"`",
                    )
                })?;
                input.parse::<syn::Token![->]>()?;
                let (to_model, to, _) = endpoint(input)?;
                let view = input.peek(syn::Token![as]);
                if view {
                    input.parse::<syn::Token![as]>()?;
                    let word: syn::Ident = input.parse()?;
                    if word != "view" {
                        return Err(syn::Error::new(
                            word.span(),
                            "expected `as view` (the input reads the source's elements in its own shape)",
                        ));
                    }
                }
                args.edges.push(EdgeEntry {
                    decl: EdgeDecl {
                        from_model,
                        from,
                        to_model,
                        to,
                        view,
                    },
                    span,
                });
            }
            if input.is_empty() {
                break;
            }
            input.parse::<syn::Token![,]>()?;
        }
        if args.models.len() < 2 {
            return Err(syn::Error::new(
                Span::call_site(),
                "a pipeline needs at least two models (`name = \"path\"`)",
            ));
        }
        Ok(args)
    }
}

/// Expands `pipeline!(...)`.
pub fn pipeline(input: TokenStream, env: &MacroEnv) -> TokenStream {
    match try_pipeline(input, env) {
        Ok(tokens) => tokens,
        Err(e) => e.to_compile_error(),
    }
}

fn try_pipeline(input: TokenStream, env: &MacroEnv) -> syn::Result<TokenStream> {
    let args: Args = syn::parse2(input)?;
    let krate = args
        .krate
        .clone()
        .unwrap_or_else(|| syn::parse_quote!(::ort_bind));
    let mut expanded = Vec::with_capacity(args.models.len());
    for m in &args.models {
        expanded.push(model_in_pipeline(m.args.clone(), &krate, env)?);
    }
    let parts: Vec<Part<'_>> = args
        .models
        .iter()
        .zip(&expanded)
        .map(|(m, e)| Part {
            name: m.name.clone(),
            sig: &e.signature,
            plan: &e.plan,
            tokens: e.tokens.clone(),
        })
        .collect();
    let decls: Vec<EdgeDecl> = args.edges.iter().map(|e| e.decl.clone()).collect();
    generate(&parts, &decls, &krate).map_err(|e| {
        let span = e
            .edge
            .and_then(|i| args.edges.get(i))
            .map_or_else(|| args.models[0].name.span(), |e| e.span);
        syn::Error::new(span, format!("pipeline: {e}"))
    })
}
