//! ONNX Runtime's environment (`OrtEnv`): its logger and telemetry. One per process,
//! created by `library::init` and kept until the process ends.

use std::ffi::{CStr, c_char, c_void};
use std::ptr::{self, NonNull};

use ort_sys::{OrtEnv, OrtLoggingLevel};

use super::{api, check, non_null};
use crate::error::Result;

/// Where the environment sends each log message: severity, category, log id, code
/// location, message.
pub(crate) type Logger = fn(OrtLoggingLevel, &str, &str, &str, &str);

/// An owned `OrtEnv`.
#[derive(Debug)]
pub(crate) struct Env(NonNull<OrtEnv>);

// SAFETY: ONNX Runtime's environment is a process-wide object built to be used from every
// thread (sessions on any thread are created from it); ort-bind only passes it to
// `CreateSession*` and changes its log level, both thread-safe in ONNX Runtime.
unsafe impl Send for Env {}
// SAFETY: see `Send`.
unsafe impl Sync for Env {}

impl Env {
    /// Creates the environment, named `name` in ONNX Runtime's logs, whose messages at or
    /// above `level` go to `logger`; with `telemetry == false`, ONNX Runtime's telemetry
    /// events are disabled.
    pub(crate) fn new(
        name: &CStr,
        level: OrtLoggingLevel,
        logger: Logger,
        telemetry: bool,
    ) -> Result<Env> {
        let api = api();
        let mut out = ptr::null_mut();
        // SAFETY: `forward` matches `OrtLoggingFunction`; its parameter is `logger`, a plain
        // function pointer valid for the whole program, which `forward` turns back into a
        // `Logger`; `name` is NUL-terminated and ONNX Runtime copies it; `out` is valid.
        let status = unsafe {
            (api.CreateEnvWithCustomLogger)(
                forward,
                logger as *const () as *mut c_void,
                level,
                name.as_ptr(),
                &mut out,
            )
        };
        check(status, || "creating the ONNX Runtime environment".into())?;
        let env = Env(non_null(out, "CreateEnvWithCustomLogger")?);
        // SAFETY: the environment was just created and is alive.
        let status = unsafe {
            if telemetry {
                (api.EnableTelemetryEvents)(env.as_ptr())
            } else {
                (api.DisableTelemetryEvents)(env.as_ptr())
            }
        };
        check(status, || "setting ONNX Runtime's telemetry".into())?;
        Ok(env)
    }

    /// Sets the least severe level ONNX Runtime reports to the logger; messages below it
    /// are never formatted.
    pub(crate) fn set_log_level(&self, level: OrtLoggingLevel) -> Result<()> {
        // SAFETY: the environment is alive (`&self`); the call only changes the severity
        // threshold of its logger.
        let status = unsafe { (api().UpdateEnvWithCustomLogLevel)(self.0.as_ptr(), level) };
        check(status, || "setting ONNX Runtime's log level".into())
    }

    pub(crate) fn as_ptr(&self) -> *mut OrtEnv {
        self.0.as_ptr()
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        // SAFETY: we own the environment and release it once. (ort-bind's lives in a static
        // and is never dropped; sessions, which need it, can therefore not outlive it.)
        unsafe { (api().ReleaseEnv)(self.0.as_ptr()) }
    }
}

/// The `OrtLoggingFunction` of the environment: hands each message to the [`Logger`] in
/// `param`. Never unwinds into ONNX Runtime: a panicking logger's message is dropped.
unsafe extern "system" fn forward(
    param: *mut c_void,
    severity: OrtLoggingLevel,
    category: *const c_char,
    logid: *const c_char,
    code_location: *const c_char,
    message: *const c_char,
) {
    // SAFETY: `param` is the `Logger` function pointer `Env::new` registered (function
    // pointers and data pointers have the same size on every platform ONNX Runtime runs on).
    let logger = unsafe { std::mem::transmute::<*mut c_void, Logger>(param) };
    // SAFETY: ONNX Runtime passes NUL-terminated strings (or null) alive for this call.
    let text = |p: *const c_char| {
        if p.is_null() {
            std::borrow::Cow::Borrowed("")
        } else {
            unsafe { CStr::from_ptr(p) }.to_string_lossy()
        }
    };
    let _ = std::panic::catch_unwind(|| {
        logger(
            severity,
            &text(category),
            &text(logid),
            &text(code_location),
            &text(message),
        );
    });
}
