//! Arbitrary bytes through `signature_from_bytes`: it must return (never panic, never
//! abort on allocation), and an `Ok` signature must satisfy the decoder's invariants.

#![no_main]

use std::collections::HashSet;

use libfuzzer_sys::fuzz_target;
use ort_bind_codegen::model::signature_from_bytes;
use ort_bind_codegen::{Dim, ValueKind, ValueSig};

fn check_values(values: &[ValueSig]) {
    let mut seen = HashSet::new();
    for v in values {
        assert!(!v.name.is_empty(), "empty name accepted");
        assert!(
            seen.insert(v.name.as_str()),
            "duplicate name {:?} accepted",
            v.name
        );
        match &v.kind {
            ValueKind::Tensor { elem, dims } => {
                assert!(ort_bind_codegen::ElementType::from_onnx(elem.onnx_code()) == Some(*elem));
                for d in dims.iter().flatten() {
                    match d {
                        Dim::Fixed(n) => assert!(*n >= 1 && *n <= i64::MAX as u64, "dim {n}"),
                        Dim::Named(p) => assert!(p.chars().any(char::is_alphanumeric), "{p:?}"),
                        Dim::Dynamic => {}
                    }
                }
            }
            ValueKind::Unsupported(what) => assert!(!what.is_empty()),
        }
    }
}

fuzz_target!(|data: &[u8]| {
    match signature_from_bytes(data, "fuzz.onnx") {
        Ok(sig) => {
            check_values(&sig.inputs);
            check_values(&sig.outputs);
        }
        Err(e) => {
            // Every error names its origin.
            assert!(e.to_string().contains("fuzz.onnx"), "{e}");
        }
    }
});
