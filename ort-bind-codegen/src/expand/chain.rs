//! A chain of models (a pipeline with no decoder): one `Dims` for all of them
//! (`plan::chain`), `Pipeline` (the models, loaded) and `Chain` (their bindings, run in
//! order, each edge's input reading its source's buffer through `Binding::run_fed`).

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::pipeline::Part;
use super::tokens::size_expr_tokens;
use crate::ident::to_ident;
use crate::planner::Plan;
use crate::planner::chain::{ChainDims, DimValue, plan_chain_dims};
use crate::planner::pipeline::PlannedEdge;

/// `Dims`, `Pipeline` and `Chain` for `parts` joined by `edges`; `edge_doc` lists the
/// edges for the docs.
pub(crate) fn chain(
    parts: &[Part<'_>],
    edges: &[PlannedEdge],
    rt: &syn::Path,
    edge_doc: &str,
) -> TokenStream {
    let names: Vec<String> = parts.iter().map(|p| p.name.to_string()).collect();
    let plans: Vec<&Plan> = parts.iter().map(|p| p.plan).collect();
    let dims = plan_chain_dims(&names, &plans, edges);
    let dims_items = dims_struct(parts, &dims, rt);
    let idents: Vec<&syn::Ident> = parts.iter().map(|p| &p.name).collect();
    let list = names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let pipeline_doc = format!(" The pipeline's models, loaded: {list}.{edge_doc}");
    let chain_doc = format!(
        " The pipeline's models bound, run in order by [`Chain::run`]: each edge's input \
         reads its source's buffer in place (`Binding::run_fed`), so nothing is copied \
         between models. Fill the first models' inputs through their bindings' `inputs()` \
         and read any model's outputs through `outputs()`; a fed input's own buffer is \
         unused. Made by [`Pipeline::bind`].{edge_doc}"
    );
    let runs = dims.order.iter().map(|&m| {
        let name = idents[m];
        let feeds: Vec<TokenStream> = edges
            .iter()
            .filter(|e| e.to_model == m)
            .map(|e| {
                let from = idents[e.from_model];
                let (output, input) = (&e.from, &e.to);
                quote!(#rt::Feed::new(&self.#from, #output, #input))
            })
            .collect();
        if feeds.is_empty() {
            quote!(self.#name.run()?;)
        } else {
            quote!(self.#name.run_fed(&[#(#feeds),*])?;)
        }
    });
    let set_dims = idents
        .iter()
        .map(|name| quote!(self.#name.set_dims(&dims.#name()?)?;));
    let model_docs = idents.iter().map(|n| format!(" `{n}`."));
    let field_docs = idents
        .iter()
        .map(|n| format!(" `{n}`, bound (its module's `Binding`, unwrapped)."));
    quote! {
        #dims_items

        #[doc = #pipeline_doc]
        #[allow(dead_code, unreachable_pub)]
        #[derive(Debug, Clone)]
        pub struct Pipeline {
            #(
                #[doc = #model_docs]
                pub #idents: #idents::Model,
            )*
        }

        #[allow(dead_code, unreachable_pub)]
        impl Pipeline {
            /// Loads every model (each as its module's `Model::load` finds it).
            pub fn load() -> #rt::Result<Self> {
                ::core::result::Result::Ok(Pipeline {
                    #(#idents: #idents::Model::load()?,)*
                })
            }

            /// Binds every model in host memory, sized by `dims`.
            pub fn bind(&self, dims: Dims) -> #rt::Result<Chain> {
                self.bind_on(#rt::Cpu, dims)
            }

            /// Binds every model on `device`, sized by `dims`: an edge joins two
            /// buffers on the same device.
            pub fn bind_on<D: #rt::Device + ::core::clone::Clone>(
                &self,
                device: D,
                dims: Dims,
            ) -> #rt::Result<Chain<D>> {
                ::core::result::Result::Ok(Chain {
                    #(#idents: self.#idents.bind_on(device.clone(), dims.#idents()?)?.into(),)*
                    dims,
                })
            }
        }

        #[doc = #chain_doc]
        #[allow(dead_code, unreachable_pub)]
        #[derive(Debug)]
        pub struct Chain<D: #rt::Device = #rt::Cpu> {
            #(
                #[doc = #field_docs]
                pub #idents: #rt::Binding<#idents::Io<D>>,
            )*
            dims: Dims,
        }

        #[allow(dead_code, unreachable_pub)]
        impl<D: #rt::Device> Chain<D> {
            /// Runs every model in order; a model fed by an edge reads its source's
            /// buffer as it is after the source's run.
            pub fn run(&mut self) -> #rt::Result<()> {
                #(#runs)*
                ::core::result::Result::Ok(())
            }

            /// Changes the dims of every model (buffers resized, capacity reused).
            pub fn set_dims(&mut self, dims: Dims) -> #rt::Result<()> {
                #(#set_dims)*
                self.dims = dims;
                ::core::result::Result::Ok(())
            }

            /// The dims the models are bound at.
            pub fn dims(&self) -> &Dims {
                &self.dims
            }
        }
    }
}

/// The chain's `Dims` and, per model, the method that gives that model's dims.
fn dims_struct(parts: &[Part<'_>], dims: &ChainDims, rt: &syn::Path) -> TokenStream {
    let fields = dims.fields.iter().map(|f| {
        let name = to_ident(&f.field);
        let ty = if f.any_rank {
            quote!(::std::vec::Vec<usize>)
        } else {
            quote!(usize)
        };
        let users = f
            .sizes
            .iter()
            .map(|(m, field)| format!("`{}.{field}`", parts[*m].name))
            .collect::<Vec<_>>()
            .join(", ");
        let doc = format!(" Sizes {users}.");
        quote! {
            #[doc = #doc]
            pub #name: #ty,
        }
    });
    let derived: Vec<String> = dims
        .models
        .iter()
        .enumerate()
        .flat_map(|(m, values)| {
            values.iter().enumerate().filter_map(move |(j, v)| {
                let field = &parts[m].plan.dims[j].field;
                let model = &parts[m].name;
                match v {
                    DimValue::Field(_) => None,
                    DimValue::Const(n) => Some(format!("`{model}.{field}` = {n}")),
                    DimValue::Expr {
                        model: up, expr, ..
                    } => Some(format!(
                        "`{model}.{field}` = `{expr}` of `{}`",
                        parts[*up].name
                    )),
                }
            })
        })
        .collect();
    let doc = format!(
        " Sizes of the dynamic dimensions of the whole pipeline: one field per dim no edge \
         determines. A dim an edge equates to an earlier model's follows from it{}",
        if derived.is_empty() {
            " (none does here).".to_owned()
        } else {
            format!(": {}.", derived.join(", "))
        }
    );
    let methods = parts.iter().enumerate().map(|(m, part)| {
        let name = &part.name;
        let upstream: Vec<usize> = {
            let mut ups: Vec<usize> = dims.models[m]
                .iter()
                .filter_map(|v| match v {
                    DimValue::Expr { model, .. } => Some(*model),
                    _ => None,
                })
                .collect();
            ups.sort_unstable();
            ups.dedup();
            ups
        };
        let lets = upstream.iter().map(|&up| {
            let up = &parts[up].name;
            quote!(let #up = self.#up()?;)
        });
        let values = dims.models[m].iter().enumerate().map(|(j, v)| {
            let field = to_ident(&part.plan.dims[j].field);
            let value = match v {
                DimValue::Field(f) if dims.fields[*f].any_rank => {
                    let f = to_ident(&dims.fields[*f].field);
                    quote!(self.#f.clone())
                }
                DimValue::Field(f) => {
                    let f = to_ident(&dims.fields[*f].field);
                    quote!(self.#f)
                }
                DimValue::Const(n) => {
                    let n = Literal::u64_unsuffixed(*n);
                    quote!(#n)
                }
                DimValue::Expr {
                    model,
                    expr,
                    value,
                    axis,
                } => {
                    let up = &parts[*model].name;
                    let shown = format!("{up}.{value}");
                    size_expr_tokens(rt, &shown, *axis, expr, &quote!(#up))
                }
            };
            quote!(#field: #value)
        });
        let doc = format!(" `{name}`'s dims under these.");
        quote! {
            #[doc = #doc]
            pub fn #name(&self) -> #rt::Result<#name::Dims> {
                #(#lets)*
                ::core::result::Result::Ok(#name::Dims { #(#values),* })
            }
        }
    });
    quote! {
        #[doc = #doc]
        #[allow(dead_code, unreachable_pub)]
        #[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
        pub struct Dims {
            #(#fields)*
        }

        #[allow(dead_code, unreachable_pub)]
        impl Dims {
            #(#methods)*
        }
    }
}
