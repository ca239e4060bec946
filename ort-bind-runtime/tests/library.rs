//! Finding and loading the ONNX Runtime library (`ort_bind_runtime::library`).
//!
//! Tests that need a fresh process (`ort` keeps the first library it loads for the whole
//! process) re-run this test binary with `--exact child_process` and an environment variable
//! saying what the child should check.

use std::path::{Path, PathBuf};
use std::process::Command;

use ort_bind_runtime::library::{self, CandidateSource, LibraryError};

/// Set in a child process: what [`child_process`] should do.
const CHILD_VAR: &str = "ORT_BIND_LIBRARY_TEST_CHILD";

#[test]
fn init_loads_onnxruntime_1_31() {
    let lib = library::init().expect("ONNX Runtime should be found on this machine");
    assert!(
        lib.version().starts_with("1.31."),
        "version {}",
        lib.version()
    );
    assert!(lib.path().exists(), "{}", lib.path().display());
    assert!(
        lib.path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .contains("onnxruntime"),
        "{}",
        lib.path().display()
    );
    // The C API is usable now.
    assert!(
        lib.build_info().contains("ORT Build Info"),
        "{}",
        lib.build_info()
    );
    assert!(std::ptr::eq(lib, library::get().unwrap()));
    assert!(matches!(
        library::init_with(library::EnvironmentOptions::new()),
        Err(LibraryError::AlreadyInitialized { .. })
    ));
}

#[test]
fn init_is_idempotent_across_threads() {
    let addresses: Vec<usize> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|_| s.spawn(|| library::init().unwrap() as *const _ as usize))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(addresses.windows(2).all(|w| w[0] == w[1]));
}

#[test]
fn candidates_end_with_the_system_loader() {
    if std::env::var_os("ORT_DYLIB_PATH").is_some() {
        return; // Then it is the only candidate.
    }
    let candidates = library::candidates();
    assert_eq!(candidates.last().unwrap().source, CandidateSource::System);
}

/// Runs this test binary again with only [`child_process`] selected.
fn run_child(mode: &str, dylib_path: &Path) -> (bool, String) {
    let output = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_VAR, mode)
        .env("ORT_DYLIB_PATH", dylib_path)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

#[test]
fn unloadable_env_override_is_an_error_not_a_fallback() {
    let missing = Path::new("/nonexistent/libonnxruntime.so");
    let (ok, text) = run_child("expect-error", missing);
    assert!(ok, "child failed:\n{text}");
    assert!(text.contains("CHILD-ERROR: "), "{text}");
    assert!(text.contains("/nonexistent/libonnxruntime.so"), "{text}");
    assert!(text.contains("ORT_DYLIB_PATH"), "{text}");
    assert!(text.contains("onnxruntime==1.31.1"), "{text}");
    assert!(!text.contains("panicked"), "{text}");

    // A file that exists but is no library: the loader's reason is reported.
    let not_a_library = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let (ok, text) = run_child("expect-error", &not_a_library);
    assert!(ok, "child failed:\n{text}");
    assert!(text.contains(&*not_a_library.to_string_lossy()), "{text}");
}

#[test]
fn env_override_selects_the_library() {
    // A copy of the library under a new name, so the loaded path proves where it came from.
    let original = library::init().unwrap().path().to_path_buf();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("library-override-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let copy = dir.join("libonnxruntime.so");
    std::fs::copy(&original, &copy).unwrap();

    let (ok, text) = run_child("expect-ok", &copy);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(ok, "child failed:\n{text}");
    let copy = std::fs::canonicalize(dir.parent().unwrap())
        .unwrap()
        .join(dir.file_name().unwrap())
        .join("libonnxruntime.so");
    assert!(
        text.contains(&format!("CHILD-PATH: {}\n", copy.display())),
        "{text}"
    );
    assert!(text.contains("CHILD-SOURCE: EnvVar"), "{text}");
    assert!(text.contains("CHILD-VERSION: 1.31."), "{text}");
}

/// Builds the fake library of `fake_onnxruntime/fake_onnxruntime.c` with `defines`.
fn fake_library(name: &str, defines: &[&str]) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("fake-onnxruntime-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let so = dir.join(format!("lib{name}.so"));
    let src = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fake_onnxruntime/fake_onnxruntime.c"
    );
    ort_bind_testkit::cc::shared_library(Path::new(src), &so, defines, &[]);
    so
}

#[test]
fn libraries_that_cannot_serve_are_refused_with_the_reason() {
    let cases = [
        (
            "no-api-base",
            vec!["-DNO_API_BASE"],
            "does not export `OrtGetApiBase`, so it is not ONNX Runtime",
        ),
        (
            "too-old",
            vec![r#"-DFAKE_VERSION="1.20.0""#],
            "it is ONNX Runtime 1.20.0, older than the 1.31 that ort-bind needs",
        ),
        (
            "malformed-version",
            vec![r#"-DFAKE_VERSION="onnxruntime""#],
            "it is ONNX Runtime onnxruntime, older than the 1.31",
        ),
        (
            "no-table",
            vec![r#"-DFAKE_VERSION="1.99.0""#],
            "ONNX Runtime 1.99.0 does not provide C API version 31",
        ),
    ];
    for (name, defines, reason) in cases {
        let so = fake_library(name, &defines);
        let (ok, text) = run_child("expect-error", &so);
        let _ = std::fs::remove_file(&so);
        assert!(ok, "{name}: child failed:\n{text}");
        assert!(text.contains(&*so.to_string_lossy()), "{name}: {text}");
        assert!(text.contains(reason), "{name}: {text}");
        assert!(!text.contains("panicked"), "{name}: {text}");
    }
}

/// Does nothing unless started by [`run_child`].
#[test]
fn child_process() {
    let Ok(mode) = std::env::var(CHILD_VAR) else {
        return;
    };
    match mode.as_str() {
        "expect-error" => {
            let err = library::init().expect_err("init should fail");
            assert!(matches!(err, LibraryError::NotLoaded { .. }), "{err:?}");
            // Failures are not cached: a second call tries again and fails the same way.
            let again = library::init().expect_err("init should fail again");
            assert_eq!(err.to_string(), again.to_string());
            assert!(library::get().is_none());
            println!("CHILD-ERROR: {err}");
        }
        "expect-ok" => {
            let lib = library::init().unwrap();
            println!("CHILD-PATH: {}", lib.path().display());
            println!("CHILD-SOURCE: {:?}", lib.source());
            println!("CHILD-VERSION: {}", lib.version());
        }
        other => panic!("unknown child mode {other}"),
    }
}
