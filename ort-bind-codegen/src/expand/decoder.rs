//! The decode loop of a decoder model: the hidden `DECODER` spec, the `Decoder` (and,
//! where the model writes its cache in place, `SharedDecoder`) aliases, and the
//! `Model::decoder*` constructors.

use proc_macro2::TokenStream;
use quote::quote;

use super::tokens::elem_tokens;
use crate::planner::{CacheAxis, DecoderPlan, Plan, PositionAxis, ScalarRole};

/// The spec's integer input.
fn index_input(rt: &syn::Path, input: &(String, crate::element::ElementType)) -> TokenStream {
    let (name, elem) = input;
    let ty = elem_tokens(rt, *elem);
    quote!(#rt::decode::IndexInput { name: #name, elem: <#ty as #rt::Element>::ONNX_TYPE })
}

fn option(t: Option<TokenStream>) -> TokenStream {
    match t {
        Some(t) => quote!(::core::option::Option::Some(#t)),
        None => quote!(::core::option::Option::None),
    }
}

/// `&[CacheAxis::Batch, ...]`.
fn axes_tokens(rt: &syn::Path, axes: &[CacheAxis]) -> TokenStream {
    let axes = axes.iter().map(|a| match a {
        CacheAxis::Batch => quote!(#rt::decode::CacheAxis::Batch),
        CacheAxis::Sequence => quote!(#rt::decode::CacheAxis::Sequence),
        CacheAxis::Fixed(n) => {
            let n = *n as usize;
            quote!(#rt::decode::CacheAxis::Fixed(#n))
        }
        CacheAxis::Blocks => quote!(#rt::decode::CacheAxis::Blocks),
    });
    quote!(&[#(#axes),*])
}

/// A `ContextSpec` literal.
pub(crate) fn context_spec(rt: &syn::Path, c: &crate::planner::ContextPlan) -> TokenStream {
    let name = &c.name;
    let ty = elem_tokens(rt, c.elem);
    let axes = axes_tokens(rt, &c.axes);
    let present = option(c.present.as_ref().map(|p| quote!(#p)));
    quote!(#rt::decode::ContextSpec {
        name: #name,
        elem: <#ty as #rt::Element>::ONNX_TYPE,
        axes: #axes,
        present: #present,
    })
}

/// The `DECODER` static, readable by any route: `inputs`/`outputs` are the model's
/// whole signature (`specs`), so a decoder checks its session like `Model::load`.
pub(crate) fn spec(
    rt: &syn::Path,
    d: &DecoderPlan,
    inputs: &TokenStream,
    outputs: &TokenStream,
) -> TokenStream {
    let none = quote!(::core::option::Option::None);
    spec_with(rt, d, inputs, outputs, &none, &none)
}

/// [`spec`] with the `embedder` and `head` fields' tokens (`Some(&EMBEDDER)`,
/// `Some(&HEAD)` in a pipeline whose decoder is split in parts).
pub(crate) fn spec_with(
    rt: &syn::Path,
    d: &DecoderPlan,
    inputs: &TokenStream,
    outputs: &TokenStream,
    embedder: &TokenStream,
    head: &TokenStream,
) -> TokenStream {
    let input_ids = index_input(rt, &d.input_ids);
    let mask = option(d.attention_mask.as_ref().map(|i| index_input(rt, i)));
    let positions = option(d.position_ids.as_ref().map(|i| index_input(rt, i)));
    let logits = &d.logits;
    let vocab = d.vocab as usize;
    let axes = |a: &[CacheAxis]| axes_tokens(rt, a);
    let caches = d.caches.iter().map(|c| {
        let (past, present) = (&c.past, &c.present);
        let ty = elem_tokens(rt, c.elem);
        let axes = axes(&c.axes);
        quote!(#rt::decode::CacheSpec {
            past: #past,
            present: #present,
            elem: <#ty as #rt::Element>::ONNX_TYPE,
            axes: #axes,
        })
    });
    let position_axes = d.position_axes.iter().map(|a| match a {
        PositionAxis::Batch => quote!(#rt::decode::PositionAxis::Batch),
        PositionAxis::Sequence => quote!(#rt::decode::PositionAxis::Sequence),
        PositionAxis::Extra(n) => {
            let n = *n as usize;
            quote!(#rt::decode::PositionAxis::Extra(#n))
        }
    });
    let context = d.context.iter().map(|c| context_spec(rt, c));
    let scalars = d.scalars.iter().map(|c| {
        let name = &c.name;
        let ty = elem_tokens(rt, c.elem);
        let dims = c.dims.iter().map(|&n| n as usize);
        let role = match c.role {
            ScalarRole::PastSequenceLength => quote!(PastSequenceLength),
            ScalarRole::TotalSequenceLength => quote!(TotalSequenceLength),
            ScalarRole::UseCacheBranch => quote!(UseCacheBranch),
        };
        quote!(#rt::decode::ScalarSpec {
            name: #name,
            elem: <#ty as #rt::Element>::ONNX_TYPE,
            dims: &[#(#dims),*],
            role: #rt::decode::ScalarRole::#role,
        })
    });
    let fixed_batch = option(d.fixed_batch.map(|n| {
        let n = n as usize;
        quote!(#n)
    }));
    let fixed_new = option(d.fixed_new.map(|n| {
        let n = n as usize;
        quote!(#n)
    }));
    let others = &d.other_outputs;
    let shared = d.shared_buffer;
    let sequence_axis = d.sequence_axis;
    let paged = option(d.paged.as_ref().map(|p| {
        let tables = index_input(rt, &p.block_tables);
        let slots = index_input(rt, &p.slot_mapping);
        let block_size = p.block_size as usize;
        quote!(&#rt::decode::PagedSpec {
            block_tables: #tables,
            slot_mapping: #slots,
            block_size: #block_size,
        })
    }));
    quote! {
        #rt::decode::DecoderSpec {
            inputs: #inputs,
            outputs: #outputs,
            input_ids: #input_ids,
            attention_mask: #mask,
            position_ids: #positions,
            logits: #logits,
            vocab: ::core::option::Option::Some(#vocab),
            caches: &[#(#caches),*],
            other_outputs: &[#(#others),*],
            shared_buffer: #shared,
            position_axes: &[#(#position_axes),*],
            context: &[#(#context),*],
            scalars: &[#(#scalars),*],
            fixed_batch: #fixed_batch,
            fixed_new: #fixed_new,
            sequence_axis: #sequence_axis,
            embedder: #embedder,
            head: #head,
            paged: #paged,
        }
    }
}

/// A method of `Model` that this model cannot offer: calling it is a compile error (the
/// trait `bound` is implemented by no type) whose message, label and note say why.
fn unavailable(
    method: &str,
    bound: &str,
    message: &str,
    label: &str,
    note: &str,
    rt: &syn::Path,
) -> TokenStream {
    let method = syn::Ident::new(method, proc_macro2::Span::call_site());
    let bound = syn::Ident::new(bound, proc_macro2::Span::call_site());
    let trait_doc = format!(
        " Why this model has no `{method}` (a compile error when `Model::{method}` is called)."
    );
    quote! {
        #[doc = #trait_doc]
        #[doc(hidden)]
        #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
        #[allow(dead_code, unreachable_pub)]
        pub trait #bound {
            /// Never called: no type implements the trait.
            fn unavailable(self) -> ::core::convert::Infallible;
        }

        #[allow(dead_code, unreachable_pub)]
        impl Model {
            /// Not available for this model: calling it is a compile error that says why.
            #[doc(hidden)]
            #[allow(unreachable_code)]
            pub fn #method<B: #bound>(&self, batch: B, _capacity: usize) -> #rt::Result<::core::convert::Infallible> {
                match batch.unavailable() {}
            }
        }
    }
}

/// The module's items for a model whose cache is paged: the `PagedDecoder` alias and
/// `Model::paged_decoder*`; `decoder` and `shared_decoder` are compile errors that say why.
fn paged_items(rt: &syn::Path, d: &DecoderPlan, roles: &str) -> TokenStream {
    let Some(p) = &d.paged else {
        return quote!();
    };
    let doc = format!(
        " The decode loop of this model in the paged cache mode: each cache one pool of \
         blocks of {} positions shared by every row, bound as both past and present and \
         written in place; each run passes the block table `{}` and the slot mapping `{}`. \
         Made by [`Model::paged_decoder`].{roles}",
        p.block_size, p.block_tables.0, p.slot_mapping.0
    );
    let note = "this model's cache is a pool of blocks read through `block_tables` (paged attention); use `Model::paged_decoder(batch, capacity, blocks)`";
    let no_growing = unavailable(
        "decoder",
        "NotPerRowCache",
        "this model's cache is paged: it has no growing-mode decoder",
        "`decoder` needs a cache per row",
        note,
        rt,
    );
    let no_shared = unavailable(
        "shared_decoder",
        "NoSharedBuffer",
        "this model's cache is paged: it has no shared-buffer decoder",
        "`shared_decoder` needs a cache per row",
        note,
        rt,
    );
    quote! {
        #[doc = #doc]
        #[allow(dead_code, unreachable_pub)]
        pub type PagedDecoder<D = #rt::Cpu> = #rt::decode::Decoder<Model, #rt::decode::Paged, D>;

        #[allow(dead_code, unreachable_pub)]
        impl Model {
            /// A paged decoder for `batch` rows of up to `capacity` positions each, over a
            /// pool of `blocks` blocks shared by the rows (memory follows the positions held,
            /// not `batch x capacity`), its cache in host memory.
            pub fn paged_decoder(&self, batch: usize, capacity: usize, blocks: usize) -> #rt::Result<PagedDecoder> {
                PagedDecoder::with_blocks_on(self.session(), &DECODER, #rt::Cpu, batch, capacity, blocks)
            }

            /// [`Model::paged_decoder`] with the pool on `device`.
            pub fn paged_decoder_on<D: #rt::Device>(&self, device: D, batch: usize, capacity: usize, blocks: usize) -> #rt::Result<PagedDecoder<D>> {
                PagedDecoder::with_blocks_on(self.session(), &DECODER, device, batch, capacity, blocks)
            }
        }

        #no_growing
        #no_shared
    }
}

/// A rustdoc list of the decoder's roles.
fn roles_doc(d: &DecoderPlan) -> String {
    let mut doc = format!(
        "\n\n Token ids `{}`; logits `{}` ({} per position, {})",
        d.input_ids.0, d.logits, d.vocab, d.logits_elem
    );
    if let Some((mask, _)) = &d.attention_mask {
        doc.push_str(&format!("; attention mask `{mask}`"));
    }
    if let Some((pos, _)) = &d.position_ids {
        doc.push_str(&format!("; position ids `{pos}`"));
    }
    for c in &d.context {
        let how = match &c.present {
            Some(present) => format!("computed by the first run as `{present}`, then held"),
            None => "held for the sequence: set from the encoder or `set_context`".to_owned(),
        };
        doc.push_str(&format!("; `{}` ({}, {how})", c.name, c.elem));
    }
    for c in &d.scalars {
        doc.push_str(&format!("; `{}` written by the loop", c.name));
    }
    doc.push_str(". Cache:");
    for c in &d.caches {
        let kind = if c.grows() {
            "grows with the sequence"
        } else {
            "fixed-shape recurrent state"
        };
        doc.push_str(&format!(
            "\n - `{}` -> `{}` ({}, {kind})",
            c.past, c.present, c.elem
        ));
    }
    doc
}

/// The model's vocabulary as a type (`DecoderModel::Vocab`): its size and the element
/// type of its token ids, `Vocab<SIZE, Id>`.
pub(crate) fn vocab_tokens(rt: &syn::Path, d: &DecoderPlan) -> TokenStream {
    let size = proc_macro2::Literal::usize_unsuffixed(d.vocab as usize);
    let ids = elem_tokens(rt, d.input_ids.1);
    quote!(#rt::decode::Vocab<#size, #ids>)
}

/// The module's decoder items, when the plan has a decoder.
pub(crate) fn items(plan: &Plan, rt: &syn::Path) -> TokenStream {
    let Some(d) = &plan.decoder else {
        return quote!();
    };
    let logits = elem_tokens(rt, d.logits_elem);
    let vocab = vocab_tokens(rt, d);
    if let Some(e) = &d.embeds {
        // Fed embeddings: it decodes only behind its embedding model (a pipeline's).
        let doc = format!(
            " This model's decoders are typed by it. It is fed embeddings (`{}`): bind it \
             with its embedding model in `pipeline!` (or `Builder::pipeline`), which \
             generates the decoder.",
            e.name
        );
        return quote! {
            #[doc = #doc]
            impl #rt::decode::DecoderModel for Model {
                type Logits = #logits;
                type Vocab = #vocab;
            }
        };
    }
    let inputs = quote!(<Io<#rt::Cpu> as #rt::BindingIo>::INPUTS);
    let outputs = quote!(<Io<#rt::Cpu> as #rt::BindingIo>::OUTPUTS);
    let spec = spec(rt, d, &inputs, &outputs);
    let roles = roles_doc(d);
    let model_items = quote! {
        /// What the decode loop needs to know of this model (generated; read by its
        /// decoders).
        #[doc(hidden)]
        #[allow(dead_code, unreachable_pub)]
        pub static DECODER: #rt::decode::DecoderSpec = #spec;

        /// This model's decoders are typed by it: a decoder of another model never
        /// type-checks where this one's is expected.
        impl #rt::decode::DecoderModel for Model {
            type Logits = #logits;
            type Vocab = #vocab;
        }
    };
    if d.paged.is_some() {
        let paged = paged_items(rt, d, &roles);
        return quote! {
            #model_items
            #paged
        };
    }
    let decoder_doc = format!(
        " The decode loop of this model in the growing cache mode: the cache in two \
         buffers per pair that trade places each token (no copy by ort-bind). Made by \
         [`Model::decoder`].{roles}"
    );
    let no_shared = d.unshared_reason.as_ref().map(|reason| {
        let note = format!("{reason}; use `Model::decoder` (the growing mode: two buffers per cache pair that trade places, nothing copied by ort-bind)");
        unavailable(
            "shared_decoder",
            "NoSharedBuffer",
            "this model's decoder cannot share one cache buffer between past and present",
            "`shared_decoder` needs a model that writes its cache in place",
            &note,
            rt,
        )
    });
    let shared = d.shared_buffer.then(|| {
        let doc = format!(
            " The decode loop of this model in the shared-buffer cache mode: one buffer per \
             key/value pair bound as both past and present, written in place by the model's \
             `GroupQueryAttention`; a step rebinds only the mask, and `rewind` moves nothing. \
             Made by [`Model::shared_decoder`].{roles}"
        );
        quote! {
            #[doc = #doc]
            #[allow(dead_code, unreachable_pub)]
            pub type SharedDecoder<D = #rt::Cpu> = #rt::decode::Decoder<Model, #rt::decode::SharedBuffer, D>;

            #[allow(dead_code, unreachable_pub)]
            impl Model {
                /// A decoder for `batch` rows of up to `capacity` positions, in the
                /// shared-buffer mode, its cache in host memory.
                pub fn shared_decoder(&self, batch: usize, capacity: usize) -> #rt::Result<SharedDecoder> {
                    SharedDecoder::new(self.session(), &DECODER, batch, capacity)
                }

                /// [`Model::shared_decoder`] with the cache on `device`.
                pub fn shared_decoder_on<D: #rt::Device>(&self, device: D, batch: usize, capacity: usize) -> #rt::Result<SharedDecoder<D>> {
                    SharedDecoder::new_on(self.session(), &DECODER, device, batch, capacity)
                }
            }
        }
    });
    quote! {
        #model_items

        #[doc = #decoder_doc]
        #[allow(dead_code, unreachable_pub)]
        pub type Decoder<D = #rt::Cpu> = #rt::decode::Decoder<Model, #rt::decode::Growing, D>;

        #[allow(dead_code, unreachable_pub)]
        impl Model {
            /// A decoder for `batch` rows of up to `capacity` positions each (prompt and
            /// generated tokens), in the growing cache mode, its cache in host memory.
            pub fn decoder(&self, batch: usize, capacity: usize) -> #rt::Result<Decoder> {
                Decoder::new(self.session(), &DECODER, batch, capacity)
            }

            /// [`Model::decoder`] with the cache on `device`.
            pub fn decoder_on<D: #rt::Device>(&self, device: D, batch: usize, capacity: usize) -> #rt::Result<Decoder<D>> {
                Decoder::new_on(self.session(), &DECODER, device, batch, capacity)
            }

            /// [`Model::decoder_on`], reserving the cache lazily: room for 64 positions,
            /// doubled when a run needs more (memory follows the longest sequence so far,
            /// not `capacity`; see `decode::Decoder::new_lazy_on`).
            pub fn lazy_decoder_on<D: #rt::Device>(&self, device: D, batch: usize, capacity: usize) -> #rt::Result<Decoder<D>> {
                Decoder::new_lazy_on(self.session(), &DECODER, device, batch, capacity)
            }
        }

        #shared
        #no_shared
    }
}
