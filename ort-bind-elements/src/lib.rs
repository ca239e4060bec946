//! The one table of the ONNX tensor element types ort-bind knows.
//!
//! Each row gives an element type's ONNX file-format code (`TensorProto.DataType`, what a
//! model or a LoRA adapter file stores), ONNX Runtime's C API code
//! (`ONNXTensorElementDataType`, what a session reports), its numpy name, the Rust type
//! ort-bind's generated code names for it, and the bytes and tensor elements one stored
//! value holds. The two codes agree except for the last three ONNX added: the file format
//! numbers them `float8e8m0` 24, `uint2` 25, `int2` 26, ONNX Runtime's C enum `uint2` 24,
//! `int2` 25, `float8e8m0` 26.
//!
//! The table is read two ways:
//!
//! - as data, [`ElementType`] and its `const` methods (codegen, which reads models; the
//!   adapter reader, which sizes parameters);
//! - as rows handed to a macro, [`element_rows!`], for code that needs the real Rust types
//!   and ONNX Runtime's constants (the runtime's `NumericType`, its `Element` impls and the
//!   dynamic route's per-type items are generated from them).
//!
//! A new element type is one row in [`element_rows!`]'s definition (and, in the runtime,
//! its Rust type).
//!
//! This crate is an implementation detail of ort-bind's crates, versioned with them.

/// Hands every numeric (or bool) element type's row to `$callback!`: the element types
/// that have a Rust type of fixed size, so every one but `string`. In the runtime's order
/// (floats, signed, unsigned, bool, then ONNX's narrow types), which is its
/// `NumericType::ALL` order; [`ElementType::ALL`] is in ONNX code order.
///
/// `element_rows!(callback)` expands to `callback! { row; row; ... }`, and
/// `element_rows!(callback [tokens])` to `callback! { [tokens] row; row; ... }` (to pass
/// the callback something of its own, such as another macro's name). The callback may be
/// a path (`$crate::module::callback`, for a macro re-exported with `pub(crate) use`).
/// Each row is
///
/// ```text
/// (Variant, RustType, onnx_code, ort_code, ORT_CONSTANT, "numpy name", size, packing, Kind, "description")
/// ```
///
/// - `Variant`: the [`ElementType`] variant (and the runtime's `NumericType` one);
/// - `RustType`: the Rust type's name as generated code spells it (`f32`, `f16`,
///   `Float8E4M3FN`, `Int4x2`, ...), an identifier the caller resolves;
/// - `onnx_code`: the ONNX file format's code (`TensorProto.DataType`);
/// - `ort_code`, `ORT_CONSTANT`: ONNX Runtime's C API code, and its constant's name in
///   `ONNXTensorElementDataType` (`ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT`, ...);
/// - `size`: bytes per stored value; `packing`: tensor elements per stored value (2 for
///   the 4-bit types, 4 for the 2-bit ones, else 1);
/// - `Kind`: an [`ElementKind`] variant name;
/// - `"description"`: a few words for documentation.
///
/// ```
/// macro_rules! numpy_names {
///     ($(($variant:ident, $rust:ident, $onnx:literal, $ort:literal, $constant:ident,
///         $numpy:literal, $size:literal, $packing:literal, $kind:ident, $doc:literal);)*) => {
///         [$($numpy),*]
///     };
/// }
/// let names = ort_bind_elements::element_rows!(numpy_names);
/// assert_eq!(names.len(), 23);
/// assert_eq!(names[0], "float32");
/// assert!(!names.contains(&"string"));
/// ```
#[macro_export]
macro_rules! element_rows {
    ($($callback:ident)::+ $([$($prefix:tt)*])?) => {
        $crate::__element_rows! { numeric [($($callback)::+) $([$($prefix)*])?] }
    };
}

/// The rows themselves, every element type's (see [`element_rows!`]): `$mode` is `numeric`
/// (all but `string`) or `all`.
#[doc(hidden)]
#[macro_export]
macro_rules! __element_rows {
    ($mode:ident $callback:tt) => {
        $crate::__element_select! { $mode $callback []
            (F32, f32, 1, 1, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, "float32", 4, 1, Float, "32-bit float")
            (F64, f64, 11, 11, ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE, "float64", 8, 1, Float, "64-bit float")
            (F16, f16, 10, 10, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16, "float16", 2, 1, Half, "16-bit IEEE float")
            (BF16, bf16, 16, 16, ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16, "bfloat16", 2, 1, Half, "16-bit brain float")
            (I8, i8, 3, 3, ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8, "int8", 1, 1, Int, "8-bit signed integer")
            (I16, i16, 5, 5, ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16, "int16", 2, 1, Int, "16-bit signed integer")
            (I32, i32, 6, 6, ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32, "int32", 4, 1, Int, "32-bit signed integer")
            (I64, i64, 7, 7, ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, "int64", 8, 1, Int, "64-bit signed integer")
            (U8, u8, 2, 2, ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8, "uint8", 1, 1, UInt, "8-bit unsigned integer")
            (U16, u16, 4, 4, ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16, "uint16", 2, 1, UInt, "16-bit unsigned integer")
            (U32, u32, 12, 12, ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32, "uint32", 4, 1, UInt, "32-bit unsigned integer")
            (U64, u64, 13, 13, ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64, "uint64", 8, 1, UInt, "64-bit unsigned integer")
            (Bool, bool, 9, 9, ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL, "bool", 1, 1, Bool, "boolean, one per byte")
            (F8E4M3FN, Float8E4M3FN, 17, 17, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E4M3FN, "float8e4m3fn", 1, 1, Float8, "8-bit float, one per byte")
            (F8E4M3FNUZ, Float8E4M3FNUZ, 18, 18, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E4M3FNUZ, "float8e4m3fnuz", 1, 1, Float8, "8-bit float, one per byte")
            (F8E5M2, Float8E5M2, 19, 19, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E5M2, "float8e5m2", 1, 1, Float8, "8-bit float, one per byte")
            (F8E5M2FNUZ, Float8E5M2FNUZ, 20, 20, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E5M2FNUZ, "float8e5m2fnuz", 1, 1, Float8, "8-bit float, one per byte")
            // The file format's code 24, ONNX Runtime's 26.
            (F8E8M0, Float8E8M0, 24, 26, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E8M0, "float8e8m0", 1, 1, Float8, "8-bit power-of-two scale, one per byte")
            (I4, Int4x2, 22, 22, ONNX_TENSOR_ELEMENT_DATA_TYPE_INT4, "int4", 1, 2, Packed, "4-bit signed integers, two per byte")
            (U4, UInt4x2, 21, 21, ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT4, "uint4", 1, 2, Packed, "4-bit unsigned integers, two per byte")
            (F4E2M1, Float4E2M1x2, 23, 23, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT4E2M1, "float4e2m1", 1, 2, Packed, "4-bit floats, two per byte")
            // The file format's code 26, ONNX Runtime's 25.
            (I2, Int2x4, 26, 25, ONNX_TENSOR_ELEMENT_DATA_TYPE_INT2, "int2", 1, 4, Packed, "2-bit signed integers, four per byte")
            // The file format's code 25, ONNX Runtime's 24.
            (U2, UInt2x4, 25, 24, ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT2, "uint2", 1, 4, Packed, "2-bit unsigned integers, four per byte")
            // No fixed size: `size` 0 here, `None` from `ElementType::size`.
            (String, String, 8, 8, ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING, "string", 0, 1, String, "UTF-8 string")
        }
    };
}

/// Collects the rows `$mode` asks for, then calls the callback with them.
#[doc(hidden)]
#[macro_export]
macro_rules! __element_select {
    ($mode:ident [($($callback:ident)::+) $($prefix:tt)?] [$($rows:tt)*]) => {
        $($callback)::+! { $($prefix)? $($rows)* }
    };
    (numeric $callback:tt [$($rows:tt)*] (String $($row:tt)*) $($rest:tt)*) => {
        $crate::__element_select! { numeric $callback [$($rows)*] $($rest)* }
    };
    ($mode:ident $callback:tt [$($rows:tt)*] $row:tt $($rest:tt)*) => {
        $crate::__element_select! { $mode $callback [$($rows)* $row;] $($rest)* }
    };
}

/// What sort of number an element type is, as far as ort-bind cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ElementKind {
    /// `float32`, `float64`: Rust's `f32`, `f64`.
    Float,
    /// `float16`, `bfloat16`: `half`'s `f16`, `bf16`.
    Half,
    /// The signed integers, `int8` to `int64`.
    Int,
    /// The unsigned integers, `uint8` to `uint64`.
    UInt,
    /// `bool`, one per byte.
    Bool,
    /// ONNX's 8-bit floats (one per byte; `float8e8m0` among them).
    Float8,
    /// ONNX's packed 4- and 2-bit types (several elements per byte).
    Packed,
    /// `string` (not bindable as a typed buffer).
    String,
}

/// One row of the table, as data.
struct Row {
    onnx: i32,
    ort: i32,
    numpy: &'static str,
    rust: &'static str,
    size: usize,
    packing: usize,
    kind: ElementKind,
    description: &'static str,
}

macro_rules! define {
    ($(($variant:ident, $rust:ident, $onnx:literal, $ort:literal, $constant:ident, $numpy:literal,
        $size:literal, $packing:literal, $kind:ident, $description:literal);)*) => {
        /// An ONNX tensor element type that ort-bind knows by name: every numeric (and bool)
        /// type it binds, and `string`.
        ///
        /// Its `Display` is the numpy name.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum ElementType {
            $(
                #[doc = concat!("`", $numpy, "`: ", $description, " (`", stringify!($rust), "`).")]
                $variant,
            )*
        }

        /// The rows in `ElementType`'s declaration order (so indexed by `self as usize`).
        const ROWS: &[Row] = &[$(Row {
            onnx: $onnx,
            ort: $ort,
            numpy: $numpy,
            rust: stringify!($rust),
            size: $size,
            packing: $packing,
            kind: ElementKind::$kind,
            description: $description,
        },)*];

        /// Every element type, in declaration order.
        const DECLARED: [ElementType; ROWS.len()] = [$(ElementType::$variant),*];
    };
}

__element_rows!(all[(define)]);

/// Names of the ONNX element codes ort-bind does not know (`undefined`, the complex types),
/// for messages.
pub const OTHER_ONNX_CODES: &[(i32, &str)] =
    &[(0, "undefined"), (14, "complex64"), (15, "complex128")];

/// `types` sorted by ONNX code.
const fn sorted_by_onnx_code<const N: usize>(mut types: [ElementType; N]) -> [ElementType; N] {
    let mut i = 1;
    while i < N {
        let mut j = i;
        while j > 0 && types[j - 1].onnx_code() > types[j].onnx_code() {
            let t = types[j];
            types[j] = types[j - 1];
            types[j - 1] = t;
            j -= 1;
        }
        i += 1;
    }
    types
}

impl ElementType {
    /// Every element type, in ONNX code order.
    pub const ALL: &'static [ElementType] = &sorted_by_onnx_code(DECLARED);

    /// Every element type, in ONNX code order ([`ALL`](Self::ALL)).
    pub fn all() -> impl Iterator<Item = ElementType> {
        Self::ALL.iter().copied()
    }

    const fn row(self) -> &'static Row {
        &ROWS[self as usize]
    }

    /// The element type of an ONNX file-format code (`TensorProto.DataType`).
    pub const fn from_onnx(code: i32) -> Option<ElementType> {
        let mut i = 0;
        while i < DECLARED.len() {
            if ROWS[i].onnx == code {
                return Some(DECLARED[i]);
            }
            i += 1;
        }
        None
    }

    /// The element type of an ONNX Runtime C API code (`ONNXTensorElementDataType`).
    pub const fn from_ort(code: i32) -> Option<ElementType> {
        let mut i = 0;
        while i < DECLARED.len() {
            if ROWS[i].ort == code {
                return Some(DECLARED[i]);
            }
            i += 1;
        }
        None
    }

    /// The ONNX file format's code (`TensorProto.DataType`).
    pub const fn onnx_code(self) -> i32 {
        self.row().onnx
    }

    /// ONNX Runtime's C API code (`ONNXTensorElementDataType`); the same as
    /// [`onnx_code`](Self::onnx_code) except for `float8e8m0`, `uint2` and `int2`.
    pub const fn ort_code(self) -> i32 {
        self.row().ort
    }

    /// The numpy dtype name (`float32`, `int64`, `bool`, ...); for the narrow types, the
    /// name ONNX and `ml_dtypes` give them (`float8e4m3fn`, `int4`, ...).
    pub const fn numpy_name(self) -> &'static str {
        self.row().numpy
    }

    /// The Rust element type's name as generated code spells it (`f32`, `f16`,
    /// `Float8E4M3FN`, `Int4x2`, `String`, ...).
    pub const fn rust_name(self) -> &'static str {
        self.row().rust
    }

    /// A few words on the type (`32-bit float`, `4-bit signed integers, two per byte`).
    pub const fn description(self) -> &'static str {
        self.row().description
    }

    /// What sort of number it is.
    pub const fn kind(self) -> ElementKind {
        self.row().kind
    }

    /// Bytes per stored value (one stored value holds [`packing`](Self::packing) tensor
    /// elements); `None` for `string`, which has no fixed size.
    pub const fn size(self) -> Option<usize> {
        match self.row().size {
            0 => None,
            size => Some(size),
        }
    }

    /// Tensor elements per stored value: 2 for the 4-bit types, 4 for the 2-bit ones
    /// (packed as ONNX defines: first element in the lowest bits), else 1.
    pub const fn packing(self) -> usize {
        self.row().packing
    }

    /// Whether ort-bind can bind this element type as a typed buffer (all but `string`).
    pub const fn is_bindable(self) -> bool {
        !matches!(self.kind(), ElementKind::String)
    }

    /// Whether the Rust type is the runtime crate's (`f16`, `bf16`, the narrow types)
    /// rather than a primitive: generated code names it through the runtime's path.
    pub const fn is_runtime_type(self) -> bool {
        matches!(self.kind(), ElementKind::Half) || self.is_narrow()
    }

    /// Whether this is one of ONNX's narrow types (8-bit floats, 4- and 2-bit integers
    /// and floats).
    pub const fn is_narrow(self) -> bool {
        matches!(self.kind(), ElementKind::Float8 | ElementKind::Packed)
    }

    /// Whether ONNX allows this type as the key of a map: the integer types and `string`.
    pub const fn is_map_key(self) -> bool {
        matches!(
            self.kind(),
            ElementKind::Int | ElementKind::UInt | ElementKind::String
        )
    }

    /// Parses a Rust element type name as generated code spells it (`f32`, `f16`,
    /// `Int4x2`, ...); callers pass the last segment of a path.
    pub fn from_rust_name(name: &str) -> Option<ElementType> {
        Self::all().find(|t| t.rust_name() == name)
    }

    /// Parses a numpy name (`float32`, `int4`, ...).
    pub fn from_numpy_name(name: &str) -> Option<ElementType> {
        Self::all().find(|t| t.numpy_name() == name)
    }
}

impl std::fmt::Display for ElementType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.numpy_name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(numpy name, ONNX file code, ONNX Runtime code, bytes per value, elements per value)`
    /// as onnx.proto (`TensorProto.DataType`) and onnxruntime_c_api.h
    /// (`ONNXTensorElementDataType`) define them; size 0 for `string`.
    const SPEC: &[(&str, i32, i32, usize, usize)] = &[
        ("float32", 1, 1, 4, 1),
        ("uint8", 2, 2, 1, 1),
        ("int8", 3, 3, 1, 1),
        ("uint16", 4, 4, 2, 1),
        ("int16", 5, 5, 2, 1),
        ("int32", 6, 6, 4, 1),
        ("int64", 7, 7, 8, 1),
        ("string", 8, 8, 0, 1),
        ("bool", 9, 9, 1, 1),
        ("float16", 10, 10, 2, 1),
        ("float64", 11, 11, 8, 1),
        ("uint32", 12, 12, 4, 1),
        ("uint64", 13, 13, 8, 1),
        ("bfloat16", 16, 16, 2, 1),
        ("float8e4m3fn", 17, 17, 1, 1),
        ("float8e4m3fnuz", 18, 18, 1, 1),
        ("float8e5m2", 19, 19, 1, 1),
        ("float8e5m2fnuz", 20, 20, 1, 1),
        ("uint4", 21, 21, 1, 2),
        ("int4", 22, 22, 1, 2),
        ("float4e2m1", 23, 23, 1, 2),
        ("float8e8m0", 24, 26, 1, 1),
        ("uint2", 25, 24, 1, 4),
        ("int2", 26, 25, 1, 4),
    ];

    #[test]
    fn the_table_is_the_spec() {
        let rows: Vec<_> = ElementType::all()
            .map(|t| {
                let size = t.size().unwrap_or(0);
                (
                    t.numpy_name(),
                    t.onnx_code(),
                    t.ort_code(),
                    size,
                    t.packing(),
                )
            })
            .collect();
        assert_eq!(rows, SPEC);
        assert_eq!(ElementType::ALL.len(), DECLARED.len());
    }

    #[test]
    fn codes_and_names_are_unique_and_round_trip() {
        for t in ElementType::all() {
            assert_eq!(ElementType::from_onnx(t.onnx_code()), Some(t));
            assert_eq!(ElementType::from_ort(t.ort_code()), Some(t));
            assert_eq!(ElementType::from_rust_name(t.rust_name()), Some(t));
            assert_eq!(ElementType::from_numpy_name(t.numpy_name()), Some(t));
            assert_eq!(t.to_string(), t.numpy_name());
        }
        let differ: Vec<_> = ElementType::all()
            .filter(|t| t.onnx_code() != t.ort_code())
            .collect();
        assert_eq!(
            differ,
            [ElementType::F8E8M0, ElementType::U2, ElementType::I2]
        );
        for (code, _) in OTHER_ONNX_CODES {
            assert_eq!(ElementType::from_onnx(*code), None);
            assert_eq!(ElementType::from_ort(*code), None);
        }
    }

    #[test]
    fn kinds() {
        let narrow: Vec<_> = ElementType::all().filter(|t| t.is_narrow()).collect();
        assert_eq!(narrow.len(), 10);
        assert!(narrow.iter().all(|t| t.size() == Some(1)));
        assert!(ElementType::all().all(|t| t.is_bindable() == t.size().is_some()));
        assert!(ElementType::I4.is_runtime_type() && ElementType::F16.is_runtime_type());
        assert!(!ElementType::U16.is_runtime_type() && !ElementType::F32.is_runtime_type());
        let keys: Vec<_> = ElementType::all()
            .filter(|t| t.is_map_key())
            .map(|t| t.numpy_name())
            .collect();
        assert_eq!(
            keys,
            [
                "uint8", "int8", "uint16", "int16", "int32", "int64", "string", "uint32", "uint64"
            ]
        );
    }

    #[test]
    fn the_numeric_rows_are_all_but_string_in_declaration_order() {
        macro_rules! variants {
            ([$($prefix:tt)*] $(($variant:ident, $($rest:tt)*);)*) => {
                [$(ElementType::$variant),*]
            };
        }
        let numeric = element_rows!(variants[]);
        assert_eq!(numeric[..], DECLARED[..DECLARED.len() - 1]);
        assert_eq!(DECLARED[DECLARED.len() - 1], ElementType::String);
    }
}
