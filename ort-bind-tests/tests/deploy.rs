//! A deployed program finds its model: a crate outside the workspace that uses `bindings!`
//! is built, its binary copied to an empty folder with `models/` beside it and run from
//! there after the model is gone from the build machine's path; the `embed` variant runs
//! alone; a missing model names every place looked at.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ort_bind_tests::scratch::{self, workspace};

fn base() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("deploy")
}

const MAIN: &str = r#"mod dynamic {
    ort_bind::bindings!("models/dynamic.onnx");
}
fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
fn run() -> ort_bind::Result<()> {
    let model = dynamic::Model::load()?;
    let mut b = model.bind(dynamic::Dims { batch: 1 })?;
    b.inputs().x.copy_from_slice(&[0.5, 0.5, 0.5, 0.5])?;
    b.run()?;
    println!("y = {:?}", b.outputs().y.as_slice());
    Ok(())
}
"#;

/// Builds the scratch crate (binaries `app` and `embedded`) and returns its folder and the
/// folder holding the binaries.
fn build() -> (PathBuf, PathBuf) {
    let app = base().join("app");
    let _ = std::fs::remove_dir_all(&app);
    std::fs::create_dir_all(app.join("src/bin")).unwrap();
    std::fs::create_dir_all(app.join("models")).unwrap();
    std::fs::copy(
        workspace().join("examples/models/dynamic.onnx"),
        app.join("models/dynamic.onnx"),
    )
    .unwrap();
    scratch::write_manifest(&app, "app", "ort-bind", &workspace());
    std::fs::write(app.join("src/main.rs"), MAIN).unwrap();
    std::fs::write(
        app.join("src/bin/embedded.rs"),
        MAIN.replace("\"models/dynamic.onnx\"", "\"models/dynamic.onnx\", embed"),
    )
    .unwrap();
    let target = base().join("target");
    let out = Command::new(env!("CARGO"))
        .args(["build", "--offline", "--quiet", "--bins"])
        .current_dir(&app)
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (app, target.join("debug"))
}

/// Runs `binary` from `dir` with no model-location variables set.
fn run_in(dir: &Path, binary: &Path, envs: &[(&str, &str)]) -> Output {
    Command::new(binary)
        .current_dir(dir)
        .env_remove("ORT_BIND_MODEL_DIR")
        .env_remove("ORT_BIND_MODEL_DYNAMIC")
        .envs(envs.iter().copied())
        .output()
        .unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

const EXPECTED: &str = "y = [0.9, 1.1, 1.3]";

#[test]
fn a_copied_binary_finds_its_model_and_an_embedded_one_needs_none() {
    let (app, bins) = build();
    // The model is gone from where it was at build time.
    std::fs::remove_file(app.join("models/dynamic.onnx")).unwrap();

    // Copied with its model at the same relative path, started from its folder.
    let deployed = base().join("deployed");
    let _ = std::fs::remove_dir_all(&deployed);
    std::fs::create_dir_all(deployed.join("models")).unwrap();
    let binary = deployed.join("app");
    std::fs::copy(bins.join("app"), &binary).unwrap();
    std::fs::copy(
        workspace().join("examples/models/dynamic.onnx"),
        deployed.join("models/dynamic.onnx"),
    )
    .unwrap();
    let out = run_in(&deployed, &binary, &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains(EXPECTED), "{}", text(&out));

    // Started from elsewhere: beside the executable still finds it.
    let out = run_in(&std::env::temp_dir(), &binary, &[]);
    assert!(out.status.success(), "{}", text(&out));

    // Without the model: an error naming every place looked at.
    std::fs::remove_dir_all(deployed.join("models")).unwrap();
    let out = run_in(&deployed, &binary, &[]);
    assert!(!out.status.success());
    let err = text(&out);
    assert!(
        err.contains("model `dynamic.onnx` not found; looked at:"),
        "{err}"
    );
    for place in [
        format!(
            "beside the executable: {}",
            deployed.join("models/dynamic.onnx").display()
        ),
        format!(
            "in the current directory: {}",
            deployed.join("dynamic.onnx").display()
        ),
        format!(
            "where it was at build time: {}",
            std::fs::canonicalize(&app)
                .unwrap()
                .join("models/dynamic.onnx")
                .display()
        ),
    ] {
        assert!(err.contains(&place), "missing `{place}` in: {err}");
    }

    // The folder variable and the per-model variable.
    let models = base().join("model-dir");
    std::fs::create_dir_all(&models).unwrap();
    std::fs::copy(
        workspace().join("examples/models/dynamic.onnx"),
        models.join("dynamic.onnx"),
    )
    .unwrap();
    let out = run_in(
        &deployed,
        &binary,
        &[("ORT_BIND_MODEL_DIR", models.to_str().unwrap())],
    );
    assert!(out.status.success(), "{}", text(&out));
    let out = run_in(
        &deployed,
        &binary,
        &[("ORT_BIND_MODEL_DYNAMIC", "/nonexistent/x.onnx")],
    );
    let err = text(&out);
    assert!(
        err.contains("ORT_BIND_MODEL_DYNAMIC: /nonexistent/x.onnx"),
        "{err}"
    );
    assert!(
        !err.contains("- beside the executable"),
        "the variable wins alone: {err}"
    );

    // Embedded: the binary alone, in an empty folder.
    let alone = base().join("alone");
    let _ = std::fs::remove_dir_all(&alone);
    std::fs::create_dir_all(&alone).unwrap();
    let embedded = alone.join("embedded");
    std::fs::copy(bins.join("embedded"), &embedded).unwrap();
    let out = run_in(&alone, &embedded, &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains(EXPECTED), "{}", text(&out));
}
