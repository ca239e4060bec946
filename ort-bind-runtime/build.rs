//! Build script of `ort-bind-runtime`.
//!
//! With the `fetch-runtime` feature (on by default) it makes sure a copy of the ONNX Runtime
//! shared library exists in a per-user cache, fetching it once from the `onnxruntime` Python
//! wheel through `pip download` when it is missing, and bakes the library's absolute path into
//! the crate as the compile-time environment variable `ORT_BIND_BUNDLED_DYLIB` (empty when no
//! library could be provided). `src/library.rs` reads it at run time.
//!
//! Environment variables read here:
//! - `ORT_DYLIB_PATH`: when set, the user provides the library; nothing is fetched.
//! - `ORT_BIND_NO_FETCH`: when set, nothing is fetched (an already cached copy is still used).
//! - `ORT_BIND_CACHE_DIR`: the cache folder; else `$XDG_CACHE_HOME/ort-bind`, else
//!   `$HOME/.cache/ort-bind`, else `OUT_DIR`.
//!
//! Failing to fetch never fails the build: it prints a `cargo:warning` and the crate reports a
//! clear error at run time instead, when no other copy of the library can be found.
//!
//! The cache layout and the library names here must stay in step with `src/library.rs`.

use std::env;
use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The ONNX Runtime release fetched; `ort 2.0.0-rc.15` with `api-31` needs 1.31.
const ORT_VERSION: &str = "1.31.1";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    for var in [
        "ORT_DYLIB_PATH",
        "ORT_BIND_CACHE_DIR",
        "ORT_BIND_NO_FETCH",
        "XDG_CACHE_HOME",
        "HOME",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }

    let bundled = match provide() {
        Ok(path) => path,
        Err(message) => {
            for line in message.lines() {
                println!("cargo:warning={line}");
            }
            None
        }
    };
    match bundled {
        Some(path) => {
            // Rerun when the cached copy goes away (cargo reruns for a missing path), so a
            // deleted cache is fetched again by the next build.
            println!("cargo:rerun-if-changed={}", path.display());
            println!("cargo:rustc-env=ORT_BIND_BUNDLED_DYLIB={}", path.display());
        }
        None => println!("cargo:rustc-env=ORT_BIND_BUNDLED_DYLIB="),
    }
}

/// Target facts, from cargo's `CARGO_CFG_*` variables (the build script runs on the host).
struct Target {
    os: String,
    arch: String,
}

impl Target {
    fn from_env() -> Self {
        Self {
            os: env::var("CARGO_CFG_TARGET_OS").unwrap_or_default(),
            arch: env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default(),
        }
    }

    /// `(prefix, suffix)` of shared libraries on the target.
    fn dylib_affixes(&self) -> (&'static str, &'static str) {
        match self.os.as_str() {
            "windows" => ("", ".dll"),
            "macos" | "ios" => ("lib", ".dylib"),
            _ => ("lib", ".so"),
        }
    }

    /// Whether `name` (a file name inside the wheel's `onnxruntime/capi/`) is one of the
    /// native libraries to keep: `libonnxruntime.so.1.31.1`,
    /// `libonnxruntime_providers_shared.so` and their macOS/Windows counterparts. The Python
    /// extension module (`onnxruntime_pybind11_state.*`) is left out.
    fn is_native_library(&self, name: &str) -> bool {
        let (prefix, suffix) = self.dylib_affixes();
        name.starts_with(&format!("{prefix}onnxruntime"))
            && name.contains(suffix)
            && !name.contains("pybind")
    }

    /// Whether `name` is the main library (not a provider library).
    fn is_main_library(&self, name: &str) -> bool {
        self.is_native_library(name) && !name.contains("providers")
    }
}

/// Returns the absolute path of a usable cached library, or `None` when the user asked not to
/// fetch; `Err` carries the warning text when fetching was wanted but failed.
fn provide() -> Result<Option<PathBuf>, String> {
    if env::var_os("CARGO_FEATURE_FETCH_RUNTIME").is_none() {
        return Ok(None);
    }
    if non_empty_var("ORT_DYLIB_PATH").is_some() {
        // The user provides the library; `src/library.rs` loads it from there at run time.
        return Ok(None);
    }

    let target = Target::from_env();
    let dir = cache_root()
        .map(|root| root.join(version_dir_name(&target)))
        .filter(|dir| fs::create_dir_all(dir).is_ok())
        .unwrap_or_else(|| {
            PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"))
                .join(version_dir_name(&target))
        });

    if let Some(found) = find_main_library(&dir, &target) {
        return Ok(Some(found)); // Cached: no pip call.
    }
    if non_empty_var("ORT_BIND_NO_FETCH").is_some() {
        return Ok(None);
    }

    let host = env::var("HOST").unwrap_or_default();
    let triple = env::var("TARGET").unwrap_or_default();
    if host != triple {
        return Err(format!(
            "ort-bind-runtime: not fetching ONNX Runtime {ORT_VERSION} while cross-compiling \
             (host {host}, target {triple}); set ORT_DYLIB_PATH at run time to the target's \
             ONNX Runtime library"
        ));
    }

    let started = Instant::now();
    fetch_into(&dir, &target).map_err(|e| {
        format!(
            "ort-bind-runtime: could not fetch ONNX Runtime {ORT_VERSION} into {}: {e}\n\
             ort-bind-runtime: the build goes on; at run time set ORT_DYLIB_PATH to the path of \
             libonnxruntime.so (ONNX Runtime 1.31), or install the `onnxruntime=={ORT_VERSION}` \
             Python package (set ORT_BIND_NO_FETCH=1 to skip this step)",
            dir.display()
        )
    })?;
    let found = find_main_library(&dir, &target).ok_or_else(|| {
        format!(
            "ort-bind-runtime: the onnxruntime {ORT_VERSION} wheel held no main library for \
             target os `{}`",
            target.os
        )
    })?;
    // Visible with `cargo build -vv`.
    println!(
        "ort-bind-runtime: fetched ONNX Runtime {ORT_VERSION} to {} in {:.1?}",
        found.display(),
        started.elapsed()
    );
    Ok(Some(found))
}

fn non_empty_var(name: &str) -> Option<OsString> {
    env::var_os(name).filter(|v| !v.is_empty())
}

/// `$ORT_BIND_CACHE_DIR`, else `$XDG_CACHE_HOME/ort-bind`, else `$HOME/.cache/ort-bind`.
fn cache_root() -> Option<PathBuf> {
    if let Some(dir) = non_empty_var("ORT_BIND_CACHE_DIR") {
        return Some(PathBuf::from(dir));
    }
    if let Some(dir) = non_empty_var("XDG_CACHE_HOME") {
        return Some(PathBuf::from(dir).join("ort-bind"));
    }
    non_empty_var("HOME").map(|home| PathBuf::from(home).join(".cache").join("ort-bind"))
}

/// `onnxruntime-1.31.1-<os>-<arch>`: one folder per platform, so a home folder shared between
/// machines of different kinds holds each one's library.
fn version_dir_name(target: &Target) -> String {
    format!("onnxruntime-{ORT_VERSION}-{}-{}", target.os, target.arch)
}

/// The main library in `dir`, as an absolute path. It is the last file renamed into place by
/// [`fetch_into`], so its presence means the fetch completed.
fn find_main_library(dir: &Path, target: &Target) -> Option<PathBuf> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .ok()?
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| target.is_main_library(name))
        .collect();
    // Prefer the versioned name (`libonnxruntime.so.1.31.1`) when several are present.
    names.sort_by_key(|name| std::cmp::Reverse(name.len()));
    let path = dir.join(names.first()?);
    let meta = fs::metadata(&path).ok()?;
    (meta.is_file() && meta.len() > 0).then(|| absolute(&path))
}

fn absolute(path: &Path) -> PathBuf {
    fs::canonicalize(path)
        .or_else(|_| std::path::absolute(path))
        .unwrap_or_else(|_| path.to_path_buf())
}

/// A name unique to this process and moment, for temporary files and folders.
fn unique_suffix() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{}-{nanos}", std::process::id())
}

/// Downloads the wheel with pip into a temporary folder inside `dir`, then extracts the native
/// libraries into `dir`.
fn fetch_into(dir: &Path, target: &Target) -> Result<(), String> {
    fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let download = dir.join(format!(".download-{}", unique_suffix()));
    let result = download_wheel(&download).and_then(|wheel| extract(&wheel, dir, target));
    let _ = fs::remove_dir_all(&download);
    result
}

/// Runs `pip download` for the wheel, trying `python3` then `python`; returns the wheel's path.
fn download_wheel(into: &Path) -> Result<PathBuf, String> {
    let mut failures = Vec::new();
    for python in ["python3", "python"] {
        let output = Command::new(python)
            .args([
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--only-binary=:all:",
                "--disable-pip-version-check",
                "-q",
            ])
            .arg(format!("onnxruntime=={ORT_VERSION}"))
            .arg("-d")
            .arg(into)
            .output();
        match output {
            Err(e) => failures.push(format!("`{python}` could not be run: {e}")),
            Ok(out) if !out.status.success() => {
                let stderr = String::from_utf8_lossy(&out.stderr);
                // Only an interpreter without pip makes the next one worth trying; a pip
                // that ran and failed (no network, no such release) would fail again.
                let try_next = stderr.contains("No module named pip");
                let last = stderr
                    .lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("no output");
                failures.push(format!(
                    "`{python} -m pip download` failed ({}): {}",
                    out.status,
                    last.trim()
                ));
                if !try_next {
                    break;
                }
            }
            Ok(_) => {
                let wheel = fs::read_dir(into)
                    .map_err(|e| format!("cannot list {}: {e}", into.display()))?
                    .filter_map(|entry| entry.ok().map(|e| e.path()))
                    .find(|p| p.extension().is_some_and(|x| x == "whl"));
                return wheel.ok_or_else(|| {
                    format!("`{python} -m pip download` succeeded but left no wheel")
                });
            }
        }
    }
    Err(failures.join("; "))
}

/// Extracts the native libraries under `onnxruntime/capi/` of `wheel` into `dir`, each one
/// written under a temporary name and renamed into place, the main library last.
fn extract(wheel: &Path, dir: &Path, target: &Target) -> Result<(), String> {
    let file =
        fs::File::open(wheel).map_err(|e| format!("cannot open {}: {e}", wheel.display()))?;
    let mut archive =
        zip::ZipArchive::new(file).map_err(|e| format!("{} is not a zip: {e}", wheel.display()))?;

    let mut wanted: Vec<(usize, String)> = Vec::new();
    for index in 0..archive.len() {
        let entry = archive
            .by_index(index)
            .map_err(|e| format!("bad entry in {}: {e}", wheel.display()))?;
        let Some(name) = entry.name().strip_prefix("onnxruntime/capi/") else {
            continue;
        };
        if entry.is_file() && !name.contains('/') && target.is_native_library(name) {
            wanted.push((index, name.to_string()));
        }
    }
    if !wanted.iter().any(|(_, name)| target.is_main_library(name)) {
        return Err(format!(
            "{} has no ONNX Runtime library for target os `{}` under onnxruntime/capi/",
            wheel.display(),
            target.os
        ));
    }
    // Main library last: its presence marks a complete extraction.
    wanted.sort_by_key(|(_, name)| target.is_main_library(name));

    // Dated a little before this build script started, so cargo's `rerun-if-changed` on the
    // extracted library does not see it as changed by this very run.
    let old = SystemTime::now() - Duration::from_secs(3600);
    for (index, name) in wanted {
        let mut entry = archive
            .by_index(index)
            .map_err(|e| format!("bad entry in {}: {e}", wheel.display()))?;
        let unix_mode = entry.unix_mode();
        let temp = dir.join(format!(".{name}.tmp-{}", unique_suffix()));
        let written = (|| -> io::Result<()> {
            let mut out = fs::File::create(&temp)?;
            io::copy(&mut entry, &mut out)?;
            out.sync_all()?;
            out.set_modified(old)?;
            drop(out);
            set_mode(&temp, unix_mode)?;
            fs::rename(&temp, dir.join(&name))
        })();
        if let Err(e) = written {
            let _ = fs::remove_file(&temp);
            return Err(format!("cannot write {}: {e}", dir.join(&name).display()));
        }
    }
    Ok(())
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: Option<u32>) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = mode.map_or(0o755, |m| (m & 0o777) | 0o444);
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn set_mode(_path: &Path, _mode: Option<u32>) -> io::Result<()> {
    Ok(())
}
