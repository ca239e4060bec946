//! Prints the signature of each ONNX model named on the command line, one JSON object per
//! line, for comparing the decoder with another reader (see `compare_with_onnx.py`).
//!
//! ```text
//! cargo run -p ort-bind-codegen --example dump_signature -- model.onnx ...
//! ```
//! Reads file paths from standard input (one per line) when given no arguments.

use std::io::{BufRead, Write};

use ort_bind_codegen::__private::json::{Value, dims as dims_json};
use ort_bind_codegen::{ValueInfo, ValueType, read_signature};

fn value(v: &ValueInfo) -> Value {
    match &v.kind {
        ValueType::Tensor { elem, dims } => Value::object([
            ("name", v.name.as_str().into()),
            ("elem", i64::from(elem.onnx_code()).into()),
            ("dims", dims_json(dims.as_deref())),
        ]),
        // Sequences, maps, optionals and unsupported leaves: the type as `Display` writes it.
        kind => Value::object([
            ("name", v.name.as_str().into()),
            ("unsupported", kind.to_string().into()),
        ]),
    }
}

fn dump(path: &str) -> Value {
    match read_signature(path) {
        Ok(sig) => Value::object([
            ("path", path.into()),
            ("inputs", sig.inputs.iter().map(value).collect()),
            ("outputs", sig.outputs.iter().map(value).collect()),
            (
                "opsets",
                sig.opsets
                    .iter()
                    .map(|(d, v)| Value::from(vec![d.into(), (*v).into()]))
                    .collect(),
            ),
            ("ir_version", sig.ir_version.into()),
            ("producer_name", sig.producer_name.as_str().into()),
            ("graph_name", sig.graph_name.as_str().into()),
            (
                "metadata",
                sig.metadata
                    .iter()
                    .map(|(k, v)| Value::from(vec![k.into(), v.into()]))
                    .collect(),
            ),
        ]),
        Err(e) => Value::object([("path", path.into()), ("error", e.to_string().into())]),
    }
}

fn main() {
    let mut paths: Vec<String> = std::env::args().skip(1).collect();
    if paths.is_empty() {
        paths = std::io::stdin()
            .lock()
            .lines()
            .map_while(Result::ok)
            .filter(|l| !l.trim().is_empty())
            .collect();
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for p in &paths {
        if writeln!(out, "{}", dump(p)).is_err() {
            break;
        }
    }
}
