//! Human- and machine-readable descriptions of a model signature (for `ort-bind inspect`).

use serde_json::{Value, json};

use crate::signature::{Dim, ModelSignature, ValueKind, ValueSig, format_dims};

fn value_json(v: &ValueSig) -> Value {
    match &v.kind {
        ValueKind::Tensor { elem, dims } => {
            let shape = match dims {
                None => Value::Null,
                Some(ds) => Value::Array(
                    ds.iter()
                        .map(|d| match d {
                            Dim::Fixed(n) => json!(n),
                            Dim::Named(s) => json!(s),
                            Dim::Dynamic => Value::Null,
                        })
                        .collect(),
                ),
            };
            json!({ "name": v.name, "dtype": elem.numpy_name(), "shape": shape })
        }
        ValueKind::Unsupported(kind) => {
            json!({ "name": v.name, "dtype": kind, "shape": Value::Null })
        }
    }
}

/// `{"inputs": [{"name", "dtype", "shape"}], "outputs": [...]}`: dtype as the numpy
/// name, each shape entry an integer (fixed), a string (named) or `null` (unnamed
/// dynamic); `shape` itself is `null` for unknown rank.
pub fn to_json(sig: &ModelSignature) -> Value {
    json!({
        "inputs": sig.inputs.iter().map(value_json).collect::<Vec<_>>(),
        "outputs": sig.outputs.iter().map(value_json).collect::<Vec<_>>(),
    })
}

fn kind_text(v: &ValueSig) -> (String, String) {
    match &v.kind {
        ValueKind::Tensor { elem, dims } => {
            (elem.numpy_name().to_owned(), format_dims(dims.as_deref()))
        }
        ValueKind::Unsupported(kind) => (kind.clone(), "(not bindable)".to_owned()),
    }
}

/// A readable table: producer, opsets, then one row per input and output.
pub fn to_table(sig: &ModelSignature) -> String {
    let mut rows: Vec<[String; 4]> = Vec::new();
    for (role, values) in [("input", &sig.inputs), ("output", &sig.outputs)] {
        for v in values {
            let (dtype, shape) = kind_text(v);
            rows.push([role.to_owned(), v.name.clone(), dtype, shape]);
        }
    }
    let header = ["", "name", "dtype", "shape"];
    let mut widths = header.map(str::len);
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    let producer = format!("{} {}", sig.producer_name, sig.producer_version);
    let producer = producer.trim();
    out.push_str(&format!(
        "producer: {}\n",
        if producer.is_empty() {
            "(unknown)"
        } else {
            producer
        }
    ));
    let opsets: Vec<String> = sig
        .opsets
        .iter()
        .map(|(d, v)| format!("{}={v}", if d.is_empty() { "ai.onnx" } else { d }))
        .collect();
    out.push_str(&format!(
        "ir version: {}, opsets: {}\n",
        sig.ir_version,
        opsets.join(", ")
    ));
    if !sig.graph_name.is_empty() {
        out.push_str(&format!("graph: {}\n", sig.graph_name));
    }
    for (k, v) in &sig.metadata {
        out.push_str(&format!("metadata: {k} = {v}\n"));
    }
    out.push('\n');
    let line = |cells: [&str; 4]| {
        let mut l = String::new();
        for (i, (c, w)) in cells.iter().zip(widths).enumerate() {
            if i > 0 {
                l.push_str("  ");
            }
            l.push_str(c);
            if i < 3 {
                l.push_str(&" ".repeat(w.saturating_sub(c.chars().count())));
            }
        }
        l.trim_end().to_owned() + "\n"
    };
    out.push_str(&line(header));
    for r in &rows {
        out.push_str(&line([&r[0], &r[1], &r[2], &r[3]]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ElementType;

    fn sig() -> ModelSignature {
        ModelSignature {
            inputs: vec![ValueSig {
                name: "gpu_0/data_0".into(),
                kind: ValueKind::Tensor {
                    elem: ElementType::F16,
                    dims: Some(vec![
                        Dim::Named("batch".into()),
                        Dim::Fixed(3),
                        Dim::Dynamic,
                    ]),
                },
                doc_string: String::new(),
            }],
            outputs: vec![ValueSig {
                name: "out".into(),
                kind: ValueKind::Tensor {
                    elem: ElementType::Bool,
                    dims: None,
                },
                doc_string: String::new(),
            }],
            ..Default::default()
        }
    }

    #[test]
    fn json_uses_numpy_names_and_dim_kinds() {
        let j = to_json(&sig());
        assert_eq!(
            j,
            json!({
                "inputs": [{"name": "gpu_0/data_0", "dtype": "float16", "shape": ["batch", 3, null]}],
                "outputs": [{"name": "out", "dtype": "bool", "shape": null}],
            })
        );
    }

    #[test]
    fn table_lists_every_value() {
        let t = to_table(&sig());
        assert!(
            t.contains("input   gpu_0/data_0  float16  [batch, 3, ?]"),
            "{t}"
        );
        assert!(t.contains("output  out"), "{t}");
    }
}
