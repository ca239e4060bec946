//! The one table of the ONNX element types ort-bind binds (Rust type, ONNX code, name),
//! and [`NumericType`], such an element type chosen at run time.
//!
//! `element_table!(callback)` hands every row to `callback!`, so each place that needs a
//! per-type item (here `NumericType`; the dynamic route's `HostData` and its conversions) is
//! generated from the same rows: a new element type is one row here (plus its `Element`
//! impl in `mod.rs`).

use ort_sys::ONNXTensorElementDataType as Onnx;

use super::Element;
#[allow(unused_imports)] // named by the rows' doc links
use super::narrow::{
    Float4E2M1x2, Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2, Float8E5M2FNUZ, Float8E8M0, Int2x4,
    Int4x2, UInt2x4, UInt4x2,
};
use super::{bf16, f16};

/// Calls `$callback!` with one row per element type: `(Variant, RustType, ONNX_CODE,
/// "numpy name", "doc", |values, index| element as f64)`.
macro_rules! element_table {
    ($callback:ident) => {
        $callback! {
            (F32, f32, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, "float32", "`f32`.", |v, i| v.get(i).map(|&x| x as f64));
            (F64, f64, ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE, "float64", "`f64`.", |v, i| v.get(i).copied());
            (F16, f16, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16, "float16", "`f16`.", |v, i| v.get(i).map(|x| x.to_f64()));
            (BF16, bf16, ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16, "bfloat16", "`bf16`.", |v, i| v.get(i).map(|x| x.to_f64()));
            (I8, i8, ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8, "int8", "`i8`.", |v, i| v.get(i).map(|&x| x as f64));
            (I16, i16, ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16, "int16", "`i16`.", |v, i| v.get(i).map(|&x| x as f64));
            (I32, i32, ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32, "int32", "`i32`.", |v, i| v.get(i).map(|&x| x as f64));
            (I64, i64, ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, "int64", "`i64`.", |v, i| v.get(i).map(|&x| x as f64));
            (U8, u8, ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8, "uint8", "`u8`.", |v, i| v.get(i).map(|&x| x as f64));
            (U16, u16, ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16, "uint16", "`u16`.", |v, i| v.get(i).map(|&x| x as f64));
            (U32, u32, ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32, "uint32", "`u32`.", |v, i| v.get(i).map(|&x| x as f64));
            (U64, u64, ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64, "uint64", "`u64`.", |v, i| v.get(i).map(|&x| x as f64));
            (Bool, bool, ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL, "bool", "`bool`.", |v, i| v.get(i).map(|&x| if x { 1.0 } else { 0.0 }));
            (F8E4M3FN, Float8E4M3FN, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E4M3FN, "float8e4m3fn", "[`Float8E4M3FN`]: 8-bit float, one per byte.", |v, i| v.get(i).map(|x| x.to_f32().into()));
            (F8E4M3FNUZ, Float8E4M3FNUZ, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E4M3FNUZ, "float8e4m3fnuz", "[`Float8E4M3FNUZ`]: 8-bit float, one per byte.", |v, i| v.get(i).map(|x| x.to_f32().into()));
            (F8E5M2, Float8E5M2, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E5M2, "float8e5m2", "[`Float8E5M2`]: 8-bit float, one per byte.", |v, i| v.get(i).map(|x| x.to_f32().into()));
            (F8E5M2FNUZ, Float8E5M2FNUZ, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E5M2FNUZ, "float8e5m2fnuz", "[`Float8E5M2FNUZ`]: 8-bit float, one per byte.", |v, i| v.get(i).map(|x| x.to_f32().into()));
            (F8E8M0, Float8E8M0, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E8M0, "float8e8m0", "[`Float8E8M0`]: 8-bit power-of-two scale, one per byte.", |v, i| v.get(i).map(|x| x.to_f32().into()));
            (I4, Int4x2, ONNX_TENSOR_ELEMENT_DATA_TYPE_INT4, "int4", "[`Int4x2`]: 4-bit signed integers, two per byte.", packed_f64);
            (U4, UInt4x2, ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT4, "uint4", "[`UInt4x2`]: 4-bit unsigned integers, two per byte.", packed_f64);
            (F4E2M1, Float4E2M1x2, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT4E2M1, "float4e2m1", "[`Float4E2M1x2`]: 4-bit floats, two per byte.", packed_f64);
            (I2, Int2x4, ONNX_TENSOR_ELEMENT_DATA_TYPE_INT2, "int2", "[`Int2x4`]: 2-bit signed integers, four per byte.", packed_f64);
            (U2, UInt2x4, ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT2, "uint2", "[`UInt2x4`]: 2-bit unsigned integers, four per byte.", packed_f64);
        }
    };
}
#[cfg(feature = "dynamic")]
pub(crate) use element_table;

macro_rules! dtype_enum {
    ($(($variant:ident, $rust:ident, $onnx:ident, $name:literal, $doc:literal, $get:expr);)*) => {
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
