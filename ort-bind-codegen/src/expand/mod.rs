//! Plan -> Rust tokens: the module users `include!` (or get from the macro).
//!
//! Expansion assumes a valid [`Plan`]; every decision was made there. Generated
//! code names the runtime through one path (default `::ort_bind`) so it works from
//! any crate that depends on the facade. One file per generated item:
//!
//! - `dims`: `Dims` and `Dims::from_input_shapes` (shared with the derive);
//! - `model`: `MODEL_PATH`, `Model`, `Binding`;
//! - `views`: `Inputs` / `Outputs` (the emitter is shared with the derive);
//! - `io`: the hidden `Io`, described to `binding_io`;
//! - `binding_io`: the `BindingIo` / `SplitIo` impls (shared with the derive);
//! - `feed_back`: the recurrent-pair methods of `Binding`;
//! - `decoder`: the decode loop of a decoder model (`Decoder`, `SharedDecoder`);
//! - `pipeline`: several models' modules with their checked edges (`pipeline!`,
//!   `Builder::pipeline`);
//! - `chain`: a pipeline with no decoder: one `Dims`, `Pipeline` and `Chain`;
//! - `serving`: `Model::pool` and, when the batch dim is known, `Model::batcher`;
//! - `tokens`: element and shape types and doc text every item uses.

pub(crate) mod binding_io;
mod chain;
pub(crate) mod decoder;
pub(crate) mod dims;
pub(crate) mod feed_back;
mod io;
mod model;
mod overridable;
pub(crate) mod pipeline;
mod serving;
pub(crate) mod tokens;
pub(crate) mod views;

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use crate::planner::{Plan, PlannedValue};
use crate::sig::ModelSignature;
use crate::written::Written;

/// Options that shape the generated code without changing what it binds.
#[derive(Clone)]
pub struct ExpandOptions {
    /// Path of the runtime crate in generated code, e.g. `::ort_bind`.
    pub runtime: syn::Path,
    /// Absolute path of the model file at build time, baked into `MODEL_PATH` (the last
    /// place `Model::load()` looks) and, with `embed`, read into the binary.
    pub model_path: String,
    /// The model's path as the user wrote it (relative to the crate): where `Model::load()`
    /// looks beside the executable, in `ORT_BIND_MODEL_DIR` and the current directory.
    pub model_relative: String,
    /// Embed the model's bytes in the binary (`include_bytes!`): `Model::load()` needs no
    /// file at run time.
    pub embed: bool,
    /// Short label for docs (usually the file name).
    pub label: String,
    /// The LoRA adapter files the bindings are for ([`crate::planner::ModelOptions::adapter`],
    /// checked against the model): each gets a loader in the module's `adapters`.
    pub adapters: Vec<AdapterFile>,
}

/// A LoRA adapter file named in a model's options, as the generated loader finds it.
#[derive(Debug, Clone, Default)]
pub struct AdapterFile {
    /// The name the user gave it (the loader's name).
    pub name: String,
    /// Its absolute path at build time (the last place the loader looks).
    pub path: String,
    /// Its path as the user wrote it (relative to the crate).
    pub relative: String,
}

impl std::fmt::Debug for ExpandOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExpandOptions")
            .field("runtime", &Written(&self.runtime))
            .field("model_path", &self.model_path)
            .field("model_relative", &self.model_relative)
            .field("embed", &self.embed)
            .field("label", &self.label)
            .field("adapters", &self.adapters)
            .finish()
    }
}

impl Default for ExpandOptions {
    fn default() -> Self {
        ExpandOptions {
            runtime: syn::parse_quote!(::ort_bind),
            model_path: String::new(),
            model_relative: String::new(),
            embed: false,
            label: "model".into(),
            adapters: Vec::new(),
        }
    }
}

/// The `Io` field holding input `v`.
fn in_field(v: &PlannedValue) -> Ident {
    format_ident!("in_{}", v.field.trim_start_matches("r#"))
}

/// The `Io` field holding output `v`.
fn out_field(v: &PlannedValue) -> Ident {
    format_ident!("out_{}", v.field.trim_start_matches("r#"))
}

/// Generates the bindings module body for one model.
pub fn expand(sig: &ModelSignature, plan: &Plan, opts: &ExpandOptions) -> TokenStream {
    let rt = &opts.runtime;
    let label = &opts.label;

    let dims_fields = dims::fields(plan);
    let copy = plan.dims_are_copy().then(|| quote!(Copy,));
    let dims_doc = format!(
        " Sizes of the dynamic dimensions of `{label}`: one field per named symbolic dimension, \
         and one per unnamed dynamic input axis. A binding is sized from these; \
         [`Binding::set_dims`] changes them, reusing buffer capacity. \
         [`Dims::from_input_shapes`] derives them from the shapes of the inputs, \
         checking those against the model and each other."
    );
    let from_input_shapes = dims::from_input_shapes(
        plan,
        dims::Paths::Full(rt),
        &format_ident!("Dims"),
        &quote!(pub),
    );

    let model_path = model::model_path(opts);
    let model = model::model(sig, plan, rt, opts);
    let view_structs = views::of_plan(plan, rt);
    let views = view_structs.structs();
    let binding = model::binding(rt, feed_back::methods(plan, rt));
    let io = io::io(plan, rt, &view_structs);
    let serving = serving::serving(plan, rt);
    let decoder = decoder::items(plan, rt);
    let overrides = overridable::overrides_struct(plan, rt);
    let override_methods = overridable::binding_items(plan, rt);
    let adapters = overridable::adapters_module(opts);

    quote! {
        #model_path

        #[allow(dead_code, unreachable_pub, clippy::type_complexity)]
        #[doc = #dims_doc]
        #[derive(Debug, Clone, #copy PartialEq, Eq, Hash, Default)]
        pub struct Dims {
            #(#dims_fields)*
        }

        #[allow(dead_code, unreachable_pub, clippy::too_many_arguments)]
        impl Dims {
            #from_input_shapes
        }

        #model
        #views
        #binding
        #overrides
        #override_methods
        #adapters
        #io
        #serving
        #decoder
    }
}
