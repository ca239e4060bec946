//! `MODEL_PATH`, `Model` (the session, checked against the bindings) and `Binding` (the
//! typed wrapper around `Bound<Io>`).

use proc_macro2::TokenStream;
use quote::quote;

use super::ExpandOptions;
use super::tokens::{model_text, type_doc};
use crate::plan::Plan;
use crate::signature::ModelSignature;

/// `pub const MODEL_PATH`.
pub(crate) fn model_path(opts: &ExpandOptions) -> TokenStream {
    let label = &opts.label;
    let model_path = &opts.model_path;
    let path_doc =
        format!(" Path of the ONNX model these bindings were generated from (`{label}`).");
    quote! {
        #[allow(dead_code, unreachable_pub, clippy::type_complexity)]
        #[doc = #path_doc]
        pub const MODEL_PATH: &str = #model_path;
    }
}

/// The doc of `Model`: its values, producer, opset and the model's doc string.
fn model_doc(sig: &ModelSignature, plan: &Plan, label: &str) -> String {
    let mut model_doc = format!(" The ONNX model `{label}`, loaded into ONNX Runtime.\n\n");
    model_doc.push_str(&format!(
        "Inputs: {}. Outputs: {}.",
        plan.inputs
            .iter()
            .map(|v| format!("`{}` {}", v.name, type_doc(v)))
            .collect::<Vec<_>>()
            .join(", "),
        plan.outputs
            .iter()
            .map(|v| format!("`{}` {}", v.name, type_doc(v)))
            .collect::<Vec<_>>()
            .join(", "),
    ));
    if !sig.producer_name.is_empty() {
        model_doc.push_str(&format!(
            "\n\nProduced by `{} {}`",
            sig.producer_name, sig.producer_version
        ));
        if let Some(op) = sig.default_opset() {
            model_doc.push_str(&format!(", opset {op}"));
        }
        model_doc.push('.');
    } else if let Some(op) = sig.default_opset() {
        model_doc.push_str(&format!("\n\nOpset {op}."));
    }
    if !sig.doc_string.trim().is_empty() {
        model_doc.push_str("\n\n");
        model_doc.push_str(&model_text(&sig.doc_string));
    }
    model_doc
}

/// `Model` and its impl.
pub(crate) fn model(
    sig: &ModelSignature,
    plan: &Plan,
    rt: &syn::Path,
    opts: &ExpandOptions,
) -> TokenStream {
    let model_doc = model_doc(sig, plan, &opts.label);
    quote! {
        #[allow(dead_code, unreachable_pub, clippy::type_complexity)]
        #[doc = #model_doc]
        #[derive(Debug, Clone)]
        pub struct Model {
            session: #rt::Session,
        }

        #[allow(dead_code, unreachable_pub, clippy::type_complexity)]
        impl Model {
            /// Loads the model from [`MODEL_PATH`] with default session options.
            pub fn load() -> #rt::Result<Self> {
                Self::from_file(MODEL_PATH, &#rt::SessionOptions::new())
            }

            /// Loads the model from `path`, checking that it matches these bindings.
            pub fn from_file(
                path: impl ::core::convert::AsRef<::std::path::Path>,
                options: &#rt::SessionOptions,
            ) -> #rt::Result<Self> {
                Self::from_session(#rt::Session::from_file(path, options)?)
            }

            /// Wraps an existing session, checking that its model matches these bindings.
            pub fn from_session(session: #rt::Session) -> #rt::Result<Self> {
                session.check_signature(
                    <Io<#rt::Cpu> as #rt::BindingIo>::INPUTS,
                    <Io<#rt::Cpu> as #rt::BindingIo>::OUTPUTS,
                )?;
                ::core::result::Result::Ok(Model { session })
            }

            /// The underlying session.
            pub fn session(&self) -> &#rt::Session {
                &self.session
            }

            /// Allocates host tensors sized by `dims` and binds them once.
            pub fn bind(&self, dims: Dims) -> #rt::Result<Binding> {
                self.bind_on(#rt::Cpu, dims)
            }

            /// Allocates tensors on `device`, sized by `dims`, and binds them once.
            pub fn bind_on<D: #rt::Device>(&self, device: D, dims: Dims) -> #rt::Result<Binding<D>> {
                ::core::result::Result::Ok(Binding {
                    inner: #rt::Bound::new(&self.session, Io::new(device, dims)?)?,
                })
            }
        }
    }
}

/// `Binding` and its impl (with the feed-back methods `feed_back` gives).
pub(crate) fn binding(rt: &syn::Path, feed_back: TokenStream) -> TokenStream {
    quote! {
        #[allow(dead_code, unreachable_pub, clippy::type_complexity)]
        /// Buffers bound to the model once and reused by every [`Binding::run`].
        #[derive(Debug)]
        pub struct Binding<D: #rt::Device = #rt::Cpu> {
            inner: #rt::Bound<Io<D>>,
        }

        #[allow(dead_code, unreachable_pub, clippy::type_complexity)]
        impl<D: #rt::Device> Binding<D> {
            /// Views of the inputs, to fill in place.
            pub fn inputs(&mut self) -> Inputs<'_, D> {
                self.inner.inputs()
            }

            /// Views of the outputs of the last run, read in place.
            pub fn outputs(&self) -> Outputs<'_, D> {
                self.inner.outputs()
            }

            /// Inputs and outputs at once, e.g. to copy an output into an input.
            pub fn split(&mut self) -> (Inputs<'_, D>, Outputs<'_, D>) {
                self.inner.split()
            }

            /// Runs the model on the bound buffers; allocates and copies nothing in ort-bind.
            pub fn run(&mut self) -> #rt::Result<()> {
                self.inner.run()
            }

            /// Resizes the bound tensors for new dims: the same dims do nothing; dims whose
            /// tensors fit the capacity they have change only the shapes ONNX Runtime sees
            /// (no allocation); a tensor that must grow allocates once, and keeps that
            /// capacity when it shrinks again. Either way every buffer is rebound.
            pub fn set_dims(&mut self, dims: Dims) -> #rt::Result<()> {
                if dims == *self.dims() {
                    return ::core::result::Result::Ok(());
                }
                self.inner.set_dims(&dims)
            }

            /// The dims the tensors are sized for.
            pub fn dims(&self) -> &Dims {
                &self.inner.io().dims
            }

            #feed_back
        }
    }
}
