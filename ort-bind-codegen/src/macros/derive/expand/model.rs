//! The derive's inherent items: `MODEL_PATH`, `MODEL` and `allocate`, which makes every
//! field on a device, sized by the dims.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::Ctx;
use crate::check::Role;
use crate::check::syntax::{FieldType, SlotKind, ValueSlot};
use crate::macros::derive::Field;
use crate::sig::{Dim, ValueType};

/// `MODEL_PATH` and `MODEL`.
pub(super) fn consts(cx: &Ctx<'_, '_>) -> TokenStream {
    let krate = cx.krate;
    let (path, relative) = (cx.model_path, cx.model_relative);
    let doc = format!(
        "Path of the ONNX model [`{}`] was checked against.",
        cx.input.ident
    );
    quote! {
        #[doc = #doc]
        pub const MODEL_PATH: &'static str = #path;

        /// Where the model is looked for at run time (`MODEL_FILE.find()`): its environment
        /// variables, beside the executable, the current directory, then `MODEL_PATH`.
        pub const MODEL_FILE: #krate::ModelFile = #krate::ModelFile::new(#relative, #path);

        /// Renamed to `MODEL_FILE` (the name generated modules use).
        #[deprecated(note = "renamed to `MODEL_FILE`")]
        #[doc(hidden)]
        pub const MODEL: #krate::ModelFile = Self::MODEL_FILE;
    }
}

/// `allocate(&device, &dims)` (or `allocate(&device)` when the field types fix every
/// dim), for fields sized by `dims` (per field); nothing when some field's type cannot
/// be made.
pub(super) fn allocate(cx: &Ctx<'_, '_>, dims: &[Option<TokenStream>]) -> TokenStream {
    let krate = cx.krate;
    let fields = cx.fields;
    let locals: Vec<syn::Ident> = (0..fields.len())
        .map(|i| format_ident!("__field{}", i))
        .collect();
    let allocate_fields = fields
        .iter()
        .zip(dims)
        .zip(&locals)
        .map(|((f, d), local)| {
            let onnx = match (cx.sig, f.binding) {
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
            if f.over.is_some() {
                // An overridable input starts unset: the model's default.
                return Some(quote!(let #local: #ty = ::core::option::Option::None;));
            }
            if f.value {
                let declared = match (cx.sig, f.binding) {
                    (Some(sig), Some(b)) if b.role == Role::Input => {
                        Some(&sig.inputs[b.index].kind)
                    }
                    _ => None,
                };
                let made = value_allocation(krate, f, &onnx, &d, declared)?;
                return Some(quote!(let #local: #ty = #made;));
            }
            Some(quote!(let #local: #ty = __Slot::allocate(#onnx, device, #d)?;))
        })
        .collect::<Option<Vec<TokenStream>>>();
    if fields.iter().any(|f| f.spec.ty.is_broken()) {
        return TokenStream::new();
    }
    let Some(allocate_fields) = allocate_fields else {
        return TokenStream::new();
    };
    // One `let` per field, then the struct: a `?` inside a struct literal makes rustc drop
    // every field built so far on each error path separately (code quadratic in the
    // number of fields: 400k lines of LLVM IR for 200 fields); `let`s share one chain.
    let field_inits = fields.iter().zip(&locals).map(|(f, local)| {
        let name = f.ident;
        quote!(#name: #local)
    });
    // Without a plan (the fallback) the dims are unknown: `allocate` keeps its `dims`
    // parameter so calls written for the real struct do not fail a second time.
    let no_dims = super::dims::none_left(cx);
    let doc = if no_dims {
        quote! {
            /// Allocates every field on `device`: the tensors a `Binding` binds once and
            /// reuses. The field types fix every dim, so there are no dims to give.
        }
    } else {
        quote! {
            /// Allocates every field on `device`, sized by `dims`: the tensors a `Binding`
            /// binds once and reuses.
        }
    };
    let dims_name = &cx.dims_name;
    let dims_param = (!no_dims).then(|| quote!(dims: &#dims_name,));
    match common_device(cx) {
        Some(device) => quote! {
            #doc
            #[allow(dead_code)]
            pub fn allocate(device: &#device, #dims_param) -> #krate::Result<Self> {
                #(#allocate_fields)*
                ::core::result::Result::Ok(Self { #(#field_inits),* })
            }
        },
        None => {
            let bounds = fields
                .iter()
                .filter(|f| !f.value && f.over.is_none())
                .map(|f| {
                    let ty = f.ty;
                    quote!(#ty: __Slot<Device = __Device>,)
                });
            quote! {
                #doc
                #[allow(dead_code)]
                pub fn allocate<__Device: #krate::Device>(
                    device: &__Device,
                    #dims_param
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
}

/// The device parameter of `allocate`: the device every field names, when the syntax
/// shows one (`D`, `Cpu`, or the default `Cpu`); otherwise `None`, for a type parameter
/// bounded per field.
fn common_device(cx: &Ctx<'_, '_>) -> Option<TokenStream> {
    let krate = cx.krate;
    let mut texts = cx
        .fields
        .iter()
        .filter(|f| !f.value)
        .map(|f| match &f.spec.ty {
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
}

/// How `allocate` makes a string tensor, sequence, map or optional field named `onnx`:
/// a string tensor input of the dims `d` (empty strings), an empty output slot, or a
/// sequence or map input without a value (filled through `Binding::inputs`; a run before
/// that is `Error::MissingInput`).
/// `None` where the syntax does not show how (an alias; an optional input).
fn value_allocation(
    krate: &syn::Path,
    f: &Field<'_>,
    onnx: &str,
    d: &TokenStream,
    declared: Option<&ValueType>,
) -> Option<TokenStream> {
    let FieldType::Value(v) = &f.spec.ty else {
        return None;
    };
    let ty = f.ty;
    let input = f.binding.is_some_and(|b| b.role == Role::Input);
    Some(match v.slot {
        ValueSlot::StringTensor => quote!(<#ty>::new(#onnx, #d)?),
        // An optional input starts absent; its inner value is an empty placeholder that
        // `Optional::set_present` / `inner_mut` (or a whole new value) replaces.
        ValueSlot::Optional if input => {
            let inner = v.inner_written.as_ref()?;
            let made = match v.inner.as_deref()? {
                FieldType::Tensor(t) if t.kind != SlotKind::Allocated => {
                    let dims = placeholder_dims(declared);
                    quote!(<#inner>::new(#onnx, &[#(#dims),*])?)
                }
                FieldType::Value(i) if i.slot == ValueSlot::StringTensor => {
                    let dims = placeholder_dims(declared);
                    quote!(<#inner>::new(#onnx, &[#(#dims),*])?)
                }
                FieldType::Value(i) if i.slot == ValueSlot::Sequence => {
                    quote!(<#inner>::new(#onnx))
                }
                _ => return None,
            };
            quote!(#krate::Optional::none(#made))
        }
        ValueSlot::Optional => {
            let inner = v.inner_written.as_ref()?;
            let made = match v.inner.as_deref()? {
                FieldType::Tensor(t) if t.kind == SlotKind::Allocated => {
                    quote!(#krate::AllocatedOutput::new_in(#onnx, #krate::Cpu))
                }
                FieldType::Value(i) if i.slot != ValueSlot::Optional => {
                    quote!(<#inner>::new(#onnx))
                }
                _ => return None,
            };
            quote!(#krate::Optional::slot(#made))
        }
        _ => quote!(<#ty>::new(#onnx)),
    })
}

/// Dims of the empty tensor an absent optional input holds: the declared fixed dims, 0 on
/// every other axis (`[0]` when the rank is not declared).
fn placeholder_dims(declared: Option<&ValueType>) -> Vec<usize> {
    match declared {
        Some(ValueType::Optional(inner)) => match &**inner {
            ValueType::Tensor {
                dims: Some(dims), ..
            } => dims
                .iter()
                .map(|d| match d {
                    Dim::Fixed(n) => usize::try_from(*n).unwrap_or(0),
                    _ => 0,
                })
                .collect(),
            _ => vec![0],
        },
        _ => vec![0],
    }
}
