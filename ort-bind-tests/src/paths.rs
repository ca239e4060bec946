//! Paths the tests share: the test crate's fixtures and reference outputs, the workspace
//! root, and Cargo's target directory.

use std::path::{Path, PathBuf};

/// The test crate's directory (`ort-bind-tests/`).
pub fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The workspace root.
pub fn workspace() -> PathBuf {
    crate_dir().join("..")
}

/// A file under `tests/fixtures/` (the models and how each was made).
pub fn fixture(name: &str) -> PathBuf {
    crate_dir().join("tests/fixtures").join(name)
}

/// A file under `tests/reference/` (expected outputs written by reference scripts).
pub fn reference(name: &str) -> PathBuf {
    crate_dir().join("tests/reference").join(name)
}

/// The target directory Cargo builds into (`cargo metadata`'s `target_directory`, which
/// follows `CARGO_TARGET_DIR` and the workspace's configuration).
pub fn target_dir() -> PathBuf {
    let out = std::process::Command::new(env!("CARGO"))
        .args(["metadata", "--format-version=1", "--no-deps"])
        .current_dir(crate_dir())
        .output()
        .expect("cargo metadata runs");
    assert!(out.status.success(), "cargo metadata failed");
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata is JSON");
    PathBuf::from(
        meta["target_directory"]
            .as_str()
            .expect("metadata names the target directory"),
    )
}
