//! ONNX element types: [`ElementType`], the shared table's (`ort-bind-elements`), and
//! names for the codes ort-bind does not know.

pub use ort_bind_elements::ElementType;

/// A readable name for any ONNX element code, known or not.
pub fn onnx_code_name(code: i32) -> String {
    if let Some(t) = ElementType::from_onnx(code) {
        return t.numpy_name().to_owned();
    }
    ort_bind_elements::OTHER_ONNX_CODES
        .iter()
        .find(|row| row.0 == code)
        .map(|row| row.1.to_owned())
        .unwrap_or_else(|| format!("element type code {code}"))
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
