//! `Inputs` / `Outputs`: the views a binding hands out, one documented field per value.

use proc_macro2::TokenStream;
use quote::quote;

use super::tokens::{elem_tokens, model_text, shape_tokens, type_doc};
use super::{in_field, out_field};
use crate::ident::to_ident;
use crate::plan::{Plan, PlannedValue, Storage};

/// The doc of a view field: ONNX name, type, who allocates it, recurrent pairing and the
/// model's own doc string.
pub(crate) fn value_doc(plan: &Plan, role: &str, v: &PlannedValue) -> String {
    let mut doc = format!(" {role} `{}`: {}.", v.name, type_doc(v));
    if v.elem.packing() > 1 {
        doc.push_str(&format!(
            " Packed {} elements to a byte as ONNX stores them, first in the lowest bits: \
             `len()` and `as_slice()` count bytes; {}.",
            v.elem.packing(),
            if role == "Output" {
                "`unpacked()` reads the elements"
            } else {
                "`pack_from(&values)` writes the elements"
            },
        ));
    }
    if matches!(v.storage, Storage::Allocated) {
        doc.push_str(
            " Its shape is decided by ONNX Runtime during the run, which allocates it \
             (see `AllocatedOutput` for when that memory is reused); \
             `None` until the first successful run.",
        );
    }
    if role == "Output"
        && let Some(fb) = plan
            .feed_back
            .iter()
            .find(|fb| std::ptr::eq(&plan.outputs[fb.output], v))
    {
        let input = &plan.inputs[fb.input];
        doc.push_str(&format!(
            " Recurrent: it has the shape of input `{}` and can become that input \
             without a copy (`Binding::feed_{}_into_{}`).",
            input.name,
            v.field.trim_start_matches("r#"),
            input.field.trim_start_matches("r#"),
        ));
    }
    if !v.doc.trim().is_empty() {
        doc.push_str("\n\n");
        doc.push_str(&model_text(&v.doc));
    }
    doc
}

/// The two view structs.
pub(crate) fn structs(plan: &Plan, rt: &syn::Path) -> TokenStream {
    let inputs_view_fields = plan.inputs.iter().map(|v| {
        let f = to_ident(&v.field);
        let elem = elem_tokens(rt, v.elem);
        let shape = shape_tokens(rt, v);
        let doc = value_doc(plan, "Input", v);
        quote!(#[doc = #doc] pub #f: #rt::TensorMut<'a, #elem, #shape, D>,)
    });
    let outputs_view_fields = plan.outputs.iter().map(|v| {
        let f = to_ident(&v.field);
        let elem = elem_tokens(rt, v.elem);
        let shape = shape_tokens(rt, v);
        let doc = value_doc(plan, "Output", v);
        match v.storage {
            Storage::Allocated => quote!(
                #[doc = #doc] pub #f: ::core::option::Option<#rt::TensorRef<'a, #elem, #shape, D>>,
            ),
            _ => quote!(#[doc = #doc] pub #f: #rt::TensorRef<'a, #elem, #shape, D>,),
        }
    });
    quote! {
        #[allow(dead_code, unreachable_pub, clippy::type_complexity)]
        /// The inputs of a [`Binding`], to fill in place before [`Binding::run`].
        #[derive(Debug)]
        pub struct Inputs<'a, D: #rt::Device = #rt::Cpu> {
            #(#inputs_view_fields)*
            #[doc(hidden)]
            pub _device: ::core::marker::PhantomData<&'a D>,
        }

        #[allow(dead_code, unreachable_pub, clippy::type_complexity)]
        /// The outputs of a [`Binding`], read in place after [`Binding::run`].
        #[derive(Debug)]
        pub struct Outputs<'a, D: #rt::Device = #rt::Cpu> {
            #(#outputs_view_fields)*
            #[doc(hidden)]
            pub _device: ::core::marker::PhantomData<&'a D>,
        }
    }
}

/// Field initialisers of `Inputs { .. }` from an `Io`'s tensors.
pub(crate) fn inputs_init(plan: &Plan) -> Vec<TokenStream> {
    plan.inputs
        .iter()
        .map(|v| {
            let f = to_ident(&v.field);
            let io = in_field(v);
            quote!(#f: self.#io.view_mut(),)
        })
        .collect()
}

/// Field initialisers of `Outputs { .. }` from an `Io`'s tensors.
pub(crate) fn outputs_init(plan: &Plan) -> Vec<TokenStream> {
    plan.outputs
        .iter()
        .map(|v| {
            let f = to_ident(&v.field);
            let io = out_field(v);
            match v.storage {
                Storage::Allocated => quote!(#f: self.#io.get().ok(),),
                _ => quote!(#f: self.#io.view(),),
            }
        })
        .collect()
}
