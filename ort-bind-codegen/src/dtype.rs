//! The one table of ONNX element types: ONNX code, numpy name, Rust type.

/// An ONNX tensor element type that ort-bind knows by name, as the model declares it.
/// (The runtime's `ort_bind::ElementType` names the same thing: a numeric (or bool) type, or
/// `string`.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ElementType {
    /// `float` / `float32`.
    F32,
    /// `uint8`.
    U8,
    /// `int8`.
    I8,
    /// `uint16`.
    U16,
    /// `int16`.
    I16,
    /// `int32`.
    I32,
    /// `int64`.
    I64,
    /// `string` (not bindable as a typed buffer).
    String,
    /// `bool`.
    Bool,
    /// `float16`.
    F16,
    /// `double` / `float64`.
    F64,
    /// `uint32`.
    U32,
    /// `uint64`.
    U64,
    /// `bfloat16`.
    BF16,
    /// `float8e4m3fn` (runtime type `Float8E4M3FN`).
    F8E4M3FN,
    /// `float8e4m3fnuz` (`Float8E4M3FNUZ`).
    F8E4M3FNUZ,
    /// `float8e5m2` (`Float8E5M2`).
    F8E5M2,
    /// `float8e5m2fnuz` (`Float8E5M2FNUZ`).
    F8E5M2FNUZ,
    /// `uint4`, two per byte (`UInt4x2`).
    U4,
    /// `int4`, two per byte (`Int4x2`).
    I4,
    /// `float4e2m1`, two per byte (`Float4E2M1x2`).
    F4E2M1,
    /// `float8e8m0` (`Float8E8M0`).
    F8E8M0,
    /// `uint2`, four per byte (`UInt2x4`).
    U2,
    /// `int2`, four per byte (`Int2x4`).
    I2,
}

/// `(type, ONNX code, numpy name, Rust type path relative to the runtime crate root or core)`.
const TABLE: &[(ElementType, i32, &str, &str)] = &[
    (ElementType::F32, 1, "float32", "f32"),
    (ElementType::U8, 2, "uint8", "u8"),
    (ElementType::I8, 3, "int8", "i8"),
    (ElementType::U16, 4, "uint16", "u16"),
    (ElementType::I16, 5, "int16", "i16"),
    (ElementType::I32, 6, "int32", "i32"),
    (ElementType::I64, 7, "int64", "i64"),
    (ElementType::String, 8, "string", "String"),
    (ElementType::Bool, 9, "bool", "bool"),
    (ElementType::F16, 10, "float16", "f16"),
    (ElementType::F64, 11, "float64", "f64"),
    (ElementType::U32, 12, "uint32", "u32"),
    (ElementType::U64, 13, "uint64", "u64"),
    (ElementType::BF16, 16, "bfloat16", "bf16"),
    // ONNX's codes (`TensorProto.DataType`). ONNX Runtime's C enum numbers the last three
    // differently (UINT2 = 24, INT2 = 25, FLOAT8E8M0 = 26): the runtime types carry
    // ONNX Runtime's value, this table the file format's.
    (ElementType::F8E4M3FN, 17, "float8e4m3fn", "Float8E4M3FN"),
    (
        ElementType::F8E4M3FNUZ,
        18,
        "float8e4m3fnuz",
        "Float8E4M3FNUZ",
    ),
    (ElementType::F8E5M2, 19, "float8e5m2", "Float8E5M2"),
    (
        ElementType::F8E5M2FNUZ,
        20,
        "float8e5m2fnuz",
        "Float8E5M2FNUZ",
    ),
    (ElementType::U4, 21, "uint4", "UInt4x2"),
    (ElementType::I4, 22, "int4", "Int4x2"),
    (ElementType::F4E2M1, 23, "float4e2m1", "Float4E2M1x2"),
    (ElementType::F8E8M0, 24, "float8e8m0", "Float8E8M0"),
    (ElementType::U2, 25, "uint2", "UInt2x4"),
    (ElementType::I2, 26, "int2", "Int2x4"),
];

/// Names of ONNX element codes ort-bind does not know (for error messages).
const OTHER_CODES: &[(i32, &str)] = &[(0, "undefined"), (14, "complex64"), (15, "complex128")];

impl ElementType {
    /// Every known element type, in ONNX code order.
    pub fn all() -> impl Iterator<Item = ElementType> {
        TABLE.iter().map(|row| row.0)
    }

    fn row(self) -> &'static (ElementType, i32, &'static str, &'static str) {
        TABLE
            .iter()
            .find(|row| row.0 == self)
            .expect("every ElementType has a row in TABLE")
    }

    /// Looks up an ONNX `TensorProto.DataType` code.
    pub fn from_onnx(code: i32) -> Option<ElementType> {
        TABLE.iter().find(|row| row.1 == code).map(|row| row.0)
    }

    /// The ONNX `TensorProto.DataType` code.
    pub fn onnx_code(self) -> i32 {
        self.row().1
    }

    /// The numpy dtype name (`float32`, `int64`, `bool`, ...).
    pub fn numpy_name(self) -> &'static str {
        self.row().2
    }

    /// The Rust element type's name as generated code spells it (`f32`, `f16`, ...).
    pub fn rust_name(self) -> &'static str {
        self.row().3
    }

    /// Whether ort-bind can bind this element type as a typed buffer.
    pub fn is_bindable(self) -> bool {
        self != ElementType::String
    }

    /// Whether the Rust type is the runtime crate's (`f16`, `bf16`, the narrow types)
    /// rather than a primitive: generated code names it through the runtime's path.
    pub fn is_runtime_type(self) -> bool {
        matches!(self, ElementType::F16 | ElementType::BF16) || self.is_narrow()
    }

    /// Whether this is one of ONNX's narrow types (8-bit floats, 4- and 2-bit integers
    /// and floats).
    pub fn is_narrow(self) -> bool {
        matches!(
            self,
            ElementType::F8E4M3FN
                | ElementType::F8E4M3FNUZ
                | ElementType::F8E5M2
                | ElementType::F8E5M2FNUZ
                | ElementType::F8E8M0
                | ElementType::U4
                | ElementType::I4
                | ElementType::F4E2M1
                | ElementType::U2
                | ElementType::I2
        )
    }

    /// Tensor elements per value of the Rust type: 2 for the 4-bit types, 4 for the
    /// 2-bit ones (packed as ONNX defines: first element in the lowest bits), else 1.
    pub fn packing(self) -> usize {
        match self {
            ElementType::U4 | ElementType::I4 | ElementType::F4E2M1 => 2,
            ElementType::U2 | ElementType::I2 => 4,
            _ => 1,
        }
    }

    /// Whether ONNX allows this type as the key of a map: the integer types and `string`.
    pub fn is_map_key(self) -> bool {
        matches!(
            self,
            ElementType::U8
                | ElementType::I8
                | ElementType::U16
                | ElementType::I16
                | ElementType::U32
                | ElementType::I32
                | ElementType::U64
                | ElementType::I64
                | ElementType::String
        )
    }

    /// Parses a Rust element type name as written in user code (`f32`, `half::f16`, ...),
    /// looking only at the last path segment.
    pub fn from_rust_name(name: &str) -> Option<ElementType> {
        TABLE.iter().find(|row| row.3 == name).map(|row| row.0)
    }
}

/// A readable name for any ONNX element code, known or not.
pub fn onnx_code_name(code: i32) -> String {
    if let Some(t) = ElementType::from_onnx(code) {
        return t.numpy_name().to_owned();
    }
    OTHER_CODES
        .iter()
        .find(|row| row.0 == code)
        .map(|row| row.1.to_owned())
        .unwrap_or_else(|| format!("element type code {code}"))
}

impl std::fmt::Display for ElementType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.numpy_name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip() {
        for t in ElementType::all() {
            assert_eq!(ElementType::from_onnx(t.onnx_code()), Some(t));
            assert_eq!(ElementType::from_rust_name(t.rust_name()), Some(t));
        }
        assert_eq!(ElementType::from_onnx(14), None);
        assert_eq!(onnx_code_name(24), "float8e8m0");
        assert_eq!(onnx_code_name(25), "uint2");
        assert_eq!(onnx_code_name(26), "int2");
        assert_eq!(ElementType::from_onnx(22), Some(ElementType::I4));
        assert_eq!(ElementType::I4.packing(), 2);
        assert!(ElementType::I4.is_runtime_type() && ElementType::F16.is_runtime_type());
        assert!(!ElementType::U16.is_runtime_type() && !ElementType::F32.is_runtime_type());
        assert_eq!(onnx_code_name(14), "complex64");
        assert_eq!(onnx_code_name(99), "element type code 99");
    }
}
