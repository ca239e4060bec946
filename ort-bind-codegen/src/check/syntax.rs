//! Reading a field's type as written: `Tensor<f32, (Fix<1>, Dyn), D>` is understood
//! piece by piece; anything the syntax cannot settle (a type alias, a shape alias, a
//! const parameter) is [`Opaque`](ElemSyntax::Opaque) and left to the trait-bound checks
//! the derive emits next to the syntactic ones.

use std::fmt;

use proc_macro2::Span;
use quote::ToTokens;

use crate::element::ElementType;
use crate::written::written_opt;

/// Where something is written: the spans of its first and last tokens (on stable Rust a
/// span cannot cover several tokens; a `compile_error!` spread over the two can).
#[derive(Debug, Clone, Copy)]
pub struct Range {
    /// First token.
    pub start: Span,
    /// Last token.
    pub end: Span,
}

impl Range {
    /// The range of `tokens` (call site when there are none).
    pub fn of(tokens: &impl ToTokens) -> Range {
        let mut iter = tokens.to_token_stream().into_iter();
        let start = iter.next().map_or_else(Span::call_site, |t| t.span());
        let end = iter.last().map_or(start, |t| t.span());
        Range { start, end }
    }

    /// The range of a type, as [`Range::of`] finds it (its first and last tokens), read
    /// from the syntax tree where they are plain to see (a path, a tuple) instead of
    /// printing the type to tokens: the derive of a wide model reads thousands of types.
    pub fn of_type(ty: &syn::Type) -> Range {
        match ty {
            syn::Type::Tuple(t) => Range::at(t.paren_token.span.join()),
            syn::Type::Path(p) if p.qself.is_none() => {
                let (Some(first), Some(last)) = (p.path.segments.first(), p.path.segments.last())
                else {
                    return Range::of(ty);
                };
                let start = match &p.path.leading_colon {
                    Some(colons) => colons.spans[0],
                    None => first.ident.span(),
                };
                let end = match &last.arguments {
                    syn::PathArguments::None => last.ident.span(),
                    syn::PathArguments::AngleBracketed(a) => a.gt_token.spans[0],
                    syn::PathArguments::Parenthesized(_) => return Range::of(ty),
                };
                Range { start, end }
            }
            _ => Range::of(ty),
        }
    }

    /// A single span.
    pub fn at(span: Span) -> Range {
        Range {
            start: span,
            end: span,
        }
    }
}

impl From<Span> for Range {
    fn from(span: Span) -> Range {
        Range::at(span)
    }
}

/// Which slot type a field uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotKind {
    /// `Tensor<T, S, D>`: a buffer the binding owns.
    Tensor,
    /// `AllocatedOutput<T, S, D>`: an output ONNX Runtime allocates.
    Allocated,
}

/// The element type argument.
#[derive(Debug, Clone)]
pub enum ElemSyntax {
    /// A Rust element type ort-bind knows (`f32`, `half::f16`, ...), as written.
    Known(ElementType, String, Range),
    /// Anything else (an alias, a generic parameter).
    Opaque(Range),
}

/// One axis of a tuple shape.
#[derive(Debug, Clone)]
pub enum AxisSyntax {
    /// `Fix<N>` with a literal `N`.
    Fixed(u64, Range),
    /// `Dyn`.
    Dyn(Range),
    /// Anything else (`Fix<N>` with a const parameter, an alias).
    Opaque(Range),
}

impl AxisSyntax {
    /// Where the axis is written.
    pub fn range(&self) -> Range {
        match self {
            AxisSyntax::Fixed(_, s) | AxisSyntax::Dyn(s) | AxisSyntax::Opaque(s) => *s,
        }
    }
}

/// The shape type argument.
#[derive(Debug, Clone)]
pub enum ShapeSyntax {
    /// A tuple of axes (`()` is a scalar).
    Tuple(Vec<AxisSyntax>, Range),
    /// `AnyRank`.
    AnyRank(Range),
    /// Anything else (a shape alias, a generic parameter).
    Opaque(Range),
}

impl ShapeSyntax {
    /// Where the shape is written.
    pub fn range(&self) -> Range {
        match self {
            ShapeSyntax::Tuple(_, s) | ShapeSyntax::AnyRank(s) | ShapeSyntax::Opaque(s) => *s,
        }
    }
}

/// A field type that reads as `Tensor<..>` or `AllocatedOutput<..>`.
#[derive(Clone)]
pub struct TensorSyntax {
    /// Which slot type.
    pub kind: SlotKind,
    /// Where the slot type's name is written.
    pub kind_span: Span,
    /// Element type argument.
    pub elem: ElemSyntax,
    /// Shape argument.
    pub shape: ShapeSyntax,
    /// Device argument; `None` when left to its default (`Cpu`).
    pub device: Option<syn::Type>,
    /// The device argument is certainly not a device (`String`, `f32`, a reference, ...):
    /// rustc reports that on the struct itself, and the derive keeps the field out of its
    /// own code so the report is not repeated.
    pub device_is_not_a_device: bool,
}

/// Which of the runtime's value types (beyond numeric tensors) a field names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueSlot {
    /// `StringTensor<S>`: a string tensor input.
    StringTensor,
    /// `StringOutput<S>`: a string tensor output.
    StringOutput,
    /// `Sequence<T, S>`.
    Sequence,
    /// `MapSequence<K, V>`.
    MapSequence,
    /// `Map<K, V>`.
    Map,
    /// `Optional<V>`.
    Optional,
}

impl ValueSlot {
    /// The type's name.
    pub fn name(self) -> &'static str {
        match self {
            ValueSlot::StringTensor => "StringTensor",
            ValueSlot::StringOutput => "StringOutput",
            ValueSlot::Sequence => "Sequence",
            ValueSlot::MapSequence => "MapSequence",
            ValueSlot::Map => "Map",
            ValueSlot::Optional => "Optional",
        }
    }
}

/// A field type that reads as one of the runtime's value types: `StringOutput<(Dyn,)>`,
/// `MapSequence<String, f32>`, `Optional<AllocatedOutput<f32, (Dyn,)>>`.
#[derive(Clone)]
pub struct ValueSyntax {
    /// Which type.
    pub slot: ValueSlot,
    /// Where its name is written.
    pub slot_span: Span,
    /// The element type (`Sequence`), or a map's value type; `String` included.
    pub elem: Option<ElemSyntax>,
    /// A map's key type.
    pub key: Option<ElemSyntax>,
    /// The shape (string tensors, sequences); `None` when left to its default (`AnyRank`).
    pub shape: Option<ShapeSyntax>,
    /// What an `Optional` holds.
    pub inner: Option<Box<FieldType>>,
    /// What an `Optional` holds, as written.
    pub inner_written: Option<syn::Type>,
}

impl fmt::Debug for TensorSyntax {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TensorSyntax")
            .field("kind", &self.kind)
            .field("kind_span", &self.kind_span)
            .field("elem", &self.elem)
            .field("shape", &self.shape)
            .field("device", &written_opt(&self.device))
            .field("device_is_not_a_device", &self.device_is_not_a_device)
            .finish()
    }
}

impl fmt::Debug for ValueSyntax {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ValueSyntax")
            .field("slot", &self.slot)
            .field("slot_span", &self.slot_span)
            .field("elem", &self.elem)
            .field("key", &self.key)
            .field("shape", &self.shape)
            .field("inner", &self.inner)
            .field("inner_written", &written_opt(&self.inner_written))
            .finish()
    }
}

/// What a field's type is, as far as its syntax tells.
#[derive(Debug, Clone)]
pub enum FieldType {
    /// `Tensor<..>` or `AllocatedOutput<..>`.
    Tensor(Box<TensorSyntax>),
    /// `StringTensor<..>`, `StringOutput<..>`, `Sequence<..>`, `MapSequence<..>`, `Map<..>`
    /// or `Optional<..>`.
    Value(Box<ValueSyntax>),
    /// A path the syntax cannot see through (an alias, a type from elsewhere): checked by
    /// trait bounds only.
    Opaque,
    /// Certainly not a tensor (a reference, array, primitive, `Vec`, a view type, ...);
    /// the string says what it is.
    NotATensor(String),
}

/// Last path segment of a plain path type (no `<T as Trait>::` prefix).
fn last_segment(ty: &syn::Type) -> Option<&syn::PathSegment> {
    match ty {
        syn::Type::Path(p) if p.qself.is_none() => p.path.segments.last(),
        syn::Type::Paren(p) => last_segment(&p.elem),
        syn::Type::Group(g) => last_segment(&g.elem),
        _ => None,
    }
}

/// Types that are certainly not tensors, with a hint for the message.
const NOT_TENSORS: &[(&str, &str)] = &[
    ("Vec", "a `Vec`"),
    ("Box", "a `Box`"),
    ("Option", "an `Option`"),
    ("Rc", "an `Rc`"),
    ("Arc", "an `Arc`"),
    ("String", "a `String`"),
    ("str", "a string"),
    ("HashMap", "a map"),
    ("BTreeMap", "a map"),
    ("TensorMut", "a view (`TensorMut`)"),
    ("TensorRef", "a view (`TensorRef`)"),
    ("char", "a `char`"),
    ("usize", "a single number"),
    ("isize", "a single number"),
    ("u128", "a single number"),
    ("i128", "a single number"),
];

fn not_a_tensor(ty: &syn::Type) -> Option<String> {
    let what = match ty {
        syn::Type::Reference(_) => "a reference",
        syn::Type::Array(_) => "an array",
        syn::Type::Slice(_) => "a slice",
        syn::Type::Ptr(_) => "a raw pointer",
        syn::Type::Tuple(_) => "a tuple",
        syn::Type::BareFn(_) => "a function pointer",
        syn::Type::Never(_) => "`!`",
        syn::Type::TraitObject(_) => "a trait object",
        syn::Type::ImplTrait(_) => "`impl Trait`",
        syn::Type::Infer(_) => "`_`",
        _ => {
            let seg = last_segment(ty)?;
            let name = seg.ident.to_string();
            if let Some((_, what)) = NOT_TENSORS.iter().find(|(n, _)| *n == name) {
                return Some((*what).to_owned());
            }
            if seg.arguments.is_none() && ElementType::from_rust_name(&name).is_some() {
                return Some("a single number".into());
            }
            return None;
        }
    };
    Some(what.to_owned())
}

impl FieldType {
    /// Whether the derive must keep the field out of its generated code: it is not a tensor
    /// at all, or its device argument is not a device (both already errors).
    pub fn is_broken(&self) -> bool {
        match self {
            FieldType::NotATensor(_) => true,
            FieldType::Tensor(t) => t.device_is_not_a_device,
            FieldType::Value(v) => v.inner.as_ref().is_some_and(|i| i.is_broken()),
            FieldType::Opaque => false,
        }
    }
}

/// Reads an element type argument.
pub fn parse_elem(ty: &syn::Type) -> ElemSyntax {
    if let Some(seg) = last_segment(ty)
        && seg.arguments.is_none()
    {
        let name = seg.ident.to_string();
        if let Some(t) = ElementType::from_rust_name(&name).filter(|t| t.is_bindable()) {
            return ElemSyntax::Known(t, name, Range::of_type(ty));
        }
    }
    ElemSyntax::Opaque(Range::of_type(ty))
}

/// Reads an element type argument of a sequence or map, where `String` is allowed too.
pub fn parse_value_elem(ty: &syn::Type) -> ElemSyntax {
    if let Some(seg) = last_segment(ty)
        && seg.arguments.is_none()
    {
        let name = seg.ident.to_string();
        if let Some(t) = ElementType::from_rust_name(&name) {
            return ElemSyntax::Known(t, name, Range::of_type(ty));
        }
    }
    ElemSyntax::Opaque(Range::of_type(ty))
}

/// The type arguments of `<..>`, or `None` when any argument is not a type (a lifetime,
/// a const, an associated-type binding).
fn type_args(args: &syn::AngleBracketedGenericArguments) -> Option<Vec<&syn::Type>> {
    args.args
        .iter()
        .map(|a| match a {
            syn::GenericArgument::Type(t) => Some(t),
            _ => None,
        })
        .collect()
}

/// Reads `StringTensor<..>`, `Sequence<..>`, ... (see [`ValueSyntax`]).
fn parse_value_type(seg: &syn::PathSegment) -> Option<ValueSyntax> {
    let slot = match seg.ident.to_string().as_str() {
        "StringTensor" => ValueSlot::StringTensor,
        "StringOutput" => ValueSlot::StringOutput,
        "Sequence" => ValueSlot::Sequence,
        "MapSequence" => ValueSlot::MapSequence,
        "Map" => ValueSlot::Map,
        "Optional" => ValueSlot::Optional,
        _ => return None,
    };
    let types: Vec<&syn::Type> = match &seg.arguments {
        syn::PathArguments::None => Vec::new(),
        syn::PathArguments::AngleBracketed(args) => type_args(args)?,
        syn::PathArguments::Parenthesized(_) => return None,
    };
    let mut v = ValueSyntax {
        slot,
        slot_span: seg.ident.span(),
        elem: None,
        key: None,
        shape: None,
        inner: None,
        inner_written: None,
    };
    match (slot, types.as_slice()) {
        (ValueSlot::StringTensor | ValueSlot::StringOutput, []) => {}
        (ValueSlot::StringTensor | ValueSlot::StringOutput, [s]) => v.shape = Some(parse_shape(s)),
        (ValueSlot::Sequence, [e]) => v.elem = Some(parse_value_elem(e)),
        (ValueSlot::Sequence, [e, s]) => {
            v.elem = Some(parse_value_elem(e));
            v.shape = Some(parse_shape(s));
        }
        (ValueSlot::MapSequence | ValueSlot::Map, [k, e]) => {
            v.key = Some(parse_value_elem(k));
            v.elem = Some(parse_value_elem(e));
        }
        (ValueSlot::Optional, [inner]) => {
            v.inner = Some(Box::new(parse_field_type(inner)));
            v.inner_written = Some((*inner).clone());
        }
        _ => return None,
    }
    Some(v)
}

/// Reads an integer from a const generic argument: `3`, `{ 3 }`, `(3)`.
fn const_int(expr: &syn::Expr) -> Option<u64> {
    match expr {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse().ok(),
        syn::Expr::Block(b) if b.block.stmts.len() == 1 => match &b.block.stmts[0] {
            syn::Stmt::Expr(e, None) => const_int(e),
            _ => None,
        },
        syn::Expr::Paren(p) => const_int(&p.expr),
        syn::Expr::Group(g) => const_int(&g.expr),
        _ => None,
    }
}

fn parse_axis(ty: &syn::Type) -> AxisSyntax {
    let span = Range::of_type(ty);
    let Some(seg) = last_segment(ty) else {
        return AxisSyntax::Opaque(span);
    };
    match (seg.ident.to_string().as_str(), &seg.arguments) {
        ("Dyn", syn::PathArguments::None) => AxisSyntax::Dyn(span),
        ("Fix", syn::PathArguments::AngleBracketed(args)) if args.args.len() == 1 => {
            let n = match &args.args[0] {
                syn::GenericArgument::Const(e) => const_int(e),
                // `Fix<{N}>` parses as a const; a bare literal too. A bare path `Fix<N>`
                // parses as a type argument: a const parameter, opaque.
                _ => None,
            };
            match n {
                Some(n) => AxisSyntax::Fixed(n, span),
                None => AxisSyntax::Opaque(span),
            }
        }
        _ => AxisSyntax::Opaque(span),
    }
}

/// Reads a shape argument.
pub fn parse_shape(ty: &syn::Type) -> ShapeSyntax {
    match ty {
        syn::Type::Tuple(t) => {
            ShapeSyntax::Tuple(t.elems.iter().map(parse_axis).collect(), Range::of_type(ty))
        }
        syn::Type::Paren(p) => parse_shape(&p.elem),
        syn::Type::Group(g) => parse_shape(&g.elem),
        _ => match last_segment(ty) {
            Some(seg) if seg.ident == "AnyRank" && seg.arguments.is_none() => {
                ShapeSyntax::AnyRank(Range::of_type(ty))
            }
            _ => ShapeSyntax::Opaque(Range::of_type(ty)),
        },
    }
}

/// Reads a field's type.
pub fn parse_field_type(ty: &syn::Type) -> FieldType {
    if let Some(seg) = last_segment(ty)
        && let Some(v) = parse_value_type(seg)
    {
        return FieldType::Value(Box::new(v));
    }
    if let Some(seg) = last_segment(ty) {
        let kind = match seg.ident.to_string().as_str() {
            "Tensor" => Some(SlotKind::Tensor),
            "AllocatedOutput" => Some(SlotKind::Allocated),
            _ => None,
        };
        if let (Some(kind), syn::PathArguments::AngleBracketed(args)) = (kind, &seg.arguments)
            && let Some(types) = type_args(args)
            && (2..=3).contains(&types.len())
        {
            return FieldType::Tensor(Box::new(TensorSyntax {
                kind,
                kind_span: seg.ident.span(),
                elem: parse_elem(types[0]),
                shape: parse_shape(types[1]),
                device: types.get(2).map(|t| (*t).clone()),
                device_is_not_a_device: types.get(2).is_some_and(|t| not_a_tensor(t).is_some()),
            }));
        }
    }
    match not_a_tensor(ty) {
        Some(what) => FieldType::NotATensor(what),
        None => FieldType::Opaque,
    }
}

/// The last path segment of a device type as written (`Cpu`, `Cuda`), for comparing
/// devices syntactically; `None` for anything that is not a plain path.
pub fn device_name(ty: &syn::Type) -> Option<String> {
    let seg = last_segment(ty)?;
    Some(seg.ident.to_string())
}

/// The last path segment of a type as `(name, name with arguments)`, e.g.
/// `("Cuda", "Cuda<0>")` for `ort_bind::Cuda<0>`, spaces removed.
pub fn last_segment_text(ty: &syn::Type) -> Option<(String, String)> {
    let seg = last_segment(ty)?;
    let text = quote::quote!(#seg).to_string().replace(' ', "");
    Some((seg.ident.to_string(), text))
}

/// Normalised token text of a type, for comparing two spellings of a device.
pub fn type_text(ty: &syn::Type) -> String {
    quote::quote!(#ty).to_string().replace(' ', "")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> FieldType {
        parse_field_type(&syn::parse_str(s).unwrap())
    }

    #[test]
    fn reads_tensor_types() {
        let FieldType::Tensor(t) = parse("ort_bind::Tensor<f32, (Fix<1>, Dyn, Fix<{ 3 }>), D>")
        else {
            panic!()
        };
        assert_eq!(t.kind, SlotKind::Tensor);
        assert!(matches!(t.elem, ElemSyntax::Known(ElementType::F32, _, _)));
        let ShapeSyntax::Tuple(axes, _) = t.shape else {
            panic!()
        };
        assert!(matches!(axes[0], AxisSyntax::Fixed(1, _)));
        assert!(matches!(axes[1], AxisSyntax::Dyn(_)));
        assert!(matches!(axes[2], AxisSyntax::Fixed(3, _)));
        assert_eq!(
            device_name(t.device.as_ref().unwrap()).as_deref(),
            Some("D")
        );

        let FieldType::Tensor(t) = parse("AllocatedOutput<half::bf16, AnyRank>") else {
            panic!()
        };
        assert_eq!(t.kind, SlotKind::Allocated);
        assert!(matches!(t.elem, ElemSyntax::Known(ElementType::BF16, _, _)));
        assert!(matches!(t.shape, ShapeSyntax::AnyRank(_)));
        assert!(t.device.is_none());

        let FieldType::Tensor(t) = parse("Tensor<i64, ()>") else {
            panic!()
        };
        assert!(matches!(t.shape, ShapeSyntax::Tuple(ref a, _) if a.is_empty()));
    }

    #[test]
    fn aliases_and_parameters_are_opaque() {
        assert!(matches!(parse("Image"), FieldType::Opaque));
        assert!(matches!(parse("crate::io::Image<D>"), FieldType::Opaque));
        let FieldType::Tensor(t) = parse("Tensor<Float, ImageShape>") else {
            panic!()
        };
        assert!(matches!(t.elem, ElemSyntax::Opaque(_)));
        assert!(matches!(t.shape, ShapeSyntax::Opaque(_)));
        let FieldType::Tensor(t) = parse("Tensor<f32, (Fix<N>, Dyn)>") else {
            panic!()
        };
        let ShapeSyntax::Tuple(axes, _) = t.shape else {
            panic!()
        };
        assert!(matches!(axes[0], AxisSyntax::Opaque(_)));
    }

    #[test]
    fn obvious_non_tensors_are_named() {
        assert!(matches!(parse("Vec<f32>"), FieldType::NotATensor(w) if w.contains("Vec")));
        assert!(matches!(parse("f32"), FieldType::NotATensor(w) if w.contains("number")));
        assert!(matches!(
            parse("&'a Tensor<f32, (Dyn,)>"),
            FieldType::NotATensor(_)
        ));
        assert!(matches!(parse("[f32; 4]"), FieldType::NotATensor(_)));
        assert!(
            matches!(parse("TensorMut<'a, f32, (Dyn,)>"), FieldType::NotATensor(w) if w.contains("view"))
        );
    }
}
