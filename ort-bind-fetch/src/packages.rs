//! [`PythonPackages`]: pinned Python packages installed once into the cache
//! (`pip install --target`), for build scripts that run a Python script of their own.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::cache::{NO_FETCH_VAR, cache_root, non_empty_var};
use crate::python;
use crate::wheel::{FetchError, unique_suffix};

/// Python packages pinned by pip requirements, installed into a folder of the cache.
///
/// The folder is per interpreter (`<folder>-cpython-311`: binary wheels such as numpy's
/// are built for one), filled by `pip install --target` into a temporary folder next to it
/// and renamed into place, so a folder that exists is complete. A later [`get`] finds it
/// and runs no pip. Pin every requirement that matters: the cache is never refreshed.
///
/// [`get`]: PythonPackages::get
///
/// ```no_run
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use ort_bind_fetch::PythonPackages;
/// // build.rs
/// let env = PythonPackages::new(&["onnx==1.23.2", "numpy"], "python-onnx-1.23.2").get()?;
/// let status = env.command().arg("build/make_data.py").status()?;
/// assert!(status.success());
/// # Ok(())
/// # }
/// ```
pub struct PythonPackages {
    requirements: Vec<String>,
    folder: String,
    root: Option<PathBuf>,
    index_url: Option<String>,
    fetch: bool,
}

impl fmt::Debug for PythonPackages {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PythonPackages")
            .field("requirements", &self.requirements)
            .field("folder", &self.folder)
            .field("root", &self.root)
            .field("index_url", &self.index_url)
            .field("fetch", &self.fetch)
            .finish()
    }
}

impl PythonPackages {
    /// The packages `requirements` (pip requirements, pinned), kept in cache folders named
    /// `folder` plus the interpreter's tag. Installing is on unless `ORT_BIND_NO_FETCH` is
    /// set.
    pub fn new(requirements: &[&str], folder: &str) -> Self {
        PythonPackages {
            requirements: requirements.iter().map(|r| (*r).to_owned()).collect(),
            folder: folder.to_owned(),
            root: None,
            index_url: None,
            fetch: non_empty_var(NO_FETCH_VAR).is_none(),
        }
    }

    /// Uses `root` as the cache root instead of the one the environment names.
    pub fn cache_root(mut self, root: impl AsRef<Path>) -> Self {
        self.root = Some(root.as_ref().to_path_buf());
        self
    }

    /// Installs from the package index at `url` (pip's `--index-url`) instead of the one
    /// pip is configured for.
    pub fn index_url(mut self, url: &str) -> Self {
        self.index_url = Some(url.to_owned());
        self
    }

    /// Whether to run pip when the packages are not cached (default: unless
    /// `ORT_BIND_NO_FETCH` is set).
    pub fn fetch(mut self, fetch: bool) -> Self {
        self.fetch = fetch;
        self
    }

    fn requirement(&self) -> String {
        self.requirements.join(" ")
    }

    /// The installed packages: from the cache when they are there (no pip call), else
    /// installed first.
    pub fn get(&self) -> Result<PythonEnv, FetchError> {
        let (python, tag) = python::interpreter().map_err(|detail| FetchError::Pip {
            requirement: self.requirement(),
            detail,
        })?;
        let root = self
            .root
            .clone()
            .or_else(cache_root)
            .ok_or_else(|| FetchError::NoCacheDir {
                requirement: self.requirement(),
            })?;
        let name = format!("{}-{tag}", self.folder);
        let folder = root.join(&name);
        let env = PythonEnv {
            python,
            path: folder.clone(),
        };
        if folder.is_dir() {
            return Ok(env);
        }
        if !self.fetch {
            return Err(FetchError::NotCached {
                requirement: self.requirement(),
                folder,
            });
        }
        fs::create_dir_all(&root).map_err(|source| FetchError::Io {
            path: root.clone(),
            source,
        })?;
        let staging = root.join(format!(".{name}.tmp-{}", unique_suffix()));
        let installed = python::pip_install_target(
            python,
            &self.requirements,
            self.index_url.as_deref(),
            &staging,
        )
        .map_err(|detail| FetchError::Pip {
            requirement: self.requirement(),
            detail,
        })
        .and_then(|()| match fs::rename(&staging, &folder) {
            Ok(()) => Ok(()),
            // Another build installed them first; its packages are the same.
            Err(_) if folder.is_dir() => Ok(()),
            Err(source) => Err(FetchError::Io {
                path: folder.clone(),
                source,
            }),
        });
        let _ = fs::remove_dir_all(&staging);
        installed.map(|()| env)
    }
}

/// Packages installed by [`PythonPackages::get`] and the interpreter they were installed
/// for.
#[derive(Debug, Clone)]
pub struct PythonEnv {
    python: &'static str,
    path: PathBuf,
}

impl PythonEnv {
    /// The folder the packages are in (what `PYTHONPATH` names).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A command running the interpreter with these packages first on its path (and the
    /// user's own site-packages off, so that they cannot shadow the pinned ones); add the
    /// script and its arguments.
    pub fn command(&self) -> Command {
        let mut command = Command::new(self.python);
        command
            .env("PYTHONPATH", &self.path)
            .env("PYTHONNOUSERSITE", "1")
            .env("PYTHONDONTWRITEBYTECODE", "1");
        command
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ort-bind-packages-{tag}-{}", unique_suffix()));
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn installed_packages_are_used_without_pip_and_missing_ones_are_not_installed_when_off() {
        let root = temp_dir("cached");
        let packages = PythonPackages::new(&["surely-not-a-package==0.0.0"], "present")
            .cache_root(&root)
            .fetch(false);
        let err = packages.get().unwrap_err();
        assert!(matches!(err, FetchError::NotCached { .. }), "{err}");
        let FetchError::NotCached { folder, .. } = &err else {
            unreachable!()
        };
        // A package of our own in the folder pip would have filled is importable.
        fs::create_dir_all(folder.join("ortbindprobe")).unwrap();
        fs::write(folder.join("ortbindprobe/__init__.py"), "VALUE = 42\n").unwrap();
        let env = packages.get().unwrap();
        assert_eq!(env.path(), folder.as_path());
        let out = env
            .command()
            .args(["-c", "import ortbindprobe; print(ortbindprobe.VALUE)"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "42");
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn an_unreachable_index_is_a_pip_error_in_seconds_and_leaves_no_folder() {
        let root = temp_dir("unreachable");
        let started = std::time::Instant::now();
        let err = PythonPackages::new(&["surely-not-a-package==0.0.0"], "absent")
            .cache_root(&root)
            .index_url("http://127.0.0.1:9/simple") // a closed port
            .get()
            .unwrap_err();
        assert!(matches!(err, FetchError::Pip { .. }), "{err}");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(fs::read_dir(&root).unwrap().count(), 0, "{root:?}");
        fs::remove_dir_all(&root).unwrap();
    }
}
