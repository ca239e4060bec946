//! Finding and loading the ONNX Runtime shared library.
//!
//! `ort` is built with `load-dynamic`: ONNX Runtime is a shared library opened at run time, and
//! `ort`'s own [`ort::api()`] panics when it cannot open one. Everything in this crate that
//! touches ONNX Runtime therefore goes through [`init`] first, which looks for the library in a
//! fixed order, loads it, creates `ort`'s global [`Environment`] and turns every failure into a
//! [`LibraryError`] that says what was tried and how to provide the library.
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

use ort::environment::{Environment, EnvironmentBuilder};
use ort_bind_fetch::CacheEnv;
use ort_bind_fetch::onnxruntime::Platform;

pub use crate::error::library::{Attempt, Candidate, CandidateSource, LibraryError};

/// The ONNX Runtime release this crate is built against and that the build script fetches.
pub const ORT_VERSION: &str = ort_bind_fetch::onnxruntime::VERSION;

/// The ONNX Runtime minor version `ort` requires at least (`1.31`).
pub const REQUIRED_MINOR: u32 = ort::MINOR_VERSION;

/// Name of the environment variable that points at the library and overrides every other place.
pub const DYLIB_PATH_VAR: &str = "ORT_DYLIB_PATH";

/// The loaded ONNX Runtime library and `ort`'s global environment, alive for the whole process.
#[derive(Debug)]
pub struct LoadedLibrary {
    path: PathBuf,
    version: String,
    source: CandidateSource,
    environment: Environment,
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

    /// `ort`'s global environment, needed to build sessions
    /// (`ort::session::builder::SessionBuilder::new(env)`). `ort` allows one per process.
    pub fn environment(&self) -> &Environment {
        &self.environment
    }
}

/// The library once it is loaded and the environment created.
static LOADED: OnceLock<LoadedLibrary> = OnceLock::new();
/// The library `ort` holds (path, version, source) once a load succeeded; `ort` keeps the first
/// library it loads for the whole process, so this is set once even if creating the
/// environment then fails.
static DYLIB: OnceLock<(PathBuf, String, CandidateSource)> = OnceLock::new();
/// Serialises attempts, so concurrent callers load once.
static INIT_LOCK: Mutex<()> = Mutex::new(());

/// Finds and loads ONNX Runtime and creates `ort`'s global environment with default settings.
///
/// Call it before any other `ort` API: `ort` itself panics when it has to load the library on
/// its own and cannot. It is idempotent and thread-safe: the first success is kept for the
/// whole process and later calls return it at once. A failure is not kept: the next call tries
/// again (so a caller may, for example, set `ORT_DYLIB_PATH` and retry); concurrent callers
/// wait for one attempt at a time.
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

/// Like [`init`], but lets the caller configure the environment (name, global thread pool,
/// execution providers, ...) before it is created.
///
/// # Errors
/// As [`init`], and [`LibraryError::AlreadyInitialized`] when the environment already exists
/// (created by an earlier [`init`] or `init_with`), since `ort` allows one per process.
pub fn init_with(
    configure: impl FnOnce(EnvironmentBuilder) -> EnvironmentBuilder,
) -> Result<&'static LoadedLibrary, LibraryError> {
    init_inner(Some(Box::new(configure)))
}

/// The loaded library, if [`init`] has succeeded; never loads anything.
pub fn get() -> Option<&'static LoadedLibrary> {
    LOADED.get()
}

type Configure<'a> = Box<dyn FnOnce(EnvironmentBuilder) -> EnvironmentBuilder + 'a>;

fn init_inner(configure: Option<Configure<'_>>) -> Result<&'static LoadedLibrary, LibraryError> {
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
            let found = load_first(&CandidateEnv::current())?;
            DYLIB.get_or_init(|| found).clone()
        }
    };
    // Quiet and private by default (see `logging`): messages go to the `log` crate,
    // telemetry is off. A `configure` closure may change either.
    let builder = ort::init()
        .with_name("ort-bind")
        .with_telemetry(false)
        .with_logger(std::sync::Arc::new(crate::logging::forward));
    let builder = match configure {
        Some(configure) => configure(builder),
        None => builder,
    };
    let environment = builder.build().map_err(|e| LibraryError::Environment {
        path: path.clone(),
        version: version.clone(),
        message: e.to_string(),
    })?;
    crate::logging::apply_initial_level(&environment).map_err(|e| LibraryError::Environment {
        path: path.clone(),
        version: version.clone(),
        message: e.to_string(),
    })?;
    Ok(LOADED.get_or_init(|| LoadedLibrary {
        path,
        version,
        source,
        environment,
    }))
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

/// Tries each candidate in order and returns the first that `ort` loads: its real path, its
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

/// Loads one candidate through `ort` (which checks it exports `OrtGetApiBase` and is at least
/// version 1.[`REQUIRED_MINOR`]); returns the loaded file and its version, or why it failed.
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
    // `ort` keeps the first library it loads; a failed load leaves nothing behind, so the
    // next candidate can be tried.
    let _builder = ort::init_from(path).map_err(|e| describe_load_error(&e))?;
    // Now `ort::api()` cannot panic for want of a library.
    let loaded = native::loaded_library_path().unwrap_or_else(|| path.clone());
    let version = native::version_of(&loaded)
        .or_else(|| version_from_file_name(&loaded))
        .unwrap_or_else(|| "unknown".to_string());
    Ok((loaded, version))
}

/// `ort`'s message plus the loader's own reason (which `ort` keeps as the error's source).
fn describe_load_error(error: &ort::LoadDynamicError) -> String {
    use std::error::Error as _;
    let mut message = error.to_string();
    if let ort::LoadDynamicError::Dlopen { error: inner, .. } = error {
        let mut source = inner.source();
        while let Some(cause) = source {
            message.push_str(": ");
            message.push_str(&cause.to_string());
            source = cause.source();
        }
    }
    message
}

/// The version in a file name such as `libonnxruntime.so.1.31.1` or
/// `libonnxruntime.1.31.1.dylib`.
fn version_from_file_name(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let digits: Vec<&str> = name
        .split('.')
        .skip_while(|part| part.parse::<u32>().is_err())
        .take_while(|part| part.parse::<u32>().is_ok())
        .collect();
    (digits.len() >= 2).then(|| digits.join("."))
}

/// Asks the dynamic loader which file `ort` loaded and what version it reports.
#[cfg(any(target_os = "linux", target_os = "android", target_os = "macos"))]
mod native {
    use std::ffi::{CStr, CString, OsStr, c_char, c_int, c_void};
    use std::os::unix::ffi::OsStrExt;
    use std::path::{Path, PathBuf};

    #[repr(C)]
    struct DlInfo {
        dli_fname: *const c_char,
        dli_fbase: *mut c_void,
        dli_sname: *const c_char,
        dli_saddr: *mut c_void,
    }

    unsafe extern "C" {
        fn dladdr(addr: *const c_void, info: *mut DlInfo) -> c_int;
        fn dlopen(filename: *const c_char, flags: c_int) -> *mut c_void;
        fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
        fn dlclose(handle: *mut c_void) -> c_int;
    }

    const RTLD_LAZY: c_int = 1;
    #[cfg(any(target_os = "linux", target_os = "android"))]
    const RTLD_NOLOAD: c_int = 4;
    #[cfg(target_os = "macos")]
    const RTLD_NOLOAD: c_int = 0x10;

    /// The file holding the `OrtApi` functions `ort` uses. Call only once `ort` has loaded a
    /// library.
    pub(super) fn loaded_library_path() -> Option<PathBuf> {
        let function = ort::api().GetBuildInfoString as *const c_void;
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
        // loader, valid while the object stays loaded (`ort` never unloads it).
        let name = unsafe { CStr::from_ptr(info.dli_fname) };
        let path = PathBuf::from(OsStr::from_bytes(name.to_bytes()));
        Some(std::fs::canonicalize(&path).unwrap_or(path))
    }

    /// The `OrtApiBase::GetVersionString` of the already loaded library at `path`.
    pub(super) fn version_of(path: &Path) -> Option<String> {
        let name = CString::new(path.as_os_str().as_bytes()).ok()?;
        // SAFETY: `RTLD_NOLOAD` only returns a handle to an object already loaded (adding a
        // reference, dropped by `dlclose` below) and never runs its initialisers again.
        let handle = unsafe { dlopen(name.as_ptr(), RTLD_LAZY | RTLD_NOLOAD) };
        if handle.is_null() {
            return None;
        }
        // SAFETY: `handle` is valid; the symbol name is NUL-terminated.
        let symbol = unsafe { dlsym(handle, c"OrtGetApiBase".as_ptr()) };
        let version = (!symbol.is_null())
            .then(|| {
                // SAFETY: ONNX Runtime exports `OrtGetApiBase` with this signature; it returns
                // a pointer to a static `OrtApiBase`, whose `GetVersionString` returns a
                // static NUL-terminated string.
                unsafe {
                    let get_base: unsafe extern "C" fn() -> *const ort::sys::OrtApiBase =
                        std::mem::transmute(symbol);
                    let base = get_base();
                    if base.is_null() {
                        return None;
                    }
                    let version = ((*base).GetVersionString)();
                    (!version.is_null())
                        .then(|| CStr::from_ptr(version).to_string_lossy().into_owned())
                }
            })
            .flatten();
        // SAFETY: drops the reference taken above; `ort` still holds its own.
        unsafe { dlclose(handle) };
        version
    }
}

/// Elsewhere the candidate's own path is reported and the version is read from its file name.
#[cfg(not(any(target_os = "linux", target_os = "android", target_os = "macos")))]
mod native {
    use std::path::{Path, PathBuf};

    pub(super) fn loaded_library_path() -> Option<PathBuf> {
        None
    }

    pub(super) fn version_of(_path: &Path) -> Option<String> {
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
    fn library_names() {
        assert_eq!(
            version_from_file_name(Path::new("/a/libonnxruntime.so.1.31.1")).as_deref(),
            Some("1.31.1")
        );
        assert_eq!(
            version_from_file_name(Path::new("libonnxruntime.1.31.1.dylib")).as_deref(),
            Some("1.31.1")
        );
        assert_eq!(version_from_file_name(Path::new("libonnxruntime.so")), None);
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
