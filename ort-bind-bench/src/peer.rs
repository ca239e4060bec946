//! The Python peer: `scripts/bench_peer.py serve`, a child process that runs the Python
//! contenders when the harness asks, so their blocks interleave with the Rust ones.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

use crate::Result;
use crate::workloads::{Summary, Workload};

/// A running peer process.
#[derive(Debug)]
pub(crate) struct Peer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    python: PathBuf,
}

impl Peer {
    /// Starts `python script serve`.
    pub(crate) fn spawn(python: &Path, script: &Path) -> Result<Peer> {
        let mut child = Command::new(python)
            .arg(script)
            .arg("serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| {
                format!(
                    "cannot start `{} {}`: {e}",
                    python.display(),
                    script.display()
                )
            })?;
        let stdin = child.stdin.take().ok_or("the peer has no stdin")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("the peer has no stdout")?);
        Ok(Peer {
            child,
            stdin,
            stdout,
            python: python.to_path_buf(),
        })
    }

    /// The Python interpreter it runs on.
    pub(crate) fn python(&self) -> &Path {
        &self.python
    }

    /// Sends one request and returns the reply; a reply with `error` is an `Err`.
    pub(crate) fn request(&mut self, req: &Value) -> Result<Value> {
        writeln!(self.stdin, "{req}")?;
        self.stdin.flush()?;
        let mut line = String::new();
        if self.stdout.read_line(&mut line)? == 0 {
            return Err("the Python peer exited (its error is printed above)".into());
        }
        let reply: Value = serde_json::from_str(&line)
            .map_err(|e| format!("the Python peer sent a line that is not JSON ({e}): {line}"))?;
        if let Some(err) = reply.get("error") {
            return Err(format!("the Python peer failed: {err}").into());
        }
        Ok(reply)
    }

    /// Loads a workload into the peer (sessions, bindings, input files); returns the
    /// onnxruntime version it runs.
    pub(crate) fn setup(&mut self, w: &Workload, files: &[Vec<PathBuf>]) -> Result<String> {
        let slots: Vec<Value> = w
            .slots
            .iter()
            .map(|s| json!({"in_dims": s.in_dims, "out_dims": s.out_dims}))
            .collect();
        let reply = self.request(&json!({
            "cmd": "setup",
            "workload": w.name,
            "model": w.model,
            "inputs": w.inputs,
            "output": w.output,
            "set_files": files,
            "slots": slots,
            "sequence": w.sequence,
        }))?;
        Ok(reply["onnxruntime"]
            .as_str()
            .unwrap_or("unknown")
            .to_owned())
    }

    /// Runs `runs` runs on each of `threads` Python threads at once, each with its own
    /// I/O binding (own input and output arrays) on the workload's one
    /// `run_with_iobinding` session (a single-dims workload, on its first input set);
    /// returns the peer's wall seconds from the threads' common start to the last one's
    /// end, and each thread's last output.
    pub(crate) fn threads(
        &mut self,
        workload: &str,
        threads: usize,
        runs: usize,
    ) -> Result<(f64, Vec<Summary>)> {
        let reply = self.request(&json!({
            "cmd": "threads", "workload": workload, "threads": threads, "runs": runs,
        }))?;
        let seconds = reply["seconds"]
            .as_f64()
            .ok_or("the Python peer's threads reply has no seconds")?;
        let outputs = reply["outputs"]
            .as_array()
            .ok_or("the Python peer's threads reply has no outputs")?
            .iter()
            .map(|o| {
                let f = |i: usize| o.get(i).and_then(Value::as_f64);
                match (f(0), f(1), f(2)) {
                    (Some(first), Some(last), Some(sum)) => Ok(Summary {
                        first: first as f32,
                        last: last as f32,
                        sum: Some(sum),
                    }),
                    _ => Err(format!(
                        "the Python peer sent a malformed output summary: {o}"
                    )),
                }
            })
            .collect::<std::result::Result<Vec<_>, _>>()?;
        if outputs.len() != threads {
            return Err(format!(
                "the Python peer ran {threads} threads but sent {} outputs",
                outputs.len()
            )
            .into());
        }
        Ok((seconds, outputs))
    }

    /// Frees a workload's sessions and buffers in the peer.
    pub(crate) fn drop_workload(&mut self, w: &Workload) -> Result<()> {
        self.request(&json!({"cmd": "drop", "workload": w.name}))?;
        Ok(())
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "{}", json!({"cmd": "quit"}));
        let _ = self.stdin.flush();
        let _ = self.child.wait();
    }
}
