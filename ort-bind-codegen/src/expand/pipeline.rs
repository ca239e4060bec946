//! A pipeline's items: a module per model, the checked edges (`EDGES`), and, for an
//! encoder feeding a decoder, `Pipeline` and `Generator`; for decoders in parts,
//! `Pipeline::decoder`; for a chain with no decoder, `chain.rs`'s items. One emitter for
//! `pipeline!` and `Builder::pipeline`.

use proc_macro2::TokenStream;
use quote::quote;

use crate::element::ElementType;
use crate::planner::pipeline::{
    EdgeDecl, PipelineError, PipelineModel, PlannedEdge, pipeline_models, plan_pipeline,
    split_decoders,
};
use crate::planner::{ContextPlan, DecoderPlan, Plan};
use crate::sig::{Dim, ModelSignature};

/// One model of a pipeline, expanded: its module's name, what it was made from, and its
/// items (what `bindings!` generates for it).
pub(crate) struct Part<'a> {
    pub(crate) name: syn::Ident,
    pub(crate) sig: &'a ModelSignature,
    pub(crate) plan: &'a Plan,
    pub(crate) tokens: TokenStream,
}

/// Plans the pipeline of `parts` (split decoders joined to their heads, the declared
/// edges checked and the others found by name) and generates its items: what `pipeline!`
/// and `Builder::pipeline` both emit.
pub(crate) fn generate(
    parts: &[Part<'_>],
    declared: &[EdgeDecl],
    rt: &syn::Path,
) -> Result<TokenStream, PipelineError> {
    let names: Vec<String> = parts.iter().map(|p| p.name.to_string()).collect();
    let sigs: Vec<&ModelSignature> = parts.iter().map(|p| p.sig).collect();
    let plans: Vec<Option<&DecoderPlan>> = parts.iter().map(|p| p.plan.decoder.as_ref()).collect();
    let joined = split_decoders(&sigs, &plans);
    let models = pipeline_models(&names, &sigs, &plans, &joined);
    let edges = plan_pipeline(&models, declared)?;
    Ok(items(parts, &models, &edges, rt))
}

/// The pipeline's items: `parts` in pipeline order (the order of `models`); `edges` come
/// from `plan_pipeline`.
fn items(
    parts: &[Part<'_>],
    models: &[PipelineModel<'_>],
    edges: &[PlannedEdge],
    rt: &syn::Path,
) -> TokenStream {
    let names: Vec<String> = parts.iter().map(|p| p.name.to_string()).collect();
    let module_items = parts.iter().map(|Part { name, tokens, .. }| {
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
    let chain = parts
        .iter()
        .all(|p| p.plan.decoder.is_none())
        .then(|| super::chain::chain(parts, edges, rt, &edge_doc));
    let names: Vec<&syn::Ident> = parts.iter().map(|p| &p.name).collect();
    let generator = generator(&names, models, edges, rt, &edge_doc, chain);
    quote! {
        #(#module_items)*
        #generator
    }
}

/// The `decode::Edge` literals of `edges` (`[#(#pairs),*]`) and how many there are.
fn edge_array(edges: &[PlannedEdge], rt: &syn::Path) -> (Vec<TokenStream>, usize) {
    let pairs: Vec<TokenStream> = edges
        .iter()
        .map(|e| {
            let (from, to) = (&e.from, &e.to);
            quote!(#rt::decode::Edge { from: #from, to: #to })
        })
        .collect();
    let count = pairs.len();
    (pairs, count)
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
/// the first; `chain`'s items for a pipeline with no decoder; for other pipelines, `EDGES`
/// alone (documented).
fn generator(
    entries: &[&syn::Ident],
    models: &[PipelineModel<'_>],
    edges: &[PlannedEdge],
    rt: &syn::Path,
    edge_doc: &str,
    chain: Option<TokenStream>,
) -> TokenStream {
    let (pairs, count) = edge_array(edges, rt);
    let edges_const = {
        let doc = format!(" The edges between the pipeline's models.{edge_doc}");
        quote! {
            #[doc = #doc]
            #[allow(dead_code, unreachable_pub)]
            pub static EDGES: [#rt::decode::Edge; #count] = [#(#pairs),*];
        }
    };
    if let Some(embedding) = find_embedding(models) {
        let items = embedded(entries, edges, rt, edge_doc, &embedding);
        return quote! {
            #edges_const
            #items
        };
    }
    let encoder_decoder = models.len() == 2
        && models[1].decoder.is_some_and(|d| d.embeds.is_none())
        && edges.iter().all(|e| e.from_model == 0 && e.to_model == 1);
    if !encoder_decoder {
        return quote! {
            #edges_const
            #chain
        };
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

            /// [`Pipeline::generator`] with both models' buffers on `device` (the
            /// encoder's outputs and the decoder's cache): one device type for both, so
            /// an edge between two devices cannot be written. The sessions must run on
            /// that device (`load_with` and `SessionOptions::cuda`).
            pub fn generator_on<D: #rt::Device + ::core::clone::Clone>(
                &self,
                device: D,
                encoder_dims: #enc::Dims,
                batch: usize,
                capacity: usize,
            ) -> #rt::Result<Generator<D>> {
                #rt::decode::EncoderDecoder::new(
                    self.#enc.bind_on(device.clone(), encoder_dims)?,
                    self.#dec.decoder_on(device, batch, capacity)?,
                    &EDGES,
                )
            }
        }
    }
}

/// A decoder fed embeddings and the earlier model that makes them from the ids.
struct Embedding<'a> {
    /// The embedding model's position.
    embedder: usize,
    /// The decoder's position and plan.
    decoder: usize,
    plan: &'a DecoderPlan,
    /// The decoder's language-model head, for a decoder split before it.
    head: Option<&'a crate::planner::pipeline::HeadPlan>,
    /// The embedding model's ids input.
    ids: (String, ElementType),
    /// Its other inputs (image features), given for a sequence's first run.
    extra: Vec<ContextPlan>,
}

/// The decoder fed embeddings, if the pipeline has one, and the nearest earlier model with
/// an output of that name and an integer `[batch, sequence]` input (the ids).
fn find_embedding<'a>(models: &[PipelineModel<'a>]) -> Option<Embedding<'a>> {
    let (decoder, plan, head) = models.iter().enumerate().find_map(|(k, m)| {
        m.decoder
            .filter(|d| d.embeds.is_some())
            .map(|d| (k, d, m.head))
    })?;
    let embeds = plan.embeds.as_ref()?;
    let embedder = (0..decoder)
        .rev()
        .find(|&j| models[j].sig.output(&embeds.name).is_some())?;
    let sig = models[embedder].sig;
    let (ids, batch) = sig.inputs.iter().find_map(|v| match v.tensor() {
        Some((elem @ (ElementType::I64 | ElementType::I32), Some(dims))) if dims.len() == 2 => {
            let batch = match &dims[0] {
                Dim::Named(n) => Some(n.clone()),
                _ => None,
            };
            Some(((v.name.clone(), elem), batch))
        }
        _ => None,
    })?;
    let extra = sig
        .inputs
        .iter()
        .filter(|v| v.name != ids.0)
        .filter_map(|v| {
            let (elem, dims) = v.tensor()?;
            Some(ContextPlan {
                name: v.name.clone(),
                elem,
                axes: crate::planner::decoder::context_axes(dims?, batch.as_deref()),
                present: None,
            })
        })
        .collect();
    Some(Embedding {
        embedder,
        decoder,
        plan,
        head,
        ids,
        extra,
    })
}

/// `EMBEDDER`, `DECODER`, `Decoder`, `Pipeline` (`load`, `decoder`) and, where one earlier
/// model feeds the embedding model's other inputs (a vision model), `Generator` and
/// `Pipeline::generator`.
fn embedded(
    entries: &[&syn::Ident],
    edges: &[PlannedEdge],
    rt: &syn::Path,
    edge_doc: &str,
    e: &Embedding<'_>,
) -> TokenStream {
    let (emb, dec) = (entries[e.embedder], entries[e.decoder]);
    let embeds = e.plan.embeds.as_ref().expect("found by find_embedding");
    let (output, hidden) = (&embeds.name, embeds.hidden as usize);
    let elem = super::tokens::elem_tokens(rt, embeds.elem);
    let extra = e.extra.iter().map(|c| super::decoder::context_spec(rt, c));
    let mut plan = e.plan.clone();
    plan.input_ids = e.ids.clone();
    let (head_static, head_field, head_session) = match e.head {
        Some(h) => {
            let logits = super::tokens::elem_tokens(rt, e.plan.logits_elem);
            let vocab = super::decoder::vocab_tokens(rt, &plan);
            let model_impl = quote! {
                /// The split decoder is typed by its transformer's model (alone it has no
                /// logits, so its module does not say so).
                impl #rt::decode::DecoderModel for #dec::Model {
                    type Logits = #logits;
                    type Vocab = #vocab;
                }
            };
            let model = entries[h.model];
            let (from, input, hidden) = (&h.from, &h.input, h.hidden as usize);
            let elem = super::tokens::elem_tokens(rt, h.elem);
            (
                quote! {
                    #model_impl

                    /// What the decode loop needs to know of the language-model head
                    /// (generated).
                    #[doc(hidden)]
                    #[allow(dead_code, unreachable_pub)]
                    pub static HEAD: #rt::decode::HeadSpec = #rt::decode::HeadSpec {
                        inputs: <#model::Io<#rt::Cpu> as #rt::BindingIo>::INPUTS,
                        outputs: <#model::Io<#rt::Cpu> as #rt::BindingIo>::OUTPUTS,
                        from: #from,
                        input: #input,
                        elem: <#elem as #rt::Element>::ONNX_TYPE,
                        hidden: #hidden,
                    };
                },
                quote!(::core::option::Option::Some(&HEAD)),
                quote!(::core::option::Option::Some(self.#model.session())),
            )
        }
        None => (
            quote!(),
            quote!(::core::option::Option::None),
            quote!(::core::option::Option::None),
        ),
    };
    let decoder_spec = super::decoder::spec_with(
        rt,
        &plan,
        &quote!(<#dec::Io<#rt::Cpu> as #rt::BindingIo>::INPUTS),
        &quote!(<#dec::Io<#rt::Cpu> as #rt::BindingIo>::OUTPUTS),
        &quote!(::core::option::Option::Some(&EMBEDDER)),
        &head_field,
    );
    let fields = entries.iter().map(|n| {
        let doc = format!(" The model `{n}`.");
        quote!(#[doc = #doc] pub #n: #n::Model)
    });
    let loads = entries.iter().map(|n| quote!(#n: #n::Model::load()?));
    let decoder_doc = format!(
        " The decode loop of `{dec}`, fed by `{emb}`: each run, `{emb}` turns the ids into \
         embeddings in the buffer `{dec}` reads (nothing copied between them). Made by \
         [`Pipeline::decoder`].{edge_doc}"
    );
    // A model before the embedding model that feeds its other inputs (image features).
    let feeder = edges
        .iter()
        .filter(|x| x.to_model == e.embedder && e.extra.iter().any(|c| c.name == x.to))
        .map(|x| x.from_model)
        .next();
    let generator = feeder.map(|f| {
        let enc = entries[f];
        let fed: Vec<PlannedEdge> = edges
            .iter()
            .filter(|x| x.from_model == f && x.to_model == e.embedder)
            .cloned()
            .collect();
        let (pairs, count) = edge_array(&fed, rt);
        let doc = format!(
            " `{enc}` and the decode loop of `{dec}` (fed by `{emb}`) as one generator: \
             `encode()` runs `{enc}` once per prompt, and the prompt's first run reads its \
             outputs (image features) in place; later runs give `{emb}` none. Made by \
             [`Pipeline::generator`]."
        );
        quote! {
            /// The edges from the model that feeds the embedding model.
            #[allow(dead_code, unreachable_pub)]
            pub static GENERATOR_EDGES: [#rt::decode::Edge; #count] = [#(#pairs),*];

            #[doc = #doc]
            #[allow(dead_code, unreachable_pub)]
            pub type Generator<D = #rt::Cpu> =
                #rt::decode::EncoderDecoder<#enc::Io<D>, #dec::Model, #rt::decode::Growing, D>;

            #[allow(dead_code, unreachable_pub)]
            impl Pipeline {
                /// A generator for `batch` rows of up to `capacity` positions, the feeding
                /// model's buffers sized by `dims` (host memory).
                pub fn generator(&self, dims: #enc::Dims, batch: usize, capacity: usize) -> #rt::Result<Generator> {
                    #rt::decode::EncoderDecoder::new(
                        self.#enc.bind(dims)?,
                        self.decoder(batch, capacity)?,
                        &GENERATOR_EDGES,
                    )
                }
            }
        }
    });
    let pipeline_doc = format!(" Every model of the pipeline, loaded.{edge_doc}");
    quote! {
        /// What the decode loop needs to know of the embedding model (generated).
        #[doc(hidden)]
        #[allow(dead_code, unreachable_pub)]
        pub static EMBEDDER: #rt::decode::EmbedderSpec = #rt::decode::EmbedderSpec {
            inputs: <#emb::Io<#rt::Cpu> as #rt::BindingIo>::INPUTS,
            outputs: <#emb::Io<#rt::Cpu> as #rt::BindingIo>::OUTPUTS,
            output: #output,
            embeds: #output,
            elem: <#elem as #rt::Element>::ONNX_TYPE,
            hidden: #hidden,
            extra: &[#(#extra),*],
        };

        /// What the decode loop needs to know of the decoder and its embedding model
        /// (generated).
        #[doc(hidden)]
        #[allow(dead_code, unreachable_pub)]
        pub static DECODER: #rt::decode::DecoderSpec = #decoder_spec;

        #head_static

        #[doc = #decoder_doc]
        #[allow(dead_code, unreachable_pub)]
        pub type Decoder<D = #rt::Cpu> = #rt::decode::Decoder<#dec::Model, #rt::decode::Growing, D>;

        #[doc = #pipeline_doc]
        #[allow(dead_code, unreachable_pub)]
        #[derive(Debug, Clone)]
        pub struct Pipeline {
            #(#fields,)*
        }

        #[allow(dead_code, unreachable_pub)]
        impl Pipeline {
            /// Loads every model (each as its module's `Model::load` finds it).
            pub fn load() -> #rt::Result<Self> {
                ::core::result::Result::Ok(Pipeline { #(#loads,)* })
            }

            /// The decode loop for `batch` rows of up to `capacity` positions (host
            /// memory): ids in; each run, the embedding model, then the decoder.
            pub fn decoder(&self, batch: usize, capacity: usize) -> #rt::Result<Decoder> {
                Decoder::with_parts_on(
                    self.#dec.session(),
                    ::core::option::Option::Some(self.#emb.session()),
                    #head_session,
                    &DECODER,
                    #rt::Cpu,
                    batch,
                    capacity,
                )
            }
        }

        #generator
    }
}
