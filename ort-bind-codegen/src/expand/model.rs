//! `MODEL_PATH`, `Model` (the session, checked against the bindings) and `Binding` (the
//! typed wrapper around the runtime's `Binding<Io>`).

use proc_macro2::TokenStream;
use quote::quote;

use super::ExpandOptions;
use super::tokens::{model_text, type_doc};
use crate::planner::Plan;
use crate::sig::ModelSignature;

/// `pub const MODEL_PATH`, `pub const MODEL_FILE` (where `Model::load` looks after
/// deployment) and, with `embed`, the model's bytes.
pub(crate) fn model_path(opts: &ExpandOptions) -> TokenStream {
    let rt = &opts.runtime;
    let label = &opts.label;
    let model_path = &opts.model_path;
    let model_relative = &opts.model_relative;
    let path_doc = format!(
        " Path of the ONNX model these bindings were generated from (`{label}`), on the \
         machine that built them."
    );
    let embedded = opts.embed.then(|| {
        quote! {
            /// The model's bytes, embedded in the binary at build time.
            static MODEL_BYTES: &[u8] = ::core::include_bytes!(#model_path);
        }
    });
    quote! {
        #[allow(dead_code, unreachable_pub, clippy::type_complexity)]
        #[doc = #path_doc]
        pub const MODEL_PATH: &str = #model_path;

        #[allow(dead_code, unreachable_pub)]
        /// Where `Model::load` looks for the model at run time: `ORT_BIND_MODEL_<NAME>`,
        /// `ORT_BIND_MODEL_DIR`, beside the executable, the current directory (each at the
        /// path the crate gives it, then by file name), then [`MODEL_PATH`].
        pub const MODEL_FILE: #rt::ModelFile = #rt::ModelFile::new(#model_relative, MODEL_PATH);

        #embedded
    }
}

/// The body and doc of `Model::load_with`: find the file, or load the embedded bytes.
fn load(opts: &ExpandOptions) -> (TokenStream, &'static str) {
    if opts.embed {
        (
            quote! {
                match MODEL_FILE.override_path() {
                    ::core::option::Option::Some(path) => Self::from_file(path, options),
                    ::core::option::Option::None => Self::from_memory(MODEL_BYTES, options),
                }
            },
            " Loads the model embedded in the binary (or the file `ORT_BIND_MODEL_<NAME>` \
             names, when set; see [`MODEL_FILE`]), checking that it matches these bindings.",
        )
    } else {
        (
            quote!(Self::from_file(MODEL_FILE.find()?, options)),
            " Finds the model file where [`MODEL_FILE`] says (its environment variables, \
             beside the executable, the current directory, then [`MODEL_PATH`]) and loads \
             it, checking that it matches these bindings. The error lists every place \
             looked at.",
        )
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
    let (load_body, load_doc) = load(opts);
    // Checked here too (as binding does), so a session without them fails when wrapped.
    let check_overridable = (!plan.overridable.is_empty()).then(
        || quote!(session.check_overridable(<Io<#rt::Cpu> as #rt::BindingIo>::OVERRIDABLE)?;),
    );
    quote! {
        #[allow(dead_code, unreachable_pub, clippy::type_complexity)]
        #[doc = #model_doc]
        #[derive(Debug, Clone)]
        pub struct Model {
            session: #rt::Session,
        }

        #[allow(dead_code, unreachable_pub, clippy::type_complexity)]
        impl Model {
            /// [`Model::load_with`] with default session options.
            pub fn load() -> #rt::Result<Self> {
                Self::load_with(&#rt::SessionOptions::new())
            }

            #[doc = #load_doc]
            pub fn load_with(options: &#rt::SessionOptions) -> #rt::Result<Self> {
                #load_body
            }

            /// Loads the model from its bytes in memory, checking that it matches these
            /// bindings (a model with external data files cannot load this way).
            pub fn from_memory(bytes: &[u8], options: &#rt::SessionOptions) -> #rt::Result<Self> {
                Self::from_session(#rt::Session::from_memory(bytes, options)?)
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
                #check_overridable
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
                    inner: #rt::Binding::new(&self.session, Io::new(device, dims)?)?,
                })
            }
        }
    }
}

/// `Binding` and its impl (with the feed-back methods `feed_back` gives).
pub(crate) fn binding(rt: &syn::Path, feed_back: TokenStream) -> TokenStream {
    let serving = serving_methods(rt);
    quote! {
        #[allow(dead_code, unreachable_pub, clippy::type_complexity)]
        /// Buffers bound to the model once and reused by every [`Binding::run`].
        #[derive(Debug)]
        pub struct Binding<D: #rt::Device = #rt::Cpu> {
            inner: #rt::Binding<Io<D>>,
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
            /// capacity when it shrinks again. Either way every buffer is rebound. (An
            /// input's `fill_resized` or `set` changes the dims too, from the data: the
            /// binding derives them from its inputs before the next run.)
            pub fn set_dims(&mut self, dims: Dims) -> #rt::Result<()> {
                if dims == *self.dims() && !self.inner.inputs_resized() {
                    return ::core::result::Result::Ok(());
                }
                self.inner.set_dims(&dims)
            }

            /// The dims the tensors are sized for (after an input's `fill_resized` or
            /// `set`, the dims derived from the inputs once the next run begins).
            pub fn dims(&self) -> &Dims {
                &self.inner.io().dims
            }

            #serving
            #feed_back
        }

        /// The runtime's binding this one wraps (for a pipeline that runs it next to
        /// another model: `decode::EncoderDecoder::new`).
        impl<D: #rt::Device> ::core::convert::From<Binding<D>> for #rt::Binding<Io<D>> {
            fn from(binding: Binding<D>) -> Self {
                binding.inner
            }
        }
    }
}

/// The serving methods of the generated `Binding`, forwarded to the runtime's `Binding` it
/// wraps, so that a generated binding, a pooled one and the derive's (the runtime's
/// `Binding` itself) have one serving API: `run_with_timeout`,
/// `terminator`, `run_async`, `run_async_with_timeout`. (A value input never filled is
/// `Error::MissingInput` from `Binding` itself, on every way to run.)
fn serving_methods(rt: &syn::Path) -> TokenStream {
    quote! {
        /// [`Binding::run`], stopped when it has not finished after `timeout`: it then
        /// returns `Error::TimedOut` (ONNX Runtime stops after the kernel it is in) and
        /// the binding stays usable. The timeout is for this run only; one process-wide
        /// timer thread keeps it (no thread and no allocation per run).
        pub fn run_with_timeout(
            &mut self,
            timeout: ::core::time::Duration,
        ) -> #rt::Result<()> {
            self.inner.run_with_timeout(timeout)
        }

        /// A `Send + Sync` handle that stops this binding's next run from any thread
        /// (a request handler whose client went away, a shutdown hook): that run returns
        /// `Error::Terminated` and the binding stays usable. It is for that one run:
        /// once the run has finished, `terminate()` does nothing, so a late call never
        /// stops a later run. Take one per run.
        pub fn terminator(&self) -> #rt::Terminator {
            self.inner.terminator()
        }

        /// Runs the model on the bound buffers asynchronously (nothing copied): the
        /// future resolves when the run has finished, on any executor, and outputs are
        /// then read in place with [`Binding::outputs`]. The future borrows the binding
        /// until then; dropping it early stops the run (the runtime's `run_async` module
        /// docs say what a dropped or leaked future does). Every session can: one with 2
        /// or more intra-op threads on the CPU runs on ONNX Runtime's `RunAsync`, any
        /// other (one intra-op thread, a CUDA session) on ort-bind's worker threads.
        pub fn run_async(&mut self) -> #rt::RunFuture<'_, Io<D>> {
            self.inner.run_async()
        }

        /// [`Binding::run_async`], stopped when it has not finished `timeout` after it
        /// started (its first poll): it then resolves to `Error::TimedOut`, without
        /// blocking, once ONNX Runtime has stopped.
        pub fn run_async_with_timeout(
            &mut self,
            timeout: ::core::time::Duration,
        ) -> #rt::RunFuture<'_, Io<D>> {
            self.inner.run_async_with_timeout(timeout)
        }

    }
}
