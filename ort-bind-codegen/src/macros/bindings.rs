//! `bindings!("models/model.onnx")`: the module build-time codegen writes, generated
//! inside the compiler from the model (or its offline signature cache), with no
//! `build.rs`.
//!
//! After the path come the options `Builder::model_with` takes ([`ModelOptions`]), in the
//! same words, and the facade path:
//!
//! ```text
//! bindings!(
//!     "models/silero_vad.onnx",
//!     dim("input", 0, "batch"),
//!     rename_dim("N", "batch"),
//!     feed_back("stateN", "state"),
//!     no_auto_feed_back,
//!     no_overrides,        // inputs with a default keep it: no typed `Overrides`
//!     embed,               // the model's bytes in the binary: no file needed at run time
//!     batch_dim("batch"),  // dynamic batching along this dim (`Model::batcher`)
//!     decoder,             // require a decoder (`Model::decoder`); conventional names are found without it
//!     decoder_role("logits", "lm_logits"),          // a role under another name
//!     decoder_cache("cache_in.0", "cache_out.0"),   // a past/present pair under other names
//!     decoder_context("cross_k.0"),                 // an input held for a whole sequence
//!     adapter("math", "adapters/math.onnx_adapter"), // a LoRA adapter, checked now (`adapters::math()`)
//!     crate = "::ort_bind",
//! )
//! ```

use std::path::Path;

use proc_macro2::TokenStream;
use quote::quote;
use syn::parse::{Parse, ParseStream};

use super::{MacroEnv, resolve_model};
use crate::check::closest;
use crate::expand::{ExpandOptions, expand};
use crate::planner::{ModelOptions, plan_with};

struct Args {
    path: syn::LitStr,
    krate: Option<syn::Path>,
    options: ModelOptions,
    // `adapter("name", "path")`: each path's literal, for errors spanned on it.
    adapters: Vec<(String, syn::LitStr)>,
}

const OPTIONS: &[&str] = &[
    "dim",
    "rename_dim",
    "feed_back",
    "no_auto_feed_back",
    "no_overrides",
    "embed",
    "batch_dim",
    "decoder",
    "decoder_role",
    "decoder_cache",
    "decoder_context",
    "adapter",
    "crate",
];

/// `("a", 0, "b")`-style arguments: string literals and integers, as written.
fn call_args(input: ParseStream<'_>) -> syn::Result<Vec<syn::Lit>> {
    let content;
    syn::parenthesized!(content in input);
    let args = syn::punctuated::Punctuated::<syn::Lit, syn::Token![,]>::parse_terminated(&content)?;
    Ok(args.into_iter().collect())
}

fn string(lit: &syn::Lit) -> syn::Result<String> {
    match lit {
        syn::Lit::Str(s) => Ok(s.value()),
        other => Err(syn::Error::new(other.span(), "expected a string literal")),
    }
}

impl Parse for Args {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        if input.is_empty() {
            return Err(input.error(
                "expected the model path: `bindings!(\"models/model.onnx\")`, relative to the \
                 crate's Cargo.toml",
            ));
        }
        let path: syn::LitStr = input.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                "expected the model path as a string literal: `bindings!(\"models/model.onnx\")`",
            )
        })?;
        let mut krate = None;
        let mut options = ModelOptions::new();
        let mut adapters = Vec::new();
        while !input.is_empty() {
            input.parse::<syn::Token![,]>()?;
            if input.is_empty() {
                break;
            }
            let key: syn::Ident = input.call(syn::ext::IdentExt::parse_any)?;
            let arity = |args: &[syn::Lit], n: usize, usage: &str| {
                if args.len() == n {
                    Ok(())
                } else {
                    Err(syn::Error::new(key.span(), format!("expected `{usage}`")))
                }
            };
            match key.to_string().as_str() {
                "crate" => {
                    input.parse::<syn::Token![=]>()?;
                    let lit: syn::LitStr = input.parse()?;
                    krate = Some(lit.parse::<syn::Path>().map_err(|_| {
                        syn::Error::new(lit.span(), format!("`{}` is not a Rust path", lit.value()))
                    })?);
                }
                "no_auto_feed_back" => options = options.no_auto_feed_back(),
                "no_overrides" => options = options.no_overrides(),
                "embed" => options = options.embed(),
                "decoder" => options = options.decoder(),
                "decoder_role" => {
                    let a = call_args(input)?;
                    arity(&a, 2, "decoder_role(\"role\", \"name\")")?;
                    let role = crate::planner::DecoderRole::from_name(&string(&a[0])?).ok_or_else(
                        || {
                            syn::Error::new(
                                a[0].span(),
                                format!(
                                    "expected a decoder role: {}",
                                    crate::planner::DecoderRole::names_list()
                                ),
                            )
                        },
                    )?;
                    options = options.decoder_role(role, &string(&a[1])?);
                }
                "decoder_context" => {
                    let a = call_args(input)?;
                    arity(&a, 1, "decoder_context(\"input\")")?;
                    options = options.decoder_context(&string(&a[0])?);
                }
                "decoder_cache" => {
                    let a = call_args(input)?;
                    arity(&a, 2, "decoder_cache(\"past\", \"present\")")?;
                    options = options.decoder_cache(&string(&a[0])?, &string(&a[1])?);
                }
                "adapter" => {
                    let a = call_args(input)?;
                    arity(&a, 2, "adapter(\"name\", \"path\")")?;
                    let name = string(&a[0])?;
                    let syn::Lit::Str(path) = &a[1] else {
                        return Err(syn::Error::new(a[1].span(), "expected a string literal"));
                    };
                    options = options.adapter(&name, &path.value());
                    adapters.push((name, path.clone()));
                }
                "rename_dim" => {
                    let a = call_args(input)?;
                    arity(&a, 2, "rename_dim(\"from\", \"to\")")?;
                    options = options.rename_dim(&string(&a[0])?, &string(&a[1])?);
                }
                "batch_dim" => {
                    let a = call_args(input)?;
                    arity(&a, 1, "batch_dim(\"dim\")")?;
                    options = options.batch_dim(&string(&a[0])?);
                }
                "feed_back" => {
                    let a = call_args(input)?;
                    arity(&a, 2, "feed_back(\"output\", \"input\")")?;
                    options = options.feed_back(&string(&a[0])?, &string(&a[1])?);
                }
                "dim" => {
                    let a = call_args(input)?;
                    arity(&a, 3, "dim(\"value\", axis, \"dim\")")?;
                    let axis = match &a[1] {
                        syn::Lit::Int(i) => i.base10_parse::<usize>()?,
                        other => {
                            return Err(syn::Error::new(other.span(), "expected an axis number"));
                        }
                    };
                    options = options.dim(&string(&a[0])?, axis, &string(&a[2])?);
                }
                other => {
                    let mut message = format!(
                        "unknown option `{other}`; expected {}",
                        OPTIONS
                            .iter()
                            .map(|o| format!("`{o}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    );
                    if let Some(best) = closest(other, OPTIONS.iter().copied()) {
                        message.push_str(&format!("\n  help: did you mean `{best}`?"));
                    }
                    return Err(syn::Error::new(key.span(), message));
                }
            }
        }
        Ok(Args {
            path,
            krate,
            options,
            adapters,
        })
    }
}

/// The module's items with nothing behind them, emitted next to the error when
/// `bindings!` fails, so uses of `Model`, `Binding`, `Dims`, `Inputs`, `Outputs`,
/// `MODEL_PATH` and the rest do not each fail a second time (only uses of the model's own
/// field names still do). They are what the same emitter writes for a model with no
/// inputs and one scalar output (the planner refuses a model without outputs), so they
/// never fall behind the real module; the crate cannot compile with the error, so no body
/// ever runs.
fn stub(error: syn::Error, krate: &syn::Path) -> TokenStream {
    let error = error.to_compile_error();
    let empty = crate::sig::ModelSignature {
        outputs: vec![crate::sig::ValueInfo {
            name: "output".to_owned(),
            kind: crate::sig::ValueType::Tensor {
                elem: crate::element::ElementType::F32,
                dims: Some(Vec::new()),
            },
            doc_string: String::new(),
        }],
        ..Default::default()
    };
    let items = crate::planner::plan(&empty).map(|plan| {
        let opts = ExpandOptions {
            runtime: krate.clone(),
            model_path: String::new(),
            model_relative: String::new(),
            embed: false,
            label: "a model `bindings!` could not read".to_owned(),
            adapters: Vec::new(),
        };
        expand(&empty, &plan, &opts)
    });
    // Planning that model cannot fail (a unit test shows it); if it did, the error alone
    // stands.
    let items = items.unwrap_or_default();
    quote! {
        #error
        #items
    }
}

/// A model's module, expanded, with what it was made from (for a pipeline's checks).
pub(super) struct Expanded {
    /// The module's items and the model file's tracking.
    pub(super) tokens: TokenStream,
    /// The model's signature.
    pub(super) signature: crate::sig::ModelSignature,
    /// Its plan.
    pub(super) plan: crate::planner::Plan,
}

/// Why a model could not be expanded.
pub(super) enum Failure {
    /// An error the module's stand-in items follow (uses of `Model` etc. then do not
    /// fail a second time).
    Stubbed(syn::Error),
    /// An error with nothing behind it.
    Bare(syn::Error),
}

impl Failure {
    pub(super) fn into_error(self) -> syn::Error {
        match self {
            Failure::Stubbed(e) | Failure::Bare(e) => e,
        }
    }
}

/// Reads, plans and expands the model `args` name (errors are spanned on its path).
fn expand_model(args: &Args, krate: &syn::Path, env: &MacroEnv) -> Result<Expanded, Failure> {
    let resolved = resolve_model(env, &args.path).map_err(Failure::Stubbed)?;
    if args.options.embeds() && !resolved.model_present {
        return Err(Failure::Bare(syn::Error::new(
            args.path.span(),
            format!(
                "`embed` needs the model file at compile time, and `{}` is absent (only its \
                 offline signature cache is here)",
                args.path.value()
            ),
        )));
    }
    let plan = plan_with(&resolved.signature, &args.options).map_err(|e| {
        Failure::Stubbed(syn::Error::new(
            args.path.span(),
            format!("`{}` cannot be bound: {e}", args.path.value()),
        ))
    })?;
    let label = Path::new(&args.path.value())
        .file_name()
        .map_or_else(|| args.path.value(), |n| n.to_string_lossy().into_owned());
    let adapters = check_adapters(args, &plan, env).map_err(Failure::Stubbed)?;
    let tracking_adapters: Vec<TokenStream> = adapters
        .iter()
        .map(|a| {
            let site = format!("{}#adapter:{}", env.site, a.name);
            super::track::tokens(krate, Some(Path::new(&a.path)), None, &site)
        })
        .collect();
    let opts = ExpandOptions {
        runtime: krate.clone(),
        model_path: resolved.model.to_string_lossy().into_owned(),
        model_relative: args.path.value(),
        embed: args.options.embeds(),
        label,
        adapters,
    };
    let module = expand(&resolved.signature, &plan, &opts);
    let tracking = super::track::tokens(
        krate,
        resolved.model_present.then_some(resolved.model.as_path()),
        resolved.cache.as_deref(),
        &env.site,
    );
    Ok(Expanded {
        tokens: quote! {
            #module
            #tracking
            #(#tracking_adapters)*
        },
        signature: resolved.signature,
        plan,
    })
}

/// Reads each adapter file `args` names (relative to the crate's `Cargo.toml`) and checks
/// it against the plan's overridable inputs; errors are spanned on the adapter's path.
fn check_adapters(
    args: &Args,
    plan: &crate::planner::Plan,
    env: &MacroEnv,
) -> Result<Vec<crate::expand::AdapterFile>, syn::Error> {
    args.adapters
        .iter()
        .map(|(name, lit)| {
            let path = env.manifest_dir.join(lit.value());
            let bytes = std::fs::read(&path).map_err(|e| {
                syn::Error::new(
                    lit.span(),
                    format!(
                        "cannot read adapter `{}`: {e}\n  note: adapter paths are relative to \
                         the crate's Cargo.toml (CARGO_MANIFEST_DIR)",
                        lit.value()
                    ),
                )
            })?;
            crate::planner::adapters::check_adapter(plan, &bytes).map_err(|problem| {
                syn::Error::new(
                    lit.span(),
                    format!(
                        "adapter `{}` does not fit `{}`: {problem}",
                        lit.value(),
                        args.path.value()
                    ),
                )
            })?;
            Ok(crate::expand::AdapterFile {
                name: name.clone(),
                path: path.to_string_lossy().into_owned(),
                relative: lit.value(),
            })
        })
        .collect()
}

/// Parses one model's arguments as `bindings!` takes them (`"path", options...`) and
/// expands its module (for `pipeline!`).
pub(super) fn model_in_pipeline(
    input: TokenStream,
    krate: &syn::Path,
    env: &MacroEnv,
) -> Result<Expanded, syn::Error> {
    let args: Args = syn::parse2(input)?;
    expand_model(&args, krate, env).map_err(Failure::into_error)
}

/// Expands `bindings!(...)`.
pub fn bindings(input: TokenStream, env: &MacroEnv) -> TokenStream {
    let default_krate: syn::Path = syn::parse_quote!(::ort_bind);
    let args: Args = match syn::parse2(input) {
        Ok(a) => a,
        Err(e) => return stub(e, &default_krate),
    };
    let krate = args.krate.clone().unwrap_or(default_krate);
    match expand_model(&args, &krate, env) {
        Ok(expanded) => expanded.tokens,
        Err(Failure::Bare(e)) => e.to_compile_error(),
        Err(Failure::Stubbed(e)) => stub(e, &krate),
    }
}
