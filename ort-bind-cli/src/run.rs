//! `ort-bind run`: runs a model through the runtime's binding on inputs read from `.npy` or
//! ONNX `.pb` files, prints each output's type and shape, writes outputs (tensors and
//! strings as `.npy`; tensors of ONNX's narrow types, which numpy has no dtype for, and
//! sequences, maps and optionals as the ONNX message for them, `.pb`),
//! and compares them with expected outputs (like `polygraphy run` does for ONNX Runtime).
//!
//! Types and shapes come from the model and the files: a `.pb` file is read as the message
//! the model's type calls for (`TensorProto`, `SequenceProto`, `MapProto`, `OptionalProto`);
//! each input is sized by its file (dynamic dims included), checked against the model's
//! type, rank and fixed dims, and copied once into memory the binding owns (strings and
//! containers into ONNX Runtime's own values); ONNX Runtime allocates the outputs.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use ort_bind_cli::data::{self, Tolerance};
use ort_bind_runtime::{DynValue, DynamicBinding, Session, SessionOptions};

/// Arguments of `ort-bind run`.
#[derive(Debug, clap::Args)]
pub(crate) struct RunArgs {
    /// The ONNX model file.
    model: PathBuf,
    /// An input: `NAME=FILE`, FILE a `.npy` (numbers or strings) or `.pb` (the ONNX message
    /// for the input's type: TensorProto, SequenceProto, MapProto, OptionalProto; narrow
    /// types such as int4 and float8e4m3fn only as `.pb`). Every model input needs one.
    #[arg(short, long = "input", value_name = "NAME=FILE")]
    inputs: Vec<String>,
    /// An expected output to compare with: `NAME=FILE` (`.npy` or `.pb`). The command fails
    /// when an output differs.
    #[arg(short, long = "expect", value_name = "NAME=FILE")]
    expect: Vec<String>,
    /// Writes every output to `DIR/<output name>.npy` (tensors and strings) or `.pb`
    /// (tensors of narrow types such as int4 and float8e4m3fn, which numpy lacks; sequences,
    /// maps, optionals); characters other than letters, digits, `-`, `_` and
    /// `.` become `_`.
    #[arg(short, long = "out", value_name = "DIR")]
    out: Option<PathBuf>,
    /// Relative tolerance of `--expect` comparisons (ONNX's backend tests use 1e-3).
    #[arg(long, default_value_t = Tolerance::ONNX_BACKEND.rtol)]
    rtol: f64,
    /// Absolute tolerance of `--expect` comparisons (ONNX's backend tests use 1e-7).
    #[arg(long, default_value_t = Tolerance::ONNX_BACKEND.atol)]
    atol: f64,
    /// ONNX Runtime intra-op threads (0 lets ONNX Runtime decide).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Stops the run when it has not finished after this many milliseconds; the command
    /// then fails, naming the timeout.
    #[arg(long, value_name = "MS")]
    timeout_ms: Option<u64>,
}

/// Splits `NAME=FILE` at the first `=`.
fn name_and_file<'a>(flag: &str, arg: &'a str) -> Result<(&'a str, &'a Path), String> {
    match arg.split_once('=') {
        Some((name, file)) if !file.is_empty() => Ok((name, Path::new(file))),
        _ => Err(format!("--{flag} `{arg}`: expected NAME=FILE")),
    }
}

fn describe(info: &ort_bind_runtime::dynamic::ValueInfo) -> String {
    format!("`{}` {}", info.name, info.ty)
}

/// `name` as a file name: characters other than ASCII letters, digits, `-`, `_`, `.`
/// become `_`; empty names and `.`/`..` get a prefix.
fn file_stem_for(name: &str) -> String {
    let stem: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if stem.is_empty() || stem.chars().all(|c| c == '.') {
        format!("output_{stem}")
    } else {
        stem
    }
}

/// Runs the command; `Err` carries the message to print (and means a non-zero exit).
pub(crate) fn run(args: RunArgs) -> Result<(), String> {
    let tolerance = Tolerance {
        rtol: args.rtol,
        atol: args.atol,
    };
    if !(tolerance.rtol >= 0.0 && tolerance.atol >= 0.0) {
        return Err("--rtol and --atol must be non-negative numbers".into());
    }
    let options = SessionOptions::new().intra_threads(args.threads);
    let session = Session::from_file(&args.model, &options).map_err(|e| e.to_string())?;
    let mut binding = DynamicBinding::new(&session).map_err(|e| e.to_string())?;

    // Inputs.
    let mut given = HashSet::new();
    for arg in &args.inputs {
        let (name, file) = name_and_file("input", arg)?;
        let index = binding.input_index(name).ok_or_else(|| {
            let known: Vec<String> = binding.input_info().map(describe).collect();
            format!(
                "--input {name}: the model has no input `{name}`; its inputs: {}",
                known.join(", ")
            )
        })?;
        if !given.insert(index) {
            return Err(format!("--input {name} is given twice"));
        }
        let ty = binding
            .input_info()
            .nth(index)
            .map(|info| info.ty.clone())
            .expect("index from input_index");
        let value = data::read_value(file, Some(&ty)).map_err(|e| e.to_string())?;
        binding
            .set_input_value(index, &value)
            .map_err(|e| format!("--input {name}={}: {e}", file.display()))?;
    }
    let missing: Vec<String> = binding
        .input_info()
        .enumerate()
        .filter(|(i, _)| !given.contains(i))
        .map(|(_, info)| describe(info))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "no --input for {}; give each as --input NAME=FILE",
            missing.join(", ")
        ));
    }

    // Expected outputs, read before running so that a typo costs no run.
    let mut expected: Vec<(usize, String, DynValue)> = Vec::new();
    for arg in &args.expect {
        let (name, file) = name_and_file("expect", arg)?;
        let index = binding.output_index(name).ok_or_else(|| {
            let known: Vec<String> = binding.output_info().map(describe).collect();
            format!(
                "--expect {name}: the model has no output `{name}`; its outputs: {}",
                known.join(", ")
            )
        })?;
        if expected.iter().any(|(i, _, _)| *i == index) {
            return Err(format!("--expect {name} is given twice"));
        }
        let ty = binding
            .output_info()
            .nth(index)
            .map(|info| info.ty.clone())
            .expect("index from output_index");
        let value = data::read_value(file, Some(&ty)).map_err(|e| e.to_string())?;
        expected.push((index, name.to_owned(), value));
    }

    let started = std::time::Instant::now();
    match args.timeout_ms {
        Some(ms) => binding
            .run_with_timeout(std::time::Duration::from_millis(ms))
            .map_err(|e| format!("--timeout-ms {ms}: {e}"))?,
        None => binding.run().map_err(|e| e.to_string())?,
    }
    let took = started.elapsed();
    println!("ran `{}` in {took:.2?}", args.model.display());

    // Outputs.
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create --out folder `{}`: {e}", dir.display()))?;
    }
    let mut stems = HashSet::new();
    let infos: Vec<_> = binding.output_info().cloned().collect();
    for (index, info) in infos.iter().enumerate() {
        let value = binding.output_value(index).map_err(|e| e.to_string())?;
        let shown = match &value {
            DynValue::Tensor(a) => format!("{} {:?}", a.dtype(), a.dims()),
            other => other.describe(),
        };
        let mut line = format!("output `{}`: {shown}", info.name);
        if let Some(dir) = &args.out {
            let base = file_stem_for(&info.name);
            let mut stem = base.clone();
            let mut n = 2;
            while !stems.insert(stem.clone()) {
                stem = format!("{base}_{n}");
                n += 1;
            }
            let ext = match &value {
                DynValue::Tensor(a) if data::npy::holds(a.dtype()) => "npy",
                DynValue::Strings(_) => "npy",
                _ => "pb",
            };
            let path = dir.join(format!("{stem}.{ext}"));
            let note = data::write_value(&path, &info.name, &value).map_err(|e| e.to_string())?;
            line.push_str(&format!(" -> {}", path.display()));
            if let Some(note) = note {
                line.push_str(&format!(" ({note})"));
            }
        }
        println!("{line}");
    }

    // Comparisons.
    let mut mismatches = 0;
    for (index, name, want) in &expected {
        let value = binding.output_value(*index).map_err(|e| e.to_string())?;
        match data::compare_values(&value, want, tolerance) {
            Ok(()) => println!("match    `{name}`"),
            Err(m) => {
                mismatches += 1;
                println!("MISMATCH `{name}`: {m}");
            }
        }
    }
    if mismatches > 0 {
        return Err(format!(
            "{mismatches} of {} expected outputs differ (rtol {}, atol {})",
            expected.len(),
            tolerance.rtol,
            tolerance.atol
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_and_file_names() {
        assert_eq!(
            name_and_file("input", "x=a=b.npy").unwrap(),
            ("x", Path::new("a=b.npy"))
        );
        assert!(
            name_and_file("input", "x.npy")
                .unwrap_err()
                .contains("NAME=FILE")
        );
        assert!(name_and_file("expect", "x=").is_err());
        assert_eq!(file_stem_for("gpu_0/softmax:0"), "gpu_0_softmax_0");
        assert_eq!(file_stem_for(".."), "output_..");
        assert_eq!(file_stem_for(""), "output_");
    }
}
