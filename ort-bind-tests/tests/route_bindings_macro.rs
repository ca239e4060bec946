//! The macro route: `ort_bind::bindings!` generates the module build-time codegen
//! writes, from inside the compiler; and editing a model file makes the next
//! `cargo build` re-run the macros (checked on a scratch crate).

use std::path::Path;
use std::process::Command;

use ort_bind_tests::paths::target_dir;
use ort_bind_tests::scratch;

mod add {
    ort_bind::bindings!("tests/fixtures/add.onnx");
}

mod nonzero {
    ort_bind::bindings!("tests/fixtures/nonzero.onnx");
}

mod detector {
    ort_bind::bindings!("tests/fixtures/shapes/detector.onnx");
}

/// `maps` is declared with fresh symbols; the graph computes `[N, 1, 4*floor((h + 3) / 4),
/// 4*floor((w + 3) / 4)]`: pre-allocated from the input's dims, as build.rs generates it.
#[test]
fn bindings_size_outputs_from_the_graph() -> ort_bind::Result<()> {
    let model = detector::Model::load()?;
    let mut binding = model.bind(detector::Dims { n: 1, h: 26, w: 30 })?;
    binding.inputs().x.fill(0.5);
    binding.run()?;
    let maps: ort_bind::TensorRef<
        '_,
        f32,
        (
            ort_bind::Dyn,
            ort_bind::Fix<1>,
            ort_bind::Dyn,
            ort_bind::Dyn,
        ),
    > = binding.outputs().maps;
    assert_eq!(maps.dims(), &[1, 1, 28, 32]);
    assert!(maps.as_slice().iter().all(|v| (0.0..=1.0).contains(v)));
    Ok(())
}

#[test]
fn bindings_run_like_build_time_codegen() -> ort_bind::Result<()> {
    let model = add::Model::load()?;
    let mut binding = model.bind(add::Dims { n: 4 })?;
    binding.inputs().x.copy_from_slice(&[1.0, 2.0, 3.0, 4.0])?;
    binding.inputs().y.fill(10.0);
    binding.run()?;
    assert_eq!(binding.outputs().sum.as_slice(), &[11.0, 12.0, 13.0, 14.0]);
    assert!(Path::new(add::MODEL_PATH).is_absolute());

    let model = nonzero::Model::load()?;
    let mut binding = model.bind(nonzero::Dims::default())?;
    binding
        .inputs()
        .x
        .copy_from_slice(&[0.0, 1.5, 0.0, -2.0, 0.0, 3.0])?;
    binding.run()?;
    assert_eq!(binding.outputs().indices.get()?.as_slice(), &[1, 3, 5]);
    Ok(())
}

/// The workspace's target dir, as Cargo reports it.
struct Build {
    ok: bool,
    stderr: String,
}

fn cargo_build(dir: &Path, target: &Path) -> Build {
    let out = Command::new(env!("CARGO"))
        .args(["build", "--quiet", "--offline"])
        .env("CARGO_TARGET_DIR", target)
        .env_remove("RUSTFLAGS")
        .current_dir(dir)
        .output()
        .expect("cargo runs");
    Build {
        ok: out.status.success(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Cargo's view of whether the crate must be rebuilt, and why (`-v` prints `Dirty`/`Fresh`).
fn freshness(dir: &Path, target: &Path) -> String {
    let out = Command::new(env!("CARGO"))
        .args(["build", "-v", "--offline"])
        .env("CARGO_TARGET_DIR", target)
        .env_remove("RUSTFLAGS")
        .current_dir(dir)
        .output()
        .expect("cargo runs");
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains("scratch"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Builds a crate whose derive and `bindings!` read `models/m.onnx`, then edits the model
/// on disk: the next build must re-run the checks (and fail, since the struct no longer
/// fits), and putting the model back must make it build again. A build with nothing
/// changed must not recompile the crate.
#[test]
fn editing_the_model_reruns_the_checks() {
    let root = &scratch::workspace();
    let base = target_dir().join("tests/ort-bind-rebuild");
    let dir = base.join("scratch");
    let target = base.join("target");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::create_dir_all(dir.join("models")).unwrap();
    scratch::write_manifest(&dir, "scratch", "ort-bind", root);
    std::fs::write(
        dir.join("src/lib.rs"),
        r#"//! Scratch crate of tests/route_bindings_macro.rs.
use ort_bind::{Dyn, OnnxBinding, Tensor};

/// Checked against `models/m.onnx`.
#[derive(OnnxBinding)]
#[onnx(model = "models/m.onnx")]
pub struct Io {
    /// Input.
    pub x: Tensor<f32, (Dyn,)>,
    /// Input.
    pub y: Tensor<f32, (Dyn,)>,
    /// Output.
    pub sum: Tensor<f32, (Dyn,)>,
}

/// Generated from `models/m.onnx`.
pub mod m {
    ort_bind::bindings!("models/m.onnx");
}
"#,
    )
    .unwrap();
    let model = dir.join("models/m.onnx");
    std::fs::copy(root.join("ort-bind-tests/tests/fixtures/add.onnx"), &model).unwrap();

    let first = cargo_build(&dir, &target);
    assert!(first.ok, "the scratch crate builds:\n{}", first.stderr);
    let fresh = freshness(&dir, &target);
    assert!(
        fresh.contains("Fresh scratch"),
        "nothing changed, nothing rebuilt:\n{fresh}"
    );

    // Rustc read a small placeholder, and Cargo now watches the model through a link.
    let dep_info = std::fs::read_dir(target.join("debug/deps"))
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| {
            p.extension().is_some_and(|e| e == "d")
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("scratch-"))
        })
        .expect("dep-info of the scratch crate");
    let deps = std::fs::read_to_string(&dep_info).unwrap();
    let links: Vec<&str> = deps
        .lines()
        .filter_map(|l| l.strip_suffix(':'))
        .filter(|p| p.contains("ort-bind-track"))
        .collect();
    assert!(!links.is_empty(), "no tracked model in {deps}");
    if cfg!(unix) {
        for link in &links {
            assert_eq!(
                std::fs::canonicalize(link).unwrap(),
                std::fs::canonicalize(&model).unwrap(),
                "{link} points at the model"
            );
        }
    }

    // Edit the model: its inputs are now `a` and `b`.
    std::fs::copy(
        root.join("ort-bind-tests/tests/fixtures/add16.onnx"),
        &model,
    )
    .unwrap();
    let edited = cargo_build(&dir, &target);
    assert!(!edited.ok, "the edited model no longer fits the struct");
    assert!(
        edited
            .stderr
            .contains("the model has no input or output named `x`"),
        "{}",
        edited.stderr
    );

    // Put it back: the checks pass again.
    std::fs::copy(root.join("ort-bind-tests/tests/fixtures/add.onnx"), &model).unwrap();
    let restored = cargo_build(&dir, &target);
    assert!(restored.ok, "{}", restored.stderr);
}
