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

/// The folder `prefix` of the onnx==1.23.2 wheel with only the case folders `cases` in it,
/// kept in the cache folder `folder` (pip runs once).
fn backend_cases(folder: &str, prefix: &'static str, cases: &'static [&'static str]) -> PathBuf {
    ort_bind_fetch::WheelCache::new("onnx==1.23.2", folder)
        .keep(move |name| {
            cases
                .iter()
                .any(|c| name.starts_with(&format!("{prefix}{c}/")))
        })
        .get()
        .expect("ONNX's backend test data (the onnx==1.23.2 wheel, fetched with pip)")
        .join(prefix)
}

/// `run MODEL` with `--input NAME=set/input_N.pb` for every input of `sig` and
/// `--expect NAME=set/output_N.pb` for every output, as ONNX lays out a data set.
fn data_set_args(model: &Path, sig: &ort_bind_codegen::ModelSignature, set: &Path) -> Vec<String> {
    let mut args = vec!["run".to_owned(), s(model).to_owned()];
    for (flag, prefix, values) in [
        ("--input", "input", &sig.inputs),
        ("--expect", "output", &sig.outputs),
    ] {
        for (i, v) in values.iter().enumerate() {
            args.push(flag.to_owned());
            args.push(format!(
                "{}={}",
                v.name,
                s(&set.join(format!("{prefix}_{i}.pb")))
            ));
        }
    }
    args
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
    let root = backend_cases("onnx-1.23.2-cli-cases", PREFIX, &CASES);
    for case in CASES {
        let case_dir = root.join(case);
        let set = case_dir.join("test_data_set_0");
        let out_dir = scratch(&case.replace('/', "-")).join("out");
        let model = case_dir.join("model.onnx");
        let sig = ort_bind_codegen::read_signature(&model).unwrap();
        let mut args = data_set_args(&model, &sig, &set);
        args.extend(["--out".to_owned(), s(&out_dir).to_owned()]);
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

fn runtime_model(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../ort-bind-runtime/tests/data")
        .join(name)
        .display()
        .to_string()
}

mod values {
    use super::*;
    use ort_bind_cli::data::{self, Tolerance};
    use ort_bind_runtime::{DynMap, DynValue, Strings};

    fn f32s(dims: &[usize], v: &[f32]) -> DynValue {
        DynValue::Tensor(HostArray::from_vec(dims.to_vec(), v.to_vec()).unwrap())
    }

    fn strs(items: &[&str]) -> DynValue {
        DynValue::Strings(Strings::from_strs(&[items.len()], items).unwrap())
    }

    fn put(dir: &Path, file: &str, value: &DynValue) -> String {
        let path = dir.join(file);
        data::write_value(&path, "v", value).unwrap();
        path.display().to_string()
    }

    fn run_ok(args: &[&str]) -> String {
        let out = ort_bind(args);
        let (stdout, stderr) = text(&out);
        assert!(out.status.success(), "{args:?}\n{stdout}\n{stderr}");
        stdout
    }

    #[test]
    fn strings_in_npy_and_pb_out_as_npy() {
        let dir = scratch("strings");
        let a = put(&dir, "a.npy", &strs(&["x", "héllo"]));
        let b = put(&dir, "b.pb", &strs(&["1", "2"]));
        let joined = put(&dir, "joined.npy", &strs(&["x1", "héllo2"]));
        let wrong = put(&dir, "wrong.pb", &strs(&["x1", "hello2"]));
        let out = dir.join("out");
        let model = runtime_model("strings.onnx");
        let stdout = run_ok(&[
            "run",
            &model,
            "--input",
            &format!("a={a}"),
            "--input",
            &format!("b={b}"),
            "--expect",
            &format!("joined={joined}"),
            "--out",
            s(&out),
        ]);
        assert!(stdout.contains("output `joined`: string[2]"), "{stdout}");
        assert!(stdout.contains("match    `joined`"), "{stdout}");
        let echo = data::read_value(out.join("echo.npy"), None).unwrap();
        assert_eq!(echo, strs(&["x", "héllo"]));

        let res = ort_bind(&[
            "run",
            &model,
            "--input",
            &format!("a={a}"),
            "--input",
            &format!("b={b}"),
            "--expect",
            &format!("joined={wrong}"),
        ]);
        let (stdout, _) = text(&res);
        assert_eq!(res.status.code(), Some(1));
        assert!(
            stdout.contains("1 of 2 strings differ; first at [1]: \"héllo2\" where \"hello2\""),
            "{stdout}"
        );

        // numpy object arrays are refused with a way out.
        let obj = dir.join("obj.npy");
        let mut header = "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }".to_owned();
        while !(10 + header.len() + 1).is_multiple_of(64) {
            header.push(' ');
        }
        header.push('\n');
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
        bytes.extend_from_slice(header.as_bytes());
        bytes.extend_from_slice(&[0x80, 0x02]);
        std::fs::write(&obj, bytes).unwrap();
        let res = ort_bind(&[
            "run",
            &model,
            "--input",
            &format!("a={}", s(&obj)),
            "--input",
            &format!("b={b}"),
        ]);
        let (_, stderr) = text(&res);
        assert_eq!(res.status.code(), Some(1));
        assert!(stderr.contains("arr.astype(str)"), "{stderr}");
    }

    #[test]
    fn sequences_maps_and_optionals_as_pb() {
        let dir = scratch("containers");
        let out = dir.join("out");

        // Sequences: a SequenceProto input, SequenceProto expectations.
        let x = put(&dir, "x.npy", &f32s(&[3], &[1.0, 2.0, 3.0]));
        let y = put(&dir, "y.npy", &f32s(&[2], &[4.0, 5.0]));
        let seq = put(
            &dir,
            "s.pb",
            &DynValue::Sequence(vec![f32s(&[2], &[7.0, 8.0]), f32s(&[1], &[9.0])]),
        );
        let text_in = put(&dir, "text.npy", &strs(&["a", "bc"]));
        let pair = put(
            &dir,
            "pair.pb",
            &DynValue::Sequence(vec![
                f32s(&[3], &[1.0, 2.0, 3.0005]),
                f32s(&[2], &[4.0, 5.0]),
            ]),
        );
        let words = put(
            &dir,
            "words.pb",
            &DynValue::Sequence(vec![strs(&["a"]), strs(&["bc"])]),
        );
        let bad_pair = put(
            &dir,
            "bad_pair.pb",
            &DynValue::Sequence(vec![f32s(&[3], &[1.0, 2.0, 3.0]), f32s(&[2], &[4.0, 6.0])]),
        );
        let model = runtime_model("sequences.onnx");
        let inputs = [
            "--input".to_owned(),
            format!("x={x}"),
            "--input".to_owned(),
            format!("y={y}"),
            "--input".to_owned(),
            format!("s={seq}"),
            "--input".to_owned(),
            format!("text={text_in}"),
        ];
        let mut args: Vec<String> = vec!["run".into(), model.clone()];
        args.extend(inputs.iter().cloned());
        args.extend([
            "--expect".into(),
            format!("pair={pair}"),
            "--expect".into(),
            format!("words={words}"),
            "--out".into(),
            s(&out).into(),
        ]);
        let stdout = run_ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(
            stdout.contains("output `pair`: seq(2 elements)"),
            "{stdout}"
        );
        assert!(
            stdout.contains("match    `pair`") && stdout.contains("match    `words`"),
            "{stdout}"
        );
        let pieces = data::read_value(out.join("pieces.pb"), Some(&seq_type())).unwrap();
        assert_eq!(pieces.as_sequence().unwrap().len(), 3);

        let mut args: Vec<String> = vec!["run".into(), model];
        args.extend(inputs.iter().cloned());
        args.extend(["--expect".into(), format!("pair={bad_pair}")]);
        let res = ort_bind(&args.iter().map(String::as_str).collect::<Vec<_>>());
        let (stdout, _) = text(&res);
        assert_eq!(res.status.code(), Some(1));
        assert!(
            stdout.contains("MISMATCH `pair`: [1]: 1 of 2 values differ"),
            "{stdout}"
        );

        // Maps: a MapProto input; ZipMap's sequence of maps compared by key.
        let probs = put(&dir, "probs.npy", &f32s(&[1, 3], &[0.1, 0.2, 0.7]));
        let m = put(
            &dir,
            "m.pb",
            &DynValue::Map(DynMap::new(strs(&["c", "a"]), f32s(&[2], &[3.0, 1.0])).unwrap()),
        );
        let by_name = put(
            &dir,
            "by_name.pb",
            &DynValue::Sequence(vec![DynValue::Map(
                DynMap::new(strs(&["eel", "cat", "dog"]), f32s(&[3], &[0.7, 0.1, 0.2])).unwrap(),
            )]),
        );
        let stdout = run_ok(&[
            "run",
            &runtime_model("maps.onnx"),
            "--input",
            &format!("probs={probs}"),
            "--input",
            &format!("m={m}"),
            "--expect",
            &format!("by_name={by_name}"),
            "--out",
            s(&out),
        ]);
        assert!(stdout.contains("match    `by_name`"), "{stdout}");
        assert!(
            stdout.contains("output `m`: map(string -> float32, 2 entries)"),
            "{stdout}"
        );
        let map_ty = ort_bind_runtime::ValueType::Map {
            key: ort_bind_runtime::ElementType::String,
            value: ort_bind_runtime::ElementType::Numeric(ort_bind_runtime::NumericType::F32),
        };
        let echoed = data::read_value(out.join("m.pb"), Some(&map_ty)).unwrap();
        let want = DynValue::Map(DynMap::new(strs(&["a", "c"]), f32s(&[2], &[1.0, 3.0])).unwrap());
        assert_eq!(
            data::compare_values(&echoed, &want, Tolerance::EXACT),
            Ok(())
        );

        // Optionals: an OptionalProto without a value in, `none` compared with one.
        let x2 = put(&dir, "x2.npy", &f32s(&[2], &[1.0, 2.0]));
        let o = put(&dir, "o.pb", &DynValue::Optional(None));
        let none = put(&dir, "none.pb", &DynValue::Optional(None));
        let some = put(
            &dir,
            "some.pb",
            &DynValue::Optional(Some(Box::new(f32s(&[2], &[1.0, 2.0])))),
        );
        let has = put(
            &dir,
            "has.npy",
            &DynValue::Tensor(HostArray::from_vec(vec![], vec![false]).unwrap()),
        );
        let stdout = run_ok(&[
            "run",
            &runtime_model("optionals.onnx"),
            "--input",
            &format!("x={x2}"),
            "--input",
            &format!("o={o}"),
            "--expect",
            &format!("none={none}"),
            "--expect",
            &format!("some={some}"),
            "--expect",
            &format!("has={has}"),
        ]);
        assert!(stdout.contains("output `none`: optional(none)"), "{stdout}");
        assert_eq!(stdout.matches("match    `").count(), 3, "{stdout}");
    }

    /// Empty sequences in (an empty `SequenceProto`, which ort-bind makes with ONNX's
    /// `SequenceEmpty`) and out, compared with `--expect` (what `node/test_loop13_seq` needs).
    #[test]
    fn empty_sequences_as_pb() {
        let dir = scratch("empty_sequences");
        let empty = DynValue::Sequence(vec![]);
        let s_in = put(&dir, "s.pb", &empty);
        let t_in = put(&dir, "t.pb", &empty);
        let x = put(&dir, "x.npy", &f32s(&[2], &[1.0, 2.0]));
        let s_echo = put(&dir, "s_echo.pb", &empty);
        let t_echo = put(&dir, "t_echo.pb", &empty);
        let grown = put(
            &dir,
            "grown.pb",
            &DynValue::Sequence(vec![f32s(&[2], &[1.0, 2.0])]),
        );
        let zero = put(
            &dir,
            "zero.npy",
            &DynValue::Tensor(HostArray::from_vec(vec![], vec![0i64]).unwrap()),
        );
        let args = [
            "run".to_owned(),
            runtime_model("empties.onnx"),
            "--input".into(),
            format!("s={s_in}"),
            "--input".into(),
            format!("t={t_in}"),
            "--input".into(),
            format!("x={x}"),
            "--expect".into(),
            format!("s_echo={s_echo}"),
            "--expect".into(),
            format!("t_echo={t_echo}"),
            "--expect".into(),
            format!("made={s_echo}"),
            "--expect".into(),
            format!("grown={grown}"),
            "--expect".into(),
            format!("s_count={zero}"),
            "--expect".into(),
            format!("t_count={zero}"),
        ];
        let stdout = run_ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(
            stdout.contains("output `s_echo`: seq(0 elements)"),
            "{stdout}"
        );
        assert_eq!(stdout.matches("match    `").count(), 6, "{stdout}");

        // An empty expectation where the run gives an element is a mismatch.
        let mut args = args[..8].to_vec();
        args.extend(["--expect".into(), format!("grown={s_echo}")]);
        let res = ort_bind(&args.iter().map(String::as_str).collect::<Vec<_>>());
        let (stdout, _) = text(&res);
        assert_eq!(res.status.code(), Some(1), "{stdout}");
        assert!(stdout.contains("MISMATCH `grown`"), "{stdout}");
    }

    fn seq_type() -> ort_bind_runtime::ValueType {
        ort_bind_runtime::ValueType::Sequence(Box::new(ort_bind_runtime::ValueType::Tensor {
            elem: ort_bind_runtime::ElementType::Numeric(ort_bind_runtime::NumericType::F32),
            dims: vec![None],
        }))
    }
}

/// ONNX's model-level cases with sequences and string tensors (the `simple` group): every
/// `test_sequence_model*` (SequenceProto inputs and outputs) and the string-normalizer cases
/// ONNX Runtime can load here (the others need the `en_US.UTF-8` locale, which these
/// machines lack: they fail identically in Python onnxruntime).
#[test]
fn runs_onnx_sequence_and_string_models() {
    const PREFIX: &str = "onnx/backend/test/data/simple/";
    const CASES: [&str; 10] = [
        "test_sequence_model1",
        "test_sequence_model2",
        "test_sequence_model3",
        "test_sequence_model4",
        "test_sequence_model5",
        "test_sequence_model6",
        "test_sequence_model7",
        "test_sequence_model8",
        "test_strnorm_model_monday_casesensintive_nochangecase",
        "test_strnorm_model_nostopwords_nochangecase",
    ];
    let root = backend_cases("onnx-1.23.2-cli-values", PREFIX, &CASES);
    for case in CASES {
        let case_dir = root.join(case);
        let set = case_dir.join("test_data_set_0");
        let model = case_dir.join("model.onnx");
        let sig = ort_bind_codegen::read_signature(&model).unwrap();
        let args = data_set_args(&model, &sig, &set);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = ort_bind(&args);
        let (stdout, stderr) = text(&out);
        assert!(out.status.success(), "{case}: {stdout}\n{stderr}");
        assert_eq!(
            stdout.matches("match    `").count(),
            sig.outputs.len(),
            "{case}: {stdout}"
        );
    }
}

/// ONNX's node cases of the narrow element types (`tests/fixtures/narrow_node_cases`),
/// through `ort-bind run --expect`: packed inputs (`int4`, `uint2`) and float8 inputs read
/// from `.pb` files onnx wrote, a float8
/// output written as `.pb` by `--out` and compared, and a packed `int4` output that
/// differs from ONNX's expected data where ONNX Runtime 1.31.1 wraps out-of-range values
/// (`-9 -> 7`) and the data says 0. Python onnxruntime 1.31.1 fails all of them at run
/// time, before ONNX Runtime runs anything, because its numpy bridge cannot convert these
/// types (`Numpy_type 273 can't be converted to MLDataType`, see
/// `ort-bind-tests/tests/reference/node_python_failures.txt`); no narrow-typed node case
/// passes in Python, so these are the ones ONNX Runtime itself loads and runs.
#[test]
fn runs_onnx_node_cases_of_narrow_types() {
    const PASS: [&str; 4] = [
        "test_castlike_INT4_to_INT8",
        "test_castlike_UINT2_to_FLOAT",
        "test_castlike_FLOAT8E5M2_to_FLOAT",
        "test_castlike_FLOAT_to_FLOAT8E4M3FN",
    ];
    const WRAPS: &str = "test_castlike_FLOAT_to_INT4";
    // Committed copies of the cases (see the folder's README).
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/narrow_node_cases");
    // CastLike(input, like): both inputs and the output from the case's files.
    let run_case = |case: &str| {
        let set = root.join(case).join("test_data_set_0");
        let out_dir = scratch(case).join("out");
        let model = root.join(case).join("model.onnx");
        let file = |f: &str| s(&set.join(f)).to_owned();
        let args = [
            "run".to_owned(),
            s(&model).to_owned(),
            "--input".into(),
            format!("input={}", file("input_0.pb")),
            "--input".into(),
            format!("like={}", file("input_1.pb")),
            "--expect".into(),
            format!("output={}", file("output_0.pb")),
            "--out".into(),
            s(&out_dir).to_owned(),
        ];
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = ort_bind(&args);
        let (stdout, stderr) = text(&out);
        (out.status.success(), stdout, stderr, out_dir, set)
    };
    for case in PASS {
        let (ok, stdout, stderr, out_dir, set) = run_case(case);
        assert!(ok, "{case}: {stdout}\n{stderr}");
        assert!(stdout.contains("match    `output`"), "{case}: {stdout}");
        let (_, expected) = tensor_proto::read(set.join("output_0.pb")).unwrap();
        // Narrow outputs are written as `.pb` (numpy has no dtype for them).
        let narrow = !npy::holds(expected.dtype());
        let written = if narrow {
            assert!(!out_dir.join("output.npy").exists(), "{case}");
            tensor_proto::read(out_dir.join("output.pb")).unwrap().1
        } else {
            npy::read(out_dir.join("output.npy")).unwrap()
        };
        ort_bind_cli::data::compare(
            written.view(),
            expected.view(),
            ort_bind_cli::data::Tolerance::EXACT,
        )
        .unwrap_or_else(|m| panic!("{case}: {m}"));
        if case == "test_castlike_FLOAT_to_FLOAT8E4M3FN" {
            assert!(
                narrow && stdout.contains("output `output`: float8e4m3fn [3, 5] -> "),
                "{stdout}"
            );
        }
    }

    let (ok, stdout, _, out_dir, _) = run_case(WRAPS);
    assert!(!ok, "{stdout}");
    assert!(
        stdout.contains(
            "MISMATCH `output`: 9 of 25 values differ beyond rtol 0.001 / atol 0.0000001; first \
             at [0, 0]: 7 where 0 was expected"
        ),
        "{stdout}"
    );
    // The int4 output ONNX Runtime wrote: 25 elements in 13 bytes, -9..=15 wrapped to 4 bits.
    let (name, written) = tensor_proto::read(out_dir.join("output.pb")).unwrap();
    assert_eq!(
        (name.as_str(), written.dims()),
        ("output", &[5usize, 5][..])
    );
    assert_eq!(written.data().len(), 13);
    let values: Vec<f64> = (0..25)
        .map(|i| written.view().data().get_f64(i).unwrap())
        .collect();
    let wrapped: Vec<f64> = (-9..=15)
        .map(|v: i32| f64::from(((v + 8).rem_euclid(16)) - 8))
        .collect();
    assert_eq!(values, wrapped);
}

/// `--timeout-ms`: a run past it is stopped and the command fails naming the timeout; a
/// timeout the run fits in changes nothing. On the runtime's `slow.onnx` (64 MatMul+Tanh
/// over `[m, 256]`, about 0.24 s at m = 2048 with one intra-op thread).
#[test]
fn timeout_ms_stops_a_long_run() {
    let dir = scratch("timeout");
    let model =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../ort-bind-runtime/tests/data/slow.onnx");
    let x = dir.join("x.npy");
    write_npy(
        &x,
        &HostArray::from_vec(vec![2048, 256], vec![0.25f32; 2048 * 256]).unwrap(),
    );
    let input = format!("x={}", s(&x));
    let run = |timeout: &str| {
        ort_bind(&[
            "run",
            s(&model),
            "--threads",
            "1",
            "--input",
            &input,
            "--timeout-ms",
            timeout,
        ])
    };
    let out = run("5");
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stderr.contains("--timeout-ms 5"), "{stderr}");
    assert!(
        stderr.contains("did not finish within 5ms and was stopped"),
        "{stderr}"
    );
    assert!(!stdout.contains("output `y`"), "{stdout}");

    let out = run("600000");
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("output `y`: float32 [2048, 256]"),
        "{stdout}"
    );
}
