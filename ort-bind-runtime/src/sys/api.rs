//! The ONNX Runtime C API's function table, taken from the shared library that
//! `library` chose, and held for the whole process.
//!
//! ONNX Runtime exports one symbol, `OrtGetApiBase`; every other function is a field of
//! the `OrtApi` table it hands out for a given API version. This crate is built against
//! the declarations of API version [`API_VERSION`] (`ort-sys`'s, generated from ONNX
//! Runtime's header) and asks the library for exactly that table: a newer library serves
//! older tables, an older one returns none and is refused here.

use std::ffi::CStr;
use std::path::Path;
use std::sync::OnceLock;

use ort_sys::{ORT_API_VERSION, OrtApi, OrtApiBase};

/// The API version (= ONNX Runtime minor version) whose table ort-bind calls: 31.
pub(crate) const API_VERSION: u32 = ORT_API_VERSION;

/// The loaded library and its table. Never dropped: it lives in [`TABLE`].
struct Table {
    api: &'static OrtApi,
    // Keeps the library mapped for as long as `api` may be called, i.e. forever; `None` for
    // a table adopted from the `ort` crate, which keeps its library loaded for the process.
    _library: Option<libloading::Library>,
}

static TABLE: OnceLock<Table> = OnceLock::new();

/// The C API table.
///
/// # Panics
/// Before [`load`] succeeded. Every public entry point that reaches this module calls
/// `library::init` first, which loads the table or returns an error; a panic here is a bug
/// in ort-bind, never a state a user can reach.
#[inline]
pub(crate) fn api() -> &'static OrtApi {
    match TABLE.get() {
        Some(table) => table.api,
        None => not_loaded(),
    }
}

#[cold]
#[inline(never)]
fn not_loaded() -> ! {
    panic!("ort-bind called ONNX Runtime before loading it (library::init); please report this")
}

/// Loads the ONNX Runtime library at `path` (a path, or a bare file name the system loader
/// looks up) and takes its API table; returns the library's version string. Once a load has
/// succeeded later calls change nothing and return `Ok` with the new library's version
/// unchecked, so callers load once (`library` does, under its lock).
///
/// # Errors
/// A message saying why the file cannot serve: the loader's reason, no `OrtGetApiBase`,
/// or a version older than 1.[`API_VERSION`].
pub(crate) fn load(path: &Path) -> Result<String, String> {
    // SAFETY: opening a shared library runs its initialisers. The candidates are files the
    // user or ort-bind's own search named as ONNX Runtime, whose initialisers are sound to
    // run in any process; a file that turns out not to be ONNX Runtime is refused below
    // before anything else of it is called, and dropped (unloaded) with `library`.
    let library = unsafe { libloading::Library::new(path) }.map_err(|e| loader_reason(&e))?;
    // SAFETY: the symbol is ONNX Runtime's exported `OrtGetApiBase`, declared in its C
    // header with exactly this signature (no arguments, returns a pointer to a static).
    let get_base = unsafe {
        library.get::<unsafe extern "system" fn() -> *const OrtApiBase>(b"OrtGetApiBase\0")
    }
    .map_err(|_| "it does not export `OrtGetApiBase`, so it is not ONNX Runtime".to_string())?;
    // SAFETY: see above; the returned pointer is checked for null before use.
    let base = unsafe { get_base() };
    // SAFETY: a non-null result points to the library's static `OrtApiBase`, alive while the
    // library is loaded (we hold it until the end of this function, or forever).
    let Some(base) = (unsafe { base.as_ref() }) else {
        return Err("its `OrtGetApiBase` returned null".into());
    };
    // SAFETY: `GetVersionString` returns a pointer to a static NUL-terminated string.
    let version = unsafe {
        let text = (base.GetVersionString)();
        if text.is_null() {
            return Err("it reports no version".into());
        }
        CStr::from_ptr(text).to_string_lossy().into_owned()
    };
    let minor = version
        .split('.')
        .nth(1)
        .and_then(|m| m.parse::<u32>().ok());
    if minor.is_none_or(|minor| minor < API_VERSION) {
        return Err(format!(
            "it is ONNX Runtime {version}, older than the 1.{API_VERSION} that ort-bind needs"
        ));
    }
    // SAFETY: `GetApi` takes a version number and returns a pointer to a static table for
    // that version, or null when the library does not provide it.
    let table = unsafe { (base.GetApi)(API_VERSION) };
    // SAFETY: a non-null table is static in the library, which `TABLE` keeps loaded for
    // the rest of the process, so the reference may be `'static`.
    let Some(api) = (unsafe { table.as_ref() }) else {
        return Err(format!(
            "ONNX Runtime {version} does not provide C API version {API_VERSION}"
        ));
    };
    // A concurrent first load is excluded by `library`'s lock; if one happened, the first
    // table stays and this library is unloaded again (nothing of it was used).
    let _ = TABLE.set(Table {
        api,
        _library: Some(library),
    });
    Ok(version)
}

/// Takes `api`, the table the `ort` crate calls through, as this crate's (where the library
/// file behind it cannot be named, so [`load`] cannot open it again). A table already taken
/// stays, as with [`load`].
#[cfg(feature = "ort")]
pub(crate) fn adopt(api: &'static OrtApi) {
    let _ = TABLE.set(Table {
        api,
        _library: None,
    });
}

/// The loader's message, with its causes.
fn loader_reason(error: &libloading::Error) -> String {
    use std::error::Error as _;
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    message
}

/// An address inside the loaded library (one of its functions), for asking the dynamic
/// loader which file it came from. `None` before a library is loaded.
#[cfg(any(target_os = "linux", target_os = "android", target_os = "macos"))]
pub(crate) fn address_in_library() -> Option<*const std::ffi::c_void> {
    TABLE
        .get()
        .map(|table| table.api.GetBuildInfoString as *const std::ffi::c_void)
}

/// ONNX Runtime's build description (`GetBuildInfoString`), e.g. `ORT Build Info:
/// git-branch=rel-1.31.1, ...`. Loads nothing: `None` before a library is loaded.
pub(crate) fn build_info() -> Option<String> {
    let table = TABLE.get()?;
    // SAFETY: returns a pointer to a static NUL-terminated string of the loaded library.
    let text = unsafe { (table.api.GetBuildInfoString)() };
    // SAFETY: checked for null; static, as above.
    (!text.is_null()).then(|| {
        unsafe { CStr::from_ptr(text) }
            .to_string_lossy()
            .into_owned()
    })
}
