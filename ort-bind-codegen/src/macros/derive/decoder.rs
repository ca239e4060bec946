//! `#[onnx(decoder)]`: the decode loop of a decoder model, on the deriving struct.
//!
//! On a struct without fields (`struct Gpt;`) the derive emits only these items; on a
//! struct with fields, they come next to its binding. Either way the struct gets
//! `DECODER` (the spec the runtime's `decode::Decoder` runs by), `decoder(&session, batch,
//! capacity)` and `decoder_on(..)`, and, where the model writes its cache in place,
//! `shared_decoder(..)` / `shared_decoder_on(..)`; a model whose cache is paged gets
//! `paged_decoder(..)` / `paged_decoder_on(..)` instead. The same roles and checks as the
//! generated module's `Model::decoder`. `decoder_role("role", "name")`,
//! `decoder_cache("past", "present")` and `decoder_context("input")` name roles under other
//! names, as in `bindings!`.

use proc_macro2::TokenStream;
use quote::quote;

use crate::expand::tokens::{elem_tokens, spec_tokens};
use crate::planner::{DecoderNames, plan, plan_decoder};
use crate::sig::ModelSignature;

/// The decoder items for `input`, or the planner's refusal (a message in the model's
/// terms).
pub(super) fn items(
    input: &syn::DeriveInput,
    krate: &syn::Path,
    sig: &ModelSignature,
    names: &DecoderNames,
) -> Result<TokenStream, String> {
    let d = plan_decoder(sig, Some(names))
        .map_err(|e| e.to_string())?
        .ok_or("the model is not a decoder")?;
    // Every model value, as the generated module declares them: the decoder checks the
    // session against the whole signature.
    let full = plan(sig).map_err(|e| e.to_string())?;
    let inputs = full.inputs.iter().map(|v| spec_tokens(krate, v));
    let outputs = full.outputs.iter().map(|v| spec_tokens(krate, v));
    let spec = crate::expand::decoder::spec(
        krate,
        &d,
        &quote!(&[#(#inputs),*]),
        &quote!(&[#(#outputs),*]),
    );
    let logits = elem_tokens(krate, d.logits_elem);
    let vocab = crate::expand::decoder::vocab_tokens(krate, &d);
    let name = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let shared = d.shared_buffer.then(|| {
        quote! {
            /// A decoder in the shared-buffer mode (one cache buffer per key/value pair,
            /// written in place by the model's `GroupQueryAttention`), cache on the host.
            pub fn shared_decoder(
                session: &#krate::Session,
                batch: usize,
                capacity: usize,
            ) -> #krate::Result<#krate::decode::Decoder<Self, #krate::decode::SharedBuffer>> {
                #krate::decode::Decoder::new(session, Self::DECODER, batch, capacity)
            }

            /// [`Self::shared_decoder`] with the cache on `device`.
            pub fn shared_decoder_on<__D: #krate::Device>(
                session: &#krate::Session,
                device: __D,
                batch: usize,
                capacity: usize,
            ) -> #krate::Result<#krate::decode::Decoder<Self, #krate::decode::SharedBuffer, __D>> {
                #krate::decode::Decoder::new_on(session, Self::DECODER, device, batch, capacity)
            }
        }
    });
    let per_row = quote! {
        /// A decoder for `batch` rows of up to `capacity` positions each, in the
        /// growing cache mode, its cache on the host.
        pub fn decoder(
            session: &#krate::Session,
            batch: usize,
            capacity: usize,
        ) -> #krate::Result<#krate::decode::Decoder<Self, #krate::decode::Growing>> {
            #krate::decode::Decoder::new(session, Self::DECODER, batch, capacity)
        }

        /// [`Self::decoder`] with the cache on `device`.
        pub fn decoder_on<__D: #krate::Device>(
            session: &#krate::Session,
            device: __D,
            batch: usize,
            capacity: usize,
        ) -> #krate::Result<#krate::decode::Decoder<Self, #krate::decode::Growing, __D>> {
            #krate::decode::Decoder::new_on(session, Self::DECODER, device, batch, capacity)
        }

        #shared
    };
    // A paged model's only decoder is paged.
    let constructors = if d.paged.is_some() {
        quote! {
            /// A paged decoder for `batch` rows of up to `capacity` positions each, over a
            /// pool of `blocks` blocks shared by the rows, its cache on the host.
            pub fn paged_decoder(
                session: &#krate::Session,
                batch: usize,
                capacity: usize,
                blocks: usize,
            ) -> #krate::Result<#krate::decode::Decoder<Self, #krate::decode::Paged>> {
                #krate::decode::Decoder::with_blocks_on(session, Self::DECODER, #krate::Cpu, batch, capacity, blocks)
            }

            /// [`Self::paged_decoder`] with the pool on `device`.
            pub fn paged_decoder_on<__D: #krate::Device>(
                session: &#krate::Session,
                device: __D,
                batch: usize,
                capacity: usize,
                blocks: usize,
            ) -> #krate::Result<#krate::decode::Decoder<Self, #krate::decode::Paged, __D>> {
                #krate::decode::Decoder::with_blocks_on(session, Self::DECODER, device, batch, capacity, blocks)
            }
        }
    } else {
        per_row
    };
    Ok(quote! {
        /// The decoders of this struct's model are typed by it: a decoder of another
        /// model never type-checks where this one's is expected.
        impl #impl_generics #krate::decode::DecoderModel for #name #ty_generics #where_clause {
            type Logits = #logits;
            type Vocab = #vocab;
        }

        #[allow(dead_code, unreachable_pub)]
        impl #impl_generics #name #ty_generics #where_clause {
            /// What the decode loop needs to know of the model (generated from it).
            pub const DECODER: &'static #krate::decode::DecoderSpec = &#spec;

            #constructors
        }
    })
}

/// The whole expansion for a struct without fields that asks for `decoder`: the decoder
/// items, `MODEL_PATH` and `MODEL`.
pub(super) fn decoder_only(
    input: &syn::DeriveInput,
    krate: &syn::Path,
    sig: &ModelSignature,
    names: &DecoderNames,
    model_path: &str,
    model_relative: &str,
) -> Result<TokenStream, String> {
    let items = items(input, krate, sig, names)?;
    let name = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    Ok(quote! {
        #items

        #[allow(dead_code, unreachable_pub)]
        impl #impl_generics #name #ty_generics #where_clause {
            /// Absolute path of the model file on the machine that compiled this crate.
            pub const MODEL_PATH: &'static str = #model_path;

            /// Where the model is looked for at run time (`MODEL_FILE.find()`): its environment
            /// variables, beside the executable, the current directory, then `MODEL_PATH`.
            pub const MODEL_FILE: #krate::ModelFile = #krate::ModelFile::new(#model_relative, #model_path);

            /// Renamed to `MODEL_FILE` (the name generated modules use).
            #[deprecated(note = "renamed to `MODEL_FILE`")]
            #[doc(hidden)]
            pub const MODEL: #krate::ModelFile = Self::MODEL_FILE;
        }
    })
}
