//! Reads the checked-in fixtures under `tests/fixtures/` (written by the `onnx` Python
//! package through `make_fixtures.py`) and checks their signatures.

use std::path::PathBuf;

use ort_bind_codegen::__private::model::signature_from_bytes;
use ort_bind_codegen::{Dim, ElementType, ModelError, ModelSignature, ValueType, read_signature};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../ort-bind-tests/tests/fixtures")
        .join(name)
}

fn read(name: &str) -> ModelSignature {
    read_signature(fixture(name)).unwrap_or_else(|e| panic!("{e}"))
}

fn named(s: &str) -> Dim {
    Dim::Named(s.to_owned())
}

/// `(elem, dims)` of an input or output; panics when it is absent or unsupported.
fn tensor(sig: &ModelSignature, name: &str) -> (ElementType, Option<Vec<Dim>>) {
    let v = sig
        .input(name)
        .or_else(|| sig.output(name))
        .unwrap_or_else(|| panic!("no value `{name}`"));
    match &v.kind {
        ValueType::Tensor { elem, dims } => (*elem, dims.clone()),
        other => panic!("`{name}` is not a tensor: {other}"),
    }
}

fn input_names(sig: &ModelSignature) -> Vec<&str> {
    sig.inputs.iter().map(|v| v.name.as_str()).collect()
}

fn output_names(sig: &ModelSignature) -> Vec<&str> {
    sig.outputs.iter().map(|v| v.name.as_str()).collect()
}

#[test]
fn add() {
    let sig = read("add.onnx");
    assert_eq!(input_names(&sig), ["x", "y"]);
    assert_eq!(output_names(&sig), ["sum"]);
    for n in ["x", "y", "sum"] {
        assert_eq!(
            tensor(&sig, n),
            (ElementType::F32, Some(vec![named("n")])),
            "{n}"
        );
    }
    assert_eq!(sig.ir_version, 8);
    assert_eq!(sig.default_opset(), Some(17));
    assert_eq!(sig.producer_name, "ort-bind make_fixtures.py");
    assert_eq!(sig.producer_version, "1");
    assert_eq!(sig.graph_name, "add");
    assert!(sig.doc_string.starts_with("sum = x + y"));
    assert_eq!(sig.inputs[0].doc_string, "first addend");
    assert_eq!(
        sig.metadata,
        [
            ("fixture".to_owned(), "add".to_owned()),
            ("made_by".to_owned(), "make_fixtures.py".to_owned())
        ]
    );
}

#[test]
fn add16() {
    let sig = read("add16.onnx");
    for n in ["a", "b", "out"] {
        assert_eq!(
            tensor(&sig, n),
            (ElementType::F32, Some(vec![Dim::Fixed(16)]))
        );
    }
}

#[test]
fn messy() {
    let sig = read("messy.onnx");
    assert_eq!(
        input_names(&sig),
        [
            "gpu_0/data_0",
            "type",
            "1x",
            "save_infer_model/scale_0.tmp_1",
            "a.b",
            "a/b",
            "step",
            "half"
        ]
    );
    assert_eq!(
        output_names(&sig),
        [
            "gpu_0/softmax_1",
            "sigmoid_0.tmp_0",
            "out/1x",
            "save_infer_model/scale_1.tmp_1",
            "a_b",
            "self",
            "half_out"
        ]
    );
    let f32 = ElementType::F32;
    assert_eq!(
        tensor(&sig, "gpu_0/data_0"),
        (f32, Some(vec![named("batch"), Dim::Fixed(3)]))
    );
    assert_eq!(tensor(&sig, "type"), (f32, Some(vec![Dim::Dynamic])));
    assert_eq!(tensor(&sig, "1x"), (f32, Some(vec![Dim::Dynamic])));
    assert_eq!(
        tensor(&sig, "save_infer_model/scale_0.tmp_1"),
        (f32, Some(vec![Dim::Fixed(2), Dim::Dynamic]))
    );
    assert_eq!(tensor(&sig, "a.b"), (f32, Some(vec![Dim::Fixed(4)])));
    assert_eq!(tensor(&sig, "a/b"), (f32, Some(vec![Dim::Fixed(4)])));
    assert_eq!(tensor(&sig, "step"), (ElementType::I64, Some(vec![])));
    assert_eq!(tensor(&sig, "self"), (ElementType::I64, Some(vec![])));
    assert_eq!(
        tensor(&sig, "half"),
        (ElementType::F16, Some(vec![named("batch"), Dim::Fixed(2)]))
    );
}

#[test]
fn dynamic() {
    let sig = read("dynamic.onnx");
    assert_eq!(input_names(&sig), ["x"]);
    assert_eq!(
        tensor(&sig, "x").1,
        Some(vec![named("batch"), Dim::Fixed(4)])
    );
    assert_eq!(
        tensor(&sig, "y").1,
        Some(vec![named("batch"), Dim::Fixed(3)])
    );
    assert_eq!(tensor(&sig, "z").1, Some(vec![named("N"), Dim::Fixed(3)]));
}

#[test]
fn nonzero() {
    let sig = read("nonzero.onnx");
    assert_eq!(
        tensor(&sig, "x"),
        (ElementType::F32, Some(vec![Dim::Fixed(6)]))
    );
    assert_eq!(
        tensor(&sig, "indices"),
        (ElementType::I64, Some(vec![Dim::Fixed(1), Dim::Dynamic]))
    );
}

#[test]
fn ir3_initializer_listed_as_input_is_not_an_input() {
    let sig = read("ir3_init_as_input.onnx");
    assert_eq!(sig.ir_version, 3);
    assert_eq!(sig.default_opset(), Some(8));
    assert_eq!(input_names(&sig), ["x"]);
    assert_eq!(output_names(&sig), ["y"]);
}

#[test]
fn external_data_is_never_opened() {
    let sig = read("external.onnx");
    assert_eq!(input_names(&sig), ["x"]);
    // The same model without its data file beside it still reads.
    let dir = std::env::temp_dir().join(format!("ort-bind-external-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let copy = dir.join("external.onnx");
    std::fs::copy(fixture("external.onnx"), &copy).expect("copy");
    assert!(!dir.join("external.onnx.data").exists());
    assert_eq!(read_signature(&copy).expect("reads without data"), sig);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn scalar() {
    let sig = read("scalar.onnx");
    assert_eq!(input_names(&sig), ["x"]);
    assert_eq!(tensor(&sig, "x"), (ElementType::F32, Some(vec![])));
    assert_eq!(tensor(&sig, "y"), (ElementType::F32, Some(vec![])));
}

#[test]
fn alltypes() {
    let sig = read("alltypes.onnx");
    assert_eq!(sig.inputs.len(), 13);
    let mut seen = Vec::new();
    for t in ElementType::all().filter(|t| t.is_bindable() && !t.is_narrow()) {
        let name = t.numpy_name();
        assert_eq!(
            tensor(&sig, &format!("x_{name}")),
            (t, Some(vec![Dim::Fixed(2)]))
        );
        assert_eq!(
            tensor(&sig, &format!("y_{name}")),
            (t, Some(vec![Dim::Fixed(2)]))
        );
        seen.push(t);
    }
    assert_eq!(seen.len(), 13);
}

#[test]
fn narrow() {
    // Every narrow type ONNX Runtime 1.31 moves across the graph boundary (float4e2m1
    // has no kernel there), by its ONNX code: float8e8m0 is 24, uint2 25, int2 26.
    let sig = read("narrow.onnx");
    for (name, t) in [
        ("float8e4m3fn", ElementType::F8E4M3FN),
        ("float8e4m3fnuz", ElementType::F8E4M3FNUZ),
        ("float8e5m2", ElementType::F8E5M2),
        ("float8e5m2fnuz", ElementType::F8E5M2FNUZ),
        ("float8e8m0", ElementType::F8E8M0),
        ("int4", ElementType::I4),
        ("uint4", ElementType::U4),
        ("int2", ElementType::I2),
        ("uint2", ElementType::U2),
    ] {
        assert_eq!(
            tensor(&sig, &format!("in_{name}")),
            (t, Some(vec![Dim::Fixed(5)]))
        );
        assert_eq!(tensor(&sig, &format!("q_{name}")).0, t);
        assert_eq!(t.numpy_name(), name);
    }
    assert!(ort_bind_codegen::__private::plan::plan(&sig).is_ok());
}

#[test]
fn state() {
    let sig = read("state.onnx");
    assert_eq!(input_names(&sig), ["x", "state"]);
    assert_eq!(output_names(&sig), ["y", "stateN"]);
    let s = Some(vec![Dim::Fixed(2), Dim::Fixed(1), Dim::Fixed(8)]);
    assert_eq!(tensor(&sig, "state").1, s);
    assert_eq!(tensor(&sig, "stateN").1, s);
    assert_eq!(
        tensor(&sig, "y").1,
        Some(vec![Dim::Fixed(1), Dim::Fixed(8)])
    );
}

#[test]
fn missing_fixture_names_the_path() {
    let err = read_signature(fixture("no-such-model.onnx")).expect_err("missing");
    assert!(matches!(err, ModelError::NotFound { .. }), "{err:?}");
    assert!(err.to_string().contains("no-such-model.onnx"), "{err}");
}

#[test]
fn every_truncation_of_a_real_fixture_is_handled() {
    for name in ["messy.onnx", "dynamic.onnx", "external.onnx"] {
        let bytes = std::fs::read(fixture(name)).expect("fixture");
        for cut in 0..bytes.len() {
            if let Err(e) = signature_from_bytes(&bytes[..cut], name) {
                assert!(e.to_string().contains(name), "{e}");
            }
        }
    }
}
