//! [`WheelCache`]: the kept files of one pinned wheel, fetched once.

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::cache::{NO_FETCH_VAR, cache_root, non_empty_var};
use crate::python;

/// Why a wheel's files could not be provided.
#[derive(Debug)]
#[non_exhaustive]
pub enum FetchError {
    /// No cache folder: none of `ORT_BIND_CACHE_DIR`, `XDG_CACHE_HOME`, `HOME` is set.
    NoCacheDir {
        /// The wheel asked for.
        requirement: String,
    },
    /// The files are not cached and fetching is off (`ORT_BIND_NO_FETCH`, or
    /// [`WheelCache::fetch`]`(false)`).
    NotCached {
        /// The wheel asked for.
        requirement: String,
        /// Where it would have been.
        folder: PathBuf,
    },
    /// `pip download` could not be run or failed.
    Pip {
        /// The wheel asked for.
        requirement: String,
        /// What each Python interpreter tried said.
        detail: String,
    },
    /// The wheel is not a readable zip, or has none of the entries asked for.
    Wheel {
        /// The downloaded wheel.
        wheel: PathBuf,
        /// What is wrong with it.
        detail: String,
    },
    /// Reading or writing the cache failed.
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
}

impl fmt::Display for FetchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FetchError::NoCacheDir { requirement } => write!(
                f,
                "no cache folder for `{requirement}`: set ORT_BIND_CACHE_DIR (or XDG_CACHE_HOME / HOME)"
            ),
            FetchError::NotCached {
                requirement,
                folder,
            } => write!(
                f,
                "`{requirement}` is not in the cache at `{}` and fetching is off ({NO_FETCH_VAR})",
                folder.display()
            ),
            FetchError::Pip {
                requirement,
                detail,
            } => write!(f, "could not download `{requirement}` with pip: {detail}"),
            FetchError::Wheel { wheel, detail } => {
                write!(f, "wheel `{}`: {detail}", wheel.display())
            }
            FetchError::Io { path, source } => {
                write!(
                    f,
                    "cannot write the cache at `{}`: {source}",
                    path.display()
                )
            }
        }
    }
}

impl std::error::Error for FetchError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FetchError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Which entries of the wheel to keep.
type Keep = Box<dyn Fn(&str) -> bool>;

/// A wheel pinned by a pip requirement, and the entries of it to keep in the cache.
///
/// A fetch extracts into a temporary folder next to the final one and renames it into
/// place, so a folder that exists is complete, and two builds racing to fill it both end
/// up with the same files.
pub struct WheelCache {
    requirement: String,
    folder: String,
    keep: Vec<Keep>,
    strip: String,
    root: Option<PathBuf>,
    index_url: Option<String>,
    fetch: bool,
}

impl fmt::Debug for WheelCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WheelCache")
            .field("requirement", &self.requirement)
            .field("folder", &self.folder)
            .field("filters", &self.keep.len())
            .field("strip", &self.strip)
            .field("root", &self.root)
            .field("index_url", &self.index_url)
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
            strip: String::new(),
            root: None,
            index_url: None,
            fetch: non_empty_var(NO_FETCH_VAR).is_none(),
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

    /// Writes each kept file at its wheel path minus `prefix` (files outside `prefix` are
    /// not kept): `strip_prefix("pkg/capi/")` puts `pkg/capi/lib.so` at `<folder>/lib.so`.
    pub fn strip_prefix(mut self, prefix: &str) -> Self {
        self.strip = prefix.to_owned();
        self
    }

    /// Uses `root` as the cache root instead of the one the environment names.
    pub fn cache_root(mut self, root: impl AsRef<Path>) -> Self {
        self.root = Some(root.as_ref().to_path_buf());
        self
    }

    /// Fetches from the package index at `url` (pip's `--index-url`) instead of the one
    /// pip is configured for.
    pub fn index_url(mut self, url: &str) -> Self {
        self.index_url = Some(url.to_owned());
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

    /// The folder holding the kept files: from the cache when it is there (no pip call),
    /// else downloaded and extracted first.
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
        fs::create_dir_all(download).map_err(|source| FetchError::Io {
            path: download.to_path_buf(),
            source,
        })?;
        let wheel = python::pip_download(&self.requirement, self.index_url.as_deref(), download)
            .map_err(|detail| FetchError::Pip {
                requirement: self.requirement.clone(),
                detail,
            })?;
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
        name.starts_with(&self.strip)
            && name.len() > self.strip.len()
            && (self.keep.is_empty() || self.keep.iter().any(|keep| keep(name)))
    }

    /// Extracts the kept files of `wheel` into `into`.
    fn extract(&self, wheel: &Path, into: &Path) -> Result<(), FetchError> {
        let bad = |detail: String| FetchError::Wheel {
            wheel: wheel.to_path_buf(),
            detail,
        };
        let names: Vec<String> = python::list_zip(wheel)
            .map_err(bad)?
            .into_iter()
            .filter(|name| self.wanted(name))
            .collect();
        if let Some(name) = names.iter().find(|name| !is_enclosed(name)) {
            // Nothing may land outside `into`.
            return Err(bad(format!("entry `{name}` has an unsafe path")));
        }
        if names.is_empty() {
            return Err(bad(format!(
                "none of its entries matched what `{}` keeps",
                self.folder
            )));
        }
        fs::create_dir_all(into).map_err(|source| FetchError::Io {
            path: into.to_path_buf(),
            source,
        })?;
        python::extract_zip(wheel, &names, into, &self.strip).map_err(bad)?;
        // Dated a little in the past, so a build script's `rerun-if-changed` on an
        // extracted file does not see it as changed by the very build that fetched it.
        let old = SystemTime::now() - Duration::from_secs(3600);
        for name in &names {
            let path = into.join(&name[self.strip.len()..]);
            if let Ok(file) = fs::File::options().write(true).open(&path) {
                let _ = file.set_modified(old);
            }
        }
        Ok(())
    }
}

/// Whether a zip entry name stays inside the folder it is extracted into: relative, no
/// `..`, no empty or Windows-drive components, no NUL, not too deep to be a real path.
fn is_enclosed(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('/')
        && !name.contains('\\')
        && !name.contains('\0')
        && name
            .split('/')
            .all(|part| !part.is_empty() && part != ".." && part != "." && !part.contains(':'))
}

/// A name unique to this process and moment, for temporary folders.
pub(crate) fn unique_suffix() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{}-{nanos}", std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn temp_dir(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ort-bind-fetch-{tag}-{}", unique_suffix()));
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// Writes a zip with Python's `zipfile`, the same library that reads it.
    fn write_wheel(path: &Path, entries: &[(&str, &str)]) {
        let mut script = format!(
            "import zipfile\nz = zipfile.ZipFile({:?}, 'w')\n",
            path.display().to_string()
        );
        for (name, data) in entries {
            script.push_str(&format!("z.writestr({name:?}, {data:?})\n"));
        }
        script.push_str("z.close()\n");
        let status = Command::new("python3")
            .args(["-c", &script])
            .status()
            .unwrap();
        assert!(status.success());
    }

    #[test]
    fn extracts_only_kept_entries_at_their_paths() {
        let dir = temp_dir("extract");
        let wheel = dir.join("pkg-1.0-py3-none-any.whl");
        write_wheel(
            &wheel,
            &[
                ("pkg/data/a/model.onnx", "model"),
                ("pkg/data/a/test_data_set_0/input_0.pb", "input"),
                ("pkg/data/b/model.onnx", "other"),
                ("pkg/__init__.py", ""),
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

        // With a stripped prefix, files land flat.
        let flat = WheelCache::new("pkg==1.0", "flat").strip_prefix("pkg/data/a/");
        let into = dir.join("flat");
        flat.extract(&wheel, &into).unwrap();
        assert_eq!(fs::read(into.join("model.onnx")).unwrap(), b"model");
        assert!(into.join("test_data_set_0/input_0.pb").is_file());
        assert!(!into.join("pkg").exists());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bad_wheels_are_errors() {
        let dir = temp_dir("bad");
        let wheel = dir.join("pkg-1.0-py3-none-any.whl");
        write_wheel(&wheel, &[("pkg/__init__.py", "")]);
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

        let evil = dir.join("evil.whl");
        write_wheel(&evil, &[("pkg/../../escape.txt", "x")]);
        let err = WheelCache::new("pkg==1.0", "evil")
            .extract(&evil, &dir.join("out3"))
            .unwrap_err();
        assert!(err.to_string().contains("unsafe path"), "{err}");
        assert!(!dir.join("escape.txt").exists());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn enclosed_names() {
        assert!(is_enclosed("a/b/c.so"));
        for bad in [
            "", "/abs", "a/../b", "..", "a//b", "./a", "c:/x", "a\\b", "a\0",
        ] {
            assert!(!is_enclosed(bad), "{bad:?}");
        }
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

    #[test]
    fn an_unreachable_index_is_a_pip_error_in_seconds() {
        let root = temp_dir("unreachable");
        let started = std::time::Instant::now();
        let err = WheelCache::new("surely-not-a-package==0.0.0", "absent")
            .cache_root(&root)
            .index_url("http://127.0.0.1:9/simple") // a closed port
            .get()
            .unwrap_err();
        assert!(matches!(err, FetchError::Pip { .. }), "{err}");
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{:?}",
            started.elapsed()
        );
        assert!(!root.join("absent").exists());
        fs::remove_dir_all(&root).unwrap();
    }
}
