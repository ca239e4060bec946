//! The `BindingIo` / `SplitIo` impls, emitted for both routes from one description: the
//! generated module's `Io` and the derive's struct each describe their values as
//! [`FieldRecipe`]s and their types as a [`BindingImpl`]; [`binding_impl`] writes the
//! impls and [`resize`] the statements that size the values.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, quote_spanned};

use super::tokens::{field_call, joined};

/// How a binding holds one of its values, which decides how it is bound, resized, stored
/// and cleared.
pub(crate) enum SlotRecipe {
    /// A numeric tensor of the runtime's `Tensor` type, sized by the binding.
    Tensor,
    /// A numeric output of the runtime's `AllocatedOutput` type: ONNX Runtime allocates it.
    Allocated,
    /// A numeric tensor reached through the runtime's `Slot` trait (the derive's fields,
    /// whose types may be aliases), which names `__Slot` / `__InputSlot` as the derive
    /// imports them.
    Slot(Allocation),
    /// A string tensor, sequence, map or optional, bound through the runtime's value API;
    /// as an output, ONNX Runtime allocates it into a `ValueOutputSlot`.
    Value,
    /// A map, sequence, sequence of maps or optional input: the inputs view hands it out
    /// to fill in place (a new ONNX Runtime value each time, so the binding rebinds after
    /// `inputs()`), and it is bound only once it has a value.
    ValueInput,
}

/// Whether ONNX Runtime allocates a value reached through `Slot`.
pub(crate) enum Allocation {
    /// Known from the syntax of its type.
    Known(bool),
    /// Only its type (given as written) knows: `Slot::ALLOCATED`.
    OfType(TokenStream),
}

/// One value a binding binds: the field holding it and how.
pub(crate) struct FieldRecipe {
    /// The field of `self` holding the value.
    pub field: Ident,
    /// An input (else an output).
    pub input: bool,
    /// The value's index among the model's inputs or outputs (the binder's index).
    pub index: usize,
    /// How the value is held.
    pub slot: SlotRecipe,
    /// The dims expression it is sized with on `set_dims`; `None` when it is not resized.
    pub dims: Option<TokenStream>,
    /// Where a trait-bound error about binding it points (the field's type).
    pub span: Span,
}

impl FieldRecipe {
    /// Whether ONNX Runtime may allocate this output: `Some` when known, `None` when only
    /// the type knows.
    fn allocated(&self) -> Option<bool> {
        match &self.slot {
            SlotRecipe::Tensor | SlotRecipe::ValueInput => Some(false),
            SlotRecipe::Allocated | SlotRecipe::Value => Some(!self.input),
            SlotRecipe::Slot(Allocation::Known(a)) => Some(*a && !self.input),
            SlotRecipe::Slot(Allocation::OfType(_)) => None,
        }
    }
}

/// How `set_dims` resizes the values.
pub(crate) enum SetDims {
    /// Resized in place through [`resize`]'s statements, one after another.
    Direct,
    /// Through the type's own `fn resize(&mut self, dims)` (made of [`resize`]'s
    /// statements), going back to the dims the binding keeps in `self.dims` when a resize
    /// fails, then storing the new dims with these statements.
    Kept {
        /// Statements copying `dims` into `self.dims`.
        assign: Vec<TokenStream>,
    },
}

/// The types and values of one binding impl.
pub(crate) struct BindingImpl<'a> {
    /// Path of the runtime crate.
    pub rt: &'a syn::Path,
    /// `impl<..>` generics, the type, and its where clause.
    pub impl_generics: TokenStream,
    /// The type the impls are for.
    pub self_ty: TokenStream,
    /// Its where clause, if any.
    pub where_clause: TokenStream,
    /// Mark the impls `#[automatically_derived]` (the derive).
    pub derived: bool,
    /// The dims type.
    pub dims: TokenStream,
    /// The inputs view type's name, and its generic arguments after the view lifetime.
    pub inputs: TokenStream,
    /// The outputs view type's name.
    pub outputs: TokenStream,
    /// The view types' generic arguments after the view lifetime (`D`).
    pub view_args: Vec<TokenStream>,
    /// The inputs view, built from `self` (a struct literal).
    pub inputs_init: TokenStream,
    /// The outputs view, built from `self`.
    pub outputs_init: TokenStream,
    /// Whether both views may be borrowed at once (`SplitIo`).
    pub split: bool,
    /// `ValueSpec`s of every model input and output.
    pub input_specs: Vec<TokenStream>,
    /// See `input_specs`.
    pub output_specs: Vec<TokenStream>,
    /// The values bound: inputs, then outputs in the order they are bound.
    pub values: &'a [FieldRecipe],
    /// How `set_dims` resizes.
    pub set_dims: SetDims,
    /// Emit `rebind_allocated` (bind only the outputs ONNX Runtime allocates); without it
    /// the runtime binds everything again.
    pub rebind_allocated: bool,
    /// `dims_of_inputs`'s `Result<Dims>` (see [`crate::expand::dims::of_inputs`]), where the
    /// input shapes determine every dim.
    pub dims_of_inputs: Option<TokenStream>,
    /// Overridable inputs (the module route's; see [`crate::expand::overridable`]): their
    /// `ValueSpec`s, `bind`'s lines for them, and `take_resized`'s terms.
    pub overridable: Overridable,
}

/// What [`BindingImpl`] adds for overridable inputs; empty for a binding without any.
#[derive(Default)]
pub(crate) struct Overridable {
    /// `BindingIo::OVERRIDABLE`'s `ValueSpec`s.
    pub specs: Vec<TokenStream>,
    /// `bind`'s lines (after the inputs' and outputs').
    pub binds: Vec<TokenStream>,
    /// `take_resized`'s terms.
    pub resized: Vec<TokenStream>,
    /// Further `BindingIo` items (`OVERRIDABLE_AXES`, `set_adapter`).
    pub items: TokenStream,
}

/// The statements resizing each value that has a dims expression to it.
pub(crate) fn resize(values: &[FieldRecipe]) -> Vec<TokenStream> {
    values
        .iter()
        .filter_map(|v| {
            let d = v.dims.as_ref()?;
            let f = &v.field;
            Some(match v.slot {
                SlotRecipe::Tensor | SlotRecipe::Allocated => quote!(self.#f.set_dims(#d)?;),
                SlotRecipe::Slot(_) => quote!(__Slot::resize(&mut self.#f, #d)?;),
                // A string tensor input: a new ONNX Runtime tensor when its dims change.
                SlotRecipe::Value | SlotRecipe::ValueInput => quote!(self.#f.resize(#d)?;),
            })
        })
        .collect()
}

/// Binds value `v`: `allocated_only` binds nothing but the outputs ONNX Runtime allocates.
fn bind(v: &FieldRecipe, allocated_only: bool) -> TokenStream {
    let (f, i) = (&v.field, v.index);
    if allocated_only && v.allocated() != Some(true) {
        return TokenStream::new();
    }
    match (&v.slot, v.input) {
        (SlotRecipe::Tensor, true) => quote!(binder.input(#i, &self.#f)?;),
        (SlotRecipe::Tensor, false) => quote!(binder.output(#i, &self.#f)?;),
        (SlotRecipe::Allocated, _) => quote!(binder.allocated_output(#i, &self.#f)?;),
        (SlotRecipe::Slot(_), true) => {
            quote_spanned!(v.span=> __InputSlot::bind_input(&self.#f, binder, #i)?;)
        }
        (SlotRecipe::Slot(_), false) => quote!(__Slot::bind_output(&self.#f, binder, #i)?;),
        (SlotRecipe::Value, true) => quote_spanned!(v.span=> binder.value_input(#i, &self.#f)?;),
        (SlotRecipe::Value, false) => quote!(binder.value_output(#i, &self.#f)?;),
        // Left unbound while it has no value (`missing_input` names it then).
        (SlotRecipe::ValueInput, _) => quote_spanned!(v.span=> binder.value_input(#i, &self.#f)?;),
    }
}

/// The `BindingIo` impl, and `SplitIo` where both views can be borrowed at once: one
/// helper below per group of items.
pub(crate) fn binding_impl(b: &BindingImpl<'_>) -> TokenStream {
    let BindingImpl {
        rt,
        impl_generics,
        self_ty,
        where_clause,
        dims,
        inputs,
        outputs,
        view_args,
        inputs_init,
        outputs_init,
        input_specs,
        output_specs,
        ..
    } = b;
    let derived = b.derived.then(|| quote!(#[automatically_derived]));
    let args = quote!(<'__a, #(#view_args),*>);
    let args_anon = quote!(<'_, #(#view_args),*>);

    let binds = bind_items(b);
    let overridable_items = &b.overridable.items;
    let overridable_specs = (!b.overridable.specs.is_empty()).then(|| {
        let specs = &b.overridable.specs;
        quote!(const OVERRIDABLE: &'static [#rt::ValueSpec] = &[#(#specs),*];)
    });
    let (has_allocated, store_and_clear) = allocated_items(b);
    let (has_value_inputs, missing_input) = value_input_items(b).unzip();
    let take_resized = take_resized_body(b);
    let dims_of_inputs = b.dims_of_inputs.as_ref().map(|call| {
        quote! {
            fn dims_of_inputs(&self) -> ::core::option::Option<#rt::Result<#dims>> {
                #call
            }
        }
    });
    let set_dims = set_dims_body(b);

    let (inputs_mut, split) = if b.split {
        (
            quote!(#rt::SplitIo::split(self).0),
            quote! {
                #derived
                impl #impl_generics #rt::SplitIo for #self_ty #where_clause {
                    fn split(&mut self) -> (#inputs #args_anon, #outputs #args_anon) {
                        (#inputs_init, #outputs_init)
                    }
                }
            },
        )
    } else {
        (quote!(#inputs_init), TokenStream::new())
    };

    quote! {
        // SAFETY: only `set_dims` (and closures run by `Binding::modify`, which rebinds
        // afterwards) change a bound value's storage; the views read and write elements in
        // place only, but for value inputs (`HAS_VALUE_INPUTS`, which makes `Binding` rebind
        // after handing the views out) and inputs given new dims through their views, which
        // `take_resized` reports for every tensor input the views hand out. Every field is a
        // runtime tensor or value type (the derive reaches its fields through `Slot`, which
        // only those implement).
        #derived
        unsafe impl #impl_generics #rt::BindingIo for #self_ty #where_clause {
            const INPUTS: &'static [#rt::ValueSpec] = &[#(#input_specs),*];
            const OUTPUTS: &'static [#rt::ValueSpec] = &[#(#output_specs),*];
            #overridable_specs
            #overridable_items
            const HAS_ALLOCATED_OUTPUTS: bool = #has_allocated;
            #has_value_inputs
            type Dims = #dims;
            type InputsMut<'__a> = #inputs #args where Self: '__a;
            type OutputsRef<'__a> = #outputs #args where Self: '__a;

            #binds

            fn set_dims(&mut self, dims: &#dims) -> #rt::Result<()> {
                #set_dims
            }

            #store_and_clear

            #missing_input

            fn take_resized(&mut self) -> bool {
                #take_resized
            }

            #dims_of_inputs

            fn inputs_mut(&mut self) -> #inputs #args_anon {
                #inputs_mut
            }

            fn outputs(&self) -> #outputs #args_anon {
                #outputs_init
            }
        }

        #split
    }
}

/// `bind`, and `rebind_allocated` where asked for.
fn bind_items(b: &BindingImpl<'_>) -> TokenStream {
    let (rt, values) = (b.rt, b.values);
    let binds = values.iter().map(|v| bind(v, false));
    let overridable = &b.overridable.binds;
    // A binding that binds nothing (the derive's fallback) leaves `binder` unused.
    let unused_binder =
        (values.is_empty() && overridable.is_empty()).then(|| quote!(let _ = &binder;));
    let rebind_allocated = b.rebind_allocated.then(|| {
        let binds = values.iter().map(|v| bind(v, true));
        quote! {
            fn rebind_allocated<'__io>(&'__io self, binder: &mut #rt::Binder<'_, '__io>) -> #rt::Result<()> {
                let _ = &binder; // unused when no output is allocated by ONNX Runtime
                #(#binds)*
                ::core::result::Result::Ok(())
            }
        }
    });
    quote! {
        fn bind<'__io>(&'__io self, binder: &mut #rt::Binder<'_, '__io>) -> #rt::Result<()> {
            #unused_binder
            #(#binds)*
            #(#overridable)*
            ::core::result::Result::Ok(())
        }

        #rebind_allocated
    }
}

/// For the outputs ONNX Runtime may allocate: `HAS_ALLOCATED_OUTPUTS`'s value, and
/// `store_output` with `clear_allocated`.
fn allocated_items(b: &BindingImpl<'_>) -> (TokenStream, TokenStream) {
    let rt = b.rt;
    // Outputs are stored by their position in binding order, which ONNX Runtime keeps.
    let may_allocate: Vec<(usize, &FieldRecipe)> = b
        .values
        .iter()
        .filter(|v| !v.input)
        .enumerate()
        .filter(|(_, v)| v.allocated() != Some(false))
        .collect();
    let known = may_allocate
        .iter()
        .any(|(_, v)| v.allocated() == Some(true));
    let asked = may_allocate.iter().filter_map(|(_, v)| match &v.slot {
        SlotRecipe::Slot(Allocation::OfType(ty)) => Some(quote!(|| <#ty as __Slot>::ALLOCATED)),
        _ => None,
    });
    let has_allocated = quote!(#known #(#asked)*);
    let store_arms = may_allocate.iter().map(|(pos, v)| {
        let f = &v.field;
        match v.slot {
            SlotRecipe::Allocated => quote!(#pos => value.store_in(&mut self.#f),),
            SlotRecipe::Slot(_) => quote!(#pos => __Slot::store(&mut self.#f, value),),
            _ => quote!(#pos => value.store_in_slot(&mut self.#f),),
        }
    });
    let store_body = if may_allocate.is_empty() {
        quote! {
            let _ = (index, value);
            ::core::result::Result::Ok(())
        }
    } else {
        quote! {
            match index {
                #(#store_arms)*
                _ => ::core::result::Result::Ok(()),
            }
        }
    };
    // Outputs ONNX Runtime allocates forget their value on a dims change or a failed run.
    let clear_allocated = (!may_allocate.is_empty()).then(|| {
        let clears = may_allocate.iter().map(|(_, v)| {
            let f = &v.field;
            match v.slot {
                SlotRecipe::Allocated => quote!(self.#f.clear();),
                SlotRecipe::Slot(_) => quote!(__Slot::clear(&mut self.#f);),
                _ => quote!(#rt::ValueOutputSlot::clear(&mut self.#f);),
            }
        });
        quote! {
            fn clear_allocated(&mut self) {
                #(#clears)*
            }
        }
    });
    let items = quote! {
        fn store_output(&mut self, index: usize, value: #rt::OutputValue) -> #rt::Result<()> {
            #store_body
        }

        #clear_allocated
    };
    (has_allocated, items)
}

/// For value inputs the inputs view fills in place (rebound after `inputs()`, and named
/// when a run is asked for before they have a value): `HAS_VALUE_INPUTS` and
/// `missing_input`, or nothing when there are none.
fn value_input_items(b: &BindingImpl<'_>) -> Option<(TokenStream, TokenStream)> {
    let rt = b.rt;
    let checks: Vec<TokenStream> = b
        .values
        .iter()
        .filter(|v| matches!(v.slot, SlotRecipe::ValueInput))
        .map(|v| {
            let (f, i) = (&v.field, v.index);
            quote! {
                if !#rt::__private::ValueInputSlot::is_set(&self.#f) {
                    return ::core::option::Option::Some(#i);
                }
            }
        })
        .collect();
    (!checks.is_empty()).then(|| {
        (
            quote!(
                const HAS_VALUE_INPUTS: bool = true;
            ),
            quote! {
                fn missing_input(&self) -> ::core::option::Option<usize> {
                    #(#checks)*
                    ::core::option::Option::None
                }
            },
        )
    })
}

/// `take_resized`'s body: asks every input whose view may give it new dims (numeric and
/// string tensors, sized by the binding).
fn take_resized_body(b: &BindingImpl<'_>) -> TokenStream {
    let rt = b.rt;
    let resizable = b.values.iter().filter(|v| v.input && v.dims.is_some());
    // The derive's fields go through `Slot` as its views do, so a field that is no tensor
    // adds no error of its own (rustc reports the same unmet bound once).
    let asks: Vec<TokenStream> = resizable
        .clone()
        .filter_map(|v| {
            let f = &v.field;
            match v.slot {
                SlotRecipe::Tensor | SlotRecipe::Value => Some(quote!(self.#f.take_resized())),
                SlotRecipe::Slot(_) => Some(field_call("__Slot", "take_slot_resized", true, f)),
                _ => None,
            }
        })
        .chain(b.overridable.resized.iter().cloned())
        .collect();
    if asks.is_empty() {
        return quote!(false);
    }
    let method_syntax = !b.overridable.resized.is_empty()
        || resizable
            .clone()
            .any(|v| matches!(v.slot, SlotRecipe::Tensor | SlotRecipe::Value));
    let import = method_syntax.then(|| quote!(use #rt::__private::InputShape as _;));
    // `|`, not `||`: each input forgets its change. Overridable inputs (any number of them,
    // as many as a model has weights) are asked one statement each, so the expression does
    // not nest once per input.
    if b.overridable.resized.is_empty() {
        let any = joined(asks, '|');
        return quote! {
            #import
            #any
        };
    }
    let inputs = asks.len() - b.overridable.resized.len();
    let first = if inputs == 0 {
        quote!(false)
    } else {
        joined(asks[..inputs].iter().cloned(), '|')
    };
    let rest = &asks[inputs..];
    quote! {
        #import
        let mut resized = #first;
        #(resized |= #rest;)*
        resized
    }
}

/// `set_dims`'s body.
fn set_dims_body(b: &BindingImpl<'_>) -> TokenStream {
    let resize = resize(b.values);
    match &b.set_dims {
        SetDims::Direct => quote! {
            let _ = dims;
            #(#resize)*
            ::core::result::Result::Ok(())
        },
        SetDims::Kept { assign } => quote! {
            if let ::core::result::Result::Err(e) = self.resize(dims) {
                // Back to the old sizes, which fit the capacity every tensor kept:
                // the tensors agree with `self.dims` again.
                let old = ::core::clone::Clone::clone(&self.dims);
                let _ = self.resize(&old);
                return ::core::result::Result::Err(e);
            }
            #(#assign)*
            ::core::result::Result::Ok(())
        },
    }
}
