//! Build-time codegen for `build.rs`: read models, write one module per model to
//! `OUT_DIR`, only when the content changed.
//!
//! ```no_run
//! // in build.rs's `main`:
//! ort_bind_codegen::Builder::new()
//!     .model("models/detector.onnx")
//!     .compile()
//!     .unwrap_or_else(|e| panic!("{e}"));
//! ```
//! and in the crate: `mod detector { ort_bind::include_bindings!("detector"); }`.

use std::fmt;
use std::path::{Path, PathBuf};

use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};

use crate::expand::pipeline::{Part, generate};
use crate::expand::{ExpandOptions, expand};
use crate::ident::snake_case;
use crate::onnx::{ModelError, read_signature};
use crate::planner::pipeline::{EdgeDecl, PipelineError};
use crate::planner::{ModelOptions, PlanError, plan_with};
use crate::sig::ModelSignature;

/// Why code generation failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum CodegenError {
    /// The model file could not be read or decoded.
    Model(ModelError),
    /// The model has values ort-bind cannot bind.
    Plan {
        /// The model file.
        path: String,
        /// What cannot be bound.
        source: PlanError,
    },
    /// Writing the generated file failed.
    Write {
        /// The output file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// `OUT_DIR` is not set (not running inside a build script) and no output dir was given.
    NoOutDir,
    /// The runtime path given to [`Builder::runtime_path`] is not a Rust path.
    RuntimePath(String),
    /// Two models would be written to the same module file.
    DuplicateName(String),
    /// A pipeline's edges do not fit its models.
    Pipeline {
        /// The pipeline's name.
        name: String,
        /// What is wrong.
        source: PipelineError,
    },
    /// A pipeline edge is not written `model.value`.
    EdgeSyntax(String),
    /// A LoRA adapter file named with [`ModelOptions::adapter`] cannot be read or does not
    /// fit the model's overridable inputs.
    Adapter {
        /// The adapter file.
        path: String,
        /// The model file.
        model: String,
        /// What is wrong.
        problem: String,
    },
}

impl fmt::Display for CodegenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CodegenError::Model(inner) => fmt::Display::fmt(inner, f),
            CodegenError::Plan { path, source } => write!(f, "`{path}`: {source}"),
            CodegenError::Write { path, source } => write!(f, "cannot write `{path}`: {source}"),
            CodegenError::NoOutDir => f.write_str(
                "OUT_DIR is not set: call Builder::compile from build.rs, or set Builder::out_dir",
            ),
            CodegenError::RuntimePath(f0) => {
                write!(f, "`{f0}` is not a valid Rust path for the runtime crate")
            }
            CodegenError::Pipeline { name, source } => write!(f, "pipeline `{name}`: {source}"),
            CodegenError::EdgeSyntax(edge) => write!(
                f,
                "pipeline edge end `{edge}` is not `model.value` (the model's name in the pipeline, a dot, then the input or output)"
            ),
            CodegenError::Adapter {
                path,
                model,
                problem,
            } => write!(f, "adapter `{path}` does not fit `{model}`: {problem}"),
            CodegenError::DuplicateName(f0) => write!(
                f,
                "two models map to the module name `{f0}`; give one another name with Builder::model_as"
            ),
        }
    }
}

impl std::error::Error for CodegenError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CodegenError::Model(inner) => std::error::Error::source(inner),
            CodegenError::Plan { source, .. } => Some(source),
            CodegenError::Write { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<ModelError> for CodegenError {
    fn from(e: ModelError) -> Self {
        CodegenError::Model(e)
    }
}

/// One generated module.
#[derive(Debug, Clone)]
pub struct GeneratedModule {
    /// Module (and file) name, e.g. `add` for `add.onnx`.
    pub name: String,
    /// The model file it came from.
    pub model_path: PathBuf,
    /// Formatted Rust source, with an `@generated` header.
    pub source: String,
    /// Where the graph computes another shape than the model declares for an output, and
    /// the bindings follow the graph: one sentence each (`compile` prints them as cargo
    /// warnings).
    pub notes: Vec<String>,
}

/// Several models bound as one pipeline, for [`Builder::pipeline`]: the models (each with
/// its name in the pipeline, which is its module's name) and the edges between them,
/// checked against the model files when the module is generated (as `pipeline!` does).
///
/// ```no_run
/// use ort_bind_codegen::{Builder, ModelOptions, PipelineOptions};
/// Builder::new()
///     .pipeline(
///         "speech",
///         PipelineOptions::new()
///             .model("encoder", "models/encoder.onnx")
///             .model_with("decoder", "models/decoder.onnx", ModelOptions::new().decoder())
///             .edge("encoder.present_key_cross_0", "decoder.past_key_cross_0"),
///     )
///     .compile()
///     .unwrap();
/// ```
#[derive(Debug, Clone, Default)]
pub struct PipelineOptions {
    models: Vec<(String, PathBuf, ModelOptions)>,
    edges: Vec<(String, String, bool)>,
}

impl PipelineOptions {
    /// A pipeline with no models yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a model under `name` (its module in the pipeline), in pipeline order.
    pub fn model(self, name: &str, path: impl AsRef<Path>) -> Self {
        self.model_with(name, path, ModelOptions::new())
    }

    /// Adds a model with the options [`Builder::model_with`] takes.
    pub fn model_with(mut self, name: &str, path: impl AsRef<Path>, options: ModelOptions) -> Self {
        self.models
            .push((snake_case(name), path.as_ref().to_path_buf(), options));
        self
    }

    /// Declares an edge `"model.output" -> "model.input"` (edges not declared are found
    /// by name, as `pipeline!` finds them).
    pub fn edge(mut self, from: &str, to: &str) -> Self {
        self.edges.push((from.to_owned(), to.to_owned(), false));
        self
    }

    /// Declares an edge whose input reads the source's elements in its own shape (the
    /// same element type and count; `pipeline!`'s `a.x -> b.y as view`): an image's rows
    /// read as a batch of crops.
    pub fn view_edge(mut self, from: &str, to: &str) -> Self {
        self.edges.push((from.to_owned(), to.to_owned(), true));
        self
    }
}

/// Configures and runs build-time code generation.
#[derive(Debug, Clone)]
pub struct Builder {
    models: Vec<(PathBuf, Option<String>, ModelOptions)>,
    pipelines: Vec<(String, PipelineOptions)>,
    out_dir: Option<PathBuf>,
    runtime: String,
}

impl Default for Builder {
    fn default() -> Self {
        Self::new()
    }
}

impl Builder {
    /// A builder with no models, writing to `$OUT_DIR/ort-bind/`, naming the runtime `::ort_bind`.
    pub fn new() -> Self {
        Builder {
            models: Vec::new(),
            pipelines: Vec::new(),
            out_dir: None,
            runtime: "::ort_bind".into(),
        }
    }

    /// Adds a model; its module is named after the file stem (`models/yolo-v8.onnx` -> `yolo_v8`).
    /// Relative paths resolve against the current directory (the package root in `build.rs`).
    pub fn model(mut self, path: impl AsRef<Path>) -> Self {
        self.models
            .push((path.as_ref().to_path_buf(), None, ModelOptions::new()));
        self
    }

    /// Adds a model under an explicit module name.
    pub fn model_as(mut self, path: impl AsRef<Path>, name: &str) -> Self {
        self.models.push((
            path.as_ref().to_path_buf(),
            Some(snake_case(name)),
            ModelOptions::new(),
        ));
        self
    }

    /// Adds a model with [`ModelOptions`]: dims that are really the same (so outputs can
    /// be pre-allocated), recurrent pairs, and the module name
    /// ([`ModelOptions::module_name`]; default: the file stem).
    pub fn model_with(mut self, path: impl AsRef<Path>, options: ModelOptions) -> Self {
        let name = options.name().map(snake_case);
        self.models
            .push((path.as_ref().to_path_buf(), name, options));
        self
    }

    /// Adds a pipeline of several models: one module `name` (`include_bindings!(name)`)
    /// holding a module per model and the edges between them, checked against the model
    /// files (see [`PipelineOptions`] and the facade's `pipeline!`, which generates the
    /// same items).
    pub fn pipeline(mut self, name: &str, pipeline: PipelineOptions) -> Self {
        self.pipelines.push((snake_case(name), pipeline));
        self
    }

    /// Writes into this directory instead of `$OUT_DIR/ort-bind`.
    pub fn out_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.out_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Path of the runtime in generated code (default `::ort_bind`; use
    /// `::ort_bind_runtime` when depending on the runtime crate directly).
    pub fn runtime_path(mut self, path: &str) -> Self {
        self.runtime = path.into();
        self
    }

    fn runtime(&self) -> Result<syn::Path, CodegenError> {
        syn::parse_str(&self.runtime).map_err(|_| CodegenError::RuntimePath(self.runtime.clone()))
    }

    /// Generates the source of every model, touching no file but the models.
    pub fn generate(&self) -> Result<Vec<GeneratedModule>, CodegenError> {
        let runtime = self.runtime()?;
        let mut out: Vec<GeneratedModule> = Vec::with_capacity(self.models.len());
        for (path, name, options) in &self.models {
            let name = name.clone().unwrap_or_else(|| module_name(path));
            if out.iter().any(|m| m.name == name) {
                return Err(CodegenError::DuplicateName(name));
            }
            let sig = read_signature(path)?;
            let (source, notes) = generate_planned(&sig, path, &runtime, options)?;
            out.push(GeneratedModule {
                name,
                model_path: path.clone(),
                source,
                notes,
            });
        }
        for (name, pipeline) in &self.pipelines {
            if out.iter().any(|m| m.name == *name) {
                return Err(CodegenError::DuplicateName(name.clone()));
            }
            out.push(generate_pipeline(name, pipeline, &runtime)?);
        }
        Ok(out)
    }

    /// Generates every module and writes `<out>/<name>.rs` when its content changed;
    /// prints `cargo:rerun-if-changed` for each model so edits trigger a rebuild.
    pub fn compile(&self) -> Result<Vec<GeneratedModule>, CodegenError> {
        let dir = match &self.out_dir {
            Some(d) => d.clone(),
            None => PathBuf::from(std::env::var_os("OUT_DIR").ok_or(CodegenError::NoOutDir)?)
                .join("ort-bind"),
        };
        let pipeline_models = self
            .pipelines
            .iter()
            .flat_map(|(_, p)| p.models.iter().map(|(_, path, _)| path));
        for path in self
            .models
            .iter()
            .map(|(path, _, _)| path)
            .chain(pipeline_models)
        {
            println!("cargo:rerun-if-changed={}", path.display());
        }
        for (_, path) in self.models.iter().flat_map(|(_, _, o)| o.adapters()) {
            println!("cargo:rerun-if-changed={path}");
        }
        let modules = self.generate()?;
        std::fs::create_dir_all(&dir).map_err(|source| CodegenError::Write {
            path: dir.display().to_string(),
            source,
        })?;
        for m in &modules {
            let file = dir.join(format!("{}.rs", m.name));
            write_if_changed(&file, &m.source)?;
            for note in &m.notes {
                println!("cargo:warning=ort-bind: {}: {note}", m.model_path.display());
            }
        }
        Ok(modules)
    }
}

/// Module name for a model file: its sanitised stem.
pub fn module_name(path: &Path) -> String {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    snake_case(&stem)
}

/// Generates formatted module source for a decoded model.
pub fn generate_source(
    sig: &ModelSignature,
    path: &Path,
    runtime: &syn::Path,
) -> Result<String, CodegenError> {
    generate_source_with(sig, path, runtime, &ModelOptions::new())
}

/// Generates formatted module source for a decoded model, with [`ModelOptions`].
pub fn generate_source_with(
    sig: &ModelSignature,
    path: &Path,
    runtime: &syn::Path,
    options: &ModelOptions,
) -> Result<String, CodegenError> {
    generate_planned(sig, path, runtime, options).map(|(source, _)| source)
}

/// [`generate_source_with`], and what the plan says of outputs the bindings type as the
/// graph computes them rather than as declared (one sentence each, for
/// [`GeneratedModule::notes`]).
fn generate_planned(
    sig: &ModelSignature,
    path: &Path,
    runtime: &syn::Path,
    options: &ModelOptions,
) -> Result<(String, Vec<String>), CodegenError> {
    let plan = plan_with(sig, options).map_err(|source| CodegenError::Plan {
        path: path.display().to_string(),
        source,
    })?;
    let mut opts = expand_options(path, runtime, options);
    opts.adapters = checked_adapters(path, &plan, options)?;
    let tokens = expand(sig, &plan, &opts);
    Ok((format_source(&tokens, &opts.label), plan.inference_notes()))
}

/// One pipeline's module: each model read, planned and expanded, the edges checked, and
/// the items `pipeline!` generates.
fn generate_pipeline(
    name: &str,
    pipeline: &PipelineOptions,
    runtime: &syn::Path,
) -> Result<GeneratedModule, CodegenError> {
    let mut parts = Vec::with_capacity(pipeline.models.len());
    let mut notes = Vec::new();
    for (model, path, options) in &pipeline.models {
        let sig = read_signature(path)?;
        let plan = plan_with(&sig, options).map_err(|source| CodegenError::Plan {
            path: path.display().to_string(),
            source,
        })?;
        let opts = expand_options(path, runtime, options);
        let tokens = expand(&sig, &plan, &opts);
        notes.extend(
            plan.inference_notes()
                .into_iter()
                .map(|n| format!("{model}: {n}")),
        );
        parts.push((model.clone(), sig, plan, tokens));
    }
    let split = |end: &str| {
        end.split_once('.')
            .map(|(m, v)| (m.to_owned(), v.to_owned()))
            .ok_or_else(|| CodegenError::EdgeSyntax(end.to_owned()))
    };
    let mut decls = Vec::with_capacity(pipeline.edges.len());
    for (from, to, view) in &pipeline.edges {
        let ((from_model, from), (to_model, to)) = (split(from)?, split(to)?);
        decls.push(EdgeDecl {
            from_model,
            from,
            to_model,
            to,
            view: *view,
        });
    }
    let parts: Vec<Part<'_>> = parts
        .iter()
        .map(|(model, sig, plan, tokens)| Part {
            name: crate::ident::to_ident(model),
            sig,
            plan,
            tokens: tokens.clone(),
        })
        .collect();
    let tokens = generate(&parts, &decls, runtime).map_err(|source| CodegenError::Pipeline {
        name: name.to_owned(),
        source,
    })?;
    Ok(GeneratedModule {
        name: name.to_owned(),
        model_path: pipeline
            .models
            .first()
            .map(|(_, p, _)| p.clone())
            .unwrap_or_default(),
        source: format_source(&tokens, name),
        notes,
    })
}

/// Reads each adapter file `options` names (relative to the crate, where build scripts
/// run) and checks it against `plan`'s overridable inputs.
fn checked_adapters(
    model: &Path,
    plan: &crate::planner::Plan,
    options: &ModelOptions,
) -> Result<Vec<crate::expand::AdapterFile>, CodegenError> {
    options
        .adapters()
        .iter()
        .map(|(name, rel)| {
            let fail = |problem: String| CodegenError::Adapter {
                path: rel.clone(),
                model: model.display().to_string(),
                problem,
            };
            let bytes = std::fs::read(rel).map_err(|e| fail(format!("cannot read it: {e}")))?;
            crate::planner::adapters::check_adapter(plan, &bytes).map_err(fail)?;
            let abs = std::fs::canonicalize(rel).unwrap_or_else(|_| PathBuf::from(rel));
            Ok(crate::expand::AdapterFile {
                name: name.clone(),
                path: abs.display().to_string(),
                relative: relative_path(Path::new(rel)),
            })
        })
        .collect()
}

/// How a model file's module is expanded from `build.rs`.
fn expand_options(path: &Path, runtime: &syn::Path, options: &ModelOptions) -> ExpandOptions {
    let abs = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let label = path
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    ExpandOptions {
        runtime: runtime.clone(),
        model_path: abs.display().to_string(),
        model_relative: relative_path(path),
        embed: options.embeds(),
        label,
        adapters: Vec::new(),
    }
}

/// A model path as the generated code's `MODEL_FILE` records it: `/`-separated, without a
/// leading `./`.
fn relative_path(path: &Path) -> String {
    let text = path.to_string_lossy().replace('\\', "/");
    text.strip_prefix("./").unwrap_or(&text).to_owned()
}

/// Formatted source with the `format` feature (prettyplease); else the tokens as one
/// line per item, which compiles the same. The CLI turns `format` on.
#[cfg(feature = "format")]
fn unparse(file: &syn::File) -> String {
    prettyplease::unparse(file)
}

#[cfg(not(feature = "format"))]
fn unparse(file: &syn::File) -> String {
    use quote::ToTokens as _;
    let mut out = String::new();
    for attr in &file.attrs {
        out.push_str(&attr.to_token_stream().to_string());
        out.push('\n');
    }
    for item in &file.items {
        out.push_str(&item.to_token_stream().to_string());
        out.push('\n');
    }
    out
}

/// Formats generated tokens as a file with the `@generated` header.
pub fn format_source(tokens: &TokenStream, label: &str) -> String {
    let body = match syn::parse2::<syn::File>(normalise_docs(tokens.clone())) {
        Ok(file) => unparse(&file),
        // Unreachable for tokens `expand` produced; keep them unformatted rather than fail.
        Err(_) => tokens.to_string(),
    };
    // The label (a file name) may hold any character, a line break included: escape
    // control characters so the header stays one comment line.
    let label: String = label
        .chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect();
    format!(
        "// @generated by ort-bind-codegen {} from `{label}`. Do not edit: regenerate instead.\n\n{body}",
        env!("CARGO_PKG_VERSION")
    )
}

/// Rewrites carriage returns in doc attributes (`[doc = "..."]`, at any depth) as line
/// feeds. Names and doc strings from the model reach the docs; prettyplease prints docs as
/// `///` or `/** */` comments, in which a bare carriage return is a lexer error ("bare CR
/// not allowed in doc-comment"), so a model with `\r` in a name or doc string would give a
/// file that does not compile. Done on tokens, so syn needs no `visit-mut` (which every
/// user would compile).
fn normalise_docs(tokens: TokenStream) -> TokenStream {
    tokens
        .into_iter()
        .map(|tree| match tree {
            TokenTree::Group(group) => {
                let stream =
                    doc_without_cr(&group).unwrap_or_else(|| normalise_docs(group.stream()));
                let mut normalised = Group::new(group.delimiter(), stream);
                normalised.set_span(group.span());
                TokenTree::Group(normalised)
            }
            other => other,
        })
        .collect()
}

/// The inside of `[doc = "text"]` with `\r\n` and `\r` in the text made `\n`; `None` for any
/// other group, or a doc without a carriage return.
fn doc_without_cr(group: &Group) -> Option<TokenStream> {
    if group.delimiter() != Delimiter::Bracket {
        return None;
    }
    let trees: Vec<TokenTree> = group.stream().into_iter().collect();
    let [
        TokenTree::Ident(name),
        TokenTree::Punct(eq),
        TokenTree::Literal(lit),
    ] = &trees[..]
    else {
        return None;
    };
    if name != "doc" || eq.as_char() != '=' {
        return None;
    }
    let text = syn::parse2::<syn::LitStr>(TokenTree::Literal(lit.clone()).into())
        .ok()?
        .value();
    if !text.contains('\r') {
        return None;
    }
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let lit = syn::LitStr::new(&text, lit.span());
    Some(quote::quote!(#name #eq #lit))
}

fn write_if_changed(file: &Path, content: &str) -> Result<(), CodegenError> {
    if std::fs::read_to_string(file).is_ok_and(|old| old == content) {
        return Ok(());
    }
    std::fs::write(file, content).map_err(|source| CodegenError::Write {
        path: file.display().to_string(),
        source,
    })
}
