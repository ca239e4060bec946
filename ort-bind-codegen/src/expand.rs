//! Plan -> Rust tokens: the module users `include!` (or get from the macro).
//!
//! Expansion assumes a valid [`Plan`]; every decision was made there. Generated
//! code names the runtime through one path (default `::ort_bind`) so it works from
//! any crate that depends on the facade.

use std::collections::HashSet;

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

use crate::dtype::ElementType;
use crate::ident::to_ident;
use crate::plan::{AxisSize, DimSource, Plan, PlannedValue, Storage};
use crate::signature::{ModelSignature, format_dims};

/// Options that shape the generated code without changing what it binds.
#[derive(Debug, Clone)]
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
}

impl Default for ExpandOptions {
    fn default() -> Self {
        ExpandOptions {
            runtime: syn::parse_quote!(::ort_bind),
            model_path: String::new(),
            model_relative: String::new(),
            embed: false,
            label: "model".into(),
        }
    }
}

fn elem_tokens(rt: &syn::Path, elem: ElementType) -> TokenStream {
    match elem {
        ElementType::F16 => quote!(#rt::f16),
        ElementType::BF16 => quote!(#rt::bf16),
        other => {
            let id = format_ident!("{}", other.rust_name());
            quote!(#id)
        }
    }
}

/// Largest rank with a tuple shape type; higher ranks use `AnyRank`.
const MAX_TUPLE_RANK: usize = 12;

fn shape_tokens(rt: &syn::Path, v: &PlannedValue) -> TokenStream {
    let axes: Option<Vec<Option<u64>>> = match &v.storage {
        Storage::Owned(axes) => Some(
            axes.iter()
                .map(|a| match a {
                    AxisSize::Fixed(n) => Some(*n),
                    AxisSize::Field(_) => None,
                })
                .collect(),
        ),
        Storage::OwnedAnyRank(_) => None,
        Storage::Allocated => v.dims.as_ref().map(|ds| {
            ds.iter()
                .map(|d| match d {
                    crate::Dim::Fixed(n) => Some(*n),
                    _ => None,
                })
                .collect()
        }),
    };
    match axes {
        Some(axes) if axes.len() <= MAX_TUPLE_RANK => {
            let axes = axes.iter().map(|a| match a {
                Some(n) => {
                    let n = Literal::u64_unsuffixed(*n);
                    quote!(#rt::Fix<#n>)
                }
                None => quote!(#rt::Dyn),
            });
            quote!((#(#axes,)*))
        }
        _ => quote!(#rt::AnyRank),
    }
}

/// Free text from the model, made safe for rustdoc: brackets would otherwise read as
/// (broken) intra-doc links, and HTML-like tags as HTML.
fn model_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.trim().chars() {
        match c {
            '[' | ']' | '<' | '>' | '`' | '*' | '_' | '#' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

fn type_doc(v: &PlannedValue) -> String {
    format!("`{}{}`", v.elem, format_dims(v.dims.as_deref()))
}

fn value_doc(plan: &Plan, role: &str, v: &PlannedValue) -> String {
    let mut doc = format!(" {role} `{}`: {}.", v.name, type_doc(v));
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

fn dims_expr(plan: &Plan, v: &PlannedValue, dims: &TokenStream) -> TokenStream {
    match &v.storage {
        Storage::Owned(axes) => {
            let parts = axes.iter().map(|a| match a {
                AxisSize::Fixed(n) => {
                    let n = Literal::u64_unsuffixed(*n);
                    quote!(#n)
                }
                AxisSize::Field(i) => {
                    let f = to_ident(&plan.dims[*i].field);
                    quote!(#dims.#f)
                }
            });
            quote!(&[#(#parts),*])
        }
        Storage::OwnedAnyRank(i) => {
            let f = to_ident(&plan.dims[*i].field);
            quote!(&#dims.#f)
        }
        Storage::Allocated => quote!(&[]),
    }
}

/// Generates the bindings module body for one model.
pub fn expand(sig: &ModelSignature, plan: &Plan, opts: &ExpandOptions) -> TokenStream {
    let rt = &opts.runtime;
    let label = &opts.label;
    let model_path = &opts.model_path;

    // ---- Dims ----
    let dims_fields = plan.dims.iter().map(|d| {
        let f = to_ident(&d.field);
        let used: Vec<String> = d
            .used_by
            .iter()
            .map(|(n, a)| format!("`{n}` axis {a}"))
            .collect();
        let (ty, what) = match &d.source {
            DimSource::Named(n) => (quote!(usize), format!("Symbolic dimension `{n}`")),
            DimSource::Axis { input, axis } => (
                quote!(usize),
                format!("Unnamed dynamic axis {axis} of input `{input}`"),
            ),
            DimSource::Shape { input } => (
                quote!(::std::vec::Vec<usize>),
                format!("Whole shape of input `{input}`, whose rank the model leaves open"),
            ),
        };
        let doc = if used.is_empty() {
            format!(" {what}.")
        } else {
            format!(" {what}; sizes {}.", used.join(", "))
        };
        quote! { #[doc = #doc] pub #f: #ty, }
    });
    let copy = plan.dims_are_copy().then(|| quote!(Copy,));
    let dims_doc = format!(
        " Sizes of the dynamic dimensions of `{label}`: one field per named symbolic dimension, \
         and one per unnamed dynamic input axis. A binding is sized from these; \
         [`Binding::set_dims`] changes them, reusing buffer capacity. \
         [`Dims::from_input_shapes`] derives them from the shapes of the inputs, \
         checking those against the model and each other."
    );

    // ---- Value specs ----
    let spec = |v: &PlannedValue| {
        let name = &v.name;
        let elem = elem_tokens(rt, v.elem);
        let rank = match &v.dims {
            Some(d) => {
                let r = d.len();
                quote!(::core::option::Option::Some(#r))
            }
            None => quote!(::core::option::Option::None),
        };
        quote!(#rt::ValueSpec::of::<#elem>(#name, #rank))
    };
    let input_specs = plan.inputs.iter().map(spec);
    let output_specs = plan.outputs.iter().map(spec);

    // ---- Io fields ----
    let in_field = |v: &PlannedValue| format_ident!("in_{}", v.field.trim_start_matches("r#"));
    let out_field = |v: &PlannedValue| format_ident!("out_{}", v.field.trim_start_matches("r#"));
    let dims_tok = quote!(dims);

    let io_fields_in = plan.inputs.iter().map(|v| {
        let f = in_field(v);
        let elem = elem_tokens(rt, v.elem);
        let shape = shape_tokens(rt, v);
        quote!(#f: #rt::Tensor<#elem, #shape, D>,)
    });
    let io_fields_out = plan.outputs.iter().map(|v| {
        let f = out_field(v);
        let elem = elem_tokens(rt, v.elem);
        let shape = shape_tokens(rt, v);
        match v.storage {
            Storage::Allocated => quote!(#f: #rt::AllocatedOutput<#elem, #shape, D>,),
            _ => quote!(#f: #rt::Tensor<#elem, #shape, D>,),
        }
    });
    // Each tensor is made in its own `let` (with its type spelled out) before the struct
    // literal: a `?` per field inside one literal makes rustc emit cleanup code quadratic
    // in the number of fields (a 2,000-value model did not compile in minutes).
    let io_init_in = plan.inputs.iter().map(|v| {
        let f = in_field(v);
        let name = &v.name;
        let elem = elem_tokens(rt, v.elem);
        let shape = shape_tokens(rt, v);
        let d = dims_expr(plan, v, &dims_tok);
        quote!(let #f: #rt::Tensor<#elem, #shape, D> = #rt::Tensor::new_in(#name, device.clone(), #d)?;)
    });
    let io_init_out = plan.outputs.iter().map(|v| {
        let f = out_field(v);
        let name = &v.name;
        let elem = elem_tokens(rt, v.elem);
        let shape = shape_tokens(rt, v);
        match v.storage {
            Storage::Allocated => quote!(
                let #f: #rt::AllocatedOutput<#elem, #shape, D> =
                    #rt::AllocatedOutput::new_in(#name, device.clone());
            ),
            _ => {
                let d = dims_expr(plan, v, &dims_tok);
                quote!(let #f: #rt::Tensor<#elem, #shape, D> = #rt::Tensor::new_in(#name, device.clone(), #d)?;)
            }
        }
    });
    let io_field_names: Vec<_> = plan
        .inputs
        .iter()
        .map(in_field)
        .chain(plan.outputs.iter().map(out_field))
        .collect();
    let set_in = plan.inputs.iter().map(|v| {
        let f = in_field(v);
        let d = dims_expr(plan, v, &dims_tok);
        quote!(self.#f.set_dims(#d)?;)
    });
    let set_out = plan
        .outputs
        .iter()
        .filter(|v| !matches!(v.storage, Storage::Allocated))
        .map(|v| {
            let f = out_field(v);
            let d = dims_expr(plan, v, &dims_tok);
            quote!(self.#f.set_dims(#d)?;)
        });
    let bind_in = plan.inputs.iter().enumerate().map(|(i, v)| {
        let f = in_field(v);
        quote!(binder.input(#i, &self.#f)?;)
    });
    let bind_out = plan.outputs.iter().enumerate().map(|(i, v)| {
        let f = out_field(v);
        match v.storage {
            Storage::Allocated => quote!(binder.allocated_output(#i, &self.#f)?;),
            _ => quote!(binder.output(#i, &self.#f)?;),
        }
    });
    let rebind_allocated = plan.outputs.iter().enumerate().filter_map(|(i, v)| {
        let f = out_field(v);
        matches!(v.storage, Storage::Allocated)
            .then(|| quote!(binder.allocated_output(#i, &self.#f)?;))
    });
    let allocated: Vec<(usize, &PlannedValue)> = plan
        .outputs
        .iter()
        .enumerate()
        .filter(|(_, v)| matches!(v.storage, Storage::Allocated))
        .collect();
    let has_allocated = !allocated.is_empty();
    let store_arms = allocated.iter().map(|(i, v)| {
        let f = out_field(v);
        quote!(#i => value.store_in(&mut self.#f),)
    });
    let store_body = if has_allocated {
        quote! {
            match index {
                #(#store_arms)*
                _ => ::core::result::Result::Ok(()),
            }
        }
    } else {
        quote! {
            let _ = (index, value);
            ::core::result::Result::Ok(())
        }
    };

    // ---- Views ----
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
    let inputs_view_init: Vec<TokenStream> = plan
        .inputs
        .iter()
        .map(|v| {
            let f = to_ident(&v.field);
            let io = in_field(v);
            quote!(#f: self.#io.view_mut(),)
        })
        .collect();
    let outputs_view_init: Vec<TokenStream> = plan
        .outputs
        .iter()
        .map(|v| {
            let f = to_ident(&v.field);
            let io = out_field(v);
            match v.storage {
                Storage::Allocated => quote!(#f: self.#io.get().ok(),),
                _ => quote!(#f: self.#io.view(),),
            }
        })
        .collect();

    // ---- Feed-back methods ----
    // Names are unique: `feed_{output}_into_{input}` can read the same for two pairs
    // (output `a` into `ab_into_a`, output `a_into_ab` into `a`); later ones get `_2`, ...
    let mut feed_names: HashSet<String> = HashSet::new();
    let feed_back = plan.feed_back.iter().map(|fb| {
        let o = &plan.outputs[fb.output];
        let i = &plan.inputs[fb.input];
        let base = format!(
            "feed_{}_into_{}",
            o.field.trim_start_matches("r#"),
            i.field.trim_start_matches("r#")
        );
        let mut name = base.clone();
        let mut n = 2;
        while !feed_names.insert(name.clone()) {
            name = format!("{base}_{n}");
            n += 1;
        }
        let method = format_ident!("{}", name);
        let of = out_field(o);
        let inf = in_field(i);
        let doc = format!(
            " Makes output `{}` of the last run the next run's input `{}` without copying: \
             the two buffers are exchanged and rebound (the output's new buffer holds the \
             old input, which the next run overwrites).",
            o.name, i.name
        );
        quote! {
            #[doc = #doc]
            pub fn #method(&mut self) -> #rt::Result<()> {
                self.inner.modify(|io| io.#of.swap_storage(&mut io.#inf))
            }
        }
    });

    let (mut fed_out, mut fed_in) = (HashSet::new(), HashSet::new());
    let distinct = plan
        .feed_back
        .iter()
        .all(|fb| fed_out.insert(fb.output) && fed_in.insert(fb.input));
    let feed_back_all = (!plan.feed_back.is_empty() && distinct).then(|| {
        let swaps = plan.feed_back.iter().map(|fb| {
            let of = out_field(&plan.outputs[fb.output]);
            let inf = in_field(&plan.inputs[fb.input]);
            quote!(io.#of.swap_storage(&mut io.#inf)?;)
        });
        let pairs: Vec<String> = plan
            .feed_back
            .iter()
            .map(|fb| {
                format!(
                    "`{}` -> `{}`",
                    plan.outputs[fb.output].name, plan.inputs[fb.input].name
                )
            })
            .collect();
        let doc = format!(
            " Feeds every recurrent output of the last run back into its input ({}) \
             without copying: buffers are exchanged, then rebound once. Allocates nothing.",
            pairs.join(", ")
        );
        quote! {
            #[doc = #doc]
            pub fn feed_back(&mut self) -> #rt::Result<()> {
                self.inner.modify(|io| {
                    #(#swaps)*
                    ::core::result::Result::Ok(())
                })
            }
        }
    });

    // ---- Docs ----
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
    let path_doc = format!(
        " Path of the ONNX model these bindings were generated from (`{label}`), on the \
         machine that built them."
    );
    let model_relative = &opts.model_relative;
    let (embedded_item, load_body, load_doc) = if opts.embed {
        (
            quote! {
                /// The model's bytes, embedded in the binary at build time.
                static MODEL_BYTES: &[u8] = ::core::include_bytes!(#model_path);
            },
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
            quote!(),
            quote!(Self::from_file(MODEL_FILE.find()?, options)),
            " Finds the model file where [`MODEL_FILE`] says (its environment variables, \
             beside the executable, the current directory, then [`MODEL_PATH`]) and loads \
             it, checking that it matches these bindings. The error lists every place \
             looked at.",
        )
    };
    // Field by field, so `Vec` fields reuse their capacity (no allocation when the rank
    // stays the same).
    let dims_assign = plan.dims.iter().map(|d| {
        let f = to_ident(&d.field);
        match d.source {
            DimSource::Shape { .. } => quote!(self.dims.#f.clone_from(&dims.#f);),
            _ => quote!(self.dims.#f = dims.#f;),
        }
    });

    // ---- Dims::from_input_shapes ----
    let solver_index: Vec<Option<usize>> = {
        let mut next = 0;
        plan.dims
            .iter()
            .map(|d| match d.source {
                DimSource::Shape { .. } => None,
                _ => {
                    next += 1;
                    Some(next - 1)
                }
            })
            .collect()
    };
    let solver_names = plan.dims.iter().filter_map(|d| match &d.source {
        DimSource::Named(n) => Some(n.clone()),
        DimSource::Axis { .. } => Some(d.field.trim_start_matches("r#").to_owned()),
        DimSource::Shape { .. } => None,
    });
    let shape_params: Vec<_> = plan
        .inputs
        .iter()
        .map(|v| {
            let p = to_ident(&v.field);
            quote!(#p: &[usize])
        })
        .collect();
    let solver_calls = plan.inputs.iter().filter_map(|v| {
        let Storage::Owned(axes) = &v.storage else {
            return None;
        };
        let p = to_ident(&v.field);
        let name = &v.name;
        let rules = axes.iter().map(|a| match a {
            AxisSize::Fixed(n) => {
                let n = Literal::u64_unsuffixed(*n);
                quote!(#rt::AxisRule::Fixed(#n))
            }
            AxisSize::Field(i) => {
                let i = solver_index[*i].expect("axis fields are not shape fields");
                quote!(#rt::AxisRule::Dim(#i))
            }
        });
        Some(quote!(__solver.input(#name, #p, &[#(#rules),*])?;))
    });
    let solved_idents: Vec<_> = plan
        .dims
        .iter()
        .filter(|d| !matches!(d.source, DimSource::Shape { .. }))
        .map(|d| to_ident(&d.field))
        .collect();
    let dims_from_shapes_init = plan.dims.iter().map(|d| {
        let f = to_ident(&d.field);
        match &d.source {
            DimSource::Shape { input } => {
                let v = plan
                    .inputs
                    .iter()
                    .find(|v| &v.name == input)
                    .expect("shape fields belong to inputs");
                let p = to_ident(&v.field);
                quote!(#f: #p.to_vec(),)
            }
            _ => quote!(#f,),
        }
    });
    let from_shapes_doc = format!(
        " The dims under which the inputs have exactly these shapes (one per input, in \
         model order: {}).\n\n Errors name what disagrees: a rank or a fixed axis that \
         differs from the model, or two axes of one dim with different sizes.",
        plan.inputs
            .iter()
            .map(|v| format!("`{}` {}", v.name, type_doc(v)))
            .collect::<Vec<_>>()
            .join(", ")
    );

    quote! {
        #[allow(dead_code, unreachable_pub, clippy::type_complexity)]
        #[doc = #path_doc]
        pub const MODEL_PATH: &str = #model_path;

        #[allow(dead_code, unreachable_pub)]
        /// Where `Model::load` looks for the model at run time: `ORT_BIND_MODEL_<NAME>`,
        /// `ORT_BIND_MODEL_DIR`, beside the executable, the current directory (each at the
        /// path the crate gives it, then by file name), then [`MODEL_PATH`].
        pub const MODEL_FILE: #rt::ModelFile = #rt::ModelFile::new(#model_relative, MODEL_PATH);

        #embedded_item

        #[allow(dead_code, unreachable_pub, clippy::type_complexity)]
        #[doc = #dims_doc]
        #[derive(Debug, Clone, #copy PartialEq, Eq, Hash, Default)]
        pub struct Dims {
            #(#dims_fields)*
        }

        #[allow(dead_code, unreachable_pub, clippy::too_many_arguments)]
        impl Dims {
            #[doc = #from_shapes_doc]
            pub fn from_input_shapes(#(#shape_params),*) -> #rt::Result<Self> {
                let mut __solver = #rt::DimsSolver::new([#(#solver_names),*]);
                #(#solver_calls)*
                let [#(#solved_idents),*] = __solver.finish()?;
                ::core::result::Result::Ok(Dims { #(#dims_from_shapes_init)* })
            }
        }

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

            #(#feed_back)*
            #feed_back_all
        }

        #[allow(dead_code, unreachable_pub, clippy::type_complexity)]
        #[doc(hidden)]
        #[derive(Debug)]
        pub struct Io<D: #rt::Device> {
            dims: Dims,
            #(#io_fields_in)*
            #(#io_fields_out)*
        }

        #[allow(dead_code, unreachable_pub, clippy::type_complexity)]
        impl<D: #rt::Device> Io<D> {
            fn resize(&mut self, dims: &Dims) -> #rt::Result<()> {
                let _ = dims; // unused when every dim is fixed
                #(#set_in)*
                #(#set_out)*
                ::core::result::Result::Ok(())
            }

            fn new(device: D, dims: Dims) -> #rt::Result<Self> {
                #(#io_init_in)*
                #(#io_init_out)*
                ::core::result::Result::Ok(Io {
                    #(#io_field_names,)*
                    dims,
                })
            }
        }

        // SAFETY: only `set_dims` (and closures run by `Bound::modify`, which rebinds
        // afterwards) change a bound tensor's storage; the views below read and write
        // elements in place only.
        unsafe impl<D: #rt::Device> #rt::BindingIo for Io<D> {
            const INPUTS: &'static [#rt::ValueSpec] = &[#(#input_specs),*];
            const OUTPUTS: &'static [#rt::ValueSpec] = &[#(#output_specs),*];
            const HAS_ALLOCATED_OUTPUTS: bool = #has_allocated;
            type Dims = Dims;
            type InputsMut<'a> = Inputs<'a, D> where Self: 'a;
            type OutputsRef<'a> = Outputs<'a, D> where Self: 'a;

            fn bind<'io>(&'io self, binder: &mut #rt::Binder<'_, 'io>) -> #rt::Result<()> {
                #(#bind_in)*
                #(#bind_out)*
                ::core::result::Result::Ok(())
            }

            fn rebind_allocated<'io>(&'io self, binder: &mut #rt::Binder<'_, 'io>) -> #rt::Result<()> {
                let _ = &binder; // unused when no output is allocated by ONNX Runtime
                #(#rebind_allocated)*
                ::core::result::Result::Ok(())
            }

            fn set_dims(&mut self, dims: &Dims) -> #rt::Result<()> {
                if let ::core::result::Result::Err(e) = self.resize(dims) {
                    // Back to the old sizes, which fit the capacity every tensor kept:
                    // the tensors agree with `self.dims` again.
                    let old = ::core::clone::Clone::clone(&self.dims);
                    let _ = self.resize(&old);
                    return ::core::result::Result::Err(e);
                }
                #(#dims_assign)*
                ::core::result::Result::Ok(())
            }

            fn store_output(&mut self, index: usize, value: #rt::OutputValue) -> #rt::Result<()> {
                #store_body
            }

            fn inputs_mut(&mut self) -> Inputs<'_, D> {
                Inputs { #(#inputs_view_init)* _device: ::core::marker::PhantomData }
            }

            fn outputs(&self) -> Outputs<'_, D> {
                Outputs { #(#outputs_view_init)* _device: ::core::marker::PhantomData }
            }
        }

        impl<D: #rt::Device> #rt::SplitIo for Io<D> {
            fn split(&mut self) -> (Inputs<'_, D>, Outputs<'_, D>) {
                (
                    Inputs { #(#inputs_view_init)* _device: ::core::marker::PhantomData },
                    Outputs { #(#outputs_view_init)* _device: ::core::marker::PhantomData },
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::model_text;

    #[test]
    fn model_doc_text_cannot_form_links_or_html() {
        assert_eq!(
            model_text("  y = x[0] <b>see [doc](u)</b>  "),
            r"y = x\[0\] \<b\>see \[doc\](u)\</b\>"
        );
    }
}
