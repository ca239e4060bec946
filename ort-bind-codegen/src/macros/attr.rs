//! `#[onnx(...)]` attributes of `#[derive(OnnxBinding)]`, parsed into plain structs.
//!
//! Container: `#[onnx(model = "path.onnx")]`, optionally `device = Type` (every field
//! must live on that device), `crate = "path"` (where the `ort_bind` facade is, when
//! renamed), `feed_back = "output -> input"` (a recurrent pair, repeatable),
//! `no_auto_feed_back`, `decoder` (the decode loop of a decoder model) and
//! `from_input_shapes` (`<Struct>Dims::from_input_shapes` is required: an error naming the
//! dims when the input shapes do not determine them).
//! Field: `#[onnx(name = "onnx/name")]`, `#[onnx(input)]`, `#[onnx(output)]`,
//! `#[onnx(dims = "batch, 3, height, width")]` (one entry per axis: a dim name, a size,
//! or `_`).

use std::fmt;

use proc_macro2::Span;
use syn::spanned::Spanned;

use crate::check::{Role, closest};
use crate::written::{Written, written_opt};

/// Collects errors so every problem of a struct is reported at once.
#[derive(Debug, Default)]
pub struct Errors(Option<syn::Error>);

impl Errors {
    /// Adds an error.
    pub fn push(&mut self, e: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(e),
            None => self.0 = Some(e),
        }
    }

    /// Adds an error at `span`.
    pub fn at(&mut self, span: Span, message: impl std::fmt::Display) {
        self.push(syn::Error::new(span, message));
    }

    /// Whether no error was added.
    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// `compile_error!` invocations for every error (nothing when there is none).
    pub fn to_compile_errors(&self) -> proc_macro2::TokenStream {
        self.0
            .as_ref()
            .map(syn::Error::to_compile_error)
            .unwrap_or_default()
    }
}

/// The container attribute.
#[derive(Default)]
pub struct ContainerAttrs {
    /// `model = "..."`.
    pub model: Option<syn::LitStr>,
    /// `device = Type`.
    pub device: Option<syn::Type>,
    /// `crate = "path"`.
    pub krate: Option<syn::Path>,
    /// `feed_back = "output -> input"`, in order.
    pub feed_back: Vec<syn::LitStr>,
    /// `no_auto_feed_back`.
    pub no_auto_feed_back: bool,
    /// `decoder`: the decode loop of a decoder model (see the derive's `decoder` module).
    pub decoder: Option<proc_macro2::Span>,
    /// `decoder_role("role", "name")`, `decoder_cache("past", "present")`,
    /// `decoder_context("input")`: the decoder's roles under other names, as `bindings!`
    /// takes them (each implies `decoder`).
    pub decoder_names: crate::planner::DecoderNames,
    /// `from_input_shapes`: `<Struct>Dims::from_input_shapes` is required, an error naming
    /// the dims where the input shapes do not determine them (without it, the function is
    /// emitted where they do, and left out silently where they do not).
    pub from_input_shapes: Option<proc_macro2::Span>,
    /// Whether the container attributes had errors (reported already).
    pub had_errors: bool,
}

impl fmt::Debug for ContainerAttrs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ContainerAttrs")
            .field("model", &written_opt(&self.model))
            .field("device", &written_opt(&self.device))
            .field("krate", &written_opt(&self.krate))
            .field(
                "feed_back",
                &self.feed_back.iter().map(Written).collect::<Vec<_>>(),
            )
            .field("no_auto_feed_back", &self.no_auto_feed_back)
            .field("decoder", &self.decoder)
            .field("decoder_names", &self.decoder_names)
            .field("from_input_shapes", &self.from_input_shapes)
            .field("had_errors", &self.had_errors)
            .finish()
    }
}

/// A field attribute.
#[derive(Default)]
pub struct FieldAttrs {
    /// `name = "..."`.
    pub name: Option<syn::LitStr>,
    /// `input` / `output`.
    pub role: Option<(Role, Span)>,
    /// `dims = "..."`.
    pub dims: Option<syn::LitStr>,
}

impl fmt::Debug for FieldAttrs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FieldAttrs")
            .field("name", &written_opt(&self.name))
            .field("role", &self.role)
            .field("dims", &written_opt(&self.dims))
            .finish()
    }
}

fn unknown(errors: &mut Errors, path: &syn::Path, known: &[&str]) {
    let written = path
        .get_ident()
        .map_or_else(|| quote::quote!(#path).to_string(), ToString::to_string);
    let mut message = format!(
        "unknown `onnx` attribute `{written}`; expected {}",
        known
            .iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if let Some(best) = closest(&written, known.iter().copied()) {
        message.push_str(&format!("\n  help: did you mean `{best}`?"));
    }
    errors.at(path.span(), message);
}

fn duplicate(errors: &mut Errors, path: &syn::Path) {
    errors.at(path.span(), "this `onnx` attribute is given twice");
}

/// Parses every `#[onnx(...)]` on the struct.
pub fn container(attrs: &[syn::Attribute], errors: &mut Errors) -> ContainerAttrs {
    let mut out = ContainerAttrs::default();
    let mut local = Errors::default();
    let errors_out = errors;
    let errors = &mut local;
    for attr in attrs.iter().filter(|a| a.path().is_ident("onnx")) {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("model") {
                let lit: syn::LitStr = meta.value()?.parse()?;
                if out.model.is_some() {
                    duplicate(errors, &meta.path);
                }
                out.model = Some(lit);
            } else if meta.path.is_ident("device") {
                let ty: syn::Type = meta.value()?.parse()?;
                if out.device.is_some() {
                    duplicate(errors, &meta.path);
                }
                out.device = Some(ty);
            } else if meta.path.is_ident("crate") {
                let lit: syn::LitStr = meta.value()?.parse()?;
                match lit.parse::<syn::Path>() {
                    Ok(p) => out.krate = Some(p),
                    Err(_) => {
                        errors.at(lit.span(), format!("`{}` is not a Rust path", lit.value()))
                    }
                }
            } else if meta.path.is_ident("feed_back") {
                out.feed_back.push(meta.value()?.parse()?);
            } else if meta.path.is_ident("no_auto_feed_back") {
                if out.no_auto_feed_back {
                    duplicate(errors, &meta.path);
                }
                out.no_auto_feed_back = true;
            } else if meta.path.is_ident("decoder") {
                if out.decoder.is_some() {
                    duplicate(errors, &meta.path);
                }
                out.decoder = Some(meta.path.span());
            } else if ["decoder_role", "decoder_cache", "decoder_context"]
                .iter()
                .any(|k| meta.path.is_ident(k))
            {
                let content;
                syn::parenthesized!(content in meta.input);
                let args =
                    syn::punctuated::Punctuated::<syn::LitStr, syn::Token![,]>::parse_terminated(
                        &content,
                    )?;
                let args: Vec<syn::LitStr> = args.into_iter().collect();
                let key = meta
                    .path
                    .get_ident()
                    .map(ToString::to_string)
                    .unwrap_or_default();
                let names = &mut out.decoder_names;
                match (key.as_str(), args.as_slice()) {
                    ("decoder_role", [role, name]) => {
                        match crate::planner::DecoderRole::from_name(&role.value()) {
                            Some(r) => names.set_role(r, name.value()),
                            None => errors.at(
                                role.span(),
                                format!(
                                    "expected a decoder role: {}",
                                    crate::planner::DecoderRole::names_list()
                                ),
                            ),
                        }
                    }
                    ("decoder_cache", [past, present]) => {
                        names.caches.push((past.value(), present.value()));
                    }
                    ("decoder_context", [input]) => names.context.push(input.value()),
                    _ => errors.at(
                        meta.path.span(),
                        match key.as_str() {
                            "decoder_role" => "expected `decoder_role(\"role\", \"name\")`",
                            "decoder_cache" => "expected `decoder_cache(\"past\", \"present\")`",
                            _ => "expected `decoder_context(\"input\")`",
                        },
                    ),
                }
                if out.decoder.is_none() {
                    out.decoder = Some(meta.path.span());
                }
            } else if meta.path.is_ident("from_input_shapes") {
                if out.from_input_shapes.is_some() {
                    duplicate(errors, &meta.path);
                }
                out.from_input_shapes = Some(meta.path.span());
            } else if ["name", "input", "output", "dims"]
                .iter()
                .any(|k| meta.path.is_ident(k))
            {
                errors.at(
                    meta.path.span(),
                    "this `onnx` attribute belongs on a field, not on the struct",
                );
                if meta.input.peek(syn::Token![=]) {
                    let _: syn::Expr = meta.value()?.parse()?;
                }
            } else {
                unknown(
                    errors,
                    &meta.path,
                    &[
                        "model",
                        "device",
                        "crate",
                        "feed_back",
                        "no_auto_feed_back",
                        "decoder",
                        "decoder_role",
                        "decoder_cache",
                        "decoder_context",
                        "from_input_shapes",
                    ],
                );
                if meta.input.peek(syn::Token![=]) {
                    let _: syn::Expr = meta.value()?.parse()?;
                }
            }
            Ok(())
        });
        if let Err(e) = result {
            errors.push(match e.to_string().as_str() {
                "expected string literal" => syn::Error::new(
                    e.span(),
                    "expected a string literal: `model = \"path/to/model.onnx\"` (relative to \
                     the crate's Cargo.toml), `crate = \"path\"`, `feed_back = \"output -> \
                     input\"`",
                ),
                _ => e,
            });
        }
    }
    out.had_errors = !local.is_empty();
    if let Some(e) = local.0 {
        errors_out.push(e);
    }
    out
}

/// Parses every `#[onnx(...)]` on a field.
pub fn field(attrs: &[syn::Attribute], errors: &mut Errors) -> FieldAttrs {
    let mut out = FieldAttrs::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("onnx")) {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("name") {
                let lit: syn::LitStr = meta.value()?.parse()?;
                if out.name.is_some() {
                    duplicate(errors, &meta.path);
                }
                out.name = Some(lit);
            } else if meta.path.is_ident("input") || meta.path.is_ident("output") {
                let role = if meta.path.is_ident("input") {
                    Role::Input
                } else {
                    Role::Output
                };
                if let Some((other, _)) = out.role {
                    if other == role {
                        duplicate(errors, &meta.path);
                    } else {
                        errors.at(
                            meta.path.span(),
                            "a field binds either a model input or a model output, not both",
                        );
                    }
                }
                out.role = Some((role, meta.path.span()));
            } else if meta.path.is_ident("dims") {
                let lit: syn::LitStr = meta.value()?.parse()?;
                if out.dims.is_some() {
                    duplicate(errors, &meta.path);
                }
                out.dims = Some(lit);
            } else if [
                "model",
                "device",
                "crate",
                "feed_back",
                "no_auto_feed_back",
                "decoder",
                "from_input_shapes",
            ]
            .iter()
            .any(|k| meta.path.is_ident(k))
            {
                errors.at(
                    meta.path.span(),
                    "this `onnx` attribute belongs on the struct, not on a field",
                );
                if meta.input.peek(syn::Token![=]) {
                    let _: syn::Expr = meta.value()?.parse()?;
                }
            } else {
                unknown(errors, &meta.path, &["name", "input", "output", "dims"]);
                if meta.input.peek(syn::Token![=]) {
                    let _: syn::Expr = meta.value()?.parse()?;
                }
            }
            Ok(())
        });
        if let Err(e) = result {
            errors.push(e);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs(src: &str) -> Vec<syn::Attribute> {
        let item: syn::ItemStruct = syn::parse_str(&format!("{src} struct S;")).unwrap();
        item.attrs
    }

    #[test]
    fn container_attributes() {
        let mut errors = Errors::default();
        let c = container(
            &attrs(r#"#[onnx(model = "m.onnx", device = Cpu)] #[onnx(crate = "my::ort")]"#),
            &mut errors,
        );
        assert!(errors.is_empty());
        assert_eq!(c.model.unwrap().value(), "m.onnx");
        assert!(c.device.is_some());
        let krate = c.krate.unwrap();
        assert_eq!(
            quote::quote!(#krate).to_string().replace(' ', ""),
            "my::ort"
        );
    }

    #[test]
    fn mistakes_are_all_reported() {
        let mut errors = Errors::default();
        let c = container(
            &attrs(r#"#[onnx(modle = "m.onnx", name = "x")] #[onnx(model = "m.onnx")]"#),
            &mut errors,
        );
        assert!(c.model.is_some());
        let text = errors.to_compile_errors().to_string();
        assert!(text.contains("did you mean `model`"), "{text}");
        assert!(text.contains("belongs on a field"), "{text}");

        let mut errors = Errors::default();
        let f = field(&attrs(r#"#[onnx(input, output, nmae = "y")]"#), &mut errors);
        assert_eq!(f.role.map(|r| r.0), Some(Role::Output));
        let text = errors.to_compile_errors().to_string();
        assert!(text.contains("not both"), "{text}");
        assert!(text.contains("did you mean `name`"), "{text}");
    }
}
