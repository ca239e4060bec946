//! ONNX Runtime's own log messages, through the [`log`] crate; its telemetry, off.
//!
//! ONNX Runtime's default logger writes colored lines to stderr (one or two per failed run,
//! besides the error ort-bind returns), and by default it records telemetry events. ort-bind's environment instead hands every message to the `log`
//! crate under the target `onnxruntime` (`tracing` users get them through `tracing-log`),
//! so a program without a logger prints nothing and one with a logger filters them like
//! its own. Telemetry is off: ort-bind disables ONNX Runtime's telemetry events and sets
//! `ORT_DISABLE_TELEMETRY=1` before loading it (without that, ONNX Runtime 1.31 keeps a
//! `deviceid` file and an event store under `~/.cache/Microsoft/DeveloperTools/`, which
//! grows with every failed run). To opt in, set `ORT_DISABLE_TELEMETRY=0` and initialise
//! with `library::init_with(EnvironmentOptions::new().telemetry(true))`.
//!
//! Levels: ONNX Runtime's verbose is `trace`, info is `debug` (it is chatty: graph
//! optimisation details), warning is `warn`, error and fatal are `error`. ONNX Runtime
//! formats only the messages at or above the level [`set_level`] last set; at
//! initialisation that is the `log` crate's [`log::max_level`] (warnings by default,
//! when no logger has raised it).
//!
//! ```no_run
//! // After installing a logger that wants ONNX Runtime's debug messages:
//! ort_bind_runtime::logging::set_level(log::LevelFilter::Debug)?;
//! # Ok::<(), ort_bind_runtime::Error>(())
//! ```

use ort_sys::OrtLoggingLevel;

use crate::error::Result;

/// The `log` target of ONNX Runtime's messages.
pub const TARGET: &str = "onnxruntime";

/// The `log` level of an ONNX Runtime severity.
fn level_of(severity: OrtLoggingLevel) -> log::Level {
    match severity {
        OrtLoggingLevel::ORT_LOGGING_LEVEL_VERBOSE => log::Level::Trace,
        OrtLoggingLevel::ORT_LOGGING_LEVEL_INFO => log::Level::Debug,
        OrtLoggingLevel::ORT_LOGGING_LEVEL_WARNING => log::Level::Warn,
        OrtLoggingLevel::ORT_LOGGING_LEVEL_ERROR | OrtLoggingLevel::ORT_LOGGING_LEVEL_FATAL => {
            log::Level::Error
        }
    }
}

/// The least severe ONNX Runtime level that a `log` filter lets through.
fn severity_for(filter: log::LevelFilter) -> OrtLoggingLevel {
    match filter {
        log::LevelFilter::Trace => OrtLoggingLevel::ORT_LOGGING_LEVEL_VERBOSE,
        log::LevelFilter::Debug | log::LevelFilter::Info => OrtLoggingLevel::ORT_LOGGING_LEVEL_INFO,
        log::LevelFilter::Warn => OrtLoggingLevel::ORT_LOGGING_LEVEL_WARNING,
        log::LevelFilter::Error => OrtLoggingLevel::ORT_LOGGING_LEVEL_ERROR,
        log::LevelFilter::Off => OrtLoggingLevel::ORT_LOGGING_LEVEL_FATAL,
    }
}

/// The logger ort-bind gives ONNX Runtime's environment.
pub(crate) fn forward(
    severity: OrtLoggingLevel,
    category: &str,
    id: &str,
    location: &str,
    message: &str,
) {
    let level = level_of(severity);
    if level <= log::max_level() {
        log::log!(target: TARGET, level, "[{category} {id}] {} ({location})", message.trim_end());
    }
}

/// Makes ONNX Runtime format messages down to `filter` (call it after raising your
/// logger's level, to see ONNX Runtime's debug or trace output). Initialises ONNX
/// Runtime if needed.
pub fn set_level(filter: log::LevelFilter) -> Result<()> {
    let loaded = crate::library::init()?;
    loaded.environment().set_log_level(severity_for(filter))
}

/// At initialisation: the level the `log` crate's filter already lets through.
pub(crate) fn initial_severity() -> OrtLoggingLevel {
    severity_for(log::max_level())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_map_both_ways() {
        assert_eq!(
            level_of(OrtLoggingLevel::ORT_LOGGING_LEVEL_INFO),
            log::Level::Debug
        );
        assert_eq!(
            level_of(OrtLoggingLevel::ORT_LOGGING_LEVEL_FATAL),
            log::Level::Error
        );
        assert_eq!(
            severity_for(log::LevelFilter::Warn),
            OrtLoggingLevel::ORT_LOGGING_LEVEL_WARNING
        );
        // Every level a filter lets through maps to a severity ONNX Runtime reports.
        for level in [
            OrtLoggingLevel::ORT_LOGGING_LEVEL_VERBOSE,
            OrtLoggingLevel::ORT_LOGGING_LEVEL_INFO,
            OrtLoggingLevel::ORT_LOGGING_LEVEL_WARNING,
            OrtLoggingLevel::ORT_LOGGING_LEVEL_ERROR,
        ] {
            let filter = level_of(level).to_level_filter();
            assert!(level as i32 >= severity_for(filter) as i32);
        }
    }
}
