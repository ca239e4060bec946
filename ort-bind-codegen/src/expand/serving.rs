//! What a request handler needs: `Model::pool` (a pool of this model's bindings) always,
//! and, when the plan knows the batch dim, dynamic batching typed for the model:
//! `Item` (one request's inputs), `Reply` (its outputs), `BatchSpec` (how items form a
//! batch) and `Model::batcher`.

use proc_macro2::TokenStream;
use quote::quote;

use super::tokens::{dims_expr, elem_tokens, type_doc};
use crate::ident::to_ident;
use crate::plan::{Plan, PlannedValue, Storage};

/// `Pool`/`Pooled` aliases and `Model::pool`, `Model::pool_on`, then the batching items.
pub(crate) fn serving(plan: &Plan, rt: &syn::Path) -> TokenStream {
    let batching = plan.batch.map(|b| batching(plan, rt, b));
    quote! {
        #[allow(dead_code, unreachable_pub)]
        /// A pool of this model's bindings for request handlers; see [`Model::pool`].
        pub type Pool<D = #rt::Cpu> = #rt::Pool<Io<D>>;

        #[allow(dead_code, unreachable_pub)]
        /// A binding checked out of a [`Pool`]: its `inputs()`, `run()` and `outputs()` are
        /// a [`Binding`]'s; it goes back to the pool when dropped.
        pub type Pooled<D = #rt::Cpu> = #rt::Pooled<Io<D>>;

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
                    #rt::Bound::new(&session, io)
                })
            }
        }

        #batching
    }
}

/// `Item`, `Reply`, `BatchSpec`, `Batcher` and `Model::batcher`, batching along dims
/// field `batch`.
fn batching(plan: &Plan, rt: &syn::Path, batch: usize) -> TokenStream {
    let batch_field = to_ident(&plan.dims[batch].field);
    let batch_name = match &plan.dims[batch].source {
        crate::plan::DimSource::Named(n) => n.clone(),
        _ => plan.dims[batch].field.clone(),
    };
    let row_doc = |role: &str, v: &PlannedValue| {
        format!(
            " {role} `{}` {} for one item: its row along `{batch_name}`, row-major.",
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
        quote!(#[doc = #doc] pub #f: ::std::vec::Vec<#elem>,)
    });
    let reply_fields = plan.outputs.iter().map(|v| {
        let (f, elem, doc) = (
            to_ident(&v.field),
            elem_tokens(rt, v.elem),
            row_doc("Output", v),
        );
        quote!(#[doc = #doc] pub #f: ::std::vec::Vec<#elem>,)
    });
    let checks = plan.inputs.iter().map(|v| {
        let (f, name) = (to_ident(&v.field), &v.name);
        let dims = dims_expr(plan, v, &quote!(dims));
        quote!(#rt::batch::check_row(#name, #dims, &item.#f)?;)
    });
    let gathers = plan.inputs.iter().map(|v| {
        let f = to_ident(&v.field);
        quote!(#rt::batch::gather_row(&mut inputs.#f, row, &item.#f)?;)
    });
    let scatters = plan.outputs.iter().map(|v| {
        let f = to_ident(&v.field);
        let name = &v.name;
        match v.storage {
            Storage::Allocated => quote! {
                #f: #rt::batch::scatter_row(
                    outputs.#f.as_ref().ok_or_else(|| #rt::Error::NotRun {
                        output: ::std::string::String::from(#name),
                    })?,
                    row,
                )?,
            },
            _ => quote!(#f: #rt::batch::scatter_row(&outputs.#f, row)?,),
        }
    });
    let item_doc = format!(
        " One request for a [`Batcher`]: each input for one item, without the batch dim \
         `{batch_name}`. Each length must be its input's row length under the \
         [`BatchSpec`]'s dims, or `submit` fails for this request alone."
    );
    let reply_doc = format!(
        " One request's result from a [`Batcher`]: each output's row along `{batch_name}`, \
         copied out of the bound buffers."
    );
    let spec_doc = format!(
        " How this model batches: items stacked along `{batch_name}` (`Dims.{}`), every \
         other dim as in the dims given to [`BatchSpec::new`].",
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
        #[derive(Debug, Clone)]
        pub struct BatchSpec {
            item: Dims,
        }

        #[allow(dead_code, unreachable_pub)]
        impl BatchSpec {
            /// Batches items of `item` dims (its batch field is ignored).
            pub fn new(item: Dims) -> Self {
                BatchSpec { item }
            }
        }

        impl #rt::Batching<Io<#rt::Cpu>> for BatchSpec {
            type Item = Item;
            type Reply = Reply;
            fn dims(&self, n: usize) -> Dims {
                let mut dims = ::core::clone::Clone::clone(&self.item);
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
            fn check(&self, item: &Item) -> #rt::Result<()> {
                let dims = <Self as #rt::Batching<Io<#rt::Cpu>>>::dims(self, 1);
                #(#checks)*
                ::core::result::Result::Ok(())
            }
        }

        #[allow(dead_code, unreachable_pub)]
        /// Dynamic batching of this model: see [`Model::batcher`].
        pub type Batcher = #rt::Batcher<Io<#rt::Cpu>, BatchSpec>;

        #[allow(dead_code, unreachable_pub)]
        impl Model {
            /// Starts dynamic batching on this model's session: concurrent
            /// `submit(Item)` (or `submit_async`) calls are gathered into one run of up to
            /// `options.max_batch` items, waiting at most `options.max_delay` for a batch
            /// to fill, on `options.workers` bindings sized once for a full batch. `item`
            /// gives every dim but the batch dim.
            pub fn batcher(&self, item: Dims, options: #rt::BatchOptions) -> #rt::Result<Batcher> {
                let session = &self.session;
                #rt::Batcher::new(BatchSpec::new(item), options, |dims: &Dims| {
                    #rt::Bound::new(session, Io::new(#rt::Cpu, ::core::clone::Clone::clone(dims))?)
                })
            }
        }
    }
}
