//! Element types: the Rust types that can sit in a bound tensor, and their ONNX codes.
//!
//! The primitives, `half`'s `f16`/`bf16`, and ONNX's narrow types ([`narrow`]: 8-bit
//! floats, packed 4- and 2-bit integers and floats).

use ort_sys::ONNXTensorElementDataType as Onnx;

pub use half::{bf16, f16};

mod dtype;
pub mod narrow;

pub use dtype::NumericType;
pub(crate) use dtype::{element_doc, runtime_rows};
#[cfg(feature = "dynamic")]
pub(crate) use dtype::{element_getter, element_table};

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

/// `Element` (and `Unpacked`, for a type stored one element per value) for every row of
/// the element table.
macro_rules! element_impls {
    ($(($variant:ident, $rust:ident, $onnx:literal, $ort:literal, $constant:ident, $name:literal,
        $size:literal, $packing:tt, $kind:ident, $description:literal);)*) => {$(
        impl sealed::Sealed for $rust {}
        impl Element for $rust {
            const ONNX_TYPE: Onnx = Onnx::$constant;
            const NAME: &'static str = $name;
            const PACKING: usize = $packing;
        }
        unpacked!($packing, $rust);
    )*};
}

/// `Unpacked` for a type of packing 1.
macro_rules! unpacked {
    (1, $rust:ident) => {
        impl Unpacked for $rust {}
    };
    ($packing:tt, $rust:ident) => {};
}

ort_bind_elements::element_rows!(element_impls);

/// The numpy name of an ONNX element code, for messages about values ONNX Runtime produced.
pub(crate) fn onnx_type_name(t: Onnx) -> &'static str {
    ort_bind_elements::ElementType::from_ort(t as i32)
        .map_or("an element type ort-bind does not bind", |e| e.numpy_name())
}
