//! Element types: the Rust types that can sit in a bound tensor, and their ONNX codes.
//!
//! The primitives, `half`'s `f16`/`bf16`, and ONNX's narrow types ([`narrow`]: 8-bit
//! floats, packed 4- and 2-bit integers and floats).

use ort_sys::ONNXTensorElementDataType as Onnx;

pub use half::{bf16, f16};

mod dtype;
pub mod narrow;

pub use dtype::NumericType;
#[cfg(feature = "dynamic")]
pub(crate) use dtype::element_table;

pub use narrow::{
    Float4E2M1x2, Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2, Float8E5M2FNUZ, Float8E8M0, Int2x4,
    Int4x2, Packed, UInt2x4, UInt4x2,
};

mod sealed {
    // With the `cuda` feature every element type can live in `cudarc` device memory, so
    // generic device code can rely on it (all element types implement both traits).
    #[cfg(feature = "cuda")]
    pub trait Sealed: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits {}
    #[cfg(not(feature = "cuda"))]
    pub trait Sealed {}
}

/// A Rust type whose values ONNX Runtime reads and writes in place as tensor elements.
///
/// Implemented for every ONNX numeric type, `bool`, and the narrow types of [`narrow`];
/// sealed, because ONNX Runtime writes raw bytes into these buffers and only these layouts
/// match its own.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an ONNX tensor element type",
    label = "not an element type ort-bind can bind",
    note = "use one of f32, f64, f16, bf16, i8, i16, i32, i64, u8, u16, u32, u64, bool, or a \
            narrow type of `ort_bind::narrow` (Float8E4M3FN, Int4x2, ...)"
)]
pub trait Element:
    sealed::Sealed + Copy + Default + Send + Sync + std::fmt::Debug + 'static
{
    /// The ONNX element type code.
    const ONNX_TYPE: Onnx;
    /// The numpy name of the type (`float32`, `int64`, `bool`, ...), used in messages.
    const NAME: &'static str;
    /// Tensor elements one value of this type holds: 1, or 2 for the packed 4-bit types
    /// ([`Int4x2`], [`UInt4x2`], [`Float4E2M1x2`]) and 4 for the 2-bit ones ([`Int2x4`],
    /// [`UInt2x4`]). A tensor of `n` elements holds `n.div_ceil(PACKING)` values.
    const PACKING: usize = 1;
}

/// An [`Element`] stored one per value (`PACKING == 1`): every element type except the
/// packed 4- and 2-bit ones. What needs one value per tensor element (the `ndarray` views)
/// is bound by it, so packed tensors are refused at compile time there.
#[diagnostic::on_unimplemented(
    message = "`{Self}` packs several tensor elements into one byte",
    label = "a packed element type",
    note = "read packed tensors with `unpacked()` and write them with `pack_from`"
)]
pub trait Unpacked: Element {}

/// Values of `T` that hold `elements` tensor elements (`elements.div_ceil(T::PACKING)`).
pub(crate) const fn storage_len<T: Element>(elements: usize) -> usize {
    elements.div_ceil(T::PACKING)
}

macro_rules! element {
    ($($rust:ty => $onnx:ident, $name:literal;)*) => {$(
        impl sealed::Sealed for $rust {}
        impl Element for $rust {
            const ONNX_TYPE: Onnx = Onnx::$onnx;
            const NAME: &'static str = $name;
        }
        impl Unpacked for $rust {}
    )*};
}

impl Unpacked for Float8E4M3FN {}
impl Unpacked for Float8E4M3FNUZ {}
impl Unpacked for Float8E5M2 {}
impl Unpacked for Float8E5M2FNUZ {}
impl Unpacked for Float8E8M0 {}

/// The narrow types: one byte each, holding `$packing` elements.
macro_rules! narrow_element {
    ($($rust:ty => $onnx:ident, $name:literal, $packing:literal;)*) => {$(
        impl sealed::Sealed for $rust {}
        impl Element for $rust {
            const ONNX_TYPE: Onnx = Onnx::$onnx;
            const NAME: &'static str = $name;
            const PACKING: usize = $packing;
        }
    )*};
}

narrow_element! {
    Float8E4M3FN => ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E4M3FN, "float8e4m3fn", 1;
    Float8E4M3FNUZ => ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E4M3FNUZ, "float8e4m3fnuz", 1;
    Float8E5M2 => ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E5M2, "float8e5m2", 1;
    Float8E5M2FNUZ => ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E5M2FNUZ, "float8e5m2fnuz", 1;
    Float8E8M0 => ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E8M0, "float8e8m0", 1;
    Int4x2 => ONNX_TENSOR_ELEMENT_DATA_TYPE_INT4, "int4", 2;
    UInt4x2 => ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT4, "uint4", 2;
    Float4E2M1x2 => ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT4E2M1, "float4e2m1", 2;
    Int2x4 => ONNX_TENSOR_ELEMENT_DATA_TYPE_INT2, "int2", 4;
    UInt2x4 => ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT2, "uint2", 4;
}

element! {
    f32 => ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, "float32";
    f64 => ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE, "float64";
    f16 => ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16, "float16";
    bf16 => ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16, "bfloat16";
    i8 => ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8, "int8";
    i16 => ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16, "int16";
    i32 => ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32, "int32";
    i64 => ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, "int64";
    u8 => ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8, "uint8";
    u16 => ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16, "uint16";
    u32 => ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32, "uint32";
    u64 => ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64, "uint64";
    bool => ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL, "bool";
}

/// The numpy name of an ONNX element code, for messages about values ONNX Runtime produced.
pub(crate) fn onnx_type_name(t: Onnx) -> &'static str {
    match t {
        Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT => "float32",
        Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE => "float64",
        Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16 => "float16",
        Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16 => "bfloat16",
        Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8 => "int8",
        Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16 => "int16",
        Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32 => "int32",
        Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64 => "int64",
        Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8 => "uint8",
        Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16 => "uint16",
        Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32 => "uint32",
        Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64 => "uint64",
        Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL => "bool",
        Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING => "string",
        Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E4M3FN => "float8e4m3fn",
        Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E4M3FNUZ => "float8e4m3fnuz",
        Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E5M2 => "float8e5m2",
        Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E5M2FNUZ => "float8e5m2fnuz",
        Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E8M0 => "float8e8m0",
        Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_INT4 => "int4",
        Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT4 => "uint4",
        Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT4E2M1 => "float4e2m1",
        Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_INT2 => "int2",
        Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT2 => "uint2",
        _ => "an element type ort-bind does not bind",
    }
}
