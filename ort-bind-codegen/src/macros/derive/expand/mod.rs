//! Step 5 of the derive: the impls, views and dims of a checked, planned struct, one file
//! per generated item as in [`crate::expand`]:
//!
//! - `dims`: `<Struct>Dims`, its `from_input_shapes`, and the dims expression per field;
//! - `model`: `MODEL_PATH`, `MODEL`, `allocate`;
//! - `views`: `<Struct>Inputs` / `<Struct>Outputs`, through the emitter the module uses;
//! - `io`: the `BindingIo` / `SplitIo` impls, through the emitter the module uses;
//! - `feed_back`: the recurrent-pair methods (their names and `feed_back`'s doc through
//!   the module's helpers, [`crate::expand::feed_back`]);
//! - `checks`: trait-bound checks for what the syntax could not settle.
//!
//! Fields are reached through the runtime's `Slot` trait, so a field whose type is an
//! alias binds like one written `Tensor<..>`; sizes come from the plan
//! ([`Planned`]): one dims expression per field, the dims struct, the pairs to swap.

mod checks;
mod dims;
mod feed_back;
mod io;
mod model;
mod views;

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use super::Field;
use super::plan::Planned;
use crate::sig::ModelSignature;

/// The model a struct was planned against.
pub(super) struct Model<'a> {
    /// Its signature.
    pub sig: &'a ModelSignature,
    /// The struct's plan.
    pub planned: &'a Planned,
    /// Path of the model file (`MODEL_PATH`).
    pub path: &'a str,
    /// The path as the attribute wrote it, relative to the crate (`MODEL`).
    pub relative: &'a str,
    /// Emit `<Struct>Dims::from_input_shapes` (see [`super::emits_from_input_shapes`]).
    pub from_input_shapes: bool,
}

/// What every item is made from: the struct, its fields, and the model when there is one.
struct Ctx<'a, 'f> {
    input: &'a syn::DeriveInput,
    krate: &'a syn::Path,
    fields: &'a [Field<'f>],
    sig: Option<&'a ModelSignature>,
    planned: Option<&'a Planned>,
    model_path: &'a str,
    model_relative: &'a str,
    device: Option<&'a syn::Type>,
    from_input_shapes: bool,
    inputs_name: Ident,
    outputs_name: Ident,
    dims_name: Ident,
}

/// Everything the derive emits next to the struct. Without a model (see
/// [`fallback`](super::fallback)) the impls bind nothing and every field is in both views.
pub(super) fn expand(
    input: &syn::DeriveInput,
    krate: &syn::Path,
    fields: &[Field<'_>],
    model: Option<Model<'_>>,
    device: Option<&syn::Type>,
) -> TokenStream {
    let name = &input.ident;
    let cx = Ctx {
        input,
        krate,
        fields,
        sig: model.as_ref().map(|m| m.sig),
        planned: model.as_ref().map(|m| m.planned),
        model_path: model.as_ref().map_or("", |m| m.path),
        model_relative: model.as_ref().map_or("", |m| m.relative),
        device,
        from_input_shapes: model.as_ref().is_some_and(|m| m.from_input_shapes),
        inputs_name: format_ident!("{}Inputs", name),
        outputs_name: format_ident!("{}Outputs", name),
        dims_name: format_ident!("{}Dims", name),
    };
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();

    let per_field = dims::per_field(&cx);
    let dims = dims::items(&cx);
    let view_structs = views::of_struct(&cx);
    let views = view_structs.structs();
    let consts = model::consts(&cx);
    let allocate = model::allocate(&cx, &per_field);
    let feed_back = feed_back::methods(&cx);
    let io = io::impls(&cx, &per_field, &view_structs);
    let checks = checks::checks(&cx);

    quote! {
        #dims
        #views

        // Impls and checks reach the runtime through short imported names, which keeps
        // the expansion small for models with thousands of values.
        const _: () = {
        use #krate::{
            Dyn as __Dyn, Fix as __Fix, AnyRank as __AnyRank,
            __private::{
                Slot as __Slot, InputSlot as __InputSlot, assert as __assert,
                spec as __spec, spec_any_rank as __spec_any_rank,
            },
        };

        #[allow(dead_code, unreachable_pub)]
        impl #impl_generics #name #ty_generics #where_clause {
            #consts
            #allocate
            #feed_back
        }

        #io

        #[allow(dead_code, clippy::extra_unused_type_parameters)]
        fn __ort_bind_checks #impl_generics () #where_clause {
            #(#checks)*
        }
        };
    }
}
