//! Host arrays of any element type, owned ([`HostArray`]) or borrowed ([`HostArrayRef`]):
//! what the dynamic route ([`DynamicBinding`](crate::DynamicBinding)) and [`DynValue`]s
//! carry. Generated from the element table (`element::element_table!`).

use crate::element::{
    Element, Float4E2M1x2, Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2, Float8E5M2FNUZ, Float8E8M0,
    Int2x4, Int4x2, NumericType, Packed, UInt2x4, UInt4x2, bf16, f16,
};
use crate::error::{Error, Result};
use crate::shape::element_count;
#[allow(unused_imports)] // named in docs
use crate::values::DynValue;

/// A Rust element type with its [`NumericType`], so that it can sit in a [`HostArray`]:
/// every [`Element`].
///
/// Sealed through [`Element`]: implemented for `f32, f64, f16, bf16, i8, i16, i32, i64, u8,
/// u16, u32, u64, bool` and the narrow types of [`narrow`](crate::element::narrow)
/// (`Float8E4M3FN`, `Float8E4M3FNUZ`, `Float8E5M2`, `Float8E5M2FNUZ`, `Float8E8M0`, and the
/// packed `Int4x2`, `UInt4x2`, `Float4E2M1x2`, `Int2x4`, `UInt2x4`).
pub trait NumericElement: Element {
    /// Its element type, as a value.
    const NUMERIC_TYPE: NumericType;
    /// Wraps values of this type.
    fn wrap(values: Vec<Self>) -> HostData;
    /// Borrows values of this type.
    fn wrap_ref(values: &[Self]) -> HostDataRef<'_>;
    /// The values, when `data` holds this type.
    fn slice_of(data: &HostData) -> Option<&[Self]>;
    /// The values, when `data` holds this type.
    fn slice_of_ref(data: HostDataRef<'_>) -> Option<&[Self]>;
    /// Tensor element `index` of `values` as `f64`, for comparisons: `bool` as 0 or 1,
    /// 64-bit integers may round, the 8- and 4-bit floats exactly. For packed types `index`
    /// counts elements, not values (element `index` of an `Int4x2` buffer is a nibble of
    /// value `index / 2`). `None` past the stored values (for a packed type, an index past
    /// the tensor's element count but inside its last byte reads that byte's unused bits).
    fn element_f64(values: &[Self], index: usize) -> Option<f64>;
}

/// Element `index` of a packed buffer.
fn packed_f64<P: Packed>(values: &[P], index: usize) -> Option<f64>
where
    P::Value: Into<f64>,
{
    values
        .get(index / P::PER_BYTE)
        .map(|b| b.element(index % P::PER_BYTE).into())
}

macro_rules! host_data {
    ($(($variant:ident, $rust:ident, $onnx:ident, $name:literal, $doc:expr, $get:expr);)*) => {
        /// Owned values of any element type.
        #[derive(Debug, Clone, PartialEq)]
        pub enum HostData {
            $(#[doc = $doc] $variant(Vec<$rust>),)*
        }

        /// Borrowed values of any element type.
        #[derive(Debug, Clone, Copy, PartialEq)]
        pub enum HostDataRef<'a> {
            $(#[doc = $doc] $variant(&'a [$rust]),)*
        }

        impl HostData {
            /// The element type.
            pub fn dtype(&self) -> NumericType {
                match self { $(HostData::$variant(_) => NumericType::$variant,)* }
            }

            /// Number of stored values (for the packed types, bytes: see [`NumericType::packing`]).
            pub fn len(&self) -> usize {
                match self { $(HostData::$variant(v) => v.len(),)* }
            }

            /// Whether there are no values.
            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }

            /// Borrows the values.
            pub fn as_data_ref(&self) -> HostDataRef<'_> {
                match self { $(HostData::$variant(v) => HostDataRef::$variant(v),)* }
            }
        }

        impl HostDataRef<'_> {
            /// The element type.
            pub fn dtype(&self) -> NumericType {
                match self { $(HostDataRef::$variant(_) => NumericType::$variant,)* }
            }

            /// Number of stored values (for the packed types, bytes: see [`NumericType::packing`]).
            pub fn len(&self) -> usize {
                match self { $(HostDataRef::$variant(v) => v.len(),)* }
            }

            /// Whether there are no values.
            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }

            /// Copies the values.
            pub fn to_data(&self) -> HostData {
                match self { $(HostDataRef::$variant(v) => HostData::$variant(v.to_vec()),)* }
            }

            /// Tensor element `index` as `f64` (see [`NumericElement::element_f64`]: for the
            /// packed types, `index` counts elements, not bytes).
            pub fn get_f64(&self, index: usize) -> Option<f64> {
                match self { $(HostDataRef::$variant(v) => <$rust as NumericElement>::element_f64(v, index),)* }
            }
        }

        $(
            impl NumericElement for $rust {
                const NUMERIC_TYPE: NumericType = NumericType::$variant;
                fn wrap(values: Vec<Self>) -> HostData {
                    HostData::$variant(values)
                }
                fn wrap_ref(values: &[Self]) -> HostDataRef<'_> {
                    HostDataRef::$variant(values)
                }
                fn slice_of(data: &HostData) -> Option<&[Self]> {
                    match data {
                        HostData::$variant(v) => Some(v),
                        #[allow(unreachable_patterns)]
                        _ => None,
                    }
                }
                fn slice_of_ref(data: HostDataRef<'_>) -> Option<&[Self]> {
                    match data {
                        HostDataRef::$variant(v) => Some(v),
                        #[allow(unreachable_patterns)]
                        _ => None,
                    }
                }
                fn element_f64(values: &[Self], index: usize) -> Option<f64> {
                    let f: fn(&[$rust], usize) -> Option<f64> = $get;
                    f(values, index)
                }
            }
        )*

    };
}

crate::element::element_table!(host_data);

/// Checks that `len` stored values of `dtype` are what a tensor of `dims` holds: the
/// element count, or for the packed types `count.div_ceil(packing)` bytes.
fn check_len(dims: &[usize], dtype: NumericType, len: usize) -> Result<()> {
    let count = element_count(dims);
    let packing = dtype.packing();
    match count {
        Some(n) if n.div_ceil(packing) == len => Ok(()),
        Some(n) if packing > 1 => Err(Error::Value {
            value: "array".to_owned(),
            problem: format!(
                "dims {dims:?} hold {n} {dtype} elements, which pack {packing} to a byte into \
                 {} values; found {len}",
                n.div_ceil(packing)
            ),
        }),
        _ => Err(Error::Length {
            tensor: "array".to_owned(),
            expected: count.unwrap_or(usize::MAX),
            found: len,
            dims: dims.to_vec(),
        }),
    }
}

/// A host array of any element type: dims plus row-major values.
///
/// `==` compares dims and stored values, so for the packed types the unused bits of a
/// partly used last byte count; to compare elements, read them with
/// [`HostDataRef::get_f64`] up to [`HostArrayRef::element_count`].
#[derive(Debug, Clone, PartialEq)]
pub struct HostArray {
    dims: Vec<usize>,
    data: HostData,
}

impl HostArray {
    /// An array of `dims` holding `data`; the number of values must be the product of
    /// `dims`, or for the packed types (`int4`, `uint4`, `float4e2m1`, `int2`, `uint2`) the
    /// bytes that many elements pack into (`count.div_ceil(dtype.packing())`).
    pub fn new(dims: Vec<usize>, data: HostData) -> Result<Self> {
        check_len(&dims, data.dtype(), data.len())?;
        Ok(HostArray { dims, data })
    }

    /// An array of `dims` holding `values`.
    pub fn from_vec<T: NumericElement>(dims: Vec<usize>, values: Vec<T>) -> Result<Self> {
        Self::new(dims, T::wrap(values))
    }

    /// The dims.
    pub fn dims(&self) -> &[usize] {
        &self.dims
    }

    /// The values.
    pub fn data(&self) -> &HostData {
        &self.data
    }

    /// The element type.
    pub fn dtype(&self) -> NumericType {
        self.data.dtype()
    }

    /// Number of tensor elements, the product of the dims (for the packed types, more than
    /// the number of stored values).
    pub fn element_count(&self) -> usize {
        element_count(&self.dims).expect("checked when the array was made")
    }

    /// The values as `T`, when the array holds `T`.
    pub fn as_slice<T: NumericElement>(&self) -> Option<&[T]> {
        T::slice_of(&self.data)
    }

    /// Borrows the array.
    pub fn view(&self) -> HostArrayRef<'_> {
        HostArrayRef {
            dims: &self.dims,
            data: self.data.as_data_ref(),
        }
    }

    /// The dims and the values.
    pub fn into_parts(self) -> (Vec<usize>, HostData) {
        (self.dims, self.data)
    }
}

/// A borrowed host array of any element type: dims plus row-major values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HostArrayRef<'a> {
    // Set in place (without the length check of `new`) by the dynamic binding's outputs,
    // whose values ONNX Runtime shaped.
    pub(crate) dims: &'a [usize],
    pub(crate) data: HostDataRef<'a>,
}

impl<'a> HostArrayRef<'a> {
    /// A view of `data` as an array of `dims`; the number of values must be the product of
    /// `dims`, or for the packed types the bytes that many elements pack into (see
    /// [`HostArray::new`]).
    pub fn new(dims: &'a [usize], data: HostDataRef<'a>) -> Result<Self> {
        check_len(dims, data.dtype(), data.len())?;
        Ok(HostArrayRef { dims, data })
    }

    /// A view of typed values.
    pub fn of<T: NumericElement>(dims: &'a [usize], values: &'a [T]) -> Result<Self> {
        Self::new(dims, T::wrap_ref(values))
    }

    /// The dims.
    pub fn dims(&self) -> &'a [usize] {
        self.dims
    }

    /// The values.
    pub fn data(&self) -> HostDataRef<'a> {
        self.data
    }

    /// The element type.
    pub fn dtype(&self) -> NumericType {
        self.data.dtype()
    }

    /// Number of tensor elements, the product of the dims (for the packed types, more than
    /// the number of stored values).
    pub fn element_count(&self) -> usize {
        element_count(self.dims).expect("checked when the array was made")
    }

    /// The values as `T`, when the array holds `T`.
    pub fn as_slice<T: NumericElement>(&self) -> Option<&'a [T]> {
        T::slice_of_ref(self.data)
    }

    /// Copies the array.
    pub fn to_owned_array(&self) -> HostArray {
        HostArray {
            dims: self.dims.to_vec(),
            data: self.data.to_data(),
        }
    }
}
