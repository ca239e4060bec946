//! Arbitrary bytes through the value readers of `ort-bind run` and the node tests
//! (`ort_bind_cli::data::decode_value`): the first byte picks the format (`.npy`, or a
//! `.pb` holding a TensorProto, SequenceProto, MapProto or OptionalProto), the rest is the
//! file. Every input must give `Ok` or `Err` (no panic, no abort on allocation); an error
//! names its origin; a decoded value encodes and decodes back to itself.

#![no_main]

use libfuzzer_sys::fuzz_target;
use ort_bind_cli::data::{self, ProtoKind, value_proto};
use ort_bind_runtime::{ElementType, NumericType, ValueType};

fn ty(kind: u8) -> Option<ValueType> {
    let tensor = ValueType::Tensor {
        elem: ElementType::Numeric(NumericType::F32),
        dims: vec![None],
    };
    match kind % 5 {
        1 => None,
        2 => Some(ValueType::Sequence(Box::new(tensor))),
        3 => Some(ValueType::Map {
            key: ElementType::String,
            value: ElementType::Numeric(NumericType::F32),
        }),
        4 => Some(ValueType::Optional(Box::new(tensor))),
        _ => Some(tensor),
    }
}

fuzz_target!(|input: &[u8]| {
    let Some((&selector, bytes)) = input.split_first() else {
        return;
    };
    let npy = selector % 5 == 0 && selector & 0x80 != 0;
    let ty = ty(selector);
    match data::decode_value(bytes, "fuzz.pb", npy, ty.as_ref()) {
        Ok(value) => {
            if !npy {
                let kind = ty.as_ref().map_or(ProtoKind::Tensor, ProtoKind::of);
                let again = value_proto::encode("v", &value);
                let back = value_proto::decode(&again, "again.pb", kind).unwrap_or_else(|e| {
                    panic!("re-encoded {} does not decode: {e}", value.describe())
                });
                // NaN payloads compare unequal; compare re-encodings instead.
                assert_eq!(
                    value_proto::encode("v", &back),
                    again,
                    "round trip of {}",
                    value.describe()
                );
            }
        }
        Err(e) => assert!(e.to_string().contains("fuzz.pb"), "{e}"),
    }
});
