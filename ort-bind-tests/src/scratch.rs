//! Scratch crates outside the workspace, built by tests as a user's crate would be
//! (`route_bindings_macro.rs`, `build_farm.rs`, `deploy.rs`).

use std::path::Path;

pub use crate::paths::workspace;

/// Writes the manifest of a crate `name` in `dir` (a workspace of its own) that depends on
/// the workspace member `dependency` at `dependency_dir` by path, and the workspace's
/// `Cargo.lock`, so an `--offline` build finds the same versions in the local registry.
pub fn write_manifest(dir: &Path, name: &str, dependency: &str, dependency_dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"{name}\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = \
             false\n\n[dependencies]\n{dependency} = {{ path = {:?} }}\n\n[workspace]\n",
            dependency_dir.display().to_string()
        ),
    )
    .unwrap();
    std::fs::copy(workspace().join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
}
