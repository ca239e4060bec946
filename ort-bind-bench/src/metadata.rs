//! Build-time cost: reading a model's signature from a >= 1 GiB file.
//!
//! Each measurement runs in a fresh child process (this binary's hidden `probe`
//! subcommand, or `bench_peer.py metadata`), so its peak RSS is its own. Probes:
//! - `read_signature`: `ort_bind_codegen::read_signature` (read in place, payloads sought past);
//! - `generate`: `ort_bind_codegen::Builder::generate` (signature + plan + formatted code:
//!   what a `build.rs` pays per model);
//! - `read_file`: read the whole `.onnx` file once, in 1 MiB chunks (the floor for any
//!   parser that reads the file);
//! - `python_onnx_load`: `onnx.load(path, load_external_data=False)`.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::{Value, json};

use crate::Result;

/// `VmRSS` or `VmHWM` of this process, in KiB.
fn status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
}

/// The hidden `probe KIND PATH REPS` subcommand: runs one probe and prints one JSON line.
pub(crate) fn probe(kind: &str, path: &Path, reps: usize) -> Result<()> {
    let baseline = status_kib("VmRSS");
    let mut times = Vec::with_capacity(reps);
    let mut detail = json!(null);
    for _ in 0..reps {
        let t0 = Instant::now();
        match kind {
            "read_signature" => {
                let sig = ort_bind_codegen::read_signature(path)?;
                detail = json!({"inputs": sig.inputs.len(), "outputs": sig.outputs.len()});
            }
            "generate" => {
                let modules = ort_bind_codegen::Builder::new().model(path).generate()?;
                detail =
                    json!({"source_bytes": modules.iter().map(|m| m.source.len()).sum::<usize>()});
            }
            "read_file" => {
                let mut f = File::open(path)?;
                let mut buf = vec![0u8; 1 << 20];
                let mut total = 0u64;
                let mut checksum = 0u8;
                loop {
                    let n = f.read(&mut buf)?;
                    if n == 0 {
                        break;
                    }
                    total += n as u64;
                    checksum ^= buf[n - 1];
                }
                detail = json!({"bytes": total, "checksum": checksum});
            }
            other => return Err(format!("unknown probe `{other}`").into()),
        }
        times.push(t0.elapsed().as_nanos() as u64);
    }
    println!(
        "{}",
        json!({
            "times_ns": times,
            "baseline_rss_kib": baseline,
            "peak_rss_kib": status_kib("VmHWM"),
            "detail": detail,
        })
    );
    Ok(())
}

/// One measured probe.
#[derive(Debug)]
pub(crate) struct Measure {
    /// Which model file.
    pub(crate) model: String,
    /// Which probe.
    pub(crate) probe: &'static str,
    /// Median time.
    pub(crate) median_ns: u64,
    /// Repetitions.
    pub(crate) reps: usize,
    /// Peak RSS of the probe process.
    pub(crate) peak_rss_kib: Option<u64>,
    /// RSS of the probe process before it started (interpreter, libraries).
    pub(crate) baseline_rss_kib: Option<u64>,
}

impl Measure {
    /// As JSON.
    pub(crate) fn to_json(&self) -> Value {
        json!({
            "model": self.model,
            "probe": self.probe,
            "median_ns": self.median_ns,
            "reps": self.reps,
            "peak_rss_kib": self.peak_rss_kib,
            "baseline_rss_kib": self.baseline_rss_kib,
        })
    }
}

fn run_child(mut cmd: Command, what: &str) -> Result<Value> {
    let out = cmd
        .output()
        .map_err(|e| format!("cannot start the {what} probe: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "the {what} probe failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().last().unwrap_or("");
    Ok(
        serde_json::from_str(line)
            .map_err(|e| format!("the {what} probe printed `{line}`: {e}"))?,
    )
}

fn to_measure(model: &Path, probe: &'static str, v: &Value) -> Result<Measure> {
    let times: Vec<u64> = v["times_ns"]
        .as_array()
        .ok_or("probe output has no times")?
        .iter()
        .filter_map(Value::as_u64)
        .collect();
    Ok(Measure {
        model: model
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        probe,
        median_ns: crate::harness::median(&times),
        reps: times.len(),
        peak_rss_kib: v["peak_rss_kib"].as_u64(),
        baseline_rss_kib: v["baseline_rss_kib"].as_u64(),
    })
}

/// Measures every probe on each model in `dir` (`weights_1gib.onnx`,
/// `weights_1gib_external.onnx` and `deep_5000.onnx`, a 5,000-node graph whose output sizes
/// come from shape inference; made by `models/make_models.py --metadata DIR`).
pub(crate) fn measure(
    dir: &Path,
    python: Option<(&Path, &Path)>,
    quick: bool,
) -> Result<Vec<Measure>> {
    let exe = std::env::current_exe()?;
    let models: Vec<PathBuf> = [
        "weights_1gib.onnx",
        "weights_1gib_external.onnx",
        "deep_5000.onnx",
    ]
    .iter()
    .map(|m| dir.join(m))
    .collect();
    let mut out = Vec::new();
    for model in &models {
        if !model.exists() {
            return Err(format!(
                "`{}` is missing: make it with `python3 ort-bind-bench/models/make_models.py --metadata {}`",
                model.display(),
                dir.display()
            )
            .into());
        }
        let reps = |n: usize| if quick { n.div_ceil(4) } else { n };
        for (probe, n) in [("read_signature", 21), ("generate", 11), ("read_file", 5)] {
            let mut cmd = Command::new(&exe);
            cmd.arg("probe")
                .arg(probe)
                .arg(model)
                .arg(reps(n).to_string());
            let v = run_child(cmd, probe)?;
            out.push(to_measure(model, probe, &v)?);
        }
        if let Some((python, script)) = python {
            let mut cmd = Command::new(python);
            cmd.arg(script)
                .arg("metadata")
                .arg(model)
                .arg("--reps")
                .arg(reps(3).to_string());
            let v = run_child(cmd, "python_onnx_load")?;
            out.push(to_measure(model, "python_onnx_load", &v)?);
        }
    }
    Ok(out)
}
