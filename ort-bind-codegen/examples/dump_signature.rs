//! Prints the signature of each ONNX model named on the command line, one JSON object per
//! line, for comparing the decoder with another reader (see `compare_with_onnx.py`).
//!
//! ```text
//! cargo run -p ort-bind-codegen --example dump_signature -- model.onnx ...
//! ```
//! Reads file paths from standard input (one per line) when given no arguments.

use std::io::{BufRead, Write};

use ort_bind_codegen::json::dims as dims_json;
use ort_bind_codegen::{ValueInfo, ValueType, read_signature};
use serde_json::{Value, json};

fn value(v: &ValueInfo) -> Value {
    match &v.kind {
        ValueType::Tensor { elem, dims } => json!({
            "name": v.name,
            "elem": elem.onnx_code(),
            "dims": dims_json(dims.as_deref()),
        }),
        // Sequences, maps, optionals and unsupported leaves: the type as `Display` writes it.
        kind => json!({ "name": v.name, "unsupported": kind.to_string() }),
    }
}

fn dump(path: &str) -> Value {
    match read_signature(path) {
        Ok(sig) => json!({
            "path": path,
            "inputs": sig.inputs.iter().map(value).collect::<Vec<_>>(),
            "outputs": sig.outputs.iter().map(value).collect::<Vec<_>>(),
            "opsets": sig.opsets,
            "ir_version": sig.ir_version,
            "producer_name": sig.producer_name,
            "graph_name": sig.graph_name,
            "metadata": sig.metadata,
        }),
        Err(e) => json!({ "path": path, "error": e.to_string() }),
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
