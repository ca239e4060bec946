//! Running Python: `pip download`, and listing and extracting a wheel with `zipfile`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The interpreters tried, in order.
const PYTHONS: [&str; 2] = ["python3", "python"];

/// What every pip call here passes: wheels only, no prompts or version check, quiet, and
/// bounded (a 15 s network timeout and one retry, so a machine with no route to an index
/// fails in seconds rather than minutes).
const PIP_FLAGS: [&str; 8] = [
    "--only-binary=:all:",
    "--disable-pip-version-check",
    "--no-input",
    "--timeout",
    "15",
    "--retries",
    "1",
    "-q",
];

/// Lists a zip's file entries (not folders), one per line.
const LIST: &str = r#"
import sys, zipfile
for info in zipfile.ZipFile(sys.argv[1]).infolist():
    if not info.is_dir():
        sys.stdout.buffer.write(info.filename.encode("utf-8") + b"\n")
"#;

/// Extracts the entries named on stdin (one per line) into `argv[2]`, at their paths minus
/// the prefix `argv[3]`. The caller has checked the names: no absolute paths, no `..`.
const EXTRACT: &str = r#"
import os, shutil, sys, zipfile
archive = zipfile.ZipFile(sys.argv[1])
dest, strip = sys.argv[2], sys.argv[3]
for name in sys.stdin.buffer.read().decode("utf-8").splitlines():
    target = os.path.join(dest, *name[len(strip):].split("/"))
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with archive.open(name) as src, open(target, "wb") as out:
        shutil.copyfileobj(src, out)
"#;

/// Runs `python -c script args...` with `stdin`, trying each interpreter until one runs.
fn run(script: &str, args: &[&std::ffi::OsStr], stdin: &[u8]) -> Result<Output, String> {
    let mut failures = Vec::new();
    for python in PYTHONS {
        let child = Command::new(python)
            .arg("-c")
            .arg(script)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn();
        let mut child = match child {
            Ok(child) => child,
            Err(e) => {
                failures.push(format!("`{python}` could not be run: {e}"));
                continue;
            }
        };
        if let Some(mut pipe) = child.stdin.take() {
            // A script that exits early closes the pipe; its exit status tells why.
            let _ = pipe.write_all(stdin);
        }
        return child
            .wait_with_output()
            .map_err(|e| format!("`{python}` failed: {e}"));
    }
    Err(failures.join("; "))
}

/// The last non-empty line of a process's stderr: the part of a Python error that says why.
fn last_line(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr)
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("no output")
        .trim()
        .to_owned()
}

/// The file entries of the zip at `wheel`.
pub(crate) fn list_zip(wheel: &Path) -> Result<Vec<String>, String> {
    let output = run(LIST, &[wheel.as_os_str()], b"")?;
    if !output.status.success() {
        return Err(format!("not a zip file ({})", last_line(&output)));
    }
    let text = String::from_utf8(output.stdout).map_err(|_| "an entry name is not UTF-8")?;
    Ok(text.lines().map(str::to_owned).collect())
}

/// Extracts `names` of the zip at `wheel` into `into`, each at its path minus `strip`.
pub(crate) fn extract_zip(
    wheel: &Path,
    names: &[String],
    into: &Path,
    strip: &str,
) -> Result<(), String> {
    let list = names.join("\n");
    let output = run(
        EXTRACT,
        &[wheel.as_os_str(), into.as_os_str(), strip.as_ref()],
        list.as_bytes(),
    )?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!("extraction failed: {}", last_line(&output)))
    }
}

/// Runs `pip download` for `requirement` into `into`; returns the wheel's path. Bounded: one
/// retry and a 15 s network timeout, so a machine with no route to an index fails in seconds
/// rather than minutes.
pub(crate) fn pip_download(
    requirement: &str,
    index_url: Option<&str>,
    into: &Path,
) -> Result<PathBuf, String> {
    let index: Vec<&str> = index_url.map_or(Vec::new(), |url| vec!["--index-url", url]);
    let mut failures = Vec::new();
    for python in PYTHONS {
        let output = Command::new(python)
            .args(["-m", "pip", "download", "--no-deps"])
            .args(PIP_FLAGS)
            .args(&index)
            .arg(requirement)
            .arg("-d")
            .arg(into)
            .stdin(Stdio::null())
            .output();
        match output {
            Err(e) => failures.push(format!("`{python}` could not be run: {e}")),
            Ok(out) if !out.status.success() => {
                // Only an interpreter without pip makes the next one worth trying; a pip
                // that ran and failed (no network, no such release) would fail again.
                let try_next = String::from_utf8_lossy(&out.stderr).contains("No module named pip");
                failures.push(format!(
                    "`{python} -m pip download` failed ({}): {}",
                    out.status,
                    last_line(&out)
                ));
                if !try_next {
                    break;
                }
            }
            Ok(_) => {
                let wheel = std::fs::read_dir(into)
                    .map_err(|e| format!("cannot list {}: {e}", into.display()))?
                    .filter_map(|entry| entry.ok().map(|e| e.path()))
                    .find(|p| p.extension().is_some_and(|x| x == "whl"));
                return wheel.ok_or_else(|| {
                    format!("`{python} -m pip download` succeeded but left no wheel")
                });
            }
        }
    }
    Err(failures.join("; "))
}

/// The interpreter `pip_install_target` and [`crate::PythonPackages`] use: the first of
/// [`PYTHONS`] that runs, and its `sys.implementation` tag with version (`cpython-311`),
/// which keys the cache (binary wheels are built per interpreter).
pub(crate) fn interpreter() -> Result<(&'static str, String), String> {
    const TAG: &str = "import sys; v = sys.version_info; \
                       print(f'{sys.implementation.name}-{v.major}{v.minor}')";
    let mut failures = Vec::new();
    for python in PYTHONS {
        match Command::new(python)
            .args(["-c", TAG])
            .stdin(Stdio::null())
            .output()
        {
            Ok(out) if out.status.success() => {
                let tag = String::from_utf8_lossy(&out.stdout).trim().to_owned();
                return Ok((python, tag));
            }
            Ok(out) => failures.push(format!("`{python}` failed: {}", last_line(&out))),
            Err(e) => failures.push(format!("`{python}` could not be run: {e}")),
        }
    }
    Err(failures.join("; "))
}

/// Runs `python -m pip install --target into requirements...`, bounded like
/// [`pip_download`] (a 15 s network timeout and one retry) and binary wheels only, so that
/// nothing is compiled.
pub(crate) fn pip_install_target(
    python: &str,
    requirements: &[String],
    index_url: Option<&str>,
    into: &Path,
) -> Result<(), String> {
    let index: Vec<&str> = index_url.map_or(Vec::new(), |url| vec!["--index-url", url]);
    let output = Command::new(python)
        .args(["-m", "pip", "install", "--no-warn-script-location"])
        .args(PIP_FLAGS)
        .args(&index)
        .arg("--target")
        .arg(into)
        .args(requirements)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("`{python}` could not be run: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "`{python} -m pip install --target` failed ({}): {}",
            output.status,
            last_line(&output)
        ))
    }
}
