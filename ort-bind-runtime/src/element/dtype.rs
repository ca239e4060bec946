//! [`NumericType`], an element type chosen at run time, and `element_table!`, the rows of
//! the shared element table (`ort-bind-elements`) with the runtime's own per-type extras.
//!
//! `element_table!(callback)` hands every numeric element type's row to `callback!`, so
//! each place that needs a per-type item (here `NumericType`; the `Element` impls; the
//! dynamic route's `HostData` and its conversions) is generated from the same rows: a new
//! element type is one row in `ort-bind-elements` (plus its Rust type, in `narrow.rs` for a
//! narrow one).

use ort_sys::ONNXTensorElementDataType as Onnx;

use super::Element;
#[allow(unused_imports)] // named by the rows' doc links
use super::narrow::{
    Float4E2M1x2, Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2, Float8E5M2FNUZ, Float8E8M0, Int2x4,
    Int4x2, UInt2x4, UInt4x2,
};
use super::{bf16, f16};

/// Calls `$callback!` with one row per numeric element type: `(Variant, RustType,
/// ONNX_CONSTANT, "numpy name", doc, |values, index| element as f64)`, where
/// `ONNX_CONSTANT` names ONNX Runtime's `ONNXTensorElementDataType` value, `doc` is an
/// expression for `#[doc = ...]` and the last a `fn(&[RustType], usize) -> Option<f64>`
/// (see `HostElement::element_f64`). The rows are `ort-bind-elements`' own
/// (`element_rows!`), in its order.
macro_rules! element_table {
    ($callback:ident) => {
        ort_bind_elements::element_rows! { $crate::element::runtime_rows[$callback] }
    };
}
#[cfg(feature = "dynamic")]
pub(crate) use element_table;

/// The runtime's rows from the shared ones: the doc and the `f64` getter follow from each
/// type's kind.
macro_rules! runtime_rows {
    ([$callback:ident] $(($variant:ident, $rust:ident, $onnx:literal, $ort:literal, $constant:ident,
        $name:literal, $size:literal, $packing:literal, $kind:ident, $description:literal);)*) => {
        $callback! {
            $((
                $variant,
                $rust,
                $constant,
                $name,
                $crate::element::element_doc!($kind, $rust, $description),
                $crate::element::element_getter!($kind)
            );)*
        }
    };
}
pub(crate) use runtime_rows;

/// The doc of a row's variant: the Rust type, and for a narrow type (linked) what it holds.
macro_rules! element_doc {
    (Float8, $rust:ident, $description:literal) => {
        concat!("[`", stringify!($rust), "`]: ", $description, ".")
    };
    (Packed, $rust:ident, $description:literal) => {
        concat!("[`", stringify!($rust), "`]: ", $description, ".")
    };
    ($kind:ident, $rust:ident, $description:literal) => {
        concat!("`", stringify!($rust), "`.")
    };
}
pub(crate) use element_doc;

/// Tensor element `index` of a slice of a row's Rust type, as `f64`, by its kind.
#[cfg_attr(not(feature = "dynamic"), allow(unused_macros))] // the dynamic route's items use it
macro_rules! element_getter {
    (Bool) => {
        |v, i| v.get(i).map(|&x| if x { 1.0 } else { 0.0 })
    };
    (Half) => {
        |v, i| v.get(i).map(|x| x.to_f64())
    };
    (Float8) => {
        |v, i| v.get(i).map(|x| x.to_f32().into())
    };
    (Packed) => {
        packed_f64
    };
    // The primitives: `Float`, `Int`, `UInt`.
    ($kind:ident) => {
        |v, i| v.get(i).map(|&x| x as f64)
    };
}
#[cfg(feature = "dynamic")]
pub(crate) use element_getter;

macro_rules! dtype_enum {
    ($(($variant:ident, $rust:ident, $onnx:ident, $name:literal, $doc:expr, $get:expr);)*) => {
        /// A tensor element type that has a Rust element type ([`Element`]): every numeric
        /// (and bool) ONNX element type ort-bind binds, chosen at run time. What the dynamic
        /// route's `HostArray`s hold; a model declares an
        /// [`ElementType`](crate::ElementType): one of these, or `string`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum NumericType {
            $(#[doc = $doc] $variant,)*
        }

        impl NumericType {
            /// Every element type.
            pub const ALL: &'static [NumericType] = &[$(NumericType::$variant),*];

            /// The numpy name (`float32`, `int64`, `bool`, ...); for the narrow types, the
            /// name ONNX and `ml_dtypes` give them (`float8e4m3fn`, `int4`, ...).
            pub fn name(self) -> &'static str {
                match self { $(NumericType::$variant => $name,)* }
            }

            /// The ONNX element type code.
            pub fn onnx(self) -> Onnx {
                match self { $(NumericType::$variant => Onnx::$onnx,)* }
            }

            /// The element type of an ONNX code, when ort-bind binds it.
            pub fn from_onnx(code: Onnx) -> Option<NumericType> {
                match code {
                    $(Onnx::$onnx => Some(NumericType::$variant),)*
                    _ => None,
                }
            }

            /// Bytes per stored value: per element, except for the packed types, whose one
            /// byte holds [`packing`](Self::packing) elements.
            pub fn size(self) -> usize {
                match self { $(NumericType::$variant => size_of::<$rust>(),)* }
            }

            /// Tensor elements one stored value holds ([`Element::PACKING`]): 2 for
            /// `int4`, `uint4` and `float4e2m1`, 4 for `int2` and `uint2`, otherwise 1.
            pub fn packing(self) -> usize {
                match self { $(NumericType::$variant => <$rust as Element>::PACKING,)* }
            }
        }

    };
}

element_table!(dtype_enum);

impl std::fmt::Display for NumericType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ort_bind_elements::ElementType;

    /// Each `NumericType` is the shared table's type of its ONNX Runtime code, with that
    /// row's name, size (its Rust type's `size_of`) and packing; and every bindable type of
    /// the table is one.
    #[test]
    fn numeric_types_agree_with_the_shared_table() {
        for &t in NumericType::ALL {
            let e = ElementType::from_ort(t.onnx() as i32).expect("a code of the table");
            assert_eq!(e.numpy_name(), t.name(), "{t}");
            assert_eq!(e.ort_code(), t.onnx() as i32, "{t}");
            assert_eq!(e.size(), Some(t.size()), "{t}");
            assert_eq!(e.packing(), t.packing(), "{t}");
            assert_eq!(format!("{e:?}"), format!("{t:?}"));
            assert_eq!(NumericType::from_onnx(t.onnx()), Some(t));
        }
        assert_eq!(
            NumericType::ALL.len(),
            ElementType::all().filter(|e| e.is_bindable()).count()
        );
        // The three codes ONNX Runtime numbers differently from the file format.
        assert_eq!(NumericType::F8E8M0.onnx() as i32, 26);
        assert_eq!(NumericType::U2.onnx() as i32, 24);
        assert_eq!(NumericType::I2.onnx() as i32, 25);
    }
}
