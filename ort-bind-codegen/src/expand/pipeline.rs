//! A pipeline's items: a module per model, the checked edges (`EDGES`), and, for an
//! encoder feeding a decoder, `Pipeline` and `Generator`. One emitter for `pipeline!` and
//! `Builder::pipeline`.

use proc_macro2::TokenStream;
use quote::quote;

use crate::plan::pipeline::{PipelineModel, PlannedEdge};

/// The pipeline's items: `modules` are each model's name and generated items, in
/// pipeline order (the order of `models`); `edges` come from `plan_pipeline`.
pub(crate) fn items(
    modules: &[(syn::Ident, TokenStream)],
    models: &[PipelineModel<'_>],
    edges: &[PlannedEdge],
    rt: &syn::Path,
) -> TokenStream {
    let names: Vec<String> = modules.iter().map(|(n, _)| n.to_string()).collect();
    let module_items = modules.iter().map(|(name, tokens)| {
        let doc = format!(" The pipeline's model `{name}` (what `bindings!` generates for it).");
        quote! {
            #[doc = #doc]
            #[allow(dead_code, unreachable_pub)]
            pub mod #name {
                #tokens
            }
        }
    });
    let edge_doc = edges_doc(edges, &names);
    let names: Vec<&syn::Ident> = modules.iter().map(|(n, _)| n).collect();
    let generator = generator(&names, models, edges, rt, &edge_doc);
    quote! {
        #(#module_items)*
        #generator
    }
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
    entries: &[&syn::Ident],
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
    let (enc, dec) = (entries[0], entries[1]);
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
