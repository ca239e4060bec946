//! The ONNX Runtime shared library in the cache: its layout (for the run-time search in
//! `ort-bind-runtime`) and its provision at build time (for that crate's build script).
//!
//! The cache folder is `<cache root>/onnxruntime-1.31.1-<os>-<arch>/`, one per platform so
//! a home folder shared between machines holds each one's library, and it holds the native
//! libraries of the `onnxruntime==1.31.1` wheel's `onnxruntime/capi/` folder (the main
//! library and the shared provider library; not the Python extension module).

use std::path::{Path, PathBuf};

use crate::cache::CacheEnv;
#[cfg(feature = "fetch")]
use crate::cache::{NO_FETCH_VAR, non_empty_var};
#[cfg(feature = "fetch")]
use crate::wheel::WheelCache;

/// The ONNX Runtime release ort-bind is built for (`ort 2.0.0-rc.15` with `api-31`).
pub const VERSION: &str = "1.31.1";

/// The variable that names the library at run time and makes the build fetch nothing.
pub const DYLIB_PATH_VAR: &str = "ORT_DYLIB_PATH";

/// An operating system and architecture, as Rust names them (`linux`, `x86_64`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Platform {
    /// `std::env::consts::OS` of the platform.
    pub os: String,
    /// `std::env::consts::ARCH` of the platform.
    pub arch: String,
}

impl Platform {
    /// The platform this code runs on.
    pub fn current() -> Platform {
        Platform {
            os: std::env::consts::OS.to_owned(),
            arch: std::env::consts::ARCH.to_owned(),
        }
    }

    /// The target of the crate a build script builds (cargo's `CARGO_CFG_TARGET_*`).
    pub fn build_target() -> Platform {
        let var = |name| std::env::var(name).unwrap_or_default();
        Platform {
            os: var("CARGO_CFG_TARGET_OS"),
            arch: var("CARGO_CFG_TARGET_ARCH"),
        }
    }

    /// `(prefix, suffix)` of shared libraries on this platform.
    fn dylib_affixes(&self) -> (&'static str, &'static str) {
        match self.os.as_str() {
            "windows" => ("", ".dll"),
            "macos" | "ios" => ("lib", ".dylib"),
            _ => ("lib", ".so"),
        }
    }

    /// The cache folder's name: `onnxruntime-1.31.1-<os>-<arch>`.
    pub fn folder_name(&self) -> String {
        format!("onnxruntime-{VERSION}-{}-{}", self.os, self.arch)
    }

    /// The cache folder under the root `env` names.
    pub fn folder(&self, env: &CacheEnv) -> Option<PathBuf> {
        Some(env.root()?.join(self.folder_name()))
    }

    /// The platform loader's default name: `libonnxruntime.so`, `libonnxruntime.dylib`,
    /// `onnxruntime.dll`.
    pub fn default_library_name(&self) -> String {
        let (prefix, suffix) = self.dylib_affixes();
        format!("{prefix}onnxruntime{suffix}")
    }

    /// The name the wheel gives the main library: `libonnxruntime.so.1.31.1`,
    /// `libonnxruntime.1.31.1.dylib`, `onnxruntime.dll`.
    pub fn versioned_library_name(&self) -> String {
        match self.os.as_str() {
            "windows" => "onnxruntime.dll".to_owned(),
            "macos" | "ios" => format!("libonnxruntime.{VERSION}.dylib"),
            _ => format!("libonnxruntime.so.{VERSION}"),
        }
    }

    /// Whether `name` (a file name) is one of the wheel's native libraries to keep: the
    /// main library and `libonnxruntime_providers_shared`, not the Python extension module,
    /// not a temporary file.
    pub fn is_native_library(&self, name: &str) -> bool {
        let (prefix, suffix) = self.dylib_affixes();
        name.starts_with(&format!("{prefix}onnxruntime"))
            && name.contains(suffix)
            && !name.contains("pybind")
            && !name.starts_with('.')
    }

    /// Whether `name` is the main library (not a provider library).
    pub fn is_main_library(&self, name: &str) -> bool {
        self.is_native_library(name) && !name.contains("providers")
    }

    /// The main library files in `dir`, the longest (most versioned) name first.
    pub fn main_libraries_in(&self, dir: &Path) -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut names: Vec<String> = entries
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|name| self.is_main_library(name))
            .collect();
        names.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        names.into_iter().map(|name| dir.join(name)).collect()
    }

    /// The wheel's entries for this platform, kept flat in the cache folder.
    #[cfg(feature = "fetch")]
    fn wheel(&self, root: &Path) -> WheelCache {
        let platform = self.clone();
        WheelCache::new(&format!("onnxruntime=={VERSION}"), &self.folder_name())
            .cache_root(root)
            .strip_prefix("onnxruntime/capi/")
            .keep(move |name| {
                name.strip_prefix("onnxruntime/capi/")
                    .is_some_and(|file| !file.contains('/') && platform.is_native_library(file))
            })
    }
}

/// What a build script should do about the library, and why.
#[cfg(feature = "fetch")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Provision {
    /// A complete copy is at this absolute path (cached, or fetched just now).
    Found(PathBuf),
    /// Nothing was fetched on purpose; the reason, for the run-time error.
    Skipped(String),
    /// Fetching was tried and failed; what went wrong and what to do instead.
    Failed(String),
}

/// For a build script: makes sure the cache holds ONNX Runtime for the crate's target,
/// fetching the `onnxruntime` wheel once with pip when it is missing. Never fails a build:
/// a [`Provision::Failed`] is for a `cargo:warning`, and the run-time search reports what to
/// do. Nothing is fetched (and pip never runs) when:
/// - `ORT_DYLIB_PATH` is set (the user provides the library);
/// - `DOCS_RS` is set (docs.rs builds have no network and run nothing);
/// - `ORT_BIND_NO_FETCH` is set (a cached copy is still used);
/// - the build cross-compiles (the host's pip would fetch the host's library).
#[cfg(feature = "fetch")]
pub fn provide_for_build() -> Provision {
    if non_empty_var(DYLIB_PATH_VAR).is_some() {
        return Provision::Skipped(format!("{DYLIB_PATH_VAR} was set at build time"));
    }
    if std::env::var_os("DOCS_RS").is_some() {
        return Provision::Skipped("built on docs.rs (DOCS_RS), which fetches nothing".into());
    }
    let target = Platform::build_target();
    let Some(root) = CacheEnv::current().root() else {
        return Provision::Failed(
            "no cache folder: none of ORT_BIND_CACHE_DIR, XDG_CACHE_HOME, HOME is set".into(),
        );
    };
    let folder = root.join(target.folder_name());
    if let Some(found) = target.main_libraries_in(&folder).into_iter().next() {
        return Provision::Found(absolute(&found));
    }
    if non_empty_var(NO_FETCH_VAR).is_some() {
        return Provision::Skipped(format!(
            "{NO_FETCH_VAR} was set at build time and {} held no library",
            folder.display()
        ));
    }
    let host = std::env::var("HOST").unwrap_or_default();
    let triple = std::env::var("TARGET").unwrap_or_default();
    if host != triple {
        return Provision::Skipped(format!(
            "cross-compiling (host {host}, target {triple}): the host's pip would fetch the \
             host's library"
        ));
    }
    // A folder without a main library is a broken copy (e.g. emptied by hand): start over.
    if folder.is_dir() {
        let _ = std::fs::remove_dir_all(&folder);
    }
    match target.wheel(&root).get() {
        Ok(folder) => match target.main_libraries_in(&folder).into_iter().next() {
            Some(found) => Provision::Found(absolute(&found)),
            None => Provision::Failed(format!(
                "the onnxruntime {VERSION} wheel held no main library for target os `{}`",
                target.os
            )),
        },
        Err(e) => Provision::Failed(format!(
            "could not fetch ONNX Runtime {VERSION}: {e}; the build goes on: at run time set \
             {DYLIB_PATH_VAR} to the path of libonnxruntime.so (ONNX Runtime 1.31), or \
             install the `onnxruntime=={VERSION}` Python package (set {NO_FETCH_VAR}=1 to \
             skip this step)"
        )),
    }
}

#[cfg(feature = "fetch")]
fn absolute(path: &Path) -> PathBuf {
    std::fs::canonicalize(path)
        .or_else(|_| std::path::absolute(path))
        .unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn linux() -> Platform {
        Platform {
            os: "linux".into(),
            arch: "x86_64".into(),
        }
    }

    #[test]
    fn names() {
        let p = linux();
        assert_eq!(p.folder_name(), "onnxruntime-1.31.1-linux-x86_64");
        assert_eq!(p.default_library_name(), "libonnxruntime.so");
        assert_eq!(p.versioned_library_name(), "libonnxruntime.so.1.31.1");
        assert!(p.is_main_library("libonnxruntime.so.1.31.1"));
        assert!(p.is_native_library("libonnxruntime_providers_shared.so"));
        assert!(!p.is_main_library("libonnxruntime_providers_shared.so"));
        assert!(!p.is_native_library("onnxruntime_pybind11_state.cpython-311-x86_64-linux-gnu.so"));
        assert!(!p.is_native_library(".libonnxruntime.so.1.31.1.tmp-1-2"));
        let mac = Platform {
            os: "macos".into(),
            arch: "aarch64".into(),
        };
        assert_eq!(mac.versioned_library_name(), "libonnxruntime.1.31.1.dylib");
        assert!(!mac.is_main_library("libonnxruntime.so.1.31.1"));
    }

    #[test]
    fn main_libraries_prefer_the_versioned_name() {
        let dir = std::env::temp_dir().join(format!("ort-bind-fetch-libs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for name in [
            "libonnxruntime.so",
            "libonnxruntime.so.1.31.1",
            "libonnxruntime_providers_shared.so",
        ] {
            std::fs::write(dir.join(name), b"x").unwrap();
        }
        let found = linux().main_libraries_in(&dir);
        assert_eq!(
            found,
            [
                dir.join("libonnxruntime.so.1.31.1"),
                dir.join("libonnxruntime.so")
            ]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    #[cfg(feature = "fetch")]
    fn wheel_keeps_the_native_libraries_flat() {
        let wheel = linux().wheel(Path::new("/cache"));
        assert_eq!(
            wheel.folder().unwrap(),
            Path::new("/cache/onnxruntime-1.31.1-linux-x86_64")
        );
        assert!(format!("{wheel:?}").contains("onnxruntime/capi/"));
    }
}
