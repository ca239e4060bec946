//! Part of the test crate's build script: ONNX's per-operator (`node`) backend tests,
//! which the `onnx==1.23.2` wheel ships as code, not data.
//!
//! `build/node_cases.py` serialises them (`<case>/model.onnx`,
//! `<case>/test_data_set_N/{input,output}_K.pb`) with onnx==1.23.2 and numpy, which
//! [`ort_bind_fetch::PythonPackages`] installs into the per-user cache once. The cases are
//! generated into a staging folder and renamed into the cache folder
//! `onnx-1.23.2-node-cases-<hash of the script>`, so a rebuild finds them there and runs
//! no Python, and editing the script regenerates them. Nothing here fails the build: the
//! error says why the cases are missing, and the index built from it reports it.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use ort_bind_fetch::{NO_FETCH_VAR, PythonPackages, cache_root};

/// The generator, relative to the crate.
const SCRIPT: &str = "build/node_cases.py";
/// What it needs installed. numpy's version is left to pip: the cases' random data comes
/// from numpy's legacy global generator, seeded, whose stream numpy keeps stable.
const REQUIREMENTS: &[&str] = &["onnx==1.23.2", "numpy"];
/// The packages' cache folder (plus the interpreter's tag).
const PACKAGES_FOLDER: &str = "python-onnx-1.23.2";
/// The longest the generator may run (about 15 s on 2 cores).
const GENERATOR_TIMEOUT: Duration = Duration::from_secs(300);

/// The folder of the generated node cases, generating them first when they are not cached.
pub(crate) fn cases_folder() -> Result<PathBuf, String> {
    println!("cargo:rerun-if-changed={SCRIPT}");
    println!("cargo:rerun-if-env-changed=DOCS_RS");
    let (folder, result) = find_or_generate()?;
    if result.is_err() {
        // A path that does not exist makes cargo rerun this script on the next build,
        // which tries again. (Not printed on success: the folder's appearing would rerun
        // the script, and rebuild the tests, once more.)
        println!("cargo:rerun-if-changed={}", folder.display());
    }
    result.map(|()| folder)
}

/// The cases' folder, and whether it is there (generated now if it was not).
fn find_or_generate() -> Result<(PathBuf, Result<(), String>), String> {
    let script = std::fs::read(SCRIPT).map_err(|e| format!("cannot read {SCRIPT}: {e}"))?;
    let root =
        cache_root().ok_or("no cache folder: set ORT_BIND_CACHE_DIR (or XDG_CACHE_HOME / HOME)")?;
    let name = format!("onnx-1.23.2-node-cases-{:016x}", fnv1a(&script));
    let folder = root.join(&name);
    if folder.is_dir() {
        return Ok((folder, Ok(())));
    }
    let result = generate(&root, &name, &folder);
    Ok((folder, result))
}

/// Generates the cases into `folder` (named `name`, under the cache `root`).
fn generate(root: &Path, name: &str, folder: &Path) -> Result<(), String> {
    if std::env::var_os("DOCS_RS").is_some() {
        return Err("built on docs.rs (DOCS_RS), which runs no Python".into());
    }
    if std::env::var_os(NO_FETCH_VAR).is_some_and(|v| !v.is_empty()) {
        return Err(format!(
            "the node cases are not in the cache at `{}` and fetching is off ({NO_FETCH_VAR})",
            folder.display()
        ));
    }
    let env = PythonPackages::new(REQUIREMENTS, PACKAGES_FOLDER)
        .get()
        .map_err(|e| e.to_string())?;
    let staging = root.join(format!(".{name}.tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    let generated = run_generator(&env, &staging).and_then(|()| {
        match std::fs::rename(&staging, folder) {
            Ok(()) => Ok(()),
            // Another build generated them first; its cases are the same.
            Err(_) if folder.is_dir() => Ok(()),
            Err(e) => Err(format!(
                "cannot move the cases to {}: {e}",
                folder.display()
            )),
        }
    });
    let _ = std::fs::remove_dir_all(&staging);
    generated
}

/// Runs the generator into `into`, killing it after [`GENERATOR_TIMEOUT`].
fn run_generator(env: &ort_bind_fetch::PythonEnv, into: &Path) -> Result<(), String> {
    let mut child = env
        .command()
        .arg(SCRIPT)
        .arg(into)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {SCRIPT}: {e}"))?;
    // Read on a thread, so that a chatty generator cannot fill the pipe and stall.
    let stderr = child.stderr.take().map(|mut pipe| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut pipe, &mut text);
            text
        })
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() > GENERATOR_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{SCRIPT} ran longer than {} s and was stopped",
                    GENERATOR_TIMEOUT.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(format!("waiting for {SCRIPT}: {e}")),
        }
    };
    if status.success() {
        return Ok(());
    }
    let stderr = stderr
        .and_then(|reader| reader.join().ok())
        .unwrap_or_default();
    let last = stderr
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("no output")
        .trim()
        .to_owned();
    Err(format!("{SCRIPT} failed ({status}): {last}"))
}

/// 64-bit FNV-1a: a stable digest of the generator, naming its output's cache folder.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
