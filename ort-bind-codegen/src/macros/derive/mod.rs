//! `#[derive(OnnxBinding)]`, one file per step:
//!
//! 1. attributes ([`attr`](super::attr)): `#[onnx(...)]` into plain structs;
//! 2. [`fields`]: each field's type read from its syntax;
//! 3. check ([`crate::check`]): every field against the model (names, element types,
//!    ranks, fixed dims, devices), all problems at once;
//! 4. [`plan`]: the same [`plan`](crate::planner) as `build.rs` and `bindings!`, from the
//!    model plus the fields (dims no field type fixes, recurrent pairs, who allocates);
//! 5. [`expand`]: the impls and views;
//! 6. [`fallback`]: what is emitted when the model cannot be planned at all, so a
//!    mistake does not cascade into errors at every use of the struct.
//!
//! For `struct AddIo<D: Device = Cpu> { x: .., #[onnx(name = "y")] other: .., sum: .. }`
//! the derive emits, next to the struct:
//!
//! - `unsafe impl BindingIo for AddIo<D>` (and `SplitIo`), so `Binding::new(&session, io)`
//!   binds the struct's tensors once and reuses them on every run, exactly like the
//!   generated module's `Io`; every field goes through the runtime's `Slot` trait, so
//!   fields whose types are aliases bind the same way;
//! - `AddIoInputs<'a, D>` / `AddIoOutputs<'a, D>`: the views `Binding::inputs()`,
//!   `Binding::outputs()` and `Binding::split()` hand out, one field per struct field;
//! - `AddIoDims`: one `usize` per dynamic dimension that no field type fixes (what
//!   `Binding::set_dims` takes), with `AddIoDims::from_input_shapes` when the shapes of
//!   the inputs the struct binds determine every dim (`#[onnx(from_input_shapes)]` makes
//!   it an error when they do not); and
//!   `AddIo::allocate(&device, &dims)`, or `AddIo::allocate(&device)` when the field
//!   types fix every dim;
//! - `AddIo::feed_back(&mut bound)` and `AddIo::feed_<output>_into_<input>(&mut bound)`
//!   for recurrent pairs (found by name like the generated module's, or declared with
//!   `#[onnx(feed_back = "stateN -> state")]`);
//! - `AddIo::MODEL_PATH`;
//! - for each `Option<Tensor<..>>` field that binds an overridable input (one the model
//!   gives a default), a bind only while it is `Some` (see [`crate::check`]);
//! - a `const _` block of trait-bound checks (see `ort_bind_runtime::assert`) for whatever the
//!   syntactic checks could not settle;
//! - the dependency tracking of the model file (see [`track`](super::track)).
//!
//! Every problem becomes a `compile_error!` at the offending span, all at once.

mod decoder;
mod expand;
mod fallback;
mod fields;
mod plan;

use proc_macro2::TokenStream;
use quote::quote;

use super::attr::{self, Errors};
use super::{MacroEnv, resolve_model};
use crate::check::{self, FieldBinding, FieldSpec, StructSpec};

/// One field of the struct, with everything expansion needs.
struct Field<'a> {
    ident: &'a syn::Ident,
    ty: &'a syn::Type,
    spec: FieldSpec,
    attrs: attr::FieldAttrs,
    binding: Option<FieldBinding>,
    /// The overridable input an `Option<Tensor<..>>` field binds (then `binding` is
    /// `None` and `spec.ty` is the type inside the `Option`).
    over: Option<check::OverrideBinding>,
    /// Bound through the runtime's value API (string tensors, sequences, maps,
    /// optionals) rather than `Slot`: see [`plan::value_path`].
    value: bool,
}

/// Expands `#[derive(OnnxBinding)]` on `input`.
pub fn derive(input: TokenStream, env: &MacroEnv) -> TokenStream {
    let input: syn::DeriveInput = match syn::parse2(input) {
        Ok(i) => i,
        Err(e) => return e.to_compile_error(),
    };
    let fieldless = matches!(
        &input.data,
        syn::Data::Struct(syn::DataStruct {
            fields: syn::Fields::Unit,
            ..
        })
    ) || matches!(
        &input.data,
        syn::Data::Struct(syn::DataStruct { fields: syn::Fields::Named(n), .. }) if n.named.is_empty()
    );
    if fieldless {
        return decoder_only(&input, env);
    }
    let named = match &input.data {
        syn::Data::Struct(syn::DataStruct {
            fields: syn::Fields::Named(named),
            ..
        }) => named,
        _ => {
            return syn::Error::new(
                input.ident.span(),
                "`OnnxBinding` can only be derived for a struct with named fields, one per \
                 model input or output",
            )
            .to_compile_error();
        }
    };

    // 1. Attributes, 2. field types.
    let mut errors = Errors::default();
    let container = attr::container(&input.attrs, &mut errors);
    let krate: syn::Path = container
        .krate
        .clone()
        .unwrap_or_else(|| syn::parse_quote!(::ort_bind));
    let mut fields = fields::read(named, &mut errors);

    // The model: on any problem, one error on the attribute (or the struct name).
    let resolved = match &container.model {
        // A misspelled or malformed container attribute was reported already.
        None if container.had_errors => None,
        None => {
            errors.at(
                input.ident.span(),
                "`#[derive(OnnxBinding)]` needs the model file: add \
                 `#[onnx(model = \"path/to/model.onnx\")]` (relative to the crate's Cargo.toml)",
            );
            None
        }
        Some(lit) => match resolve_model(env, lit) {
            Err(e) => {
                errors.push(e);
                None
            }
            Ok(r) => {
                let refused = crate::planner::refusals(&r.signature);
                if refused.is_empty() {
                    Some(r)
                } else {
                    let problems: Vec<String> = refused.iter().map(ToString::to_string).collect();
                    errors.at(
                        lit.span(),
                        format!("`{}` cannot be bound: {}", lit.value(), problems.join("; ")),
                    );
                    None
                }
            }
        },
    };
    let sig = resolved.as_ref().map(|r| &r.signature);

    // 3. Check.
    if let Some(sig) = sig {
        let specs: Vec<FieldSpec> = fields.iter().map(|f| f.spec.clone()).collect();
        let outcome = check::check_struct(
            sig,
            &StructSpec {
                name_span: input.ident.span(),
                fields: &specs,
                device: container.device.as_ref(),
            },
        );
        for ((f, b), o) in fields.iter_mut().zip(outcome.fields).zip(outcome.overrides) {
            f.binding = b;
            if let (Some(o), Some(inner)) = (o, check::option_inner(f.ty)) {
                f.over = Some(o);
                f.spec.ty = check::syntax::parse_field_type(inner);
            }
        }
        for f in fields.iter_mut() {
            f.value = plan::value_path(f, sig);
        }
        for d in outcome.diagnostics {
            errors.push(super::spanned_error(d.range, d.render()));
        }
    }

    // 4. Plan.
    let planned = sig.and_then(|sig| plan::plan(sig, &container, &fields, &mut errors));
    let from_input_shapes = planned
        .as_ref()
        .is_some_and(|p| emits_from_input_shapes(p, container.from_input_shapes, &mut errors));

    let tracking = match &resolved {
        Some(r) => super::track::tokens(
            &krate,
            r.model_present.then_some(r.model.as_path()),
            r.cache.as_deref(),
            &format!("{}:{}", env.site, input.ident),
        ),
        None => TokenStream::new(),
    };

    // 5. Expand, or 6. fall back.
    let body = match (&planned, sig, &resolved) {
        (Some(planned), Some(sig), Some(r)) => expand::expand(
            &input,
            &krate,
            &fields,
            Some(expand::Model {
                sig,
                planned,
                path: &r.model.to_string_lossy(),
                relative: &container
                    .model
                    .as_ref()
                    .map(|l| l.value())
                    .unwrap_or_default(),
                from_input_shapes,
            }),
            container.device.as_ref(),
        ),
        _ => fallback::fallback(&input, &krate, &fields, container.device.as_ref()),
    };
    // The decode loop, when asked for, next to the binding.
    let decoder_items = match (container.decoder, sig) {
        (Some(span), Some(sig)) => decoder::items(&input, &krate, sig, &container.decoder_names)
            .unwrap_or_else(|reason| {
                errors.at(span, reason);
                TokenStream::new()
            }),
        _ => TokenStream::new(),
    };
    let errors = errors.to_compile_errors();
    quote! {
        #errors
        #body
        #decoder_items
        #tracking
    }
}

/// Whether `<Struct>Dims::from_input_shapes` is emitted: where the inputs' shapes
/// determine every dim. Where `#[onnx(from_input_shapes)]` (at `asked`) asks for it and
/// they do not, that is an error naming the dims. (Its cost per input is a few tokens of a
/// table the runtime's `solve_dims` reads, so wide structs get it too.)
fn emits_from_input_shapes(
    planned: &plan::Planned,
    asked: Option<proc_macro2::Span>,
    errors: &mut Errors,
) -> bool {
    let plan = &planned.plan.plan;
    let unsolved: Vec<String> = crate::expand::dims::unsolved_from_inputs(plan)
        .map(|f| format!("`{}`", f.trim_start_matches("r#")))
        .collect();
    match asked {
        Some(span) if !unsolved.is_empty() => {
            errors.at(
                span,
                format!(
                    "`from_input_shapes`: no input this struct binds has the dims {} in its \
                     shape, so input shapes cannot determine them",
                    unsolved.join(", ")
                ),
            );
            false
        }
        Some(_) | None => unsolved.is_empty(),
    }
}

/// A struct without fields: only the decode loop, which `#[onnx(decoder)]` must ask for.
fn decoder_only(input: &syn::DeriveInput, env: &MacroEnv) -> TokenStream {
    let mut errors = Errors::default();
    let container = attr::container(&input.attrs, &mut errors);
    let krate: syn::Path = container
        .krate
        .clone()
        .unwrap_or_else(|| syn::parse_quote!(::ort_bind));
    let Some(span) = container.decoder else {
        errors.at(
            input.ident.span(),
            "`OnnxBinding` on a struct without fields needs `#[onnx(decoder)]` (the decode loop \
             of a decoder model); otherwise give it named fields, one per model input or output",
        );
        return errors.to_compile_errors();
    };
    let Some(lit) = &container.model else {
        errors.at(
            input.ident.span(),
            "`#[derive(OnnxBinding)]` needs the model file: add \
             `#[onnx(model = \"path/to/model.onnx\")]` (relative to the crate's Cargo.toml)",
        );
        return errors.to_compile_errors();
    };
    let resolved = match resolve_model(env, lit) {
        Ok(r) => r,
        Err(e) => {
            errors.push(e);
            return errors.to_compile_errors();
        }
    };
    let body = decoder::decoder_only(
        input,
        &krate,
        &resolved.signature,
        &container.decoder_names,
        &resolved.model.to_string_lossy(),
        &lit.value(),
    )
    .unwrap_or_else(|reason| {
        errors.at(span, reason);
        TokenStream::new()
    });
    let tracking = super::track::tokens(
        &krate,
        resolved.model_present.then_some(resolved.model.as_path()),
        resolved.cache.as_deref(),
        &format!("{}:{}", env.site, input.ident),
    );
    let errors = errors.to_compile_errors();
    quote! {
        #errors
        #body
        #tracking
    }
}
