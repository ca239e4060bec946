//! Tokens and doc text shared by every generated item: element and shape types, the
//! dims expression that sizes a tensor, and model text made safe for rustdoc.

use std::fmt::Write as _;

use proc_macro2::{Delimiter, Literal, Spacing, TokenStream, TokenTree};
use quote::{format_ident, quote};

use crate::element::ElementType;
use crate::ident::to_ident;
use crate::planner::{AxisSize, Form, Plan, PlannedValue, Storage};
use crate::sig::{Dim, format_dims};

/// The Rust element type: a primitive, or the runtime's (`f16`, `bf16`, the narrow types
/// such as `Float8E4M3FN` and `Int4x2`).
pub(crate) fn elem_tokens(rt: &syn::Path, elem: ElementType) -> TokenStream {
    if elem == ElementType::String {
        return quote!(::std::string::String);
    }
    let id = format_ident!("{}", elem.rust_name());
    if elem.is_runtime_type() {
        quote!(#rt::#id)
    } else {
        quote!(#id)
    }
}

/// Largest rank with a tuple shape type; higher ranks use `AnyRank`.
pub(crate) const MAX_TUPLE_RANK: usize = 12;

/// The shape type of a planned value: `Fix<N>` where the plan fixes an axis, `Dyn`
/// elsewhere, `AnyRank` for unknown or high ranks.
pub(crate) fn shape_tokens(rt: &syn::Path, v: &PlannedValue) -> TokenStream {
    let axes: Option<Vec<Option<u64>>> = match &v.storage {
        Storage::Owned(axes) => Some(
            axes.iter()
                .map(|a| match a {
                    AxisSize::Fixed(n) => Some(*n),
                    AxisSize::Field(_) | AxisSize::Expr(_) => None,
                })
                .collect(),
        ),
        Storage::OwnedAnyRank(_) => None,
        Storage::Allocated | Storage::Value => v.dims.as_ref().map(|ds| {
            ds.iter()
                .map(|d| match d {
                    crate::Dim::Fixed(n) => Some(*n),
                    _ => None,
                })
                .collect()
        }),
    };
    match axes {
        Some(axes) if axes.len() <= MAX_TUPLE_RANK => {
            let axes = axes.iter().map(|a| match a {
                Some(n) => {
                    let n = Literal::u64_unsuffixed(*n);
                    quote!(#rt::Fix<#n>)
                }
                None => quote!(#rt::Dyn),
            });
            quote!((#(#axes,)*))
        }
        _ => quote!(#rt::AnyRank),
    }
}

/// Free text from the model, made safe for rustdoc: brackets would otherwise read as
/// (broken) intra-doc links, and HTML-like tags as HTML.
pub(crate) fn model_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.trim().chars() {
        match c {
            '[' | ']' | '<' | '>' | '`' | '*' | '_' | '#' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// `` `float32[batch, 3]` ``, `` `string[N]` ``, `` `seq(map(string, float32))` ``.
pub(crate) fn type_doc(v: &PlannedValue) -> String {
    if v.form.is_sized() {
        format!("`{}{}`", v.elem, format_dims(v.dims.as_deref()))
    } else {
        format!("`{}`", v.onnx_type)
    }
}

/// The dims a tensor is sized with, read from the dims value `dims`: `&[dims.batch, 3]`,
/// `&dims.x_shape`, or `&[]` for an output ONNX Runtime allocates.
pub(crate) fn dims_expr(
    rt: &syn::Path,
    plan: &Plan,
    v: &PlannedValue,
    dims: &TokenStream,
) -> TokenStream {
    match &v.storage {
        Storage::Owned(axes) => {
            let parts = axes.iter().enumerate().map(|(axis, a)| match a {
                AxisSize::Fixed(n) => {
                    let n = Literal::u64_unsuffixed(*n);
                    quote!(#n)
                }
                AxisSize::Field(i) => {
                    let f = to_ident(&plan.dims[*i].field);
                    quote!(#dims.#f)
                }
                AxisSize::Expr(e) => size_expr_tokens(rt, &v.name, axis, e, dims),
            });
            quote!(&[#(#parts),*])
        }
        Storage::OwnedAnyRank(i) => {
            let f = to_ident(&plan.dims[*i].field);
            quote!(&#dims.#f)
        }
        Storage::Allocated | Storage::Value => quote!(&[]),
    }
}

/// An output axis the graph computes from the dims: the runtime's checked evaluation of
/// the expression's program, `sized_axis(&[ops], &[("w", dims.w)], "y", 1, "expr")?`.
pub(crate) fn size_expr_tokens(
    rt: &syn::Path,
    output: &str,
    axis: usize,
    e: &crate::shapes::DimExpr,
    dims: &TokenStream,
) -> TokenStream {
    use crate::shapes::Op;
    let symbols = e.symbols();
    let names: Vec<&str> = symbols.iter().map(|s| &**s).collect();
    let program = e
        .program(&names)
        .expect("every symbol of an expression is listed");
    let ops = program.iter().map(|op| match *op {
        Op::Const(c) => {
            let c = Literal::i64_unsuffixed(c);
            quote!(#rt::__private::SizeOp::Const(#c))
        }
        Op::Dim(i) => {
            let i = Literal::usize_unsuffixed(i);
            quote!(#rt::__private::SizeOp::Dim(#i))
        }
        Op::Add => quote!(#rt::__private::SizeOp::Add),
        Op::Mul => quote!(#rt::__private::SizeOp::Mul),
        Op::FloorDiv => quote!(#rt::__private::SizeOp::FloorDiv),
        Op::Min => quote!(#rt::__private::SizeOp::Min),
        Op::Max => quote!(#rt::__private::SizeOp::Max),
    });
    let values = names.iter().map(|n| {
        let f = to_ident(n);
        let shown = n.trim_start_matches("r#");
        quote!((#shown, #dims.#f))
    });
    let text = e.to_string();
    quote!(#rt::__private::sized_axis(&[#(#ops),*], &[#(#values),*], #output, #axis, #text)?)
}

/// Which side of the model a value is on, for [`io_type`].
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    Input,
    Output,
}

/// The runtime type that holds value `v` in a binding, on device `device` (numeric
/// tensors; every other value lives in host memory ONNX Runtime manages):
/// `Tensor<f32, (Dyn,), D>`, `StringTensor<(Dyn,)>`, `MapSequence<String, f32>`,
/// `Optional<AllocatedOutput<f32, (Dyn,), Cpu>>`. A sequence, map or optional input is
/// this type inside an `Option` in the generated `Io` (unset until the caller sets it).
pub(crate) fn io_type(
    rt: &syn::Path,
    side: Side,
    v: &PlannedValue,
    device: &TokenStream,
) -> TokenStream {
    let elem = elem_tokens(rt, v.elem);
    let shape = shape_tokens(rt, v);
    let cpu = quote!(#rt::Cpu);
    let tensor = |device: &TokenStream| match (side, &v.storage) {
        (Side::Input, _) => quote!(#rt::Tensor<#elem, #shape, #device>),
        (Side::Output, Storage::Allocated) => quote!(#rt::AllocatedOutput<#elem, #shape, #device>),
        (Side::Output, _) => quote!(#rt::Tensor<#elem, #shape, #device>),
    };
    let strings = match side {
        Side::Input => quote!(#rt::StringTensor<#shape>),
        Side::Output => quote!(#rt::StringOutput<#shape>),
    };
    match v.form {
        Form::Tensor => tensor(device),
        Form::Strings => strings,
        Form::Sequence => quote!(#rt::Sequence<#elem, #shape>),
        Form::MapSequence { key } => {
            let k = elem_tokens(rt, key);
            quote!(#rt::MapSequence<#k, #elem>)
        }
        Form::Map { key } => {
            let k = elem_tokens(rt, key);
            quote!(#rt::Map<#k, #elem>)
        }
        Form::OptionalTensor if v.elem == ElementType::String => quote!(#rt::Optional<#strings>),
        Form::OptionalTensor => {
            let inner = match side {
                Side::Input => quote!(#rt::Tensor<#elem, #shape, #cpu>),
                Side::Output => quote!(#rt::AllocatedOutput<#elem, #shape, #cpu>),
            };
            quote!(#rt::Optional<#inner>)
        }
        Form::OptionalSequence => quote!(#rt::Optional<#rt::Sequence<#elem, #shape>>),
    }
}

/// An empty output slot of value `v` (not a numeric tensor) named `name`.
pub(crate) fn new_output_slot(rt: &syn::Path, v: &PlannedValue) -> TokenStream {
    let name = &v.name;
    let ty = io_type(rt, Side::Output, v, &quote!(#rt::Cpu));
    match v.form {
        Form::OptionalTensor if v.elem == ElementType::String => {
            quote!(#rt::Optional::slot(#rt::StringOutput::new(#name)))
        }
        Form::OptionalTensor => {
            quote!(#rt::Optional::slot(#rt::AllocatedOutput::new_in(#name, #rt::Cpu)))
        }
        Form::OptionalSequence => quote!(#rt::Optional::slot(#rt::Sequence::new(#name))),
        _ => quote!(<#ty>::new(#name)),
    }
}

/// An input of value `v` (a sequence, map, sequence of maps or optional) without a value
/// yet, named `name`: filled in place through the inputs view. An optional input starts
/// absent over an empty placeholder of its type (the declared fixed dims, 0 elsewhere).
pub(crate) fn new_input_value(rt: &syn::Path, v: &PlannedValue) -> TokenStream {
    let name = &v.name;
    let ty = io_type(rt, Side::Input, v, &quote!(#rt::Cpu));
    let placeholder = || {
        let dims: Vec<usize> = match &v.dims {
            Some(ds) => ds
                .iter()
                .map(|d| match d {
                    Dim::Fixed(n) => usize::try_from(*n).unwrap_or(0),
                    _ => 0,
                })
                .collect(),
            None => vec![0],
        };
        quote!(&[#(#dims),*])
    };
    match v.form {
        Form::OptionalTensor if v.elem == ElementType::String => {
            let d = placeholder();
            quote!(#rt::Optional::none(#rt::StringTensor::new(#name, #d)?))
        }
        Form::OptionalTensor => {
            let d = placeholder();
            quote!(#rt::Optional::none(#rt::Tensor::new(#name, #d)?))
        }
        Form::OptionalSequence => quote!(#rt::Optional::none(#rt::Sequence::new(#name))),
        _ => quote!(<#ty>::new(#name)),
    }
}

/// `ValueSpec` of value `v`: what `Session::check_signature` compares with the model.
pub(crate) fn spec_tokens(rt: &syn::Path, v: &PlannedValue) -> TokenStream {
    let name = &v.name;
    let elem = elem_tokens(rt, v.elem);
    // The rank a session reports: the declared one, also where the graph computes another.
    let rank = match v.declared_rank {
        Some(r) => quote!(::core::option::Option::Some(#r)),
        None => quote!(::core::option::Option::None),
    };
    let tensor = if v.elem == ElementType::String {
        quote!(#rt::ValueSpec::string(#name, #rank))
    } else {
        quote!(#rt::ValueSpec::of::<#elem>(#name, #rank))
    };
    match v.form {
        Form::Tensor | Form::Strings => tensor,
        Form::Sequence => quote!(#rt::ValueSpec::sequence::<#elem>(#name, #rank)),
        Form::MapSequence { key } => {
            let k = elem_tokens(rt, key);
            quote!(#rt::ValueSpec::map_sequence::<#k, #elem>(#name))
        }
        Form::Map { key } => {
            let k = elem_tokens(rt, key);
            quote!(#rt::ValueSpec::map::<#k, #elem>(#name))
        }
        Form::OptionalTensor => quote!(#tensor.optional()),
        Form::OptionalSequence => {
            quote!(#rt::ValueSpec::sequence::<#elem>(#name, #rank).optional())
        }
    }
}

/// Appends to `key` a text that two token streams share exactly when they print alike
/// (spans aside): a key to tell repeated types apart without `to_string`, whose spacing
/// rules cost several times more on the thousands of fields of a wide model.
pub(crate) fn token_key(tokens: TokenStream, key: &mut String) {
    for tt in tokens {
        match tt {
            TokenTree::Ident(i) => {
                let _ = write!(key, "i{i} ");
            }
            TokenTree::Punct(p) => {
                key.push('p');
                key.push(p.as_char());
                key.push(if p.spacing() == Spacing::Joint {
                    '+'
                } else {
                    ' '
                });
            }
            TokenTree::Literal(l) => {
                let _ = write!(key, "l{l} ");
            }
            TokenTree::Group(g) => {
                let (open, close) = match g.delimiter() {
                    Delimiter::Parenthesis => ('(', ')'),
                    Delimiter::Brace => ('{', '}'),
                    Delimiter::Bracket => ('[', ']'),
                    Delimiter::None => ('<', '>'),
                };
                key.push(open);
                token_key(g.stream(), key);
                key.push(close);
            }
        }
    }
}

/// `Trait::method(&self.field)` (`&mut` with `mutable`), made token by token: generated once
/// per input of the widest models, where `quote!` would cost more than the item around it.
pub(crate) fn field_call(
    trait_name: &str,
    method: &str,
    mutable: bool,
    field: &proc_macro2::Ident,
) -> TokenStream {
    use proc_macro2::{Group, Ident, Punct, Span};
    let span = Span::call_site();
    let mut arg = TokenStream::new();
    arg.extend([TokenTree::Punct(Punct::new('&', Spacing::Alone))]);
    if mutable {
        arg.extend([TokenTree::Ident(Ident::new("mut", span))]);
    }
    arg.extend([
        TokenTree::Ident(Ident::new("self", span)),
        TokenTree::Punct(Punct::new('.', Spacing::Alone)),
        TokenTree::Ident(field.clone()),
    ]);
    let mut call = TokenStream::new();
    call.extend([
        TokenTree::Ident(Ident::new(trait_name, span)),
        TokenTree::Punct(Punct::new(':', Spacing::Joint)),
        TokenTree::Punct(Punct::new(':', Spacing::Alone)),
        TokenTree::Ident(Ident::new(method, span)),
        TokenTree::Group(Group::new(Delimiter::Parenthesis, arg)),
    ]);
    call
}

/// `items` joined by the punctuation `sep` (`a | b | c`, `a, b, c`).
pub(crate) fn joined(items: impl IntoIterator<Item = TokenStream>, sep: char) -> TokenStream {
    let mut out = TokenStream::new();
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.extend([TokenTree::Punct(proc_macro2::Punct::new(
                sep,
                Spacing::Alone,
            ))]);
        }
        out.extend(item);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{model_text, token_key};
    use proc_macro2::TokenStream;
    use quote::quote;

    #[test]
    fn model_doc_text_cannot_form_links_or_html() {
        assert_eq!(
            model_text("  y = x[0] <b>see [doc](u)</b>  "),
            r"y = x\[0\] \<b\>see \[doc\](u)\</b\>"
        );
    }

    #[test]
    fn token_keys_are_equal_exactly_when_the_tokens_print_alike() {
        let key = |t: TokenStream| {
            let mut k = String::new();
            token_key(t, &mut k);
            k
        };
        let alike = [
            (
                quote!(Tensor<f32, (Dyn, Fix<16>)>),
                quote!(Tensor<f32, (Dyn, Fix<16>)>),
            ),
            (quote!(a::b<'x, [u8; 4]>), quote!(a::b<'x, [u8; 4]>)),
        ];
        for (a, b) in alike {
            assert_eq!(a.to_string(), b.to_string());
            assert_eq!(key(a), key(b));
        }
        let apart = [
            (
                quote!(Tensor<f32, (Dyn, Fix<16>)>),
                quote!(Tensor<f32, (Dyn, Fix<8>)>),
            ),
            (quote!(Fix<16>), quote!(Fix<"16">)),
            (quote!((a, b)), quote!([a, b])),
            (quote!(a b), quote!(ab)),
            (quote!(<a>), quote!((a))),
            (quote!(x::y), quote!(x:y)),
        ];
        for (a, b) in apart {
            assert_ne!(a.to_string(), b.to_string());
            let text = format!("{a} / {b}");
            assert_ne!(key(a), key(b), "{text}");
        }
    }
}
