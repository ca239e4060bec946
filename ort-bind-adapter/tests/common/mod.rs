//! Shared by the integration tests: adapter files built field by field (any field may be
//! left out or hold nonsense), and the fixtures that `make_lora.py` wrote with ONNX
//! Runtime's own writer.

#![allow(dead_code, unreachable_pub)]

use std::path::PathBuf;

use flatbuffers::FlatBufferBuilder;

/// One `Parameter` table; `None` leaves the field out.
#[derive(Debug, Clone, Default)]
pub struct Param {
    pub name: Option<String>,
    pub dims: Option<Vec<i64>>,
    pub element: Option<i32>,
    pub data: Option<Vec<u8>>,
}

/// A float32 parameter with the given dims and values.
pub fn float(name: &str, dims: &[i64], values: &[f32]) -> Param {
    Param {
        name: Some(name.to_owned()),
        dims: Some(dims.to_vec()),
        element: Some(1),
        data: Some(values.iter().flat_map(|v| v.to_le_bytes()).collect()),
    }
}

/// The `Adapter` root table; `None` leaves the field out.
#[derive(Debug, Clone)]
pub struct Adapter {
    pub format_version: Option<i32>,
    pub adapter_version: i32,
    pub model_version: i32,
    pub parameters: Option<Vec<Param>>,
}

impl Adapter {
    /// Format version 1, adapter version 7, model version 9, these parameters.
    pub fn with(parameters: Vec<Param>) -> Self {
        Adapter {
            format_version: Some(1),
            adapter_version: 7,
            model_version: 9,
            parameters: Some(parameters),
        }
    }

    /// The file, with identifier `TORT`.
    pub fn build(&self) -> Vec<u8> {
        let mut b = FlatBufferBuilder::new();
        let mut tables = Vec::new();
        for p in self.parameters.iter().flatten() {
            let name = p.name.as_deref().map(|n| b.create_string(n));
            let dims = p.dims.as_deref().map(|d| b.create_vector(d));
            let data = p.data.as_deref().map(|d| b.create_vector(d));
            let start = b.start_table();
            if let Some(name) = name {
                b.push_slot_always(4, name);
            }
            if let Some(dims) = dims {
                b.push_slot_always(6, dims);
            }
            if let Some(element) = p.element {
                b.push_slot_always(8, element);
            }
            if let Some(data) = data {
                b.push_slot_always(10, data);
            }
            tables.push(b.end_table(start));
        }
        let parameters = self.parameters.as_ref().map(|_| b.create_vector(&tables));
        let start = b.start_table();
        if let Some(v) = self.format_version {
            b.push_slot_always(4, v);
        }
        b.push_slot_always(6, self.adapter_version);
        b.push_slot_always(8, self.model_version);
        if let Some(parameters) = parameters {
            b.push_slot_always(10, parameters);
        }
        let root = b.end_table(start);
        b.finish(root, Some("TORT"));
        b.finished_data().to_vec()
    }
}

/// `ort-bind-tests/tests/fixtures/lora/`, where make_lora.py writes.
pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../ort-bind-tests/tests/fixtures/lora")
}

/// A fixture file's bytes.
pub fn fixture(name: &str) -> Vec<u8> {
    let path = fixtures().join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The adapter fixtures make_lora.py writes, all valid files (the bad ones are bad for the
/// model, not as files).
pub const ADAPTERS: [&str; 6] = [
    "math.onnx_adapter",
    "code.onnx_adapter",
    "wide.onnx_adapter",
    "unknown.onnx_adapter",
    "mixed_rank.onnx_adapter",
    "int_typed.onnx_adapter",
];
