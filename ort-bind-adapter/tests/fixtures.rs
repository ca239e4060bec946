//! The adapter files that ONNX Runtime's own writer produced (`make_lora.py`, in
//! `ort-bind-tests/tests/fixtures/lora/`), read back and compared with the manifest the
//! script wrote beside them (`expected.json`, key `adapters`).

mod common;

use common::{ADAPTERS, fixture};
use ort_bind_adapter::{AdapterView, FORMAT_VERSION, Parameter, read};
use serde_json::Value;

fn manifest() -> Value {
    serde_json::from_slice(&fixture("expected.json")).expect("expected.json is JSON")
}

/// The parameter's elements as f64 (float32 and int32 are the element types the fixtures use).
fn values(p: &Parameter<'_>) -> Vec<f64> {
    let words = p.data.chunks_exact(4).map(|c| [c[0], c[1], c[2], c[3]]);
    match p.element {
        1 => words.map(|w| f64::from(f32::from_le_bytes(w))).collect(),
        6 => words.map(|w| f64::from(i32::from_le_bytes(w))).collect(),
        other => panic!("{}: element {other} is not in the fixtures", p.name),
    }
}

fn int(v: &Value) -> i64 {
    v.as_i64()
        .unwrap_or_else(|| panic!("{v} is not an integer"))
}

#[test]
fn every_adapter_matches_the_manifest() {
    let manifest = manifest();
    for file in ADAPTERS {
        let bytes = fixture(file);
        let adapter = read(&bytes).unwrap_or_else(|e| panic!("{file}: {e}"));
        let want = &manifest["adapters"][file];
        assert_eq!(
            i64::from(adapter.format_version),
            int(&want["format_version"]),
            "{file}"
        );
        assert_eq!(adapter.format_version, FORMAT_VERSION, "{file}");
        assert_eq!(
            i64::from(adapter.adapter_version),
            int(&want["adapter_version"]),
            "{file}"
        );
        assert_eq!(
            i64::from(adapter.model_version),
            int(&want["model_version"]),
            "{file}"
        );
        let want_params = want["parameters"].as_array().expect("parameters");
        assert_eq!(adapter.parameters.len(), want_params.len(), "{file}");
        for wp in want_params {
            let name = wp["name"].as_str().expect("name");
            let p = adapter
                .parameter(name)
                .unwrap_or_else(|| panic!("{file}: no parameter {name}"));
            let dims: Vec<i64> = wp["dims"]
                .as_array()
                .expect("dims")
                .iter()
                .map(int)
                .collect();
            assert_eq!(p.dims, dims, "{file} {name}");
            assert_eq!(i64::from(p.element), int(&wp["element"]), "{file} {name}");
            assert_eq!(p.data.len() as i64, int(&wp["bytes"]), "{file} {name}");
            let got = values(p);
            assert_eq!(Some(got.len()), p.element_count(), "{file} {name}");
            let first: Vec<f64> = wp["first"]
                .as_array()
                .expect("first")
                .iter()
                .map(|v| v.as_f64().expect("a number"))
                .collect();
            // The float32 values went to JSON as their exact doubles; serde_json's default
            // parsing may miss a double by an ulp, which still rounds to the same float32.
            let as_f32 = |v: &[f64]| v.iter().map(|&x| x as f32).collect::<Vec<_>>();
            assert_eq!(as_f32(&got[..first.len()]), as_f32(&first), "{file} {name}");
            let sum: f64 = got.iter().sum();
            let want_sum = wp["sum"].as_f64().expect("sum");
            assert!(
                (sum - want_sum).abs() < 1e-9,
                "{file} {name}: {sum} vs {want_sum}"
            );
        }
    }
}

fn dims_of<'a>(adapter: &AdapterView<'a>) -> Vec<(&'a str, Vec<i64>, i32)> {
    let mut all: Vec<_> = adapter
        .parameters
        .iter()
        .map(|p| (p.name, p.dims.clone(), p.element))
        .collect();
    all.sort();
    all
}

fn lora(rank: i64) -> Vec<(&'static str, Vec<i64>, i32)> {
    vec![
        ("lora_a.0", vec![8, rank], 1),
        ("lora_a.1", vec![8, rank], 1),
        ("lora_b.0", vec![rank, 8], 1),
        ("lora_b.1", vec![rank, 4], 1),
    ]
}

#[test]
fn each_adapter_is_what_make_lora_py_says() {
    let math = fixture("math.onnx_adapter");
    let math = read(&math).unwrap();
    assert_eq!((math.adapter_version, math.model_version), (1, 3));
    assert_eq!(dims_of(&math), lora(2));

    let code = fixture("code.onnx_adapter");
    let code = read(&code).unwrap();
    assert_eq!((code.adapter_version, code.model_version), (2, 3));
    assert_eq!(dims_of(&code), lora(4));

    let wide = fixture("wide.onnx_adapter");
    let mut want = lora(2);
    want[0].1 = vec![16, 2];
    assert_eq!(dims_of(&read(&wide).unwrap()), want);

    let unknown = fixture("unknown.onnx_adapter");
    let mut want = lora(2);
    want.push(("lora_c.0", vec![8, 2], 1));
    assert_eq!(dims_of(&read(&unknown).unwrap()), want);

    let mixed = fixture("mixed_rank.onnx_adapter");
    let mut want = lora(2);
    want[2].1 = vec![3, 8];
    assert_eq!(dims_of(&read(&mixed).unwrap()), want);

    let int_typed = fixture("int_typed.onnx_adapter");
    let mut want = lora(2);
    want[0].2 = 6;
    assert_eq!(dims_of(&read(&int_typed).unwrap()), want);
}

#[test]
fn data_is_borrowed_from_the_file() {
    let bytes = fixture("code.onnx_adapter");
    let adapter = read(&bytes).unwrap();
    let file = bytes.as_ptr_range();
    for p in &adapter.parameters {
        let data = p.data.as_ptr_range();
        assert!(
            file.start <= data.start && data.end <= file.end,
            "{}",
            p.name
        );
        let name = p.name.as_bytes().as_ptr_range();
        assert!(
            file.start <= name.start && name.end <= file.end,
            "{}",
            p.name
        );
    }
}
