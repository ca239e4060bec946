//! Files from a Python wheel, kept in a per-user cache, for build scripts (feature `fetch`).
//!
//! Python wheels are zip files, and `pip download` fetches them through whatever package
//! index the machine is configured for, so a build script can get model files or test data
//! a wheel ships with no manual step. [`WheelCache`] downloads a pinned wheel once,
//! extracts only the entries asked for into a folder of the cache, and answers later calls
//! from the cache without running pip.
//!
//! ```no_run
//! # fn main() -> Result<(), ort_bind_codegen::fetch::FetchError> {
//! use ort_bind_codegen::fetch::WheelCache;
//! // build.rs
//! let root = WheelCache::new("onnx==1.23.2", "onnx-1.23.2-backend-data")
//!     .keep_prefix("onnx/backend/test/data/simple/")
//!     .get()?;
//! let model = root.join("onnx/backend/test/data/simple/test_sign_model/model.onnx");
//! # let _ = model;
//! # Ok(())
//! # }
//! ```
//!
//! The cache folder is `$ORT_BIND_CACHE_DIR`, else `$XDG_CACHE_HOME/ort-bind`, else
//! `$HOME/.cache/ort-bind` (the same convention as `ort-bind-runtime`'s build script, which
//! keeps ONNX Runtime there). A fetch extracts into a temporary folder next to the final one
//! and renames it into place, so a folder that exists is complete, and two builds racing to
//! fill it both end up with the same files.

use std::ffi::OsString;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

/// Why a wheel's files could not be provided.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FetchError {
    /// No cache folder: none of `ORT_BIND_CACHE_DIR`, `XDG_CACHE_HOME`, `HOME` is set.
    #[error(
        "no cache folder for `{requirement}`: set ORT_BIND_CACHE_DIR (or XDG_CACHE_HOME / HOME)"
    )]
    NoCacheDir {
        /// The wheel asked for.
        requirement: String,
    },
    /// The files are not cached and fetching was turned off (`ORT_BIND_NO_FETCH`).
    #[error("`{requirement}` is not in the cache at `{}` and ORT_BIND_NO_FETCH is set", folder.display())]
    NotCached {
        /// The wheel asked for.
        requirement: String,
        /// Where it would have been.
        folder: PathBuf,
    },
    /// `pip download` could not be run or failed.
    #[error("could not download `{requirement}` with pip: {detail}")]
    Pip {
        /// The wheel asked for.
        requirement: String,
        /// What each Python interpreter tried said.
        detail: String,
    },
    /// The wheel is not a readable zip, or has none of the entries asked for.
    #[error("wheel `{}`: {detail}", wheel.display())]
    Wheel {
        /// The downloaded wheel.
        wheel: PathBuf,
        /// What is wrong with it.
        detail: String,
    },
    /// Reading or writing the cache failed.
    #[error("cannot write the cache at `{}`: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
}

/// Which entries of the wheel to keep.
type Keep = Box<dyn Fn(&str) -> bool>;

/// A wheel pinned by a pip requirement, and the entries of it to keep in the cache.
pub struct WheelCache {
    requirement: String,
    folder: String,
    keep: Vec<Keep>,
    root: Option<PathBuf>,
    fetch: bool,
}

impl fmt::Debug for WheelCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WheelCache")
            .field("requirement", &self.requirement)
            .field("folder", &self.folder)
            .field("filters", &self.keep.len())
            .field("root", &self.root)
            .field("fetch", &self.fetch)
            .finish()
    }
}

impl WheelCache {
    /// Files of the wheel `requirement` (a pinned pip requirement such as `onnx==1.23.2`), kept
    /// in the cache folder named `folder`. Pin the version: the cache is keyed by `folder`
    /// alone and never refreshed. Fetching is on unless `ORT_BIND_NO_FETCH` is set.
    pub fn new(requirement: &str, folder: &str) -> Self {
        WheelCache {
            requirement: requirement.to_owned(),
            folder: folder.to_owned(),
            keep: Vec::new(),
            root: None,
            fetch: non_empty_var("ORT_BIND_NO_FETCH").is_none(),
        }
    }

    /// Keeps the wheel's files whose path (as the zip names it, `/`-separated) starts with
    /// `prefix`. With no filter at all, every file is kept.
    pub fn keep_prefix(self, prefix: &str) -> Self {
        let prefix = prefix.to_owned();
        self.keep(move |name| name.starts_with(&prefix))
    }

    /// Keeps the wheel's files for which `predicate` holds on their zip path.
    pub fn keep(mut self, predicate: impl Fn(&str) -> bool + 'static) -> Self {
        self.keep.push(Box::new(predicate));
        self
    }

    /// Uses `root` as the cache root instead of the one the environment names.
    pub fn cache_root(mut self, root: impl AsRef<Path>) -> Self {
        self.root = Some(root.as_ref().to_path_buf());
        self
    }

    /// Whether to run pip when the files are not cached (default: unless
    /// `ORT_BIND_NO_FETCH` is set).
    pub fn fetch(mut self, fetch: bool) -> Self {
        self.fetch = fetch;
        self
    }

    /// The folder the files are kept in (it may not exist yet).
    pub fn folder(&self) -> Result<PathBuf, FetchError> {
        let root = self
            .root
            .clone()
            .or_else(cache_root)
            .ok_or_else(|| FetchError::NoCacheDir {
                requirement: self.requirement.clone(),
            })?;
        Ok(root.join(&self.folder))
    }

    /// The folder holding the kept files at their wheel paths: from the cache when it is
    /// there (no pip call), else downloaded and extracted first.
    pub fn get(&self) -> Result<PathBuf, FetchError> {
        let folder = self.folder()?;
        if folder.is_dir() {
            return Ok(folder);
        }
        if !self.fetch {
            return Err(FetchError::NotCached {
                requirement: self.requirement.clone(),
                folder,
            });
        }
        let parent = folder.parent().unwrap_or(Path::new("."));
        fs::create_dir_all(parent).map_err(|source| FetchError::Io {
            path: parent.to_path_buf(),
            source,
        })?;
        let download = parent.join(format!(".{}.download-{}", self.folder, unique_suffix()));
        let staging = parent.join(format!(".{}.tmp-{}", self.folder, unique_suffix()));
        let result = self.fetch_into(&download, &staging, &folder);
        let _ = fs::remove_dir_all(&download);
        let _ = fs::remove_dir_all(&staging);
        result.map(|()| folder)
    }

    fn fetch_into(&self, download: &Path, staging: &Path, folder: &Path) -> Result<(), FetchError> {
        let wheel = download_wheel(&self.requirement, download)?;
        self.extract(&wheel, staging)?;
        match fs::rename(staging, folder) {
            Ok(()) => Ok(()),
            // Another build filled the folder first; its files are the same.
            Err(_) if folder.is_dir() => Ok(()),
            Err(source) => Err(FetchError::Io {
                path: folder.to_path_buf(),
                source,
            }),
        }
    }

    fn wanted(&self, name: &str) -> bool {
        self.keep.is_empty() || self.keep.iter().any(|keep| keep(name))
    }

    /// Extracts the kept files of `wheel` into `into`, at their (sanitised) wheel paths.
    fn extract(&self, wheel: &Path, into: &Path) -> Result<(), FetchError> {
        let bad = |detail: String| FetchError::Wheel {
            wheel: wheel.to_path_buf(),
            detail,
        };
        let io_err = |path: &Path| {
            let path = path.to_path_buf();
            move |source| FetchError::Io { path, source }
        };
        let file = fs::File::open(wheel).map_err(io_err(wheel))?;
        let mut archive =
            zip::ZipArchive::new(file).map_err(|e| bad(format!("not a zip file: {e}")))?;
        fs::create_dir_all(into).map_err(io_err(into))?;
        let mut kept = 0usize;
        for index in 0..archive.len() {
            let mut entry = archive
                .by_index(index)
                .map_err(|e| bad(format!("entry {index}: {e}")))?;
            if !entry.is_file() || !self.wanted(entry.name()) {
                continue;
            }
            // `enclosed_name` refuses absolute paths and `..`: nothing lands outside `into`.
            let relative = entry
                .enclosed_name()
                .ok_or_else(|| bad(format!("entry `{}` has an unsafe path", entry.name())))?;
            let target = into.join(relative);
            if let Some(dir) = target.parent() {
                fs::create_dir_all(dir).map_err(io_err(dir))?;
            }
            let mut out = fs::File::create(&target).map_err(io_err(&target))?;
            io::copy(&mut entry, &mut out).map_err(io_err(&target))?;
            kept += 1;
        }
        if kept == 0 {
            return Err(bad(format!(
                "none of its entries matched what `{}` keeps",
                self.folder
            )));
        }
        Ok(())
    }
}

fn non_empty_var(name: &str) -> Option<OsString> {
    std::env::var_os(name).filter(|v| !v.is_empty())
}

/// The per-user cache root: `$ORT_BIND_CACHE_DIR`, else `$XDG_CACHE_HOME/ort-bind`, else
/// `$HOME/.cache/ort-bind`; `None` when none of them is set.
pub fn cache_root() -> Option<PathBuf> {
    if let Some(dir) = non_empty_var("ORT_BIND_CACHE_DIR") {
        return Some(PathBuf::from(dir));
    }
    if let Some(dir) = non_empty_var("XDG_CACHE_HOME") {
        return Some(PathBuf::from(dir).join("ort-bind"));
    }
    non_empty_var("HOME").map(|home| PathBuf::from(home).join(".cache").join("ort-bind"))
}

/// The environment variables [`WheelCache`] reads, for `cargo:rerun-if-env-changed`.
pub const ENV_VARS: &[&str] = &[
    "ORT_BIND_CACHE_DIR",
    "ORT_BIND_NO_FETCH",
    "XDG_CACHE_HOME",
    "HOME",
];

/// A name unique to this process and moment, for temporary folders.
fn unique_suffix() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{}-{nanos}", std::process::id())
}

/// Runs `pip download` for `requirement` into `into`, trying `python3` then `python`;
/// returns the wheel's path.
fn download_wheel(requirement: &str, into: &Path) -> Result<PathBuf, FetchError> {
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
            .arg(requirement)
            .arg("-d")
            .arg(into)
            .stdin(Stdio::null())
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
                    .map_err(|source| FetchError::Io {
                        path: into.to_path_buf(),
                        source,
                    })?
                    .filter_map(|entry| entry.ok().map(|e| e.path()))
                    .find(|p| p.extension().is_some_and(|x| x == "whl"));
                return wheel.ok_or_else(|| FetchError::Pip {
                    requirement: requirement.to_owned(),
                    detail: format!("`{python} -m pip download` succeeded but left no wheel"),
                });
            }
        }
    }
    Err(FetchError::Pip {
        requirement: requirement.to_owned(),
        detail: failures.join("; "),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn temp_dir(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ort-bind-fetch-{tag}-{}", unique_suffix()));
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn write_wheel(path: &Path, entries: &[(&str, &[u8])]) {
        let mut zip = zip::ZipWriter::new(fs::File::create(path).unwrap());
        for (name, data) in entries {
            zip.start_file(*name, zip::write::SimpleFileOptions::default())
                .unwrap();
            zip.write_all(data).unwrap();
        }
        zip.finish().unwrap();
    }

    #[test]
    fn extracts_only_kept_entries_at_their_paths() {
        let dir = temp_dir("extract");
        let wheel = dir.join("pkg-1.0-py3-none-any.whl");
        write_wheel(
            &wheel,
            &[
                ("pkg/data/a/model.onnx", b"model"),
                ("pkg/data/a/test_data_set_0/input_0.pb", b"input"),
                ("pkg/data/b/model.onnx", b"other"),
                ("pkg/__init__.py", b""),
            ],
        );
        let cache = WheelCache::new("pkg==1.0", "pkg-data").keep_prefix("pkg/data/a/");
        let into = dir.join("out");
        cache.extract(&wheel, &into).unwrap();
        assert_eq!(
            fs::read(into.join("pkg/data/a/model.onnx")).unwrap(),
            b"model"
        );
        assert_eq!(
            fs::read(into.join("pkg/data/a/test_data_set_0/input_0.pb")).unwrap(),
            b"input"
        );
        assert!(!into.join("pkg/data/b").exists());
        assert!(!into.join("pkg/__init__.py").exists());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_wheel_without_kept_entries_is_an_error() {
        let dir = temp_dir("empty");
        let wheel = dir.join("pkg-1.0-py3-none-any.whl");
        write_wheel(&wheel, &[("pkg/__init__.py", b"")]);
        let cache = WheelCache::new("pkg==1.0", "pkg-data").keep_prefix("pkg/data/");
        let err = cache.extract(&wheel, &dir.join("out")).unwrap_err();
        assert!(
            err.to_string().contains("none of its entries matched"),
            "{err}"
        );
        let not_zip = dir.join("bad.whl");
        fs::write(&not_zip, b"not a zip").unwrap();
        let err = cache.extract(&not_zip, &dir.join("out2")).unwrap_err();
        assert!(err.to_string().contains("not a zip file"), "{err}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_cached_folder_is_used_without_pip_and_a_missing_one_is_not_fetched_when_off() {
        let root = temp_dir("cached");
        let cache = WheelCache::new("surely-not-a-package==0.0.0", "present")
            .cache_root(&root)
            .fetch(false);
        let err = cache.get().unwrap_err();
        assert!(matches!(err, FetchError::NotCached { .. }), "{err}");
        assert!(err.to_string().contains("ORT_BIND_NO_FETCH"), "{err}");
        fs::create_dir_all(root.join("present")).unwrap();
        assert_eq!(cache.get().unwrap(), root.join("present"));
        fs::remove_dir_all(&root).unwrap();
    }
}
