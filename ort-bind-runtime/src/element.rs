//! Element types: the Rust types that can sit in a bound tensor, and their ONNX codes.

use ort::sys::ONNXTensorElementDataType as Onnx;

pub use half::{bf16, f16};

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
/// Implemented for every ONNX numeric type and `bool`; sealed, because ONNX Runtime
/// writes raw bytes into these buffers and only these layouts match its own.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an ONNX tensor element type",
    label = "not an element type ort-bind can bind",
    note = "use one of f32, f64, f16, bf16, i8, i16, i32, i64, u8, u16, u32, u64, bool"
)]
pub trait Element:
    sealed::Sealed + Copy + Default + Send + Sync + std::fmt::Debug + 'static
{
    /// The ONNX element type code.
    const ONNX_TYPE: Onnx;
    /// The numpy name of the type (`float32`, `int64`, `bool`, ...), used in messages.
    const NAME: &'static str;
}

macro_rules! element {
    ($($rust:ty => $onnx:ident, $name:literal;)*) => {$(
        impl sealed::Sealed for $rust {}
        impl Element for $rust {
            const ONNX_TYPE: Onnx = Onnx::$onnx;
            const NAME: &'static str = $name;
        }
    )*};
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
        _ => "an element type ort-bind does not bind",
    }
}
