//! `Inputs` / `Outputs`: the views a binding hands out, one documented field per value.

use proc_macro2::TokenStream;
use quote::quote;

use super::tokens::{Side, elem_tokens, io_type, model_text, shape_tokens, type_doc};
use super::{in_field, out_field};
use crate::ident::to_ident;
use crate::plan::{Form, Plan, PlannedValue, Storage};

/// The doc of a view field: ONNX name, type, who allocates it, recurrent pairing and the
/// model's own doc string.
pub(crate) fn value_doc(plan: &Plan, role: &str, v: &PlannedValue) -> String {
    let mut doc = format!(" {role} `{}`: {}.", v.name, type_doc(v));
    if v.form.is_tensor() && v.elem.packing() > 1 {
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
    if !v.form.is_tensor() {
        doc.push(' ');
        doc.push_str(&value_note(role == "Input", v));
    } else if matches!(v.storage, Storage::Allocated) {
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

/// What is copied and what is read in place, for a value that is not a numeric tensor.
fn value_note(input: bool, v: &PlannedValue) -> String {
    let field = v.field.trim_start_matches("r#");
    let set = format!(
        "Build it whole and give it to `Binding::set_input_{field}`, which binds it (ONNX \
         Runtime keeps a reference to the value; nothing is copied per run); `None` until then"
    );
    match (input, v.form) {
        (true, Form::Strings) => "ONNX Runtime keeps strings in its own string tensors, so \
            `fill` copies each string into the bound tensor (into string buffers ONNX Runtime \
            resizes and reuses); the number of strings follows the dims, and `set_dims` makes \
            a new tensor when they change."
            .into(),
        (false, Form::Strings) => "ONNX Runtime allocates this string tensor during the run; \
            its strings are copied into one UTF-8 buffer with offsets (`Strings`, read as \
            `&str`s) that is reused from run to run. `None` until the first successful run."
            .into(),
        (true, Form::Sequence) => format!(
            "{set}, and a run before that is `Error::MissingInput`. \
             `Sequence::from_arrays` (or `from_strings`) copies each element once into a \
             tensor ONNX Runtime owns."
        ),
        (false, Form::Sequence) => "ONNX Runtime makes this sequence during the run; each \
            element is read in place through a typed view (`iter()`, `get(i)`), each with \
            its own dims. `None` until the first successful run."
            .into(),
        (true, Form::Map { .. } | Form::MapSequence { .. }) => format!(
            "{set}, and a run before that is `Error::MissingInput`. `Map::from_pairs` copies \
             the entries into ONNX Runtime's map (a duplicate key is an error)."
        ),
        (false, Form::Map { .. }) => "ONNX Runtime makes this map during the run; its keys \
            and values are copied into two columns reused from run to run, read as pairs \
            (`iter()`, `get(key)`, `to_hash_map()`). `None` until the first successful run."
            .into(),
        (false, Form::MapSequence { .. }) => "ONNX Runtime makes this sequence of maps \
            during the run (one map per row, as `ZipMap` does); each map's keys and values \
            are copied into columns reused from run to run, read as pairs (`iter()`, \
            `get(key)`, `to_hash_map()`). `None` until the first successful run."
            .into(),
        (true, _) => {
            format!("{set}: an optional input left unset, or set to `Optional::none`, is absent.")
        }
        (false, _) => "The run may produce no value: `get()` is `Ok(None)` then, \
            `Ok(Some(view))` when it produced one, and `Err(Error::NotRun)` before a successful \
            run, so reading it handles absence. A tensor inside is read in place."
            .into(),
    }
}

/// The two view structs.
pub(crate) fn structs(plan: &Plan, rt: &syn::Path) -> TokenStream {
    let device = quote!(D);
    let inputs_view_fields = plan.inputs.iter().map(|v| {
        let f = to_ident(&v.field);
        let elem = elem_tokens(rt, v.elem);
        let shape = shape_tokens(rt, v);
        let doc = value_doc(plan, "Input", v);
        let ty = match v.form {
            Form::Tensor => quote!(#rt::TensorMut<'a, #elem, #shape, D>),
            Form::Strings => quote!(#rt::StringTensorMut<'a, #shape>),
            _ => {
                let ty = io_type(rt, Side::Input, v, &device);
                quote!(::core::option::Option<&'a #ty>)
            }
        };
        quote!(#[doc = #doc] pub #f: #ty,)
    });
    let outputs_view_fields = plan.outputs.iter().map(|v| {
        let f = to_ident(&v.field);
        let elem = elem_tokens(rt, v.elem);
        let shape = shape_tokens(rt, v);
        let doc = value_doc(plan, "Output", v);
        let ty = match (v.form, &v.storage) {
            (Form::Tensor, Storage::Allocated) => {
                quote!(::core::option::Option<#rt::TensorRef<'a, #elem, #shape, D>>)
            }
            (Form::Tensor, _) => quote!(#rt::TensorRef<'a, #elem, #shape, D>),
            (Form::Strings, _) => quote!(::core::option::Option<&'a #rt::Strings>),
            (Form::OptionalTensor | Form::OptionalSequence, _) => {
                let ty = io_type(rt, Side::Output, v, &device);
                quote!(&'a #ty)
            }
            _ => {
                let ty = io_type(rt, Side::Output, v, &device);
                quote!(::core::option::Option<&'a #ty>)
            }
        };
        quote!(#[doc = #doc] pub #f: #ty,)
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
            match v.form {
                Form::Tensor | Form::Strings => quote!(#f: self.#io.view_mut(),),
                _ => quote!(#f: self.#io.as_ref(),),
            }
        })
        .collect()
}

/// Field initialisers of `Outputs { .. }` from an `Io`'s tensors.
pub(crate) fn outputs_init(plan: &Plan, rt: &syn::Path) -> Vec<TokenStream> {
    plan.outputs
        .iter()
        .map(|v| {
            let f = to_ident(&v.field);
            let io = out_field(v);
            match (v.form, &v.storage) {
                (Form::Tensor, Storage::Allocated) | (Form::Strings, _) => {
                    quote!(#f: self.#io.get().ok(),)
                }
                (Form::Tensor, _) => quote!(#f: self.#io.view(),),
                (Form::OptionalTensor | Form::OptionalSequence, _) => quote!(#f: &self.#io,),
                _ => quote!(#f: #rt::ValueOutputSlot::view(&self.#io).ok(),),
            }
        })
        .collect()
}
