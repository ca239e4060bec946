//! What ort-bind's proc macros do, as plain functions over `proc_macro2` tokens, so it is
//! unit-testable and the `ort-bind-macros` crate stays a thin shell.
//!
//! - [`derive_onnx_binding`]: `#[derive(OnnxBinding)]`, checked against the model;
//! - [`bindings`]: `bindings!("model.onnx")`, the module build-time codegen writes;
//! - [`pipeline()`]: `pipeline!(a = "a.onnx", b = "b.onnx", a.x -> b.y)`, several models
//!   with the edges between them checked (see the `pipeline` module);
//! - [`track_model`]: the hidden helper that makes Cargo notice model edits cheaply
//!   (see [`track`]).
//!
//! Model paths are resolved against the crate's manifest dir, falling back to the
//! offline signature cache when the model is absent ([`crate::cache`]).

pub mod attr;
mod bindings;
mod derive;
pub mod pipeline;
pub mod track;

use std::path::PathBuf;

use proc_macro2::TokenStream;

use crate::cache::{self, CacheError, Resolved};

pub use bindings::bindings;
pub use derive::derive as derive_onnx_binding;
pub use pipeline::pipeline;

/// Where a macro runs: what it needs from the build environment.
#[derive(Debug, Clone)]
pub struct MacroEnv {
    /// The crate's manifest dir (`CARGO_MANIFEST_DIR`): model paths are relative to it.
    pub manifest_dir: PathBuf,
    /// [`cache::OFFLINE_ENV`] is set: use the cache even when the model exists.
    pub offline: bool,
    /// Text identifying the crate and the macro call (file, line, column), for
    /// [`track`]'s per-invocation link paths.
    pub site: String,
}

impl MacroEnv {
    /// Reads the environment Cargo gives rustc; `call_site` identifies the invocation.
    pub fn from_env(call_site: &str) -> Result<MacroEnv, String> {
        let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR").ok_or_else(|| {
            "CARGO_MANIFEST_DIR is not set: ort-bind's macros resolve model paths against the \
             crate's manifest dir, so build with cargo"
                .to_owned()
        })?;
        let offline = std::env::var(cache::OFFLINE_ENV)
            .is_ok_and(|v| !v.is_empty() && v != "0" && !v.eq_ignore_ascii_case("false"));
        let krate = std::env::var("CARGO_CRATE_NAME")
            .or_else(|_| std::env::var("CARGO_PKG_NAME"))
            .unwrap_or_default();
        let manifest_dir = PathBuf::from(manifest_dir);
        Ok(MacroEnv {
            site: format!("{}|{krate}|{call_site}", manifest_dir.display()),
            manifest_dir,
            offline,
        })
    }
}

/// An error spread over `range` (from its first to its last token).
pub fn spanned_error(
    range: crate::check::syntax::Range,
    message: impl std::fmt::Display,
) -> syn::Error {
    let mut tokens = TokenStream::new();
    tokens.extend([
        proc_macro2::TokenTree::Ident(proc_macro2::Ident::new("start", range.start)),
        proc_macro2::TokenTree::Ident(proc_macro2::Ident::new("end", range.end)),
    ]);
    syn::Error::new_spanned(tokens, message)
}

/// Resolves a model path written as `lit`: the signature, from the model or its cache;
/// errors sit on `lit`.
pub fn resolve_model(env: &MacroEnv, lit: &syn::LitStr) -> Result<Resolved, syn::Error> {
    let rel = PathBuf::from(lit.value());
    if rel.as_os_str().is_empty() {
        return Err(syn::Error::new(
            lit.span(),
            "the model path is empty; write it relative to the crate's Cargo.toml, e.g. \
             \"models/model.onnx\"",
        ));
    }
    cache::resolve(&env.manifest_dir, &rel, env.offline).map_err(|e| {
        // Paths as the user sees them: relative to the crate's Cargo.toml.
        let mut message = e.to_string();
        let mut roots = vec![env.manifest_dir.clone()];
        if let Ok(canonical) = std::fs::canonicalize(&env.manifest_dir) {
            roots.push(canonical);
        }
        for root in roots {
            message = message.replace(
                &format!("{}{}", root.display(), std::path::MAIN_SEPARATOR),
                "",
            );
        }
        if let CacheError::Missing { .. } = e {
            if let Some(near) = near_file(&env.manifest_dir, &rel) {
                message.push_str(&format!("\n  help: did you mean \"{near}\"?"));
            }
            message.push_str(
                "\n  note: model paths are relative to the crate's Cargo.toml (CARGO_MANIFEST_DIR)",
            );
        }
        syn::Error::new(lit.span(), message)
    })
}

/// A file next to where `rel` points whose name is close to it (a typo: `modles/add.onnx`,
/// `models/ad.onnx`), as the path to write instead; the directory is searched one level
/// (and, when it does not exist, a near directory name is tried first).
fn near_file(root: &std::path::Path, rel: &std::path::Path) -> Option<String> {
    let names_in = |dir: &std::path::Path, dirs: bool| -> Vec<String> {
        std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .take(10_000)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir() == dirs))
            .filter_map(|e| e.file_name().into_string().ok())
            .collect()
    };
    let file = rel.file_name()?.to_str()?;
    let parent = rel.parent().unwrap_or(std::path::Path::new(""));
    let mut dir = parent.to_path_buf();
    if !root.join(&dir).is_dir() {
        // One misspelt directory: `modles/` for `models/`.
        let last = dir.file_name()?.to_str()?.to_owned();
        let up = dir
            .parent()
            .unwrap_or(std::path::Path::new(""))
            .to_path_buf();
        let dirs = names_in(&root.join(&up), true);
        dir = up.join(crate::check::closest(
            &last,
            dirs.iter().map(String::as_str),
        )?);
    }
    let files = names_in(&root.join(&dir), false);
    if files.iter().any(|f| f == file) {
        return Some(dir.join(file).to_string_lossy().into_owned());
    }
    // Stems compared among files of the same extension (`ad.onnx` -> `add.onnx`, but not
    // `missing.onnx` -> `messy.onnx`).
    let (stem, ext) = file.rsplit_once('.').unwrap_or((file, ""));
    let stems: Vec<&str> = files
        .iter()
        .filter_map(|f| {
            f.rsplit_once('.')
                .filter(|(_, e)| *e == ext)
                .map(|(s, _)| s)
        })
        .collect();
    let best = crate::check::closest(stem, stems.iter().copied())?;
    Some(
        dir.join(format!("{best}.{ext}"))
            .to_string_lossy()
            .into_owned(),
    )
}

/// Body of the hidden `track_model!("<link>", "<model>")`: points the link path at the
/// model (see [`track`]); expands to nothing. Failing to make the link only loses the
/// rebuild-on-edit, so it is not an error.
pub fn track_model(input: TokenStream) -> TokenStream {
    let parsed = syn::parse::Parser::parse2(
        syn::punctuated::Punctuated::<syn::LitStr, syn::Token![,]>::parse_terminated,
        input,
    );
    match parsed {
        Ok(args) if args.len() == 2 => {
            let link = PathBuf::from(args[0].value());
            let model = PathBuf::from(args[1].value());
            let _ = track::retarget(&link, &model);
            TokenStream::new()
        }
        Ok(args) => syn::Error::new(
            proc_macro2::Span::call_site(),
            format!("track_model! takes two paths, got {}", args.len()),
        )
        .to_compile_error(),
        Err(e) => e.to_compile_error(),
    }
}

#[cfg(test)]
mod tests;
