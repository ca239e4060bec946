//! Builds that cannot break on a build farm: a crate depending on `ort-bind-runtime` builds
//! with pip unable to reach its index, on docs.rs (`DOCS_RS`), and with `ORT_DYLIB_PATH`
//! set, and the program then says at run time what to do.
//!
//! A scratch crate outside the workspace (its own target folder, `--offline`) is built once
//! per scenario with a fresh ONNX Runtime cache. Where no pip call may happen, `python3` and
//! `python` on `PATH` are stand-ins that record every call and fail.

use std::path::{Path, PathBuf};
use std::process::Command;

use ort_bind_tests::scratch::{self, workspace};

fn base() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("build-farm")
}

/// The scratch crate: prints what `library::init` says.
fn scratch() -> PathBuf {
    let dir = base().join("app");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    scratch::write_manifest(
        &dir,
        "farm-app",
        "ort-bind-runtime",
        &workspace().join("ort-bind-runtime"),
    );
    std::fs::write(
        dir.join("src/main.rs"),
        "fn main() {\n    match ort_bind_runtime::library::init() {\n        Ok(lib) => \
         println!(\"loaded {}\", lib.path().display()),\n        Err(e) => println!(\"ERROR \
         {e}\"),\n    }\n}\n",
    )
    .unwrap();
    dir
}

/// A folder with `python3` and `python` stand-ins that log their arguments to `log` and fail.
fn fake_pythons(log: &Path) -> PathBuf {
    let bin = log.with_extension("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for name in ["python3", "python"] {
        let path = bin.join(name);
        std::fs::write(
            &path,
            format!(
                "#!/bin/sh\necho \"{name} $*\" >> {:?}\nexit 1\n",
                log.display().to_string()
            ),
        )
        .unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
    bin
}

fn path_with(front: &Path) -> std::ffi::OsString {
    let mut parts = vec![front.to_path_buf()];
    parts.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(parts).unwrap()
}

/// One scenario: build the scratch crate with `envs` (and a fresh cache), then run it with
/// the fake Pythons first on `PATH` and no `ORT_DYLIB_PATH`.
fn scenario(name: &str, envs: &[(&str, &str)], fake_python_at_build: bool) -> (String, String) {
    let app = scratch();
    let cache = base().join(format!("cache-{name}"));
    let _ = std::fs::remove_dir_all(&cache);
    let log = base().join(format!("python-calls-{name}.log"));
    let _ = std::fs::remove_file(&log);
    let fake = fake_pythons(&log);
    let run_log = base().join(format!("python-calls-{name}-run.log"));
    let run_fake = fake_pythons(&run_log);
    let mut build = Command::new(env!("CARGO"));
    build
        .args(["build", "--offline", "--quiet"])
        .current_dir(&app)
        .env("CARGO_TARGET_DIR", base().join("target"))
        .env("ORT_BIND_CACHE_DIR", &cache)
        .env_remove("ORT_DYLIB_PATH")
        .env_remove("ORT_BIND_NO_FETCH")
        .env_remove("DOCS_RS")
        .envs(envs.iter().copied());
    if fake_python_at_build {
        build.env("PATH", path_with(&fake));
    }
    let built = build.output().unwrap();
    let binary = base().join("target/debug/farm-app");
    let ran = Command::new(&binary)
        .env("ORT_BIND_CACHE_DIR", &cache)
        .env_remove("ORT_DYLIB_PATH")
        .env_remove("LD_LIBRARY_PATH")
        .env("PATH", path_with(&run_fake))
        .output()
        .unwrap();
    let calls = std::fs::read_to_string(&log).unwrap_or_default();
    // What a build and its later run printed, and who called Python at build time.
    let build_text = String::from_utf8_lossy(&built.stderr).into_owned();
    assert!(
        built.status.success(),
        "{name}: the build failed:\n{build_text}"
    );
    let run_text = String::from_utf8_lossy(&ran.stdout).into_owned();
    (format!("{build_text}\n{run_text}"), calls)
}

#[test]
fn builds_never_fail_for_lack_of_onnx_runtime() {
    // 1. pip cannot reach its index: the build goes on with a warning, and the program's
    //    error says why there is no library and how to provide one.
    let (text, _) = scenario(
        "unreachable",
        &[
            ("PIP_INDEX_URL", "http://127.0.0.1:9/simple"),
            ("PIP_RETRIES", "0"),
        ],
        false,
    );
    assert!(
        text.contains("could not fetch ONNX Runtime 1.31.1"),
        "{text}"
    );
    assert!(
        text.contains("ERROR could not load the ONNX Runtime shared library"),
        "{text}"
    );
    assert!(text.contains("the build's fetch failed"), "{text}");
    assert!(text.contains("set ORT_DYLIB_PATH"), "{text}");

    // 2. docs.rs: pip is never run.
    let (text, calls) = scenario("docs-rs", &[("DOCS_RS", "1")], true);
    assert_eq!(calls, "", "pip ran on a docs.rs build");
    assert!(text.contains("built on docs.rs"), "{text}");

    // 3. The user provides the library: pip is never run, and nothing is baked in.
    let (text, calls) = scenario(
        "dylib-path",
        &[("ORT_DYLIB_PATH", "/opt/onnxruntime/lib/libonnxruntime.so")],
        true,
    );
    assert_eq!(calls, "", "pip ran although ORT_DYLIB_PATH was set");
    assert!(
        text.contains("ORT_DYLIB_PATH was set at build time"),
        "{text}"
    );
    assert!(!text.contains("warning"), "{text}");
}
