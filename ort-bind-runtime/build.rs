//! Build script of `ort-bind-runtime`.
//!
//! With the `fetch-runtime` feature (on by default) it makes sure a copy of the ONNX Runtime
//! shared library exists in the per-user cache, fetching it once from the `onnxruntime`
//! Python wheel (`ort_bind_fetch::onnxruntime`) when it is missing, and bakes the library's
//! absolute path into the crate as `ORT_BIND_BUNDLED_DYLIB` (empty when there is none).
//! When nothing was provided, `ORT_BIND_BUILD_NOTE` says why, and `src/library.rs` adds it
//! to the run-time error.
//!
//! It never fails the build: with `ORT_DYLIB_PATH`, `DOCS_RS` or `ORT_BIND_NO_FETCH` set
//! pip is not run at all, and a failed fetch is a `cargo:warning`.

use ort_bind_fetch::onnxruntime::{self, Provision};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed={}", onnxruntime::DYLIB_PATH_VAR);
    println!("cargo:rerun-if-env-changed=DOCS_RS");
    for var in ort_bind_fetch::ENV_VARS {
        println!("cargo:rerun-if-env-changed={var}");
    }

    let provision = if std::env::var_os("CARGO_FEATURE_FETCH_RUNTIME").is_some() {
        onnxruntime::provide_for_build()
    } else {
        Provision::Skipped("built without the `fetch-runtime` feature".into())
    };
    let (bundled, note) = match provision {
        Provision::Found(path) => {
            // Rerun when the cached copy goes away (cargo reruns for a missing path), so a
            // deleted cache is fetched again by the next build.
            println!("cargo:rerun-if-changed={}", path.display());
            (path.display().to_string(), String::new())
        }
        Provision::Skipped(why) => (String::new(), format!("the build fetched nothing: {why}")),
        Provision::Failed(why) => {
            println!("cargo:warning=ort-bind-runtime: {why}");
            (String::new(), format!("the build's fetch failed: {why}"))
        }
    };
    println!("cargo:rustc-env=ORT_BIND_BUNDLED_DYLIB={bundled}");
    // One line: rustc-env values cannot hold newlines.
    println!(
        "cargo:rustc-env=ORT_BIND_BUILD_NOTE={}",
        note.replace('\n', " ")
    );
}
