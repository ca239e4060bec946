//! Arbitrary bytes through `signature_from_bytes`: it must return (never panic, never
//! abort on allocation), and an `Ok` signature must satisfy the decoder's invariants.

#![no_main]

use std::collections::HashSet;

use libfuzzer_sys::fuzz_target;
use ort_bind_codegen::__private::model::{MAX_TYPE_DEPTH, signature_from_bytes};
use ort_bind_codegen::{Dim, ElementType, ModelError, ValueInfo, ValueType};

fn check_kind(kind: &ValueType, depth: usize) {
    assert!(
        depth <= MAX_TYPE_DEPTH,
        "type deeper than the limit accepted"
    );
    assert!(
        depth + kind.depth() - 1 <= MAX_TYPE_DEPTH,
        "depth() disagrees with the nesting"
    );
    match kind {
        ValueType::Tensor { elem, dims } => {
            assert!(ElementType::from_onnx(elem.onnx_code()) == Some(*elem));
            for d in dims.iter().flatten() {
                match d {
                    Dim::Fixed(n) => assert!(*n >= 1 && *n <= i64::MAX as u64, "dim {n}"),
                    Dim::Named(p) => assert!(p.chars().any(char::is_alphanumeric), "{p:?}"),
                    Dim::Dynamic => {}
                }
            }
        }
        ValueType::Sequence(inner) | ValueType::Optional(inner) => check_kind(inner, depth + 1),
        ValueType::Map { key, value } => {
            assert!(key.is_map_key(), "map key {key} accepted");
            check_kind(value, depth + 1);
        }
        ValueType::Unsupported(what) => assert!(!what.is_empty()),
        other => panic!("a kind this target does not know: {other:?}"),
    }
    // Display terminates and shows something.
    assert!(!kind.to_string().is_empty());
}

fn check_values(values: &[ValueInfo]) {
    let mut seen = HashSet::new();
    for v in values {
        assert!(!v.name.is_empty(), "empty name accepted");
        assert!(
            seen.insert(v.name.as_str()),
            "duplicate name {:?} accepted",
            v.name
        );
        check_kind(&v.kind, 1);
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
            if let ModelError::TypeTooDeep { limit, .. } = e {
                assert_eq!(limit, MAX_TYPE_DEPTH);
            }
        }
    }
});
