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
//! declared are found by name (see [`crate::plan::pipeline::infer_source`]). Two models
//! where the second is a decoder fed by the first also get `Pipeline` (both models,
//! `Pipeline::load`) and `Generator` (`decode::EncoderDecoder` over them): the encoder's
//! buffers are the decoder's inputs, nothing copied.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::parse::{Parse, ParseStream};

use super::MacroEnv;
use super::bindings::model_in_pipeline;
use crate::plan::pipeline::{EdgeDecl, PipelineModel, PlannedEdge, plan_pipeline};

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
                args.edges.push(EdgeEntry {
                    decl: EdgeDecl {
                        from_model,
                        from,
                        to_model,
                        to,
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
    let names: Vec<String> = args.models.iter().map(|m| m.name.to_string()).collect();
    let models: Vec<PipelineModel<'_>> = expanded
        .iter()
        .zip(&names)
        .map(|(e, name)| PipelineModel {
            name,
            sig: &e.signature,
            decoder: e.plan.decoder.as_ref(),
        })
        .collect();
    let decls: Vec<EdgeDecl> = args.edges.iter().map(|e| e.decl.clone()).collect();
    let edges = plan_pipeline(&models, &decls).map_err(|e| {
        let span = e
            .edge
            .and_then(|i| args.edges.get(i))
            .map_or_else(|| args.models[0].name.span(), |e| e.span);
        syn::Error::new(span, format!("pipeline: {e}"))
    })?;

    let modules = args.models.iter().zip(&expanded).map(|(m, e)| {
        let name = &m.name;
        let tokens = &e.tokens;
        let doc = format!(" The pipeline's model `{name}` (what `bindings!` generates for it).");
        quote! {
            #[doc = #doc]
            #[allow(dead_code, unreachable_pub)]
            pub mod #name {
                #tokens
            }
        }
    });
    let edge_doc = edges_doc(&edges, &names);
    let generator = generator(&args.models, &models, &edges, &krate, &edge_doc);
    Ok(quote! {
        #(#modules)*
        #generator
    })
}

/// A rustdoc list of the edges.
fn edges_doc(edges: &[PlannedEdge], names: &[String]) -> String {
    let mut doc = String::from("\n\n Edges (checked against both models when this compiled):");
    for e in edges {
        doc.push_str(&format!(
            "\n - `{}.{}` -> `{}.{}`{}{}",
            names[e.from_model],
            e.from,
            names[e.to_model],
            e.to,
            if e.inferred { " (by name)" } else { "" },
            if e.sizes.is_empty() {
                String::new()
            } else {
                format!(": {}", e.sizes)
            }
        ));
    }
    doc
}

/// `Pipeline`, `Generator` and `EDGES` for two models where the second is a decoder fed by
/// the first; for other pipelines, `EDGES` alone (documented).
fn generator(
    entries: &[ModelEntry],
    models: &[PipelineModel<'_>],
    edges: &[PlannedEdge],
    rt: &syn::Path,
    edge_doc: &str,
) -> TokenStream {
    let pairs = edges.iter().map(|e| {
        let (from, to) = (&e.from, &e.to);
        quote!(#rt::decode::Edge { from: #from, to: #to })
    });
    let count = edges.len();
    let edges_const = {
        let doc = format!(" The edges between the pipeline's models.{edge_doc}");
        quote! {
            #[doc = #doc]
            #[allow(dead_code, unreachable_pub)]
            pub static EDGES: [#rt::decode::Edge; #count] = [#(#pairs),*];
        }
    };
    let encoder_decoder = models.len() == 2
        && models[1].decoder.is_some()
        && edges.iter().all(|e| e.from_model == 0 && e.to_model == 1);
    if !encoder_decoder {
        return edges_const;
    }
    let (enc, dec) = (&entries[0].name, &entries[1].name);
    let pipeline_doc = format!(
        " Both models of the pipeline, loaded: `{enc}` feeds the decoder `{dec}`.{edge_doc}"
    );
    let generator_doc = format!(
        " `{enc}` and the decoder `{dec}` as one generator: `encode()` once per source \
         (its inputs filled in place through `encoder_inputs()`), then the decode loop \
         (`prefill`, `step_greedy`, ...). The decoder reads the encoder's buffers: nothing \
         is copied between them. Made by [`Pipeline::generator`].{edge_doc}"
    );
    quote! {
        #edges_const

        #[doc = #generator_doc]
        #[allow(dead_code, unreachable_pub)]
        pub type Generator<D = #rt::Cpu> =
            #rt::decode::EncoderDecoder<#enc::Io<D>, #dec::Model, #rt::decode::Growing, D>;

        #[doc = #pipeline_doc]
        #[allow(dead_code, unreachable_pub)]
        #[derive(Debug, Clone)]
        pub struct Pipeline {
            /// The encoder.
            pub #enc: #enc::Model,
            /// The decoder.
            pub #dec: #dec::Model,
        }

        #[allow(dead_code, unreachable_pub)]
        impl Pipeline {
            /// Loads both models (each as its module's `Model::load` finds it).
            pub fn load() -> #rt::Result<Self> {
                ::core::result::Result::Ok(Pipeline {
                    #enc: #enc::Model::load()?,
                    #dec: #dec::Model::load()?,
                })
            }

            /// A generator for `batch` rows of up to `capacity` decoded positions, the
            /// encoder's buffers sized by `encoder_dims` (host memory).
            pub fn generator(
                &self,
                encoder_dims: #enc::Dims,
                batch: usize,
                capacity: usize,
            ) -> #rt::Result<Generator> {
                #rt::decode::EncoderDecoder::new(
                    self.#enc.bind(encoder_dims)?,
                    self.#dec.decoder(batch, capacity)?,
                    &EDGES,
                )
            }
        }
    }
}
