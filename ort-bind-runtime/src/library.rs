//! Finding and loading the ONNX Runtime shared library.
//!
//! ONNX Runtime is a shared library opened at run time. Everything in this crate that touches
//! ONNX Runtime goes through [`init`] first, which looks for the library in a fixed order,
//! loads it, creates ONNX Runtime's environment (one per process) and turns every failure
//! into a [`LibraryError`] that says what was tried and how to provide the library.
//!
//! The places looked at, in order ([`candidates`] lists them):
//! 1. `ORT_DYLIB_PATH` at run time. When set it wins: if it cannot be loaded, [`init`] fails
//!    and nothing else is tried.
//! 2. The copy the build script fetched (feature `fetch-runtime`), whose path is baked into the
//!    crate at build time, if that file still exists.
//! 3. The same per-user cache, computed at run time (`$ORT_BIND_CACHE_DIR`, else
//!    `$XDG_CACHE_HOME/ort-bind`, else `$HOME/.cache/ort-bind`; inside it
//!    `onnxruntime-1.31.1-<os>-<arch>/`), so a binary built elsewhere still finds it.
//! 4. The `capi/` folder of an installed `onnxruntime` Python package, found by asking
//!    `python3` (then `python`) where the package is, without importing it.
//! 5. The platform's default name (`libonnxruntime.so`, `libonnxruntime.dylib`,
//!    `onnxruntime.dll`), through the system loader: the executable's folder, then the
//!    loader's search path (`LD_LIBRARY_PATH`, ...).
//!
//! ```no_run
//! let lib = ort_bind_runtime::library::init()?;
//! println!("ONNX Runtime {} from {}", lib.version(), lib.path().display());
//! # Ok::<(), ort_bind_runtime::library::LibraryError>(())
//! ```

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock, PoisonError};

use ort_bind_fetch::CacheEnv;
use ort_bind_fetch::onnxruntime::Platform;

pub use crate::error::library::{Attempt, Candidate, CandidateSource, LibraryError};

/// The ONNX Runtime release this crate is built against and that the build script fetches.
pub const ORT_VERSION: &str = ort_bind_fetch::onnxruntime::VERSION;

/// The oldest ONNX Runtime minor version ort-bind works with (`1.31`): the version of the C
/// API it calls.
pub const REQUIRED_MINOR: u32 = crate::sys::API_VERSION;

/// Name of the environment variable that points at the library and overrides every other place.
pub const DYLIB_PATH_VAR: &str = "ORT_DYLIB_PATH";

/// The loaded ONNX Runtime library and its environment, alive for the whole process.
#[derive(Debug)]
pub struct LoadedLibrary {
    path: PathBuf,
    version: String,
    source: CandidateSource,
    environment: crate::sys::Env,
    /// The telemetry setting the environment was created with (read by `ort_interop`).
    #[cfg_attr(not(feature = "ort"), allow(dead_code))]
    telemetry: bool,
}

impl LoadedLibrary {
    /// The library file that was loaded (as the system loader reports it where it can).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The library's version string, e.g. `1.31.1` (`"unknown"` where it cannot be read).
    pub fn version(&self) -> &str {
        &self.version
    }

    /// Which candidate the library came from.
    pub fn source(&self) -> CandidateSource {
        self.source
    }

    /// ONNX Runtime's build description, e.g. `ORT Build Info: git-branch=rel-1.31.1, ...`.
    pub fn build_info(&self) -> String {
        crate::sys::build_info().unwrap_or_default()
    }

    /// The C API's function table (`OrtApi`, version [`REQUIRED_MINOR`]) of the loaded
    /// library, for calls ort-bind does not wrap, e.g. on
    /// [`Session::as_raw`](crate::Session::as_raw). Calling its functions is `unsafe`: the
    /// C API's contracts apply, and objects ort-bind owns must not be released.
    ///
    /// ```no_run
    /// # fn main() -> ort_bind_runtime::Result<()> {
    /// use ort_bind_runtime::{Session, SessionOptions, library};
    /// let session = Session::from_file("model.onnx", &SessionOptions::new())?;
    /// let api = library::init()?.api();
    /// let mut count = 0usize;
    /// // SAFETY: a live session and a valid out-pointer.
    /// let status = unsafe { (api.SessionGetInputCount)(session.as_raw().as_ptr(), &mut count) };
    /// assert!(status.0.is_null());
    /// # Ok(()) }
    /// ```
    pub fn api(&self) -> &'static ort_sys::OrtApi {
        crate::sys::api()
    }

    /// The environment every session is created in.
    pub(crate) fn environment(&self) -> &crate::sys::Env {
        &self.environment
    }

    /// Whether the environment was created with telemetry events on.
    #[cfg(feature = "ort")]
    pub(crate) fn telemetry(&self) -> bool {
        self.telemetry
    }
}

/// How [`init_with`] creates ONNX Runtime's environment: ort-bind's defaults are the name
/// `ort-bind` in ONNX Runtime's logs and telemetry off (see [`crate::logging`]).
///
/// ```no_run
/// use ort_bind_runtime::library::{self, EnvironmentOptions};
/// library::init_with(EnvironmentOptions::new().name("my-service"))?;
/// # Ok::<(), ort_bind_runtime::library::LibraryError>(())
/// ```
#[derive(Debug, Clone)]
pub struct EnvironmentOptions {
    name: String,
    telemetry: bool,
}

impl Default for EnvironmentOptions {
    fn default() -> Self {
        EnvironmentOptions {
            name: "ort-bind".into(),
            telemetry: false,
        }
    }
}

impl EnvironmentOptions {
    /// ort-bind's defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// The log id ONNX Runtime prints with its messages (a NUL byte ends it).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Whether ONNX Runtime records telemetry events (off by default; also set
    /// `ORT_DISABLE_TELEMETRY=0` to let it create its telemetry store).
    pub fn telemetry(mut self, on: bool) -> Self {
        self.telemetry = on;
        self
    }
}

/// The library once it is loaded and the environment created.
static LOADED: OnceLock<LoadedLibrary> = OnceLock::new();
/// The library loaded (path, version, source) once a load succeeded; the first library loaded
/// stays for the whole process, so this is set once even if creating the environment then
/// fails.
static DYLIB: OnceLock<(PathBuf, String, CandidateSource)> = OnceLock::new();
/// Serialises attempts, so concurrent callers load once.
static INIT_LOCK: Mutex<()> = Mutex::new(());

/// Finds and loads ONNX Runtime and creates its environment with default settings.
///
/// Every ort-bind call that needs ONNX Runtime calls it; call it yourself to report a missing
/// library early, or to see which one was loaded. It is idempotent and thread-safe: the first
/// success is kept for the whole process and later calls return it at once. A failure is not
/// kept: the next call tries again (so a caller may, for example, set `ORT_DYLIB_PATH` and
/// retry); concurrent callers wait for one attempt at a time.
///
/// # Errors
/// [`LibraryError::NotLoaded`] when no candidate could be loaded (see the module docs for the
/// order), [`LibraryError::Environment`] when the environment could not be created.
pub fn init() -> Result<&'static LoadedLibrary, LibraryError> {
    if let Some(loaded) = LOADED.get() {
        return Ok(loaded);
    }
    init_inner(None)
}

/// Like [`init`], but creates the environment with `options` instead of the defaults.
///
/// # Errors
/// As [`init`], and [`LibraryError::AlreadyInitialized`] when the environment already exists
/// (created by an earlier [`init`] or `init_with`): there is one per process.
pub fn init_with(options: EnvironmentOptions) -> Result<&'static LoadedLibrary, LibraryError> {
    init_inner(Some(options))
}

/// The loaded library, if [`init`] has succeeded; never loads anything.
pub fn get() -> Option<&'static LoadedLibrary> {
    LOADED.get()
}

fn init_inner(
    configure: Option<EnvironmentOptions>,
) -> Result<&'static LoadedLibrary, LibraryError> {
    let _guard = INIT_LOCK.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(loaded) = LOADED.get() {
        return match configure {
            None => Ok(loaded),
            Some(_) => Err(LibraryError::AlreadyInitialized {
                path: loaded.path.clone(),
            }),
        };
    }
    opt_out_of_telemetry_store();
    let (path, version, source) = match DYLIB.get() {
        Some(found) => found.clone(),
        None => {
            #[cfg(feature = "ort")]
            let found = match ort_crate::its_library() {
                Some(found) => found,
                None => {
                    let found = load_first(&CandidateEnv::current())?;
                    ort_crate::give_library(&found.0)?;
                    found
                }
            };
            #[cfg(not(feature = "ort"))]
            let found = load_first(&CandidateEnv::current())?;
            DYLIB.get_or_init(|| found).clone()
        }
    };
    // Quiet and private by default (see `logging`): messages go to the `log` crate at the
    // level its filter lets through, telemetry is off.
    let options = configure.unwrap_or_default();
    let name = std::ffi::CString::new(options.name.split('\0').next().unwrap_or_default())
        .unwrap_or_default();
    let environment = crate::sys::Env::new(
        &name,
        crate::logging::initial_severity(),
        crate::logging::forward,
        options.telemetry,
    )
    .map_err(|e| LibraryError::Environment {
        path: path.clone(),
        version: version.clone(),
        message: e.to_string(),
    })?;
    Ok(LOADED.get_or_init(|| LoadedLibrary {
        path,
        version,
        source,
        environment,
        telemetry: options.telemetry,
    }))
}

/// One library for ort-bind and the `ort` crate (the `ort` feature), whichever needs it
/// first: ort-bind takes the one `ort` has loaded ([`its_library`](ort_crate::its_library)),
/// or else loads its own and points `ort` at it ([`give_library`](ort_crate::give_library)).
/// ONNX Runtime keeps one environment per process, so the environment is shared too.
#[cfg(feature = "ort")]
mod ort_crate {
    use std::path::{Path, PathBuf};

    use super::{CandidateSource, LibraryError, native};

    /// The library the `ort` crate has loaded, now ort-bind's too (path, version, source);
    /// `None` when `ort` has none yet. Loads nothing new: the file `ort`'s functions come
    /// from is opened again (the loader hands back the loaded library), so ort-bind calls the
    /// same C API table; where that file cannot be named, `ort`'s table is taken as it is.
    pub(super) fn its_library() -> Option<(PathBuf, String, CandidateSource)> {
        if !crate::sys::ort_has_library() {
            return None;
        }
        let api = crate::sys::ort_api();
        let file = native::library_of(api.GetBuildInfoString as *const std::ffi::c_void);
        // The same file gives the same loaded library, whose `GetApi` hands out the table
        // `ort` took (unless `ort::set_api` gave `ort` a copy: its functions are still this
        // file's).
        if let Some(file) = &file
            && let Ok(version) = crate::sys::load(file)
        {
            return Some((file.clone(), version, CandidateSource::OrtCrate));
        }
        crate::sys::adopt(api);
        let path = file.unwrap_or_else(|| PathBuf::from("(the `ort` crate's library)"));
        Some((path, "unknown".into(), CandidateSource::OrtCrate))
    }

    /// Points the `ort` crate at `path`, the library ort-bind just loaded (a no-op if `ort`
    /// has loaded one meanwhile).
    pub(super) fn give_library(path: &Path) -> Result<(), LibraryError> {
        crate::sys::share_library_with_ort(path).map_err(|message| LibraryError::OrtCrate {
            path: path.to_owned(),
            message,
        })
    }
}

/// The variable ONNX Runtime reads before it creates its telemetry store (a `deviceid` file
/// and an `onnxruntime.db` under `~/.cache/Microsoft/DeveloperTools/.onnxruntime/`, written
/// even when telemetry events are disabled through the C API).
pub const DISABLE_TELEMETRY_VAR: &str = "ORT_DISABLE_TELEMETRY";

/// Sets `ORT_DISABLE_TELEMETRY=1` for this process before ONNX Runtime is loaded, unless
/// the program set it (to `0`, to opt in).
fn opt_out_of_telemetry_store() {
    if std::env::var_os(DISABLE_TELEMETRY_VAR).is_some() {
        return;
    }
    // SAFETY: `set_var` races with concurrent reads of the environment in other threads.
    // This runs once, under `INIT_LOCK`, before ONNX Runtime (the only reader that matters
    // here) is loaded; it adds a variable that was unset, so no string another thread may
    // hold from `getenv` is replaced or freed (glibc also never frees an old `environ`
    // array). Programs that read the environment from other threads while initialising
    // ONNX Runtime should set the variable themselves, which makes this a no-op.
    unsafe { std::env::set_var(DISABLE_TELEMETRY_VAR, "1") };
}

/// Lists the places [`init`] looks, in order, without loading anything. When `ORT_DYLIB_PATH`
/// is set it is the only entry. Finding the Python package runs `python3` (a few tens of
/// milliseconds); [`init`] only does that when the earlier places failed.
pub fn candidates() -> Vec<Candidate> {
    let env = CandidateEnv::current();
    let mut out = Vec::new();
    for stage in Stage::ALL {
        out.extend(env.stage(stage));
        if stage == Stage::EnvVar && !out.is_empty() {
            break;
        }
    }
    out
}

/// The run-time facts candidates are computed from; a value so tests can fake them.
#[derive(Debug, Clone, Default)]
struct CandidateEnv {
    dylib_path: Option<OsString>,
    bundled: Option<PathBuf>,
    cache: CacheEnv,
    look_for_python: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    EnvVar,
    Bundled,
    Cache,
    PythonPackage,
    System,
}

impl Stage {
    const ALL: [Stage; 5] = [
        Stage::EnvVar,
        Stage::Bundled,
        Stage::Cache,
        Stage::PythonPackage,
        Stage::System,
    ];
}

fn non_empty(value: Option<OsString>) -> Option<OsString> {
    value.filter(|v| !v.is_empty())
}

impl CandidateEnv {
    fn current() -> Self {
        let var = |name: &str| non_empty(std::env::var_os(name));
        Self {
            dylib_path: var(DYLIB_PATH_VAR),
            bundled: option_env!("ORT_BIND_BUNDLED_DYLIB")
                .filter(|p| !p.is_empty())
                .map(PathBuf::from),
            cache: CacheEnv::current(),
            look_for_python: true,
        }
    }

    /// The cache folder for this platform's library (the build script's layout).
    fn cache_folder(&self) -> Option<PathBuf> {
        Platform::current().folder(&self.cache)
    }

    /// The candidates of one stage (none, one, or several for the Python package).
    fn stage(&self, stage: Stage) -> Vec<Candidate> {
        let one = |source, path| vec![Candidate { source, path }];
        match stage {
            Stage::EnvVar => match &self.dylib_path {
                Some(path) => one(CandidateSource::EnvVar, PathBuf::from(path)),
                None => Vec::new(),
            },
            Stage::Bundled => match &self.bundled {
                Some(path) => one(CandidateSource::Bundled, path.clone()),
                None => Vec::new(),
            },
            Stage::Cache => {
                let Some(folder) = self.cache_folder() else {
                    return Vec::new();
                };
                let path = main_libraries_in(&folder)
                    .into_iter()
                    .next()
                    .unwrap_or_else(|| folder.join(versioned_library_name()));
                if self.bundled.as_ref().is_some_and(|b| same_file(b, &path)) {
                    Vec::new()
                } else {
                    one(CandidateSource::Cache, path)
                }
            }
            Stage::PythonPackage if self.look_for_python => match python_package_capi() {
                Ok(capi) => {
                    let found = main_libraries_in(&capi);
                    let paths = if found.is_empty() {
                        // Tried anyway, so the error shows where the library was expected.
                        vec![capi.join(versioned_library_name())]
                    } else {
                        found
                    };
                    paths
                        .into_iter()
                        .map(|path| Candidate {
                            source: CandidateSource::PythonPackage,
                            path,
                        })
                        .collect()
                }
                Err(_) => Vec::new(),
            },
            Stage::PythonPackage => Vec::new(),
            Stage::System => one(
                CandidateSource::System,
                PathBuf::from(default_library_name()),
            ),
        }
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(x), Ok(y)) if x == y
        )
}

/// `libonnxruntime.so` / `libonnxruntime.dylib` / `onnxruntime.dll`.
fn default_library_name() -> String {
    Platform::current().default_library_name()
}

/// The name the wheel gives the main library on this platform.
fn versioned_library_name() -> String {
    Platform::current().versioned_library_name()
}

/// Main library files in `dir`, the longest (most versioned) name first.
fn main_libraries_in(dir: &Path) -> Vec<PathBuf> {
    Platform::current().main_libraries_in(dir)
}

/// The `capi/` folder of the `onnxruntime` Python package, asked of `python3` then `python`
/// with `importlib.util.find_spec`, which locates the package without importing it; `Err`
/// says why there is none. The answer is kept, so Python runs at most once per process.
fn python_package_capi() -> Result<PathBuf, String> {
    static ANSWER: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    ANSWER.get_or_init(ask_python).clone()
}

fn ask_python() -> Result<PathBuf, String> {
    const SCRIPT: &str = "import importlib.util as u\n\
        s = u.find_spec('onnxruntime')\n\
        l = list(s.submodule_search_locations or []) if s else []\n\
        print(l[0] if l else '')";
    let mut failures = Vec::new();
    for python in ["python3", "python"] {
        let out = match Command::new(python)
            .args(["-c", SCRIPT])
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
        {
            Ok(out) => out,
            Err(e) => {
                failures.push(format!("`{python}` could not be run ({e})"));
                continue;
            }
        };
        if !out.status.success() {
            failures.push(format!("`{python}` failed ({})", out.status));
            continue;
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let dir = text.trim();
        return if dir.is_empty() {
            Err(format!("`{python}` has no `onnxruntime` package"))
        } else {
            Ok(Path::new(dir).join("capi"))
        };
    }
    Err(failures.join(", "))
}

/// Tries each candidate in order and returns the first that loads: its real path, its
/// version and its source.
fn load_first(env: &CandidateEnv) -> Result<(PathBuf, String, CandidateSource), LibraryError> {
    let mut attempts = Vec::new();
    for stage in Stage::ALL {
        if stage == Stage::PythonPackage
            && env.look_for_python
            && let Err(reason) = python_package_capi()
        {
            attempts.push(Attempt {
                candidate: Candidate {
                    source: CandidateSource::PythonPackage,
                    path: PathBuf::from("onnxruntime/capi"),
                },
                reason,
            });
        }
        for candidate in env.stage(stage) {
            match load(&candidate) {
                Ok((path, version)) => return Ok((path, version, candidate.source)),
                Err(reason) => attempts.push(Attempt { candidate, reason }),
            }
        }
        if stage == Stage::EnvVar && !attempts.is_empty() {
            // ORT_DYLIB_PATH wins: no silent fallback when it is set but unusable.
            break;
        }
    }
    Err(LibraryError::NotLoaded { attempts })
}

/// Loads one candidate (checking that it exports `OrtGetApiBase` and is at least version
/// 1.[`REQUIRED_MINOR`]); returns the loaded file and its version, or why it failed.
fn load(candidate: &Candidate) -> Result<(PathBuf, String), String> {
    let path = &candidate.path;
    if path.is_absolute() {
        match std::fs::metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err("no such file".to_string());
            }
            Ok(meta) if meta.is_dir() => return Err("is a folder, not a library file".into()),
            _ => {}
        }
    }
    // A relative name is looked up next to the executable first (where a deployed program
    // ships its libraries), then by the system loader.
    let beside_exe = (!path.is_absolute())
        .then(|| {
            std::env::current_exe()
                .ok()?
                .parent()
                .map(|dir| dir.join(path))
        })
        .flatten()
        .filter(|p| p.exists());
    let path = beside_exe.as_ref().unwrap_or(path);
    // The first library loaded stays; a failed load leaves nothing behind, so the next
    // candidate can be tried.
    let version = crate::sys::load(path)?;
    let loaded = native::loaded_library_path().unwrap_or_else(|| path.clone());
    Ok((loaded, version))
}

/// Asks the dynamic loader which file the C API table came from.
#[cfg(any(target_os = "linux", target_os = "android", target_os = "macos"))]
mod native {
    use std::ffi::{CStr, OsStr, c_char, c_int, c_void};
    use std::os::unix::ffi::OsStrExt;
    use std::path::PathBuf;

    #[repr(C)]
    struct DlInfo {
        dli_fname: *const c_char,
        dli_fbase: *mut c_void,
        dli_sname: *const c_char,
        dli_saddr: *mut c_void,
    }

    unsafe extern "C" {
        fn dladdr(addr: *const c_void, info: *mut DlInfo) -> c_int;
    }

    /// The file holding the loaded C API's functions; `None` before a library is loaded or
    /// when the loader cannot tell.
    pub(super) fn loaded_library_path() -> Option<PathBuf> {
        library_of(crate::sys::address_in_library()?)
    }

    /// The file of the loaded library that holds `function`; `None` when the loader cannot
    /// tell.
    pub(super) fn library_of(function: *const c_void) -> Option<PathBuf> {
        let mut info = DlInfo {
            dli_fname: std::ptr::null(),
            dli_fbase: std::ptr::null_mut(),
            dli_sname: std::ptr::null(),
            dli_saddr: std::ptr::null_mut(),
        };
        // SAFETY: `info` is a valid out-pointer; `function` is an address inside a loaded
        // object, which `dladdr` only reads about.
        if unsafe { dladdr(function, &mut info) } == 0 || info.dli_fname.is_null() {
            return None;
        }
        // SAFETY: `dladdr` succeeded, so `dli_fname` is a NUL-terminated string owned by the
        // loader, valid while the object stays loaded (it is never unloaded).
        let name = unsafe { CStr::from_ptr(info.dli_fname) };
        let path = PathBuf::from(OsStr::from_bytes(name.to_bytes()));
        Some(std::fs::canonicalize(&path).unwrap_or(path))
    }
}

/// Elsewhere the candidate's own path is reported.
#[cfg(not(any(target_os = "linux", target_os = "android", target_os = "macos")))]
mod native {
    use std::path::PathBuf;

    pub(super) fn loaded_library_path() -> Option<PathBuf> {
        None
    }

    #[cfg(feature = "ort")]
    pub(super) fn library_of(_function: *const std::ffi::c_void) -> Option<PathBuf> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_env() -> CandidateEnv {
        CandidateEnv {
            look_for_python: false,
            ..CandidateEnv::default()
        }
    }

    fn sources(env: &CandidateEnv) -> Vec<CandidateSource> {
        Stage::ALL
            .iter()
            .flat_map(|&stage| env.stage(stage))
            .map(|c| c.source)
            .collect()
    }

    #[test]
    fn env_var_is_the_only_candidate_when_set() {
        let env = CandidateEnv {
            dylib_path: Some("/x/libonnxruntime.so".into()),
            bundled: Some("/b/libonnxruntime.so.1.31.1".into()),
            cache: CacheEnv {
                home: Some("/home/u".into()),
                ..CacheEnv::default()
            },
            ..fake_env()
        };
        let err = load_first(&CandidateEnv {
            dylib_path: Some("/nonexistent/dir/libonnxruntime.so".into()),
            ..env.clone()
        })
        .unwrap_err();
        let LibraryError::NotLoaded { attempts } = &err else {
            panic!("unexpected {err:?}");
        };
        assert_eq!(attempts.len(), 1);
        assert_eq!(attempts[0].candidate.source, CandidateSource::EnvVar);
        let message = err.to_string();
        assert!(
            message.contains("/nonexistent/dir/libonnxruntime.so"),
            "{message}"
        );
        assert!(message.contains("no other place was tried"), "{message}");
        assert!(
            message.contains(crate::error::library::HOW_TO_PROVIDE),
            "{message}"
        );
    }

    #[test]
    fn order_without_env_var() {
        let env = CandidateEnv {
            bundled: Some("/b/libonnxruntime.so.1.31.1".into()),
            cache: CacheEnv {
                home: Some("/home/u".into()),
                ..CacheEnv::default()
            },
            ..fake_env()
        };
        assert_eq!(
            sources(&env),
            [
                CandidateSource::Bundled,
                CandidateSource::Cache,
                CandidateSource::System
            ]
        );
        let cache = &env.stage(Stage::Cache)[0].path;
        assert!(
            cache
                .to_string_lossy()
                .starts_with("/home/u/.cache/ort-bind/onnxruntime-1.31.1-"),
            "{}",
            cache.display()
        );
        assert_eq!(
            env.stage(Stage::System)[0].path,
            PathBuf::from(default_library_name())
        );
    }

    #[test]
    fn cache_folder_follows_the_cache_root() {
        let env = CandidateEnv {
            cache: CacheEnv {
                cache_dir: Some("/c".into()),
                ..CacheEnv::default()
            },
            ..fake_env()
        };
        assert_eq!(
            env.cache_folder().unwrap(),
            Path::new("/c").join(Platform::current().folder_name())
        );
        assert_eq!(fake_env().cache_folder(), None);
    }

    #[test]
    fn missing_files_are_reported_not_loaded() {
        let env = CandidateEnv {
            bundled: Some("/nonexistent/b/libonnxruntime.so.1.31.1".into()),
            cache: CacheEnv {
                cache_dir: Some("/nonexistent/c".into()),
                ..CacheEnv::default()
            },
            ..fake_env()
        };
        // Only the missing absolute paths; the system candidate may exist on some machines.
        for stage in [Stage::Bundled, Stage::Cache] {
            for candidate in env.stage(stage) {
                assert_eq!(load(&candidate).unwrap_err(), "no such file");
            }
        }
    }

    #[test]
    fn error_message_lists_every_attempt() {
        let err = LibraryError::NotLoaded {
            attempts: vec![
                Attempt {
                    candidate: Candidate {
                        source: CandidateSource::Cache,
                        path: "/c/libonnxruntime.so.1.31.1".into(),
                    },
                    reason: "no such file".into(),
                },
                Attempt {
                    candidate: Candidate {
                        source: CandidateSource::System,
                        path: "libonnxruntime.so".into(),
                    },
                    reason: "cannot open shared object file".into(),
                },
            ],
        };
        let message = err.to_string();
        assert!(message.contains("ort-bind cache `/c/libonnxruntime.so.1.31.1`: no such file"));
        assert!(message.contains("system loader `libonnxruntime.so`: cannot open"));
        assert!(!message.contains("no other place"));
        assert!(message.ends_with(&format!(
            "To provide it: {}.",
            crate::error::library::HOW_TO_PROVIDE
        )));
    }
}
