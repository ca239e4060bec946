//! `Io`: the tensors a binding owns, and its `BindingIo` / `SplitIo` impls (bind, resize,
//! collect ONNX Runtime's outputs, hand out views).

use proc_macro2::{Span, TokenStream};
use quote::quote;

use super::binding_io::{self, BindingImpl, FieldRecipe, SetDims, SlotRecipe};
use super::tokens::{Side, dims_expr, io_type, new_input_value, new_output_slot, spec_tokens};
use super::views::Views;
use super::{in_field, out_field};
use crate::ident::to_ident;
use crate::planner::{Form, Plan, PlannedValue, Storage};

/// The `ValueSpec` of every value, the list `BindingIo` checks sessions against.
fn specs<'a>(
    rt: &'a syn::Path,
    values: &'a [PlannedValue],
) -> impl Iterator<Item = TokenStream> + 'a {
    values.iter().map(move |v| spec_tokens(rt, v))
}

/// How `Io` holds each value, inputs then outputs in model order (the order they bind).
fn recipes(rt: &syn::Path, plan: &Plan) -> Vec<FieldRecipe> {
    let dims = quote!(dims);
    let inputs = plan.inputs.iter().enumerate().map(|(i, v)| FieldRecipe {
        field: in_field(v),
        input: true,
        index: i,
        slot: match v.form {
            Form::Tensor => SlotRecipe::Tensor,
            Form::Strings => SlotRecipe::Value,
            _ => SlotRecipe::ValueInput,
        },
        dims: matches!(v.form, Form::Tensor | Form::Strings).then(|| dims_expr(rt, plan, v, &dims)),
        span: Span::call_site(),
    });
    let outputs = plan.outputs.iter().enumerate().map(|(i, v)| {
        let allocated = matches!(v.storage, Storage::Allocated);
        FieldRecipe {
            field: out_field(v),
            input: false,
            index: i,
            slot: match (allocated, v.form.is_tensor()) {
                (true, true) => SlotRecipe::Allocated,
                (true, false) => SlotRecipe::Value,
                (false, _) => SlotRecipe::Tensor,
            },
            dims: (!allocated).then(|| dims_expr(rt, plan, v, &dims)),
            span: Span::call_site(),
        }
    });
    inputs.chain(outputs).collect()
}

/// The `Io` struct and its impls.
pub(crate) fn io(plan: &Plan, rt: &syn::Path, views: &Views<'_>) -> TokenStream {
    let dims_tok = quote!(dims);
    let device = quote!(D);

    let io_fields_in = plan.inputs.iter().map(|v| {
        let f = in_field(v);
        let ty = io_type(rt, Side::Input, v, &device);
        quote!(#f: #ty,)
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
        let d = dims_expr(rt, plan, v, &dims_tok);
        match v.form {
            Form::Tensor => {
                quote!(let #f: #ty = #rt::Tensor::new_in(#name, device.clone(), #d)?;)
            }
            Form::Strings => quote!(let #f: #ty = #rt::StringTensor::new(#name, #d)?;),
            // Filled through the inputs view; without a value (unbound) until then.
            _ => {
                let made = new_input_value(rt, v);
                quote!(let #f: #ty = #made;)
            }
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
                let d = dims_expr(rt, plan, v, &dims_tok);
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
    let values = recipes(rt, plan);
    let resize = binding_io::resize(&values);
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

    let (overrides_field, overrides_init) = super::overridable::io_fields(plan, rt);
    let io = quote! {
        #[allow(dead_code, unreachable_pub, clippy::type_complexity)]
        #[doc(hidden)]
        #[derive(Debug)]
        pub struct Io<D: #rt::Device> {
            dims: Dims,
            #(#io_fields_in)*
            #(#io_fields_out)*
            #overrides_field
            #device_field
        }

        #[allow(dead_code, unreachable_pub, clippy::type_complexity)]
        impl<D: #rt::Device> Io<D> {
            fn resize(&mut self, dims: &Dims) -> #rt::Result<()> {
                let _ = dims; // unused when every dim is fixed
                #(#resize)*
                ::core::result::Result::Ok(())
            }

            fn new(device: D, dims: Dims) -> #rt::Result<Self> {
                #(#io_init_in)*
                #(#io_init_out)*
                ::core::result::Result::Ok(Io {
                    #(#io_field_names,)*
                    dims,
                    #overrides_init
                    #device_init
                })
            }
        }
    };
    let binding = binding_io::binding_impl(&BindingImpl {
        rt,
        impl_generics: quote!(<D: #rt::Device>),
        self_ty: quote!(Io<D>),
        where_clause: TokenStream::new(),
        derived: false,
        dims: quote!(Dims),
        inputs: quote!(Inputs),
        outputs: quote!(Outputs),
        view_args: vec![quote!(D)],
        inputs_init: views.init(true),
        outputs_init: views.init(false),
        split: true,
        input_specs: specs(rt, &plan.inputs).collect(),
        output_specs: specs(rt, &plan.outputs).collect(),
        values: &values,
        set_dims: SetDims::Kept {
            assign: dims_assign.collect(),
        },
        rebind_allocated: true,
        // Where the inputs' shapes determine every dim (the function exists either way).
        dims_of_inputs: super::dims::unsolved_from_inputs(plan)
            .next()
            .is_none()
            .then(|| {
                super::dims::of_inputs(plan, rt, &quote!(Dims), true, |v| {
                    let f = in_field(v);
                    Some(quote!(self.#f.input_dims()))
                })
            })
            .flatten(),
        overridable: binding_io::Overridable {
            specs: super::overridable::specs(plan, rt),
            binds: super::overridable::binds(plan),
            resized: super::overridable::resized(plan),
            items: super::overridable::binding_io_items(plan, rt),
        },
    });
    quote! {
        #io
        #binding
    }
}
