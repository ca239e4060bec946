//! Building the small C shared libraries that tests load in place of a real one (a fake
//! CUDA driver, fake ONNX Runtime libraries), with the system's C compiler.

use std::path::Path;
use std::process::Command;

/// Compiles the C file `src` into the shared library `out` with `$CC` (else `cc`), warnings
/// as errors; `flags` go before the source (defines, linker options), `libs` after it.
///
/// # Panics
/// When the compiler cannot be run or fails, with its output: a test cannot go on without
/// its library.
pub fn shared_library(src: &Path, out: &Path, flags: &[&str], libs: &[&str]) {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let built = Command::new(&cc)
        .args(["-shared", "-fPIC", "-O1", "-Wall", "-Werror"])
        .args(flags)
        .arg("-o")
        .arg(out)
        .arg(src)
        .args(libs)
        .output()
        .unwrap_or_else(|e| panic!("running `{cc}` to build {}: {e}", out.display()));
    assert!(
        built.status.success(),
        "building {} from {} failed:\n{}",
        out.display(),
        src.display(),
        String::from_utf8_lossy(&built.stderr)
    );
}
