//! Human- and machine-readable descriptions of a model signature (for `ort-bind inspect`).

use crate::json::Value;
use crate::sig::{Dim, ModelSignature, ValueInfo, ValueType, format_dims};

/// `{"inputs": [{"name", "dtype", "shape"}], "outputs": [...]}`: dtype as the numpy
/// name, each shape entry an integer (fixed), a string (named) or `null` (unnamed
/// dynamic); `shape` itself is `null` for unknown rank. A sequence, map or optional has
/// its whole type as `dtype` (`seq(map(string, float32))`) and a `null` shape. Written by
/// the signature's one JSON codec ([`crate::json::summary`]).
///
/// Each tensor output of known rank also has `"axes"`: how the generated bindings size each
/// axis, `{"fixed": 3}`, `{"field": "batch"}` (a `Dims` field), `{"expr": "floor((w + 5)
/// / 8)"}` (computed from `Dims` fields, as shape inference derived it from the graph) or
/// `{"runtime": "why"}` (ONNX Runtime decides it during each run; why, where known).
pub fn to_json(sig: &ModelSignature) -> Value {
    let mut json = crate::json::summary(sig);
    let Ok(axes) = crate::planner::axes(sig, &crate::planner::ModelOptions::new()) else {
        return json;
    };
    let Some(Value::Array(outputs)) = json.get("outputs").cloned() else {
        return json;
    };
    let outputs: Vec<Value> = outputs
        .into_iter()
        .map(|mut o| {
            let name = o
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            let list: Vec<Value> = axes
                .iter()
                .filter(|a| a.role == crate::planner::Role::Output && a.value == name)
                .map(|a| match &a.binding {
                    crate::planner::AxisBinding::Fixed(n) => {
                        Value::object([("fixed", (*n).into())])
                    }
                    crate::planner::AxisBinding::Field(f) => {
                        Value::object([("field", f.trim_start_matches("r#").into())])
                    }
                    crate::planner::AxisBinding::Expr(e) => {
                        Value::object([("expr", e.as_str().into())])
                    }
                    crate::planner::AxisBinding::Runtime => {
                        Value::object([("runtime", a.why.as_deref().unwrap_or("").into())])
                    }
                })
                .collect();
            if !list.is_empty() {
                o.insert("axes", Value::Array(list));
            }
            o
        })
        .collect();
    json.insert("outputs", Value::Array(outputs));
    json
}

fn kind_text(v: &ValueInfo) -> (String, String) {
    match &v.kind {
        ValueType::Tensor { elem, dims } => {
            (elem.numpy_name().to_owned(), format_dims(dims.as_deref()))
        }
        // Sequences, maps and optionals have no shape of their own; say when the
        // generated code cannot bind one (either side: the reason does not depend on it).
        kind => {
            let shape = if crate::planner::value_refusal(v, crate::planner::Role::Output).is_some()
            {
                "(not bindable)"
            } else {
                ""
            };
            (kind.to_string(), shape.to_owned())
        }
    }
}

/// Metadata values longer than this many characters (or of more than one line) are
/// summarised in the table unless [`to_table`] is asked for everything.
const METADATA_SUMMARY_CHARS: usize = 80;

/// Rows of text cells, left-aligned in columns two spaces apart.
fn columns(rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = Vec::new();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            let n = c.chars().count();
            match widths.get_mut(i) {
                Some(w) => *w = (*w).max(n),
                None => widths.push(n),
            }
        }
    }
    let mut out = String::new();
    for r in rows {
        let mut line = String::new();
        for (i, c) in r.iter().enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            line.push_str(c);
            line.push_str(&" ".repeat(widths[i].saturating_sub(c.chars().count())));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// One metadata value as the summary shows it: whole when short, else its start and size.
fn metadata_summary(value: &str) -> String {
    let lines = value.lines().count();
    if lines <= 1 && value.chars().count() <= METADATA_SUMMARY_CHARS {
        return value.to_owned();
    }
    let start: String = value
        .lines()
        .next()
        .unwrap_or("")
        .chars()
        .take(METADATA_SUMMARY_CHARS / 2)
        .collect();
    format!(
        "{start}... ({} lines, {} bytes; --full shows it)",
        lines.max(1),
        value.len()
    )
}

/// What `inspect` says of a decoder signature: the roles and each cache pair with what its
/// axes hold.
fn decoder_text(sig: &ModelSignature) -> String {
    use crate::planner::CacheAxis;
    let plan = match crate::planner::plan_decoder(sig, None) {
        Ok(Some(plan)) => plan,
        // A refused decoder fails the whole plan: the table says so above.
        Ok(None) | Err(_) => return String::new(),
    };
    let mut out = format!(
        "\ndecoder ({}): token ids `{}`, logits `{}` ({} per position, {})",
        if plan.paged.is_some() {
            "`Model::paged_decoder`"
        } else if plan.shared_buffer {
            "`Model::decoder`, `Model::shared_decoder`"
        } else {
            "`Model::decoder`"
        },
        plan.input_ids.0,
        plan.logits,
        plan.vocab,
        plan.logits_elem
    );
    for (role, value) in [
        ("attention mask", &plan.attention_mask),
        ("position ids", &plan.position_ids),
    ] {
        if let Some((name, _)) = value {
            out.push_str(&format!(", {role} `{name}`"));
        }
    }
    if let Some(p) = &plan.paged {
        out.push_str(&format!(
            ", block table `{}`, slot mapping `{}` (blocks of {} positions)",
            p.block_tables.0, p.slot_mapping.0, p.block_size
        ));
    }
    out.push('\n');
    let mut rows = Vec::new();
    for c in &plan.caches {
        let axes: Vec<String> = c
            .axes
            .iter()
            .map(|a| match a {
                CacheAxis::Batch => "batch".to_owned(),
                CacheAxis::Sequence => "sequence".to_owned(),
                CacheAxis::Fixed(n) => n.to_string(),
                CacheAxis::Blocks => "blocks".to_owned(),
            })
            .collect();
        let kind = if !c.grows() {
            "recurrent state"
        } else if plan.paged.is_some() {
            "paged, written in place"
        } else if plan.shared_buffer {
            "written in place"
        } else {
            "grows"
        };
        rows.push(vec![
            format!("  `{}` -> `{}`", c.past, c.present),
            c.elem.to_string(),
            format!("[{}]", axes.join(", ")),
            kind.to_owned(),
        ]);
    }
    out.push_str(&columns(&rows));
    out
}

/// A readable report: one row per input and output, then every axis with the `Dims`
/// field it becomes and the option that renames it, then producer, opsets and metadata
/// (long metadata values summarised unless `full`).
pub fn to_table(sig: &ModelSignature, full: bool) -> String {
    let mut rows = vec![vec![
        String::new(),
        "name".into(),
        "dtype".into(),
        "shape".into(),
    ]];
    // Inputs with a default are overridable from IR 4 on; before it, they are weights.
    let overridable: &[ValueInfo] = if sig.ir_version >= 4 {
        &sig.initialized_inputs
    } else {
        &[]
    };
    for (role, values) in [
        ("input", &sig.inputs[..]),
        ("overridable", overridable),
        ("output", &sig.outputs[..]),
    ] {
        for v in values {
            let (dtype, shape) = kind_text(v);
            rows.push(vec![role.to_owned(), v.name.clone(), dtype, shape]);
        }
    }
    let mut out = columns(&rows);
    if !overridable.is_empty() {
        out.push_str(
            "(overridable: an input with a default, bound only while set: \
             `Binding::override_inputs`, or a LoRA adapter's `set_adapter`)\n",
        );
    }

    match crate::planner::axes(sig, &crate::planner::ModelOptions::new()) {
        Ok(axes) if axes.iter().any(|a| a.rename.is_some()) => {
            out.push_str(
                "\ndynamic axes (the `Dims` field each becomes; the option that names it):\n",
            );
            let mut rows = Vec::new();
            for a in axes.iter().filter(|a| a.rename.is_some()) {
                let role = match a.role {
                    crate::planner::Role::Input => "input",
                    crate::planner::Role::Output => "output",
                };
                let declared = match &a.declared {
                    Dim::Fixed(n) => n.to_string(),
                    Dim::Named(name) => name.clone(),
                    Dim::Dynamic => "?".to_owned(),
                };
                let becomes = match &a.binding {
                    crate::planner::AxisBinding::Field(f) => format!("Dims.{f}"),
                    crate::planner::AxisBinding::Fixed(n) => format!("fixed {n}"),
                    crate::planner::AxisBinding::Expr(e) => {
                        format!("{e} (inferred from the graph)")
                    }
                    crate::planner::AxisBinding::Runtime => match &a.why {
                        Some(why) => format!("decided by ONNX Runtime each run: {why}"),
                        None => "decided by ONNX Runtime each run".into(),
                    },
                };
                rows.push(vec![
                    format!("  {role} `{}` axis {}", a.value, a.axis),
                    declared,
                    format!("-> {becomes}"),
                    a.rename.clone().unwrap_or_default(),
                ]);
            }
            out.push_str(&columns(&rows));
        }
        Ok(_) => {}
        Err(e) => out.push_str(&format!("\nnot bindable as generated code: {e}\n")),
    }
    out.push_str(&decoder_text(sig));
    if let Ok(plan) = crate::planner::plan_with(sig, &crate::planner::ModelOptions::new()) {
        let notes = plan.inference_notes();
        if !notes.is_empty() {
            out.push_str("\nsized as the graph computes, not as declared:\n");
            for note in notes {
                out.push_str(&format!("  {note}\n"));
            }
        }
    }

    out.push('\n');
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
        let shown = if full { v.clone() } else { metadata_summary(v) };
        out.push_str(&format!("metadata: {k} = {shown}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ElementType;

    fn sig() -> ModelSignature {
        ModelSignature {
            inputs: vec![ValueInfo {
                name: "gpu_0/data_0".into(),
                kind: ValueType::Tensor {
                    elem: ElementType::F16,
                    dims: Some(vec![
                        Dim::Named("batch".into()),
                        Dim::Fixed(3),
                        Dim::Dynamic,
                    ]),
                },
                doc_string: String::new(),
            }],
            outputs: vec![ValueInfo {
                name: "out".into(),
                kind: ValueType::Tensor {
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
            j.to_string(),
            r#"{"inputs":[{"name":"gpu_0/data_0","dtype":"float16","shape":["batch",3,null]}],"outputs":[{"name":"out","dtype":"bool","shape":null}]}"#
        );
    }

    #[test]
    fn nested_kinds_show_whole() {
        let mut sig = sig();
        sig.outputs.push(ValueInfo {
            name: "output_probability".into(),
            kind: ValueType::Sequence(Box::new(ValueType::Map {
                key: ElementType::I64,
                value: Box::new(ValueType::Tensor {
                    elem: ElementType::F32,
                    dims: None,
                }),
            })),
            doc_string: String::new(),
        });
        let t = to_table(&sig, false);
        assert!(
            t.contains("output  output_probability  seq(map(int64, float32))"),
            "{t}"
        );
        assert!(!t.contains("not bindable"), "{t}");
        // A map key ONNX Runtime's C API cannot read is refused, naming why.
        sig.outputs[1].kind = ValueType::Sequence(Box::new(ValueType::Map {
            key: ElementType::I32,
            value: Box::new(ValueType::Tensor {
                elem: ElementType::F32,
                dims: None,
            }),
        }));
        let t = to_table(&sig, false);
        assert!(
            t.contains("output  output_probability  seq(map(int32, float32))  (not bindable)"),
            "{t}"
        );
        assert!(
            t.contains(
                "not bindable as generated code: output `output_probability` is a sequence \
                 seq(map(int32, float32)): ONNX Runtime's C API makes and reads maps with int64 \
                 or string keys"
            ),
            "{t}"
        );
        sig.outputs[1].kind = ValueType::Sequence(Box::new(ValueType::Map {
            key: ElementType::I64,
            value: Box::new(ValueType::Tensor {
                elem: ElementType::F32,
                dims: None,
            }),
        }));
        let j = to_json(&sig);
        let outputs = j.get("outputs").and_then(Value::as_array).unwrap();
        assert_eq!(
            outputs[1].to_string(),
            r#"{"name":"output_probability","dtype":"seq(map(int64, float32))","shape":null}"#
        );
    }

    #[test]
    fn table_lists_every_value_first_then_axes_then_metadata() {
        let mut sig = sig();
        let dictionary: String = (0..6625).map(|i| format!("char{i}\n")).collect();
        sig.metadata = vec![
            ("character".into(), dictionary.clone()),
            ("made_by".into(), "hand".into()),
        ];
        let t = to_table(&sig, false);
        assert!(
            t.starts_with("        name          dtype    shape\n"),
            "{t}"
        );
        assert!(
            t.contains("input   gpu_0/data_0  float16  [batch, 3, ?]"),
            "{t}"
        );
        assert!(t.contains("output  out"), "{t}");
        // Every dynamic axis with its `Dims` field and the option that renames it.
        assert!(
            t.contains("input `gpu_0/data_0` axis 0  batch  -> Dims.batch"),
            "{t}"
        );
        assert!(t.contains("rename_dim(\"batch\", \"NAME\")"), "{t}");
        assert!(t.contains("input `gpu_0/data_0` axis 2  ?"), "{t}");
        // Long metadata summarised, short kept; `full` shows everything.
        assert!(
            t.contains("metadata: character = char0... (6625 lines"),
            "{t}"
        );
        assert!(t.contains("metadata: made_by = hand"), "{t}");
        assert!(t.len() < 2_000, "{} bytes", t.len());
        assert!(t.find("output  out").unwrap() < t.find("metadata:").unwrap());
        let full = to_table(&sig, true);
        assert!(
            full.contains(&dictionary),
            "the full table holds the whole value"
        );
    }

    #[test]
    fn table_names_a_decoders_roles_and_caches() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../ort-bind-tests/tests/fixtures/decoders/hybrid_conv/model.onnx");
        let t = to_table(&crate::read_signature(&path).unwrap(), false);
        assert!(
            t.contains("decoder (`Model::decoder`): token ids `input_ids`, logits `logits` (512 per position, float32)"),
            "{t}"
        );
        assert!(t.contains("`past_conv.0` -> `present_conv.0`"), "{t}");
        assert!(
            t.contains("[batch, 64, 3]            recurrent state"),
            "{t}"
        );
        assert!(t.contains("[batch, 4, sequence, 16]  grows"), "{t}");
        // Not a decoder: nothing said.
        assert!(!to_table(&sig(), false).contains("decoder"));
    }

    #[test]
    fn table_names_a_paged_decoders_block_inputs() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../ort-bind-tests/tests/fixtures/decoders/gqa_paged/model.onnx");
        let t = to_table(&crate::read_signature(&path).unwrap(), false);
        assert!(
            t.contains("decoder (`Model::paged_decoder`): token ids `input_ids`"),
            "{t}"
        );
        assert!(
            t.contains(
                "block table `block_tables`, slot mapping `slot_mapping` (blocks of 16 positions)"
            ),
            "{t}"
        );
        assert!(t.contains("[blocks, 16, 2, 16]"), "{t}");
        assert!(t.contains("paged, written in place"), "{t}");
    }
}
