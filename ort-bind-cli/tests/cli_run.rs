//! `ort-bind run`: the CLI binary on fixture models and on ONNX's backend test data, with
//! inputs from `.npy` and `.pb` files, outputs written as `.npy`, and `--expect` comparisons
//! that set the exit code.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ort_bind_cli::data::{npy, tensor_proto};
use ort_bind_runtime::HostArray;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../ort-bind-tests/tests/fixtures")
        .join(name)
}

/// A fresh folder under the target directory for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cli_run-{test}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn ort_bind(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ort-bind"))
        .args(args)
        .output()
        .expect("the ort-bind binary runs")
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn write_npy(path: &Path, array: &HostArray) {
    assert_eq!(npy::write(path, array.view()).unwrap(), None);
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn runs_add_from_npy_and_pb_and_writes_npy() {
    let dir = scratch("add");
    let x = dir.join("x.npy");
    let y = dir.join("y.pb");
    write_npy(
        &x,
        &HostArray::from_vec(vec![4], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap(),
    );
    let y_array = HostArray::from_vec(vec![4], vec![10.0f32, 20.0, 30.0, 40.0]).unwrap();
    tensor_proto::write(&y, "y", y_array.view()).unwrap();
    let out_dir = dir.join("out");

    let out = ort_bind(&[
        "run",
        s(&fixture("add.onnx")),
        "--input",
        &format!("x={}", s(&x)),
        "--input",
        &format!("y={}", s(&y)),
        "--out",
        s(&out_dir),
    ]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("output `sum`: float32 [4]"), "{stdout}");
    let sum = npy::read(out_dir.join("sum.npy")).unwrap();
    assert_eq!(sum.dims(), &[4]);
    assert_eq!(
        sum.as_slice::<f32>(),
        Some(&[11.0f32, 22.0, 33.0, 44.0][..])
    );

    // The same inputs with another batch size: dims come from the files.
    write_npy(
        &x,
        &HostArray::from_vec(vec![2], vec![0.5f32, 1.5]).unwrap(),
    );
    write_npy(
        &dir.join("y2.npy"),
        &HostArray::from_vec(vec![2], vec![1.0f32, 1.0]).unwrap(),
    );
    let out = ort_bind(&[
        "run",
        s(&fixture("add.onnx")),
        "-i",
        &format!("x={}", s(&x)),
        "-i",
        &format!("y={}", s(&dir.join("y2.npy"))),
        "-o",
        s(&out_dir),
    ]);
    assert!(out.status.success(), "{:?}", text(&out));
    let sum = npy::read(out_dir.join("sum.npy")).unwrap();
    assert_eq!(sum.as_slice::<f32>(), Some(&[1.5f32, 2.5][..]));
}

#[test]
fn expect_sets_the_exit_code() {
    let dir = scratch("expect");
    let x = dir.join("x.npy");
    let y = dir.join("y.npy");
    write_npy(
        &x,
        &HostArray::from_vec(vec![3], vec![1.0f32, 2.0, 3.0]).unwrap(),
    );
    write_npy(
        &y,
        &HostArray::from_vec(vec![3], vec![10.0f32, 20.0, 30.0]).unwrap(),
    );
    let good = dir.join("good.npy");
    write_npy(
        &good,
        &HostArray::from_vec(vec![3], vec![11.0f32, 22.0, 33.005]).unwrap(),
    );
    let bad = dir.join("bad.npy");
    write_npy(
        &bad,
        &HostArray::from_vec(vec![3], vec![11.0f32, 22.5, 33.0]).unwrap(),
    );
    let inputs = [format!("x={}", s(&x)), format!("y={}", s(&y))];
    let model = fixture("add.onnx");
    let run = |expect: &Path, extra: &[&str]| {
        let expect = format!("sum={}", s(expect));
        let mut args = vec!["run", s(&model)];
        for i in &inputs {
            args.extend(["--input", i.as_str()]);
        }
        args.extend(["--expect", expect.as_str()]);
        args.extend(extra);
        ort_bind(&args)
    };

    // 33.005 vs 33: within rtol 1e-3.
    let out = run(&good, &[]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("match    `sum`"), "{stdout}");

    // ... but not with a tighter rtol.
    let out = run(&good, &["--rtol", "1e-6"]);
    assert_eq!(out.status.code(), Some(1), "{:?}", text(&out));

    let out = run(&bad, &[]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("MISMATCH `sum`: 1 of 3 values differ"),
        "{stdout}"
    );
    assert!(
        stdout.contains("first at [1]: 22 where 22.5 was expected"),
        "{stdout}"
    );
    assert!(
        stderr.contains("1 of 1 expected outputs differ"),
        "{stderr}"
    );
}

#[test]
fn bad_invocations_are_clear_errors() {
    let dir = scratch("errors");
    let x = dir.join("x.npy");
    write_npy(
        &x,
        &HostArray::from_vec(vec![2], vec![1.0f32, 2.0]).unwrap(),
    );
    let ints = dir.join("ints.npy");
    write_npy(&ints, &HostArray::from_vec(vec![2], vec![1i64, 2]).unwrap());
    let wrong_rank = dir.join("rank.npy");
    write_npy(
        &wrong_rank,
        &HostArray::from_vec(vec![1, 2], vec![1.0f32, 2.0]).unwrap(),
    );
    let model = fixture("add.onnx");
    let xi = format!("x={}", s(&x));
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec![xi.clone()], "no --input for `y` float32[?]"),
        (
            vec![xi.clone(), format!("z={}", s(&x))],
            "the model has no input `z`; its inputs: `x` float32[?], `y` float32[?]",
        ),
        (
            vec![xi.clone(), format!("y={}", s(&ints))],
            "input `y` is float32 in the model, the data is int64",
        ),
        (
            vec![xi.clone(), format!("y={}", s(&wrong_rank))],
            "rank 2 where the model declares rank 1",
        ),
        (vec![xi.clone(), xi.clone()], "--input x is given twice"),
        (vec![s(&x).to_owned()], "expected NAME=FILE"),
        (
            vec![xi.clone(), format!("y={}", s(&dir.join("missing.npy")))],
            "missing.npy",
        ),
        (
            vec![xi.clone(), "y=data.txt".to_owned()],
            "unknown tensor file type",
        ),
    ];
    for (inputs, want) in cases {
        let mut args = vec!["run".to_owned(), s(&model).to_owned()];
        for i in inputs {
            args.extend(["--input".to_owned(), i]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = ort_bind(&args);
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stdout}\n{stderr}");
        assert!(
            stderr.contains(want),
            "{args:?}: want {want:?} in:\n{stderr}"
        );
    }
    let out = ort_bind(&[
        "run",
        s(&model),
        "--input",
        &xi,
        "--input",
        &xi.replace("x=", "y="),
        "--expect",
        &format!("total={}", s(&x)),
    ]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr.contains("the model has no output `total`; its outputs: `sum` float32[?]"),
        "{stderr}"
    );
}

/// ONNX's own test data: a model, its `input_N.pb` and its expected `output_N.pb`. One case
/// has a dynamic input dim (taken from the file) and an int64 scalar output, the other two
/// outputs.
#[test]
fn runs_onnx_backend_test_data() {
    const PREFIX: &str = "onnx/backend/test/data/";
    const CASES: [&str; 2] = [
        "simple/test_sequence_model8",
        "pytorch-operator/test_operator_chunk",
    ];
    // The two cases only, from the same wheel the conformance tests use (pip runs once).
    let root = ort_bind_fetch::WheelCache::new("onnx==1.23.2", "onnx-1.23.2-cli-cases")
        .keep(|name| {
            CASES
                .iter()
                .any(|c| name.starts_with(&format!("{PREFIX}{c}/")))
        })
        .get()
        .expect("ONNX's backend test data (the onnx==1.23.2 wheel, fetched with pip)")
        .join(PREFIX);
    for case in CASES {
        let case_dir = root.join(case);
        let set = case_dir.join("test_data_set_0");
        let out_dir = scratch(&case.replace('/', "-")).join("out");
        let model = case_dir.join("model.onnx");
        let sig = ort_bind_codegen::read_signature(&model).unwrap();
        let mut args = vec![
            "run".to_owned(),
            s(&model).to_owned(),
            "--out".to_owned(),
            s(&out_dir).to_owned(),
        ];
        for (i, input) in sig.inputs.iter().enumerate() {
            args.push("--input".into());
            args.push(format!(
                "{}={}",
                input.name,
                s(&set.join(format!("input_{i}.pb")))
            ));
        }
        for (i, output) in sig.outputs.iter().enumerate() {
            args.push("--expect".into());
            args.push(format!(
                "{}={}",
                output.name,
                s(&set.join(format!("output_{i}.pb")))
            ));
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = ort_bind(&args);
        let (stdout, stderr) = text(&out);
        assert!(out.status.success(), "{case}: {stdout}\n{stderr}");
        for (i, output) in sig.outputs.iter().enumerate() {
            let name = &output.name;
            assert!(
                stdout.contains(&format!("match    `{name}`")),
                "{case}: {stdout}"
            );
            let written = npy::read(out_dir.join(format!("{name}.npy"))).unwrap();
            let (_, expected) = tensor_proto::read(set.join(format!("output_{i}.pb"))).unwrap();
            ort_bind_cli::data::compare(
                written.view(),
                expected.view(),
                ort_bind_cli::data::Tolerance::ONNX_BACKEND,
            )
            .unwrap_or_else(|m| panic!("{case} output `{name}`: {m}"));
        }
    }
}

/// `generate` prints exactly the module `ort_bind_codegen::Builder` returns, which is what
/// a `build.rs` writes (the test crate checks that half).
#[test]
fn generate_prints_what_the_builder_returns() {
    let model = fixture("messy.onnx");
    let out = ort_bind(&["generate", s(&model)]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let modules = ort_bind_codegen::Builder::new()
        .model(&model)
        .generate()
        .unwrap();
    assert_eq!(stdout, modules[0].source);
}
