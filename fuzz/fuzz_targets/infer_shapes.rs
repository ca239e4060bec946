//! Shape inference on arbitrary graphs: an `Arbitrary` description (nodes of the operators
//! inference covers, wired to earlier values by index, with arbitrary integer attributes
//! and small int64 constants; inputs with fixed, named and unnamed dims) is written as an
//! `.onnx` file and read with `signature_from_bytes`. Reading must return (never panic,
//! never hang); every inferred expression reads only the inputs' dims, prints, and
//! evaluates under arbitrary dims to a value or a clean error (overflow, division by zero).

#![no_main]

use libfuzzer_sys::fuzz_target;
use ort_bind_codegen::__private::model::signature_from_bytes;
use ort_bind_fuzz::GraphSpec;

fuzz_target!(|spec: GraphSpec| {
    let (bytes, symbols) = spec.encode();
    let Ok(sig) = signature_from_bytes(&bytes, "fuzz.onnx") else {
        return;
    };
    assert_eq!(sig.inferred.len(), sig.outputs.len());
    for shape in &sig.inferred {
        for e in shape.dims.iter().flatten().flatten() {
            for s in e.symbols() {
                assert!(symbols.iter().any(|k| **k == *s), "`{s}` is no input's dim in {e}");
            }
            assert!(!e.to_string().is_empty());
            for value in [1i64, 2, 3, 7, 64, 1 << 20, i64::MAX / 3] {
                let _ = e.eval(&|_| Some(value));
            }
            // The postfix program generated code evaluates reads every symbol it names.
            let symbols = e.symbols();
            let names: Vec<&str> = symbols.iter().map(|s| &**s).collect();
            assert!(e.program(&names).is_some());
        }
    }
});
