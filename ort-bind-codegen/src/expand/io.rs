//! `Io`: the tensors a binding owns, and its `BindingIo` / `SplitIo` impls (bind, resize,
//! collect ONNX Runtime's outputs, hand out views).

use proc_macro2::TokenStream;
use quote::quote;

use super::tokens::{Side, dims_expr, io_type, new_output_slot, spec_tokens};
use super::{in_field, out_field, views};
use crate::ident::to_ident;
use crate::plan::{Form, Plan, PlannedValue, Storage};

/// The `ValueSpec` of every value, the list `BindingIo` checks sessions against.
fn specs<'a>(
    rt: &'a syn::Path,
    values: &'a [PlannedValue],
) -> impl Iterator<Item = TokenStream> + 'a {
    values.iter().map(move |v| spec_tokens(rt, v))
}

/// The `Io` struct and its impls.
pub(crate) fn io(plan: &Plan, rt: &syn::Path) -> TokenStream {
    let input_specs = specs(rt, &plan.inputs);
    let output_specs = specs(rt, &plan.outputs);
    let dims_tok = quote!(dims);
    let device = quote!(D);

    let io_fields_in = plan.inputs.iter().map(|v| {
        let f = in_field(v);
        let ty = io_type(rt, Side::Input, v, &device);
        match v.storage {
            // Set by the caller (`Binding::set_input_*`); unbound until then.
            Storage::Value => quote!(#f: ::core::option::Option<#ty>,),
            _ => quote!(#f: #ty,),
        }
    });
    let io_fields_out = plan.outputs.iter().map(|v| {
        let f = out_field(v);
        let ty = io_type(rt, Side::Output, v, &device);
        quote!(#f: #ty,)
    });
    // Each tensor is made in its own `let` (with its type spelled out) before the struct
    // literal: a `?` per field inside one literal makes rustc emit cleanup code quadratic
    // in the number of fields (a 2,000-value model did not compile in minutes).
    let io_init_in = plan.inputs.iter().map(|v| {
        let f = in_field(v);
        let name = &v.name;
        let ty = io_type(rt, Side::Input, v, &device);
        let d = dims_expr(plan, v, &dims_tok);
        match v.form {
            Form::Tensor => {
                quote!(let #f: #ty = #rt::Tensor::new_in(#name, device.clone(), #d)?;)
            }
            Form::Strings => quote!(let #f: #ty = #rt::StringTensor::new(#name, #d)?;),
            _ => quote!(let #f: ::core::option::Option<#ty> = ::core::option::Option::None;),
        }
    });
    let io_init_out = plan.outputs.iter().map(|v| {
        let f = out_field(v);
        let name = &v.name;
        let ty = io_type(rt, Side::Output, v, &device);
        match (v.form, &v.storage) {
            (Form::Tensor, Storage::Allocated) => quote!(
                let #f: #ty = #rt::AllocatedOutput::new_in(#name, device.clone());
            ),
            (Form::Tensor, _) => {
                let d = dims_expr(plan, v, &dims_tok);
                quote!(let #f: #ty = #rt::Tensor::new_in(#name, device.clone(), #d)?;)
            }
            _ => {
                let slot = new_output_slot(rt, v);
                quote!(let #f: #ty = #slot;)
            }
        }
    });
    let io_field_names: Vec<_> = plan
        .inputs
        .iter()
        .map(in_field)
        .chain(plan.outputs.iter().map(out_field))
        .collect();
    let set_in = plan.inputs.iter().filter_map(|v| {
        let f = in_field(v);
        let d = dims_expr(plan, v, &dims_tok);
        match v.form {
            Form::Tensor => Some(quote!(self.#f.set_dims(#d)?;)),
            // A new ONNX Runtime string tensor when the dims change; `Bound` rebinds.
            Form::Strings => Some(quote!(self.#f.resize(#d)?;)),
            _ => None,
        }
    });
    let set_out = plan
        .outputs
        .iter()
        .filter(|v| !matches!(v.storage, Storage::Allocated))
        .map(|v| {
            let f = out_field(v);
            let d = dims_expr(plan, v, &dims_tok);
            quote!(self.#f.set_dims(#d)?;)
        });
    let bind_in = plan.inputs.iter().enumerate().map(|(i, v)| {
        let f = in_field(v);
        match v.form {
            Form::Tensor => quote!(binder.input(#i, &self.#f)?;),
            Form::Strings => quote!(binder.value_input(#i, &self.#f)?;),
            _ => quote! {
                if let ::core::option::Option::Some(value) = &self.#f {
                    binder.value_input(#i, value)?;
                }
            },
        }
    });
    let bind_allocated = |i: usize, v: &PlannedValue| {
        let f = out_field(v);
        if v.form.is_tensor() {
            quote!(binder.allocated_output(#i, &self.#f)?;)
        } else {
            quote!(binder.value_output(#i, &self.#f)?;)
        }
    };
    let bind_out = plan.outputs.iter().enumerate().map(|(i, v)| {
        let f = out_field(v);
        match v.storage {
            Storage::Allocated => bind_allocated(i, v),
            _ => quote!(binder.output(#i, &self.#f)?;),
        }
    });
    let rebind_allocated = plan
        .outputs
        .iter()
        .enumerate()
        .filter(|(_, v)| matches!(v.storage, Storage::Allocated))
        .map(|(i, v)| bind_allocated(i, v));
    let allocated: Vec<(usize, &PlannedValue)> = plan
        .outputs
        .iter()
        .enumerate()
        .filter(|(_, v)| matches!(v.storage, Storage::Allocated))
        .collect();
    let has_allocated = !allocated.is_empty();
    let store_arms = allocated.iter().map(|(i, v)| {
        let f = out_field(v);
        if v.form.is_tensor() {
            quote!(#i => value.store_in(&mut self.#f),)
        } else {
            quote!(#i => value.store_in_slot(&mut self.#f),)
        }
    });
    let clear_allocated = has_allocated.then(|| {
        let clears = allocated.iter().map(|(_, v)| {
            let f = out_field(v);
            if v.form.is_tensor() {
                quote!(self.#f.clear();)
            } else {
                quote!(#rt::OutputSlot::clear(&mut self.#f);)
            }
        });
        quote! {
            fn clear_allocated(&mut self) {
                #(#clears)*
            }
        }
    });
    let store_body = if has_allocated {
        quote! {
            match index {
                #(#store_arms)*
                _ => ::core::result::Result::Ok(()),
            }
        }
    } else {
        quote! {
            let _ = (index, value);
            ::core::result::Result::Ok(())
        }
    };
    // Field by field, so `Vec` fields reuse their capacity (no allocation when the rank
    // stays the same).
    let dims_assign = plan.dims.iter().map(|d| {
        let f = to_ident(&d.field);
        if d.source.is_shape() {
            quote!(self.dims.#f.clone_from(&dims.#f);)
        } else {
            quote!(self.dims.#f = dims.#f;)
        }
    });
    let inputs_view_init = views::inputs_init(plan);
    let outputs_view_init = views::outputs_init(plan, rt);
    // Numeric tensors live on the device `D`; a model with none (string tensors only, or
    // sequences) still takes `D`, which a marker field then holds.
    let (device_field, device_init) = if plan
        .inputs
        .iter()
        .chain(&plan.outputs)
        .any(|v| v.form.is_tensor())
    {
        (quote!(), quote!())
    } else {
        (
            quote!(_device: ::core::marker::PhantomData<D>,),
            quote!(_device: { let _ = device; ::core::marker::PhantomData },),
        )
    };

    quote! {
        #[allow(dead_code, unreachable_pub, clippy::type_complexity)]
        #[doc(hidden)]
        #[derive(Debug)]
        pub struct Io<D: #rt::Device> {
            dims: Dims,
            #(#io_fields_in)*
            #(#io_fields_out)*
            #device_field
        }

        #[allow(dead_code, unreachable_pub, clippy::type_complexity)]
        impl<D: #rt::Device> Io<D> {
            fn resize(&mut self, dims: &Dims) -> #rt::Result<()> {
                let _ = dims; // unused when every dim is fixed
                #(#set_in)*
                #(#set_out)*
                ::core::result::Result::Ok(())
            }

            fn new(device: D, dims: Dims) -> #rt::Result<Self> {
                #(#io_init_in)*
                #(#io_init_out)*
                ::core::result::Result::Ok(Io {
                    #(#io_field_names,)*
                    dims,
                    #device_init
                })
            }
        }

        // SAFETY: only `set_dims` (and closures run by `Bound::modify`, which rebinds
        // afterwards) change a bound tensor's storage; the views below read and write
        // elements in place only.
        unsafe impl<D: #rt::Device> #rt::BindingIo for Io<D> {
            const INPUTS: &'static [#rt::ValueSpec] = &[#(#input_specs),*];
            const OUTPUTS: &'static [#rt::ValueSpec] = &[#(#output_specs),*];
            const HAS_ALLOCATED_OUTPUTS: bool = #has_allocated;
            type Dims = Dims;
            type InputsMut<'a> = Inputs<'a, D> where Self: 'a;
            type OutputsRef<'a> = Outputs<'a, D> where Self: 'a;

            fn bind<'io>(&'io self, binder: &mut #rt::Binder<'_, 'io>) -> #rt::Result<()> {
                #(#bind_in)*
                #(#bind_out)*
                ::core::result::Result::Ok(())
            }

            fn rebind_allocated<'io>(&'io self, binder: &mut #rt::Binder<'_, 'io>) -> #rt::Result<()> {
                let _ = &binder; // unused when no output is allocated by ONNX Runtime
                #(#rebind_allocated)*
                ::core::result::Result::Ok(())
            }

            fn set_dims(&mut self, dims: &Dims) -> #rt::Result<()> {
                if let ::core::result::Result::Err(e) = self.resize(dims) {
                    // Back to the old sizes, which fit the capacity every tensor kept:
                    // the tensors agree with `self.dims` again.
                    let old = ::core::clone::Clone::clone(&self.dims);
                    let _ = self.resize(&old);
                    return ::core::result::Result::Err(e);
                }
                #(#dims_assign)*
                ::core::result::Result::Ok(())
            }

            fn store_output(&mut self, index: usize, value: #rt::OutputValue) -> #rt::Result<()> {
                #store_body
            }

            #clear_allocated

            fn inputs_mut(&mut self) -> Inputs<'_, D> {
                Inputs { #(#inputs_view_init)* _device: ::core::marker::PhantomData }
            }

            fn outputs(&self) -> Outputs<'_, D> {
                Outputs { #(#outputs_view_init)* _device: ::core::marker::PhantomData }
            }
        }

        impl<D: #rt::Device> #rt::SplitIo for Io<D> {
            fn split(&mut self) -> (Inputs<'_, D>, Outputs<'_, D>) {
                (
                    Inputs { #(#inputs_view_init)* _device: ::core::marker::PhantomData },
                    Outputs { #(#outputs_view_init)* _device: ::core::marker::PhantomData },
                )
            }
        }
    }
}
