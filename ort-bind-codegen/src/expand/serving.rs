//! What a request handler needs: `Model::pool` (a pool of this model's bindings) always,
//! and, when the plan knows the batch dim, dynamic batching typed for the model:
//! `Item` (one request's inputs), `Reply` (its outputs), `BatchSpec` (how items form a
//! batch) and `Model::batcher`.

use proc_macro2::TokenStream;
use quote::quote;

use super::tokens::{elem_tokens, type_doc};
use crate::ident::to_ident;
use crate::planner::{Plan, PlannedValue, Storage};

/// `Pool`/`PooledBinding` aliases and `Model::pool`, `Model::pool_on`, then the batching items.
pub(crate) fn serving(plan: &Plan, rt: &syn::Path) -> TokenStream {
    let batching = match plan.batch {
        Some(b) => batching(plan, rt, b),
        None => no_batching(rt),
    };
    quote! {
        #[allow(dead_code, unreachable_pub)]
        /// A pool of this model's bindings for request handlers; see [`Model::pool`].
        pub type Pool<D = #rt::Cpu> = #rt::Pool<Io<D>>;

        #[allow(dead_code, unreachable_pub)]
        /// A binding checked out of a [`Pool`]: its `inputs()`, `run()` and `outputs()` are
        /// a [`Binding`]'s; it goes back to the pool when dropped.
        pub type PooledBinding<D = #rt::Cpu> = #rt::PooledBinding<Io<D>>;

        #[allow(dead_code, unreachable_pub)]
        #[doc(hidden)]
        #[deprecated(note = "renamed to `PooledBinding` (this module's)")]
        /// Renamed to [`PooledBinding`].
        pub type Pooled<D = #rt::Cpu> = PooledBinding<D>;

        #[allow(dead_code, unreachable_pub)]
        impl Model {
            /// A pool of at most `capacity` host bindings on this model's session, made
            /// on demand: check one out for a request's dims (`get`, `try_get`, or
            /// `get_async` from async code), fill its inputs, run, read its outputs; it
            /// returns to the pool when dropped. Bindings keep their capacity and recent
            /// dims, so a request no larger than earlier ones allocates nothing
            /// (`Pool::fill` serves the largest up front).
            pub fn pool(&self, capacity: usize) -> Pool {
                self.pool_on(#rt::Cpu, capacity)
            }

            /// A pool of at most `capacity` bindings with tensors on `device`; see
            /// [`Model::pool`].
            pub fn pool_on<D: #rt::Device + ::core::marker::Send + ::core::marker::Sync + 'static>(
                &self,
                device: D,
                capacity: usize,
            ) -> Pool<D> {
                let session = ::core::clone::Clone::clone(&self.session);
                #rt::Pool::new(capacity, move |dims: &Dims| {
                    let io = Io::new(
                        ::core::clone::Clone::clone(&device),
                        ::core::clone::Clone::clone(dims),
                    )?;
                    #rt::Binding::new(&session, io)
                })
            }
        }

        #batching
    }
}

/// Where the plan knows no batch dim: a `Model::batcher` whose every call fails to
/// compile with a message that names `batch_dim` (instead of "no method named `batcher`").
fn no_batching(rt: &syn::Path) -> TokenStream {
    quote! {
        #[allow(dead_code, unreachable_pub)]
        impl Model {
            /// Not available: this model has no known batch dim (see
            /// `ModelOptions::batch_dim`, or `batch_dim("..")` in `bindings!`). Calling it
            /// is a compile error that says so.
            #[doc(hidden)]
            pub fn batcher<O: #rt::__private::NoBatchDim>(&self, options: O) -> ::core::convert::Infallible {
                options.unavailable()
            }
        }
    }
}

/// `Item`, `Reply`, `BatchSpec`, `Batcher` and `Model::batcher`, batching along dims
/// field `batch`.
fn batching(plan: &Plan, rt: &syn::Path, batch: usize) -> TokenStream {
    let batch_field = to_ident(&plan.dims[batch].field);
    let batch_name = match &plan.dims[batch].source {
        crate::planner::DimSource::Named(n) => n.clone(),
        _ => plan.dims[batch].field.clone(),
    };
    let row_doc = |role: &str, v: &PlannedValue| {
        format!(
            " {role} `{}` {} for one item: its row along `{batch_name}` (dims without the \
             batch axis, and data).",
            v.name,
            type_doc(v)
        )
    };
    let item_fields = plan.inputs.iter().map(|v| {
        let (f, elem, doc) = (
            to_ident(&v.field),
            elem_tokens(rt, v.elem),
            row_doc("Input", v),
        );
        quote!(#[doc = #doc] pub #f: #rt::Row<#elem>,)
    });
    let reply_fields = plan.outputs.iter().map(|v| {
        let (f, elem, doc) = (
            to_ident(&v.field),
            elem_tokens(rt, v.elem),
            row_doc("Output", v),
        );
        quote!(#[doc = #doc] pub #f: #rt::Row<#elem>,)
    });
    // Every input is a tensor here (the plan's rule), so each has a shape parameter.
    let shapes = plan.inputs.iter().map(|v| {
        let f = to_ident(&v.field);
        quote!(&item.#f.batch_of_one())
    });
    let gathers = plan.inputs.iter().map(|v| {
        let f = to_ident(&v.field);
        quote!(#rt::__private::gather_row(&mut inputs.#f, row, item.#f.data())?;)
    });
    let scatters = plan.outputs.iter().map(|v| {
        let f = to_ident(&v.field);
        match v.storage {
            // Read as every allocated output reads: `get()`, `Error::NotRun` before a run.
            Storage::Allocated => quote! {
                #f: #rt::__private::scatter_row(&outputs.#f.get()?, row)?,
            },
            _ => quote!(#f: #rt::__private::scatter_row(&outputs.#f, row)?,),
        }
    });
    let item_doc = format!(
        " One request for a [`Batcher`]: each input's row for one item, without the batch \
         dim `{batch_name}`. Its shapes are checked against the model when it is submitted \
         (a request that does not fit fails alone); items of equal shapes batch together."
    );
    let reply_doc = format!(
        " One request's result from a [`Batcher`]: each output's row along `{batch_name}`, \
         copied out of the bound buffers."
    );
    let spec_doc = format!(
        " How this model batches: items stacked along `{batch_name}` (`Dims.{}`), every \
         other dim read from the item's shapes.",
        plan.dims[batch].field
    );
    quote! {
        #[allow(dead_code, unreachable_pub, clippy::type_complexity)]
        #[doc = #item_doc]
        #[derive(Debug, Clone, Default, PartialEq)]
        pub struct Item {
            #(#item_fields)*
        }

        #[allow(dead_code, unreachable_pub, clippy::type_complexity)]
        #[doc = #reply_doc]
        #[derive(Debug, Clone, Default, PartialEq)]
        pub struct Reply {
            #(#reply_fields)*
        }

        #[allow(dead_code, unreachable_pub)]
        #[doc = #spec_doc]
        #[derive(Debug, Clone, Copy, Default)]
        pub struct BatchSpec;

        impl #rt::Batching<Io<#rt::Cpu>> for BatchSpec {
            type Item = Item;
            type Reply = Reply;
            fn item_dims(&self, item: &Item) -> #rt::Result<Dims> {
                Dims::from_input_shapes(#(#shapes),*)
            }
            fn batch_dims(&self, item_dims: &Dims, n: usize) -> Dims {
                let mut dims = ::core::clone::Clone::clone(item_dims);
                dims.#batch_field = n;
                dims
            }
            fn gather(&self, inputs: &mut Inputs<'_>, row: usize, item: &Item) -> #rt::Result<()> {
                #(#gathers)*
                ::core::result::Result::Ok(())
            }
            fn scatter(&self, outputs: &Outputs<'_>, row: usize) -> #rt::Result<Reply> {
                ::core::result::Result::Ok(Reply { #(#scatters)* })
            }
        }

        #[allow(dead_code, unreachable_pub)]
        /// Dynamic batching of this model: see [`Model::batcher`].
        pub type Batcher = #rt::Batcher<Io<#rt::Cpu>, BatchSpec>;

        #[allow(dead_code, unreachable_pub)]
        impl Model {
            /// Starts dynamic batching on this model's session: concurrent
            /// `submit(Item)` (or `submit_async`) calls are gathered into runs of up to
            /// `options.max_batch` items of equal shapes, on `options.workers` bindings
            /// (each sized once for a full batch). With the default sizing
            /// (`BatchSizing::Adaptive`) the batcher measures what batching buys this
            /// model on this machine and serves at the size that costs least per item,
            /// unbatched where batching loses.
            pub fn batcher(&self, options: #rt::BatchOptions) -> #rt::Result<Batcher> {
                let session = ::core::clone::Clone::clone(&self.session);
                #rt::Batcher::new(BatchSpec, options, move |dims: &Dims| {
                    #rt::Binding::new(&session, Io::new(#rt::Cpu, ::core::clone::Clone::clone(dims))?)
                })
            }
        }
    }
}
