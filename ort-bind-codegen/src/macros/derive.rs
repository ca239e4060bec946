//! `#[derive(OnnxBinding)]`: parse, resolve the model, check, expand.
//!
//! For `struct AddIo<D: Device = Cpu> { x: .., #[onnx(name = "y")] other: .., sum: .. }`
//! the derive emits, next to the struct:
//!
//! - `unsafe impl BindingIo for AddIo<D>` (and `SplitIo`), so `Bound::new(&session, io)`
//!   binds the struct's tensors once and reuses them on every run, exactly like the
//!   generated module's `Io`; every field goes through the runtime's `Slot` trait, so
//!   fields whose types are aliases bind the same way;
//! - `AddIoInputs<'a, D>` / `AddIoOutputs<'a, D>`: the views `Bound::inputs()` and
//!   `Bound::outputs()` hand out, one field per struct field;
//! - `AddIoDims`: one `usize` per symbolic or unnamed dynamic dimension of the bound
//!   values (what `Bound::set_dims` takes), and `AddIo::allocate(&device, &dims)`;
//! - `AddIo::MODEL_PATH`;
//! - a `const _` block of trait-bound checks (see `ort_bind::assert`) for whatever the
//!   syntactic checks could not settle;
//! - the dependency tracking of the model file (see [`track`](super::track)).
//!
//! Every problem becomes a `compile_error!` at the offending span, all at once. When the
//! model cannot be read at all, the error sits on the `model = "..."` attribute and the
//! impls are still emitted (without the model's values, every field in both views), so
//! code that uses the struct does not fail a second time.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::attr::{self, Errors};
use super::{MacroEnv, resolve_model};
use crate::check::syntax::{FieldType, SlotKind, parse_field_type};
use crate::check::{self, FieldBinding, FieldSpec, MAX_TUPLE_RANK, Role, StructSpec};
use crate::dtype::ElementType;
use crate::ident::{IdentAllocator, to_ident};
use crate::signature::{Dim, ModelSignature};

/// One field of the struct, with everything expansion needs.
struct Field<'a> {
    ident: &'a syn::Ident,
    ty: &'a syn::Type,
    spec: FieldSpec,
    binding: Option<FieldBinding>,
}

/// Expands `#[derive(OnnxBinding)]` on `input`.
pub fn derive(input: TokenStream, env: &MacroEnv) -> TokenStream {
    let input: syn::DeriveInput = match syn::parse2(input) {
        Ok(i) => i,
        Err(e) => return e.to_compile_error(),
    };
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

    let mut errors = Errors::default();
    let container = attr::container(&input.attrs, &mut errors);
    let krate: syn::Path = container
        .krate
        .clone()
        .unwrap_or_else(|| syn::parse_quote!(::ort_bind));

    let mut fields: Vec<Field<'_>> = named
        .named
        .iter()
        .map(|f| {
            let ident = f.ident.as_ref().expect("named fields have names");
            let attrs = attr::field(&f.attrs, &mut errors);
            let spec = FieldSpec {
                ident: ident.to_string().trim_start_matches("r#").to_owned(),
                ident_span: ident.span(),
                name: attrs.name.as_ref().map(|l| (l.value(), l.span())),
                role: attrs.role,
                written: f.ty.clone(),
                ty: parse_field_type(&f.ty),
                ty_range: crate::check::syntax::Range::of(&f.ty),
            };
            Field {
                ident,
                ty: &f.ty,
                spec,
                binding: None,
            }
        })
        .collect();

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
            Ok(r) => match check::check_model(&r.signature) {
                Ok(()) => Some(r),
                Err(problems) => {
                    errors.at(
                        lit.span(),
                        format!("`{}` cannot be bound: {}", lit.value(), problems.join("; ")),
                    );
                    None
                }
            },
        },
    };
    let sig = resolved.as_ref().map(|r| &r.signature);

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
        for (f, b) in fields.iter_mut().zip(outcome.fields) {
            f.binding = b;
        }
        for d in outcome.diagnostics {
            errors.push(super::spanned_error(d.range, d.render()));
        }
    }

    let model_path = resolved
        .as_ref()
        .map(|r| r.model.to_string_lossy().into_owned())
        .unwrap_or_default();
    let model_relative = container
        .model
        .as_ref()
        .map(|l| l.value())
        .unwrap_or_default();
    let tracking = match &resolved {
        Some(r) => super::track::tokens(
            &krate,
            r.model_present.then_some(r.model.as_path()),
            r.cache.as_deref(),
            &format!("{}:{}", env.site, input.ident),
        ),
        None => TokenStream::new(),
    };
    let body = expand(
        &input,
        &krate,
        &fields,
        sig,
        container.device.as_ref(),
        (&model_path, &model_relative),
    );
    let errors = errors.to_compile_errors();
    quote! {
        #errors
        #body
        #tracking
    }
}

fn elem_tokens(krate: &syn::Path, elem: ElementType) -> TokenStream {
    match elem {
        ElementType::F16 => quote!(#krate::f16),
        ElementType::BF16 => quote!(#krate::bf16),
        other => {
            let id = format_ident!("{}", other.rust_name());
            quote!(#id)
        }
    }
}

/// The model's shape as a shape type (`(Fix<1>, Dyn)`, `AnyRank`), through the short
/// names the generated `const` block imports.
fn model_shape_tokens(dims: Option<&[Dim]>) -> TokenStream {
    match dims {
        Some(ds) if ds.len() <= MAX_TUPLE_RANK => {
            let axes = ds.iter().map(|d| match d {
                Dim::Fixed(n) => {
                    let n = proc_macro2::Literal::u64_unsuffixed(*n);
                    quote!(__Fix<#n>)
                }
                _ => quote!(__Dyn),
            });
            quote!((#(#axes,)*))
        }
        _ => quote!(__AnyRank),
    }
}

/// Generic arguments of a `Tensor<..>`/`AllocatedOutput<..>` as written.
fn slot_args(ty: &syn::Type) -> Option<&syn::AngleBracketedGenericArguments> {
    let syn::Type::Path(p) = ty else {
        return None;
    };
    match &p.path.segments.last()?.arguments {
        syn::PathArguments::AngleBracketed(a) => Some(a),
        _ => None,
    }
}

/// How a field appears in the views.
enum ViewKind {
    /// Parsed `Tensor<..>` / `AllocatedOutput<..>`: direct view types.
    Parsed(SlotKind),
    /// Through the `Slot` trait's view types.
    Projected,
    /// Not a tensor at all (already an error): a plain reference, so nothing else fails.
    Plain,
    /// A tensor whose device argument is not a device (rustc reports it on the struct):
    /// left out of the views, since naming its type again would repeat that error.
    Absent,
}

fn view_kind(f: &Field<'_>) -> ViewKind {
    match &f.spec.ty {
        FieldType::Tensor(t) if t.device_is_not_a_device => ViewKind::Absent,
        FieldType::Tensor(t) if slot_args(f.ty).is_some() => ViewKind::Parsed(t.kind),
        FieldType::NotATensor(_) => ViewKind::Plain,
        _ => ViewKind::Projected,
    }
}

/// `(type, init expression)` of a field in the inputs (`mutable`) or outputs view.
fn view_field(krate: &syn::Path, f: &Field<'_>, mutable: bool) -> (TokenStream, TokenStream) {
    let ty = f.ty;
    let id = f.ident;
    match view_kind(f) {
        ViewKind::Parsed(kind) => {
            let args = &slot_args(ty).expect("checked by view_kind").args;
            let view = match (kind, mutable) {
                (SlotKind::Tensor, true) => quote!(#krate::TensorMut<'__a, #args>),
                (SlotKind::Tensor, false) => quote!(#krate::TensorRef<'__a, #args>),
                (SlotKind::Allocated, _) => {
                    quote!(::core::option::Option<#krate::TensorRef<'__a, #args>>)
                }
            };
            let init = if mutable {
                quote!(__Slot::slot_mut(&mut self.#id))
            } else {
                quote!(__Slot::slot_ref(&self.#id))
            };
            (view, init)
        }
        ViewKind::Projected => {
            if mutable {
                (
                    quote!(<#ty as #krate::Slot>::Mut<'__a>),
                    quote!(__Slot::slot_mut(&mut self.#id)),
                )
            } else {
                (
                    quote!(<#ty as #krate::Slot>::Ref<'__a>),
                    quote!(__Slot::slot_ref(&self.#id)),
                )
            }
        }
        ViewKind::Plain => {
            if mutable {
                (quote!(&'__a mut #ty), quote!(&mut self.#id))
            } else {
                (quote!(&'__a #ty), quote!(&self.#id))
            }
        }
        ViewKind::Absent => (
            quote!(::core::marker::PhantomData<&'__a ()>),
            quote!(::core::marker::PhantomData),
        ),
    }
}

/// Dims struct fields and, per struct field, the dims expression sizing it.
struct DimsPlan {
    fields: Vec<(syn::Ident, String, bool)>,
    per_field: Vec<Option<TokenStream>>,
}

fn plan_dims(fields: &[Field<'_>], sig: Option<&ModelSignature>) -> DimsPlan {
    let mut alloc = IdentAllocator::new();
    let mut out = DimsPlan {
        fields: Vec::new(),
        per_field: Vec::new(),
    };
    let mut named: Vec<(String, syn::Ident)> = Vec::new();
    for f in fields {
        let (Some(sig), Some(b)) = (sig, f.binding) else {
            out.per_field.push(None);
            continue;
        };
        let allocated = matches!(&f.spec.ty, FieldType::Tensor(t) if t.kind == SlotKind::Allocated);
        if allocated || f.spec.ty.is_broken() {
            out.per_field.push(None);
            continue;
        }
        let value = match b.role {
            Role::Input => &sig.inputs[b.index],
            Role::Output => &sig.outputs[b.index],
        };
        let Some((_, dims)) = value.tensor() else {
            out.per_field.push(None);
            continue;
        };
        let expr = match dims {
            None => {
                let id = to_ident(&alloc.allocate(&format!("{}_shape", f.spec.ident)));
                out.fields.push((
                    id.clone(),
                    format!(
                        "Whole shape of `{}`, whose rank the model leaves open.",
                        value.name
                    ),
                    false,
                ));
                quote!(&dims.#id)
            }
            Some(ds) => {
                let parts = ds.iter().enumerate().map(|(axis, d)| match d {
                    Dim::Fixed(n) => {
                        let n = proc_macro2::Literal::u64_unsuffixed(*n);
                        quote!(#n)
                    }
                    Dim::Named(name) => {
                        let id = match named.iter().find(|(n, _)| n == name) {
                            Some((_, id)) => id.clone(),
                            None => {
                                let id = to_ident(&alloc.allocate(name));
                                named.push((name.clone(), id.clone()));
                                out.fields.push((
                                    id.clone(),
                                    format!("Symbolic dimension `{name}`."),
                                    true,
                                ));
                                id
                            }
                        };
                        quote!(dims.#id)
                    }
                    Dim::Dynamic => {
                        let id = to_ident(&alloc.allocate(&format!("{}_dim{axis}", f.spec.ident)));
                        out.fields.push((
                            id.clone(),
                            format!("Unnamed dynamic axis {axis} of `{}`.", value.name),
                            true,
                        ));
                        quote!(dims.#id)
                    }
                });
                let parts: Vec<TokenStream> = parts.collect();
                quote!(&[#(#parts),*])
            }
        };
        out.per_field.push(Some(expr));
    }
    out
}

fn expand(
    input: &syn::DeriveInput,
    krate: &syn::Path,
    fields: &[Field<'_>],
    sig: Option<&ModelSignature>,
    device: Option<&syn::Type>,
    (model_path, model_relative): (&str, &str),
) -> TokenStream {
    let name = &input.ident;
    let vis = &input.vis;
    let inputs_name = format_ident!("{}Inputs", name);
    let outputs_name = format_ident!("{}Outputs", name);
    let dims_name = format_ident!("{}Dims", name);
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();

    // View structs: the struct's generics (with defaults) after a view lifetime.
    let mut view_generics = input.generics.clone();
    view_generics.params.insert(0, syn::parse_quote!('__a));
    {
        let wc = view_generics.make_where_clause();
        for f in fields {
            if matches!(view_kind(f), ViewKind::Projected) {
                let ty = f.ty;
                wc.predicates.push(syn::parse_quote!(#ty: '__a));
            }
        }
    }
    let view_where = &view_generics.where_clause;
    let view_params = &view_generics.params;
    // The struct's own generic arguments, after the view lifetime (named or anonymous).
    let own_args: Vec<TokenStream> = input
        .generics
        .params
        .iter()
        .map(|p| match p {
            syn::GenericParam::Lifetime(l) => {
                let l = &l.lifetime;
                quote!(#l)
            }
            syn::GenericParam::Type(t) => {
                let i = &t.ident;
                quote!(#i)
            }
            syn::GenericParam::Const(c) => {
                let i = &c.ident;
                quote!(#i)
            }
        })
        .collect();
    let view_args = quote!(<'__a, #(#own_args),*>);
    let view_args_anon = quote!(<'_, #(#own_args),*>);

    let in_view = |f: &Field<'_>| {
        !matches!(
            f.binding,
            Some(FieldBinding {
                role: Role::Output,
                ..
            })
        )
    };
    let out_view = |f: &Field<'_>| {
        !matches!(
            f.binding,
            Some(FieldBinding {
                role: Role::Input,
                ..
            })
        )
    };
    let view_decl = |keep: &dyn Fn(&Field<'_>) -> bool, mutable: bool| {
        let decl = fields.iter().filter(|f| keep(f)).map(|f| {
            let id = f.ident;
            let (ty, _) = view_field(krate, f, mutable);
            let doc = field_doc(f, sig);
            quote!(#[doc = #doc] pub #id: #ty,)
        });
        quote!(#(#decl)*)
    };
    let view_init = |keep: &dyn Fn(&Field<'_>) -> bool, mutable: bool| {
        let init = fields.iter().filter(|f| keep(f)).map(|f| {
            let id = f.ident;
            let (_, init) = view_field(krate, f, mutable);
            quote!(#id: #init,)
        });
        quote!(#(#init)*)
    };
    let inputs_decl = view_decl(&in_view, true);
    let outputs_decl = view_decl(&out_view, false);
    let inputs_init = view_init(&in_view, true);
    let outputs_init = view_init(&out_view, false);

    // Specs: every model input and output (the session check compares them all).
    let spec = |v: &crate::signature::ValueSig| {
        let (elem, dims) = v.tensor().expect("check_model passed");
        let elem = elem_tokens(krate, elem);
        let n = &v.name;
        match dims {
            Some(d) => {
                let r = d.len();
                quote!(__spec::<#elem>(#n, #r))
            }
            None => quote!(__spec_any_rank::<#elem>(#n)),
        }
    };
    let (input_specs, output_specs) = match sig {
        Some(sig) => (
            sig.inputs.iter().map(spec).collect::<Vec<_>>(),
            sig.outputs.iter().map(spec).collect::<Vec<_>>(),
        ),
        None => (Vec::new(), Vec::new()),
    };

    // Binding: inputs by model index; outputs by model index, in field order (the order
    // ONNX Runtime hands bound outputs back in).
    let bindable = |f: &Field<'_>| -> Option<FieldBinding> {
        let b = f.binding?;
        match &f.spec.ty {
            ty if ty.is_broken() => None,
            FieldType::Tensor(t) if b.role == Role::Input && t.kind == SlotKind::Allocated => None,
            _ => Some(b),
        }
    };
    let bind_inputs = fields.iter().filter_map(|f| {
        let b = bindable(f)?;
        (b.role == Role::Input).then(|| {
            let (id, i) = (f.ident, b.index);
            let ty = f.ty;
            quote_spanned!(ty.span()=> __InputSlot::bind_input(&self.#id, binder, #i)?;)
        })
    });
    let bound_outputs: Vec<(&Field<'_>, usize)> = fields
        .iter()
        .filter_map(|f| {
            let b = bindable(f)?;
            (b.role == Role::Output).then_some((f, b.index))
        })
        .collect();
    let bind_outputs = bound_outputs.iter().map(|(f, i)| {
        let id = f.ident;
        quote!(__Slot::bind_output(&self.#id, binder, #i)?;)
    });
    // Known from the syntax, or asked of the type.
    let allocated_flags = bound_outputs.iter().filter_map(|(f, _)| match &f.spec.ty {
        FieldType::Tensor(t) if t.kind == SlotKind::Tensor => None,
        FieldType::Tensor(_) => Some(quote!(|| true)),
        _ => {
            let ty = f.ty;
            Some(quote!(|| <#ty as __Slot>::ALLOCATED))
        }
    });
    let store_arms = bound_outputs.iter().enumerate().map(|(pos, (f, _))| {
        let id = f.ident;
        quote!(#pos => __Slot::store(&mut self.#id, value),)
    });

    // Dims.
    let dims = plan_dims(fields, sig);
    let dims_copy = dims.fields.iter().all(|(_, _, copy)| *copy);
    let dims_fields = dims.fields.iter().map(|(id, doc, copy)| {
        let ty = if *copy {
            quote!(usize)
        } else {
            quote!(::std::vec::Vec<usize>)
        };
        quote!(#[doc = #doc] pub #id: #ty,)
    });
    let copy = dims_copy.then(|| quote!(::core::marker::Copy,));
    let resize = fields.iter().zip(&dims.per_field).filter_map(|(f, d)| {
        let d = d.as_ref()?;
        let id = f.ident;
        Some(quote!(__Slot::resize(&mut self.#id, #d)?;))
    });
    let locals: Vec<syn::Ident> = (0..fields.len())
        .map(|i| format_ident!("__field{}", i))
        .collect();
    let allocate_fields = fields
        .iter()
        .zip(&dims.per_field)
        .zip(&locals)
        .map(|((f, d), local)| {
            let onnx = match (sig, f.binding) {
                (Some(sig), Some(b)) => match b.role {
                    Role::Input => sig.inputs[b.index].name.clone(),
                    Role::Output => sig.outputs[b.index].name.clone(),
                },
                _ => f.spec.ident.clone(),
            };
            let d = d.clone().unwrap_or_else(|| quote!(&[]));
            // The type, written out, lets rustc resolve each call at once (2,000 calls left to
            // inference until the struct literal cost 25 s of type checking).
            let ty = f.ty;
            quote!(let #local: #ty = __Slot::allocate(#onnx, device, #d)?;)
        });
    // One `let` per field, then the struct: a `?` inside a struct literal makes rustc drop
    // every field built so far on each error path separately (code quadratic in the
    // number of fields: 400k lines of LLVM IR for 200 fields); `let`s share one chain.
    let field_names: Vec<&syn::Ident> = fields.iter().map(|f| f.ident).collect();
    let field_inits = field_names
        .iter()
        .zip(&locals)
        .map(|(name, local)| quote!(#name: #local));
    // The device parameter: the device every field names, when the syntax shows one
    // (`D`, `Cpu`, or the default `Cpu`); otherwise a type parameter bounded per field.
    let common_device = {
        let mut texts = fields.iter().map(|f| match &f.spec.ty {
            FieldType::Tensor(t) => Some(
                t.device
                    .as_ref()
                    .map_or_else(|| quote!(#krate::Cpu), |d| quote!(#d)),
            ),
            _ => None,
        });
        let first = texts.next().flatten();
        let first_text = first.as_ref().map(ToString::to_string);
        let all_same = texts.all(|t| t.map(|t| t.to_string()) == first_text);
        if all_same { first } else { None }
    };
    let can_allocate = !fields.iter().any(|f| f.spec.ty.is_broken());
    let allocate = can_allocate.then(|| {
        let doc = quote! {
            /// Allocates every field on `device`, sized by `dims`: the tensors a `Bound`
            /// binds once and reuses.
        };
        match &common_device {
            Some(device) => quote! {
                #doc
                #[allow(dead_code)]
                pub fn allocate(device: &#device, dims: &#dims_name) -> #krate::Result<Self> {
                    #(#allocate_fields)*
                    ::core::result::Result::Ok(Self { #(#field_inits),* })
                }
            },
            None => {
                let bounds = fields.iter().map(|f| {
                    let ty = f.ty;
                    quote!(#ty: __Slot<Device = __Device>,)
                });
                quote! {
                    #doc
                    #[allow(dead_code)]
                    pub fn allocate<__Device: #krate::Device>(
                        device: &__Device,
                        dims: &#dims_name,
                    ) -> #krate::Result<Self>
                    where
                        #(#bounds)*
                    {
                        #(#allocate_fields)*
                    ::core::result::Result::Ok(Self { #(#field_inits),* })
                    }
                }
            }
        }
    });

    // Trait-bound checks for what the syntax could not settle.
    let checks = fields.iter().filter_map(|f| {
        let sig = sig?;
        let b = bindable(f)?;
        let value = match b.role {
            Role::Input => &sig.inputs[b.index],
            Role::Output => &sig.outputs[b.index],
        };
        let (elem, dims) = value.tensor()?;
        let ty = f.ty;
        let e = elem_tokens(krate, elem);
        let m = model_shape_tokens(dims);
        let c = b.checks;
        let main = match (c.element, c.shape, b.role) {
            (true, true, Role::Input) => {
                quote_spanned!(ty.span()=> __assert::binds_input::<#ty, #e, #m>();)
            }
            (true, true, Role::Output) => {
                quote_spanned!(ty.span()=> __assert::binds_output::<#ty, #e, #m>();)
            }
            (true, false, _) => {
                quote_spanned!(ty.span()=> __assert::has_element::<#ty, #e>();)
            }
            (false, true, _) => quote_spanned!(ty.span()=> __assert::has_shape::<#ty, #m>();),
            (false, false, _) => quote!(),
        };
        let dev = match (c.device, device) {
            (true, Some(d)) => quote_spanned!(ty.span()=> __assert::on_device::<#ty, #d>();),
            _ => quote!(),
        };
        Some(quote!(#main #dev))
    });
    // A check on a type spelled like an earlier one (same tokens, same model type) proves
    // nothing new: models with thousands of alike values get one check per distinct kind.
    let mut seen = std::collections::HashSet::new();
    let checks: Vec<TokenStream> = checks.filter(|c| seen.insert(c.to_string())).collect();

    // Both views at once borrow disjoint fields, which holds only when every field is in
    // one view: not so for fields whose name did not resolve (already an error).
    let split = fields.iter().all(|f| f.binding.is_some()).then(|| {
        quote! {
            #[automatically_derived]
            impl #impl_generics __SplitIo for #name #ty_generics #where_clause {
                fn split(
                    &mut self,
                ) -> (#inputs_name #view_args_anon, #outputs_name #view_args_anon) {
                    (
                        #inputs_name { #inputs_init __marker: ::core::marker::PhantomData },
                        #outputs_name { #outputs_init __marker: ::core::marker::PhantomData },
                    )
                }
            }
        }
    });

    let inputs_mut_body = if split.is_some() {
        quote!(__SplitIo::split(self).0)
    } else {
        quote!(#inputs_name { #inputs_init __marker: ::core::marker::PhantomData })
    };

    let inputs_doc = format!(
        "The model inputs [`{name}`] binds, to fill in place before a run \
         (`Bound::inputs`)."
    );
    let outputs_doc = format!(
        "The model outputs [`{name}`] binds, read in place after a run (`Bound::outputs`)."
    );
    let dims_doc = format!(
        "Sizes of the dynamic dimensions of the values [`{name}`] binds: one field per \
         symbolic dimension, one per unnamed dynamic axis. `{name}::allocate` sizes the \
         tensors from it; `Bound::set_dims` resizes them (reusing capacity)."
    );
    let model_path_doc = format!("Path of the ONNX model [`{name}`] was checked against.");

    quote! {
        #[doc = #dims_doc]
        #[derive(::core::fmt::Debug, ::core::clone::Clone, #copy ::core::cmp::PartialEq,
                 ::core::cmp::Eq, ::core::hash::Hash, ::core::default::Default)]
        #[allow(dead_code, unreachable_pub)]
        #vis struct #dims_name {
            #(#dims_fields)*
        }

        #[doc = #inputs_doc]
        #[derive(::core::fmt::Debug)]
        #[allow(dead_code, unreachable_pub)]
        #vis struct #inputs_name<#view_params> #view_where {
            #inputs_decl
            #[doc(hidden)]
            pub __marker: ::core::marker::PhantomData<&'__a #name #ty_generics>,
        }

        #[doc = #outputs_doc]
        #[derive(::core::fmt::Debug)]
        #[allow(dead_code, unreachable_pub)]
        #vis struct #outputs_name<#view_params> #view_where {
            #outputs_decl
            #[doc(hidden)]
            pub __marker: ::core::marker::PhantomData<&'__a #name #ty_generics>,
        }

        // Impls and checks reach the runtime through short imported names, which keeps
        // the expansion small for models with thousands of values.
        const _: () = {
        use #krate::{
            Slot as __Slot, InputSlot as __InputSlot, SplitIo as __SplitIo, Dyn as __Dyn,
            Fix as __Fix, AnyRank as __AnyRank, assert as __assert,
            slot::{spec as __spec, spec_any_rank as __spec_any_rank},
        };

        #[allow(dead_code, unreachable_pub)]
        impl #impl_generics #name #ty_generics #where_clause {
            #[doc = #model_path_doc]
            pub const MODEL_PATH: &'static str = #model_path;

            /// Where the model is looked for at run time (`MODEL.find()`): its environment
            /// variables, beside the executable, the current directory, then `MODEL_PATH`.
            pub const MODEL: #krate::ModelFile = #krate::ModelFile::new(#model_relative, #model_path);

            #allocate
        }

        // SAFETY: the methods below only bind, resize (`set_dims`, which `Bound` follows
        // with a rebind) and hand out views that read and write elements in place; every
        // field is reached through `Slot`, which only ort-bind's tensor types implement.
        #[automatically_derived]
        unsafe impl #impl_generics #krate::BindingIo for #name #ty_generics #where_clause {
            const INPUTS: &'static [#krate::ValueSpec] = &[#(#input_specs),*];
            const OUTPUTS: &'static [#krate::ValueSpec] = &[#(#output_specs),*];
            const HAS_ALLOCATED_OUTPUTS: bool = false #(#allocated_flags)*;
            type Dims = #dims_name;
            type InputsMut<'__a> = #inputs_name #view_args where Self: '__a;
            type OutputsRef<'__a> = #outputs_name #view_args where Self: '__a;

            fn bind<'__io>(
                &'__io self,
                binder: &mut #krate::Binder<'_, '__io>,
            ) -> #krate::Result<()> {
                let _ = &binder;
                #(#bind_inputs)*
                #(#bind_outputs)*
                ::core::result::Result::Ok(())
            }

            fn set_dims(&mut self, dims: &#dims_name) -> #krate::Result<()> {
                let _ = dims;
                #(#resize)*
                ::core::result::Result::Ok(())
            }

            fn store_output(
                &mut self,
                index: usize,
                value: #krate::OutputValue,
            ) -> #krate::Result<()> {
                match index {
                    #(#store_arms)*
                    _ => {
                        ::core::mem::drop(value);
                        ::core::result::Result::Ok(())
                    }
                }
            }

            fn inputs_mut(&mut self) -> #inputs_name #view_args_anon {
                #inputs_mut_body
            }

            fn outputs(&self) -> #outputs_name #view_args_anon {
                #outputs_name { #outputs_init __marker: ::core::marker::PhantomData }
            }
        }

        #split

        #[allow(dead_code, clippy::extra_unused_type_parameters)]
        fn __ort_bind_checks #impl_generics () #where_clause {
            #(#checks)*
        }
        };
    }
}

fn field_doc(f: &Field<'_>, sig: Option<&ModelSignature>) -> String {
    match (sig, f.binding) {
        (Some(sig), Some(b)) => {
            let v = match b.role {
                Role::Input => &sig.inputs[b.index],
                Role::Output => &sig.outputs[b.index],
            };
            format!(
                "Model {} `{}`: `{}`.",
                b.role.word(),
                v.name,
                check::describe_value(v)
            )
        }
        _ => format!("Field `{}`.", f.spec.ident),
    }
}
