//! Quiet and private by default: ONNX Runtime records no telemetry in the user's home, and
//! its log lines reach the program's `log` logger instead of stderr.
//!
//! Each check re-runs this test binary as a child process (`--exact child`) with a fresh
//! `HOME`, because ONNX Runtime's environment is created once per process.

use std::path::{Path, PathBuf};
use std::process::Command;

mod lying_shape {
    ort_bind::include_bindings!("lying_shape");
}
mod add {
    ort_bind::include_bindings!("add");
}

/// Set in the child: which scenario to run (`silent` or `logger`).
const CHILD_VAR: &str = "ORT_BIND_QUIET_TEST_CHILD";

/// A logger that writes ONNX Runtime's records to stderr with a marker.
struct StderrLogger;

impl log::Log for StderrLogger {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.level() <= log::Level::Warn
    }
    fn log(&self, record: &log::Record<'_>) {
        if self.enabled(record.metadata()) {
            eprintln!(
                "LOGGED {} {}: {}",
                record.level(),
                record.target(),
                record.args()
            );
        }
    }
    fn flush(&self) {}
}

/// What a child does: sessions, runs, and runs ONNX Runtime rejects.
fn workload() {
    let model = add::Model::load().unwrap();
    let mut b = model.bind(add::Dims { n: 3 }).unwrap();
    b.inputs().x.copy_from_slice(&[1.0, 2.0, 3.0]).unwrap();
    b.run().unwrap();
    let lying = lying_shape::Model::load().unwrap();
    let mut b = lying.bind(lying_shape::Dims { n: 3 }).unwrap();
    for _ in 0..20 {
        // `y` is declared `[n]` but the model writes `[2n]`: ONNX Runtime refuses the run.
        assert!(b.run().is_err());
    }
}

#[test]
fn child() {
    match std::env::var(CHILD_VAR).as_deref() {
        Ok("silent") => workload(),
        Ok("logger") => {
            log::set_logger(&StderrLogger).unwrap();
            log::set_max_level(log::LevelFilter::Warn);
            workload();
        }
        _ => {} // Run as a normal test: nothing to do.
    }
}

fn run_child(scenario: &str, home: &Path) -> (String, String) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child", "--nocapture", "--test-threads=1"])
        .env(CHILD_VAR, scenario)
        .env("HOME", home)
        .env_remove("XDG_CACHE_HOME")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{scenario}: {stdout}\n{stderr}");
    (stdout, stderr)
}

fn fresh_home(tag: &str) -> PathBuf {
    let home = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("quiet-home-{tag}"));
    let _ = std::fs::remove_dir_all(&home);
    std::fs::create_dir_all(&home).unwrap();
    home
}

/// Every file under `dir`, relative.
fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    out
}

#[test]
fn no_telemetry_store_and_nothing_on_stderr_without_a_logger() {
    let home = fresh_home("silent");
    let (_, stderr) = run_child("silent", &home);
    assert_eq!(stderr.trim(), "", "ONNX Runtime wrote to stderr");
    let written = files_under(&home);
    assert!(
        written.is_empty(),
        "ONNX Runtime wrote into a fresh HOME: {written:?}"
    );
}

#[test]
fn a_logger_receives_onnx_runtime_messages() {
    let home = fresh_home("logger");
    let (_, stderr) = run_child("logger", &home);
    let logged: Vec<&str> = stderr.lines().filter(|l| l.starts_with("LOGGED")).collect();
    // One error line (at least) per refused run, through the logger, target `onnxruntime`.
    assert!(logged.len() >= 20, "{stderr}");
    assert!(
        logged.iter().all(|l| l.contains(" onnxruntime: ")),
        "{logged:?}"
    );
    assert!(
        stderr
            .lines()
            .all(|l| l.starts_with("LOGGED") || l.trim().is_empty()),
        "lines outside the logger: {stderr}"
    );
    assert!(files_under(&home).is_empty());
}
