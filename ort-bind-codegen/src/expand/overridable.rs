//! Overridable inputs (inputs the model gives a default) and LoRA adapters: the
//! `Overrides` struct a binding holds them in, their lines in `Io`'s impls, their fields in
//! the inputs view, and the binding's `override_inputs` and `set_adapter`. A model without
//! overridable inputs gets none of it.

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

use super::tokens::{elem_tokens, shape_tokens, type_doc};
use super::views::{ViewField, ViewKind};
use crate::ident::to_ident;
use crate::planner::{Plan, PlannedValue};
use crate::sig::Dim;

/// The tensor type of overridable input `v` on device `D`.
fn tensor_type(rt: &syn::Path, v: &PlannedValue) -> TokenStream {
    let (elem, shape) = (elem_tokens(rt, v.elem), shape_tokens(rt, v));
    quote!(#rt::Tensor<#elem, #shape, D>)
}

/// The `Overrides` struct (empty tokens without overridable inputs).
pub(crate) fn overrides_struct(plan: &Plan, rt: &syn::Path) -> TokenStream {
    if plan.overridable.is_empty() {
        return TokenStream::new();
    }
    let fields = plan.overridable.iter().map(|v| {
        let f = to_ident(&v.field);
        let ty = tensor_type(rt, v);
        let doc = format!(
            " Overridable input `{}`: {}. `None`: the model's default (or the adapter's \
             parameter, while one is set).",
            v.name,
            type_doc(v)
        );
        quote!(#[doc = #doc] pub #f: ::core::option::Option<#ty>,)
    });
    let names: Vec<String> = plan
        .overridable
        .iter()
        .map(|v| format!("`{}`", v.name))
        .collect();
    let doc = format!(
        " The overridable inputs of the model (inputs it gives a default: {}), each `None` \
         (the default) or a tensor the binding binds in its place. Change them with \
         [`Binding::override_inputs`]; fill a set one in place through [`Binding::inputs`].",
        names.join(", ")
    );
    quote! {
        #[allow(dead_code, unreachable_pub, clippy::type_complexity)]
        #[doc = #doc]
        #[derive(Debug)]
        pub struct Overrides<D: #rt::Device = #rt::Cpu> {
            #(#fields)*
            #[doc(hidden)]
            pub _device: ::core::marker::PhantomData<D>,
        }
    }
}

/// `Io`'s fields for them, and their initial values.
pub(crate) fn io_fields(plan: &Plan, rt: &syn::Path) -> (TokenStream, TokenStream) {
    if plan.overridable.is_empty() {
        return (TokenStream::new(), TokenStream::new());
    }
    let none = plan.overridable.iter().map(|v| {
        let f = to_ident(&v.field);
        quote!(#f: ::core::option::Option::None,)
    });
    (
        quote! {
            overrides: Overrides<D>,
            adapter: ::core::option::Option<#rt::__private::BoundAdapter>,
        },
        quote! {
            overrides: Overrides { #(#none)* _device: ::core::marker::PhantomData },
            adapter: ::core::option::Option::None,
        },
    )
}

/// The `ValueSpec`s of `BindingIo::OVERRIDABLE`.
pub(crate) fn specs(plan: &Plan, rt: &syn::Path) -> Vec<TokenStream> {
    plan.overridable
        .iter()
        .map(|v| super::tokens::spec_tokens(rt, v))
        .collect()
}

/// `bind`'s lines: each binds the caller's tensor, else the adapter's parameter, else
/// nothing (the default). They follow the inputs: binder index `inputs + k`.
pub(crate) fn binds(plan: &Plan) -> Vec<TokenStream> {
    let first = plan.inputs.len();
    plan.overridable
        .iter()
        .enumerate()
        .map(|(k, v)| {
            let f = to_ident(&v.field);
            let i = first + k;
            quote! {
                match &self.overrides.#f {
                    ::core::option::Option::Some(t) => binder.input(#i, t)?,
                    ::core::option::Option::None => binder.adapter_input(#i, self.adapter.as_ref(), #k)?,
                }
            }
        })
        .collect()
}

/// `take_resized`'s terms: a set override given new dims through its view.
pub(crate) fn resized(plan: &Plan) -> Vec<TokenStream> {
    plan.overridable
        .iter()
        .map(|v| {
            let f = to_ident(&v.field);
            quote!(self.overrides.#f.as_mut().is_some_and(|t| t.take_resized()))
        })
        .collect()
}

/// The inputs view's fields for them: `Option<TensorMut>`, `Some` while set.
pub(crate) fn view_fields(plan: &Plan, rt: &syn::Path) -> Vec<ViewField> {
    plan.overridable
        .iter()
        .map(|v| {
            let (elem, shape) = (elem_tokens(rt, v.elem), shape_tokens(rt, v));
            ViewField {
                name: to_ident(&v.field),
                source: to_ident(&v.field),
                doc: format!(
                    " Overridable input `{}`: {}. `Some` while it is set \
                     ([`Binding::override_inputs`]), to fill in place; `None` while the model \
                     runs with its default (or an adapter's parameter).",
                    v.name,
                    type_doc(v)
                ),
                kind: ViewKind::Override {
                    args: quote!(#elem, #shape, D),
                    nested: true,
                },
                via_slot: false,
            }
        })
        .collect()
}

/// `BindingIo`'s items for them: the declared axes an adapter is checked against, and
/// `set_adapter` keeping the checked adapter for `bind`.
pub(crate) fn binding_io_items(plan: &Plan, rt: &syn::Path) -> TokenStream {
    if plan.overridable.is_empty() {
        return TokenStream::new();
    }
    let rows = plan.overridable.iter().map(|v| match &v.dims {
        None => quote!(::core::option::Option::None),
        Some(dims) => {
            let axes = dims.iter().map(|d| match d {
                Dim::Fixed(n) => {
                    let n = Literal::u64_unsuffixed(*n);
                    quote!(#rt::__private::DeclaredAxis::Fixed(#n))
                }
                Dim::Named(name) => quote!(#rt::__private::DeclaredAxis::Named(#name)),
                Dim::Dynamic => quote!(#rt::__private::DeclaredAxis::Any),
            });
            quote!(::core::option::Option::Some(&[#(#axes),*]))
        }
    });
    quote! {
        const OVERRIDABLE_AXES: &'static [::core::option::Option<&'static [#rt::__private::DeclaredAxis]>] = &[#(#rows),*];

        fn set_adapter(
            &mut self,
            adapter: ::core::option::Option<#rt::__private::BoundAdapter>,
        ) -> #rt::Result<()> {
            self.adapter = adapter;
            ::core::result::Result::Ok(())
        }
    }
}

/// The binding's methods for them.
pub(crate) fn binding_items(plan: &Plan, rt: &syn::Path) -> TokenStream {
    if plan.overridable.is_empty() {
        return TokenStream::new();
    }
    let first = &plan.overridable[0];
    let example_field = format_ident!("{}", first.field.trim_start_matches("r#"));
    let example = format!(
        " Sets, replaces or clears overridable inputs: `f` gets them as `Option<Tensor>`s \
         (`None`: the model's default), and whatever it leaves set is bound, without a copy, \
         before the next run (one rebind of everything: a change of override is not a per-run \
         operation; fill a set tensor in place through [`Binding::inputs`] instead). Returns \
         what `f` returns, e.g. a tensor it took back out: \
         `binding.override_inputs(|o| o.{example_field}.take())?`."
    );
    quote! {
        #[allow(dead_code, unreachable_pub, clippy::type_complexity)]
        impl<D: #rt::Device> Binding<D> {
            #[doc = #example]
            pub fn override_inputs<R>(
                &mut self,
                f: impl ::core::ops::FnOnce(&mut Overrides<D>) -> R,
            ) -> #rt::Result<R> {
                self.inner.modify(|io| ::core::result::Result::Ok(f(&mut io.overrides)))
            }

            /// Binds the parameters of a LoRA adapter as the overridable inputs of their
            /// names (no copy), after checking them against the model: every parameter names
            /// an overridable input and has its element type and rank, its fixed sizes, and
            /// one size per named dim (the rank) across parameters. The guard dereferences to
            /// this binding (`inputs()`, `run()`, `outputs()`); it borrows `adapter`, which
            /// cannot be dropped while set. Dropping the guard (or its `remove()`) unbinds
            /// the adapter: the model runs with its defaults again. An input set with
            /// [`Binding::override_inputs`] takes precedence over the adapter's parameter.
            pub fn set_adapter<'b, 'a>(
                &'b mut self,
                adapter: &'a #rt::Adapter,
            ) -> #rt::Result<#rt::WithAdapter<'b, 'a, Self>> {
                self.inner.set_adapter(::core::option::Option::Some(adapter))?;
                ::core::result::Result::Ok(#rt::WithAdapter::new(self, adapter))
            }
        }

        /// Unbinds the adapter a [`Binding::set_adapter`] guard set, when the guard goes.
        impl<D: #rt::Device> #rt::AdapterHost for Binding<D> {
            fn remove_adapter(&mut self) -> #rt::Result<()> {
                self.inner.set_adapter(::core::option::Option::None)
            }
        }
    }
}

/// The module's `adapters`: a loader per adapter file named in the options (empty tokens
/// without any).
pub(crate) fn adapters_module(opts: &super::ExpandOptions) -> TokenStream {
    if opts.adapters.is_empty() {
        return TokenStream::new();
    }
    let rt = &opts.runtime;
    let items = opts.adapters.iter().map(|a| {
        let name = crate::ident::snake_case(&a.name);
        let loader = format_ident!("{}", name);
        let file = format_ident!("{}_FILE", name.to_uppercase());
        let (rel, abs) = (&a.relative, &a.path);
        let file_doc = format!(
            " Where [`{name}`] finds `{rel}` at run time: `ORT_BIND_MODEL_<NAME>`, \
             `ORT_BIND_MODEL_DIR`, beside the executable, the current directory (each at the \
             path the crate gives it, then by file name), then `{abs}`."
        );
        let loader_doc = format!(
            " Loads LoRA adapter `{}` (`{rel}`), whose parameters were checked against this \
             model's overridable inputs when these bindings were generated; set it on a binding \
             with `Binding::set_adapter`.",
            a.name
        );
        quote! {
            #[doc = #file_doc]
            pub const #file: #rt::ModelFile = #rt::ModelFile::new(#rel, #abs);
            #[doc = #loader_doc]
            pub fn #loader() -> #rt::Result<#rt::Adapter> {
                #rt::Adapter::from_file(#file.find()?)
            }
        }
    });
    quote! {
        /// The LoRA adapter files these bindings were generated for, each checked against
        /// the model then (a file that does not fit fails the build).
        #[allow(dead_code, unreachable_pub)]
        pub mod adapters {
            #(#items)*
        }
    }
}
