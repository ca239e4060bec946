//! Why the ONNX Runtime library could not be made ready: the errors of
//! [`library::init`](crate::library::init), defined here, below everything that reports
//! them, and re-exported by [`library`](crate::library).

use std::fmt;
use std::path::PathBuf;

/// How to provide the library; ends every [`LibraryError::NotLoaded`] message.
pub(crate) const HOW_TO_PROVIDE: &str = "set ORT_DYLIB_PATH to the path of libonnxruntime.so (ONNX Runtime 1.31), or install the `onnxruntime==1.31.1` Python package, or build with the `fetch-runtime` feature so the build fetches it";

/// Where a [`Candidate`] path comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CandidateSource {
    /// The `ORT_DYLIB_PATH` environment variable, read at run time.
    EnvVar,
    /// The copy fetched by the build script (feature `fetch-runtime`); its path is baked in.
    Bundled,
    /// The per-user cache folder, computed at run time.
    Cache,
    /// The `capi/` folder of an installed `onnxruntime` Python package.
    PythonPackage,
    /// The platform's default library name, resolved by the system loader.
    System,
    /// The library the `ort` crate had loaded before ort-bind needed one (the `ort` feature):
    /// ort-bind uses the same one.
    #[cfg(feature = "ort")]
    OrtCrate,
}

impl fmt::Display for CandidateSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::EnvVar => "ORT_DYLIB_PATH",
            Self::Bundled => "copy fetched at build time",
            Self::Cache => "ort-bind cache",
            Self::PythonPackage => "onnxruntime Python package",
            Self::System => "system loader",
            #[cfg(feature = "ort")]
            Self::OrtCrate => "the `ort` crate's library",
        })
    }
}

/// One place [`init`](crate::library::init) looks for the library.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// Where the path comes from.
    pub source: CandidateSource,
    /// The path handed to the loader (a bare file name for [`CandidateSource::System`]).
    pub path: PathBuf,
}

/// A candidate that failed to load, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    /// The place tried.
    pub candidate: Candidate,
    /// Why it could not be used (missing file, loader error, wrong version, ...).
    pub reason: String,
}

/// Why the ONNX Runtime library could not be made ready.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum LibraryError {
    /// No candidate could be loaded. The message lists each one and why it failed, then how to
    /// provide the library.
    NotLoaded {
        /// Every place tried, in order.
        attempts: Vec<Attempt>,
    },
    /// The library loaded, but creating its environment failed.
    Environment {
        /// The library that was loaded.
        path: PathBuf,
        /// Its version.
        version: String,
        /// ONNX Runtime's error.
        message: String,
    },
    /// [`init_with`](crate::library::init_with) was called after the environment had already been created.
    AlreadyInitialized {
        /// The library already loaded.
        path: PathBuf,
    },
    /// The `ort` crate could not be pointed at the library ort-bind loaded (the `ort`
    /// feature), so the two would not share one ONNX Runtime.
    #[cfg(feature = "ort")]
    OrtCrate {
        /// The library ort-bind loaded.
        path: PathBuf,
        /// The `ort` crate's error.
        message: String,
    },
}

impl fmt::Display for LibraryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LibraryError::NotLoaded { attempts } => write!(f, "{}", not_loaded_message(attempts)),
            LibraryError::Environment {
                path,
                version,
                message,
            } => write!(
                f,
                "loaded ONNX Runtime {version} from `{}`, but creating its environment failed: {message}",
                path.display()
            ),
            LibraryError::AlreadyInitialized { path } => write!(
                f,
                "the ONNX Runtime environment already exists (library `{}`), so init_with cannot configure it; call init_with before anything else uses ort-bind",
                path.display()
            ),
            #[cfg(feature = "ort")]
            LibraryError::OrtCrate { path, message } => write!(
                f,
                "ort-bind loaded ONNX Runtime from `{}`, but the `ort` crate could not load the same library: {message}",
                path.display()
            ),
        }
    }
}

impl std::error::Error for LibraryError {}

fn not_loaded_message(attempts: &[Attempt]) -> String {
    use fmt::Write as _;
    let mut out = format!(
        "could not load the ONNX Runtime shared library (ort-bind needs ONNX Runtime 1.{} or newer); tried:",
        ort_sys::ORT_API_VERSION
    );
    if attempts.is_empty() {
        out.push_str("\n  (no candidate)");
    }
    for attempt in attempts {
        let _ = write!(
            out,
            "\n  - {} `{}`: {}",
            attempt.candidate.source,
            attempt.candidate.path.display(),
            attempt.reason
        );
    }
    if attempts
        .iter()
        .any(|a| a.candidate.source == CandidateSource::EnvVar)
    {
        out.push_str("\n  (ORT_DYLIB_PATH is set, so no other place was tried)");
    }
    if let Some(note) = option_env!("ORT_BIND_BUILD_NOTE").filter(|n| !n.is_empty()) {
        let _ = write!(out, "\n  (when ort-bind-runtime was built, {note})");
    }
    let _ = write!(out, "\nTo provide it: {HOW_TO_PROVIDE}.");
    out
}
