//! The hostile corpus shared by `tests/hostile.rs` (never a panic, generated code that
//! compiles) and `tests/hostile_alloc.rs` (bounded memory): ONNX files written byte by
//! byte with a minimal protobuf writer, so every length, tag and nesting is under the
//! test's control.

#![allow(dead_code, unreachable_pub)]

use std::collections::HashSet;
use std::path::PathBuf;

use ort_bind_codegen::__private::expand::{ExpandOptions, expand};
use ort_bind_codegen::__private::model::{MAX_TYPE_DEPTH, signature_from_bytes};
use ort_bind_codegen::__private::plan::plan;
use ort_bind_codegen::{ModelError, ModelSignature, PlanError, ValueInfo, ValueType};

// ---- protobuf writer ------------------------------------------------------------------

/// A base-128 varint.
pub fn varint(mut v: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(10);
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return out;
        }
        out.push(byte | 0x80);
    }
}

/// A field key.
pub fn key(field: u32, wire: u8) -> Vec<u8> {
    varint(u64::from(field) << 3 | u64::from(wire))
}

/// A length-delimited field.
pub fn ld(field: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = key(field, 2);
    out.extend(varint(payload.len() as u64));
    out.extend_from_slice(payload);
    out
}

/// A length-delimited field whose length prefix claims `claimed` bytes but which
/// carries only `payload`.
pub fn ld_claiming(field: u32, claimed: u64, payload: &[u8]) -> Vec<u8> {
    let mut out = key(field, 2);
    out.extend(varint(claimed));
    out.extend_from_slice(payload);
    out
}

/// A varint field.
pub fn vi(field: u32, v: u64) -> Vec<u8> {
    let mut out = key(field, 0);
    out.extend(varint(v));
    out
}

/// One `TensorShapeProto.Dimension` as tests spell it.
#[derive(Debug, Clone)]
pub enum W {
    /// `dim_value` (as the raw varint: any `u64`, so also values no `i64` holds).
    Value(u64),
    /// `dim_param`, raw bytes (may be invalid UTF-8).
    Param(Vec<u8>),
    /// Neither.
    Unset,
}

pub fn dimension(d: &W) -> Vec<u8> {
    match d {
        W::Value(v) => vi(1, *v),
        W::Param(p) => ld(2, p),
        W::Unset => Vec::new(),
    }
}

/// A `TypeProto` with `tensor_type { elem_type, shape }`.
pub fn tensor_type(elem: i32, dims: Option<&[W]>) -> Vec<u8> {
    let mut t = vi(1, elem as i64 as u64);
    if let Some(dims) = dims {
        let shape: Vec<u8> = dims.iter().flat_map(|d| ld(1, &dimension(d))).collect();
        t.extend(ld(2, &shape));
    }
    ld(1, &t)
}

/// `TypeProto { sequence_type { elem_type: inner } }`.
pub fn sequence_of(inner: &[u8]) -> Vec<u8> {
    ld(4, &ld(1, inner))
}

/// `TypeProto { optional_type { elem_type: inner } }`.
pub fn optional_of(inner: &[u8]) -> Vec<u8> {
    ld(9, &ld(1, inner))
}

/// `TypeProto { map_type { key_type: int64, value_type: inner } }`.
pub fn map_of(inner: &[u8]) -> Vec<u8> {
    let mut m = vi(1, 7);
    m.extend(ld(2, inner));
    ld(5, &m)
}

/// A `ValueInfoProto` (name as raw bytes, type as encoded `TypeProto` bytes).
pub fn value_info(name: &[u8], ty: &[u8]) -> Vec<u8> {
    let mut v = ld(1, name);
    v.extend(ld(2, ty));
    v
}

/// A float `[n]`-style value with the given dims.
pub fn f32_value(name: &[u8], dims: &[W]) -> Vec<u8> {
    value_info(name, &tensor_type(1, Some(dims)))
}

/// A graph from encoded inputs and outputs.
pub fn graph(inputs: &[Vec<u8>], outputs: &[Vec<u8>]) -> Vec<u8> {
    let mut g = ld(2, b"hostile");
    for i in inputs {
        g.extend(ld(11, i));
    }
    for o in outputs {
        g.extend(ld(12, o));
    }
    g
}

/// A model around an encoded graph: ir_version 8, opset 17.
pub fn model(graph: &[u8]) -> Vec<u8> {
    model_ir(graph, 8)
}

/// [`model`] with IR version `ir`.
pub fn model_ir(graph: &[u8], ir: u64) -> Vec<u8> {
    let mut m = vi(1, ir);
    m.extend(ld(2, b"ort-bind-hostile"));
    m.extend(ld(7, graph));
    let mut opset = ld(1, b"");
    opset.extend(vi(2, 17));
    m.extend(ld(8, &opset));
    m
}

/// `y = f(x)`-shaped model: one float input `x` and one float output `y`, both `[n]`.
pub fn simple_model() -> Vec<u8> {
    model(&graph(
        &[f32_value(b"x", &[W::Param(b"n".to_vec())])],
        &[f32_value(b"y", &[W::Param(b"n".to_vec())])],
    ))
}

/// Wraps an encoded `TypeProto` in another level (`sequence_of`, ...).
pub type Wrap = fn(&[u8]) -> Vec<u8>;

/// A `TypeProto` nested `depth` times through `wrap`, around a float tensor.
pub fn nested(depth: usize, wrap: Wrap) -> Vec<u8> {
    let mut ty = tensor_type(1, Some(&[W::Value(2)]));
    for _ in 0..depth {
        ty = wrap(&ty);
    }
    ty
}

/// `TypeProto { map_type { key_type: key, value_type: value } }` (no value type when `None`).
pub fn map_with_key(key: i64, value: Option<&[u8]>) -> Vec<u8> {
    let mut m = vi(1, key as u64);
    if let Some(v) = value {
        m.extend(ld(2, v));
    }
    ld(5, &m)
}

/// A model with one input of the given encoded `TypeProto` and one float output.
pub fn typed_model(ty: &[u8]) -> Vec<u8> {
    model(&graph(
        &[value_info(b"v", ty)],
        &[f32_value(b"y", &[W::Value(1)])],
    ))
}

/// A model whose only input has a type nested `depth` levels deep.
pub fn deep_model(depth: usize, wrap: Wrap) -> Vec<u8> {
    model(&graph(
        &[value_info(b"deep", &nested(depth, wrap))],
        &[f32_value(b"y", &[W::Value(1)])],
    ))
}

// ---- deterministic randomness ---------------------------------------------------------

/// xorshift64*, seeded: the corpus is the same on every run.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next() as u8).collect()
    }
}

// ---- fixtures -------------------------------------------------------------------------

fn repo_path(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../ort-bind-tests")
        .join(rel)
}

/// Every real model under `tests/fixtures/`, as `(file name, bytes)`, sorted.
pub fn fixture_models() -> Vec<(String, Vec<u8>)> {
    let mut models = files_with(repo_path("tests/fixtures"), |n| n.ends_with(".onnx"));
    // The shape-inference fixtures: their node attributes and constants are read too.
    models.extend(files_with(repo_path("tests/fixtures/shapes"), |n| {
        n.ends_with(".onnx")
    }));
    models
}

/// Every file of the checked-in hostile corpus `tests/fixtures/hostile/`.
pub fn checked_in_corpus() -> Vec<(String, Vec<u8>)> {
    files_with(repo_path("tests/fixtures/hostile"), |n| {
        n.ends_with(".onnx")
    })
}

fn files_with(dir: PathBuf, keep: impl Fn(&str) -> bool) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name().to_string_lossy().into_owned();
            (keep(&name) && e.file_type().ok()?.is_file())
                .then(|| (name, std::fs::read(e.path()).expect("read fixture")))
        })
        .collect();
    out.sort();
    out
}

// ---- the generated corpus -------------------------------------------------------------

/// What a hostile case must give.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// `Err(ModelError::Decode)`.
    DecodeError,
    /// Any `Err`.
    AnyError,
    /// `Ok`, and codegen either succeeds or gives a `PlanError`.
    Decodes,
    /// `Ok` or `Err`: only "no panic, bounded memory, valid code if any".
    Either,
    /// `Err(ModelError::TypeTooDeep)`.
    TooDeep,
    /// `Ok`, and codegen refuses with a `PlanError::Unsupported` whose message names
    /// the value and shows its type.
    Refused,
    /// `Ok`, and codegen generates bindings for it (a string tensor, sequence, map or
    /// optional the runtime binds).
    Binds,
}

/// One named hostile input.
#[derive(Debug, Clone)]
pub struct Case {
    pub name: String,
    pub bytes: Vec<u8>,
    pub expect: Expect,
}

fn case(name: impl Into<String>, bytes: Vec<u8>, expect: Expect) -> Case {
    Case {
        name: name.into(),
        bytes,
        expect,
    }
}

/// Sizes a length prefix may claim.
pub const CLAIMS: &[(&str, u64)] = &[
    ("1GiB", 1 << 30),
    ("4GiB", 1 << 32),
    ("2^62", 1 << 62),
    ("i64::MAX", i64::MAX as u64),
    ("u64::MAX", u64::MAX),
];

/// Length prefixes that claim far more bytes than follow, at every level of nesting.
pub fn huge_length_cases() -> Vec<Case> {
    let mut out = Vec::new();
    let pad = [0u8; 32];
    for &(label, claim) in CLAIMS {
        // ModelProto.graph.
        let mut m = vi(1, 8);
        m.extend(ld_claiming(7, claim, &pad));
        out.push(case(
            format!("graph claims {label}"),
            m,
            Expect::DecodeError,
        ));
        // ModelProto.doc_string (bytes) and producer_name (string).
        out.push(case(
            format!("model doc_string claims {label}"),
            ld_claiming(6, claim, b"doc"),
            Expect::DecodeError,
        ));
        // GraphProto.input, .output, .initializer, .node (skipped field).
        for (field, what) in [
            (11, "input"),
            (12, "output"),
            (5, "initializer"),
            (1, "node"),
        ] {
            let g = ld_claiming(field, claim, &pad);
            out.push(case(
                format!("graph.{what} claims {label}"),
                model(&g),
                Expect::DecodeError,
            ));
        }
        // ValueInfoProto.name and .type.
        let v = ld_claiming(1, claim, b"x");
        out.push(case(
            format!("value name claims {label}"),
            model(&graph(&[v], &[])),
            Expect::DecodeError,
        ));
        let mut v = ld(1, b"x");
        v.extend(ld_claiming(2, claim, &pad));
        out.push(case(
            format!("value type claims {label}"),
            model(&graph(&[v], &[])),
            Expect::DecodeError,
        ));
        // TensorShapeProto.dim and Dimension.dim_param.
        let shape = ld_claiming(1, claim, &pad);
        let mut t = vi(1, 1);
        t.extend(ld(2, &shape));
        out.push(case(
            format!("shape dim claims {label}"),
            model(&graph(&[value_info(b"x", &ld(1, &t))], &[])),
            Expect::DecodeError,
        ));
        let dim = ld_claiming(2, claim, b"batch");
        let mut t = vi(1, 1);
        t.extend(ld(2, &ld(1, &dim)));
        out.push(case(
            format!("dim_param claims {label}"),
            model(&graph(&[value_info(b"x", &ld(1, &t))], &[])),
            Expect::DecodeError,
        ));
        // An unknown field of the model (skipped without being read).
        let mut m = simple_model();
        m.extend(ld_claiming(99, claim, &pad));
        out.push(case(
            format!("unknown field claims {label}"),
            m,
            Expect::DecodeError,
        ));
    }
    // Varints: 10 bytes with continuation on the last, 11 bytes, and a lone continuation.
    out.push(case(
        "overlong varint (11 bytes)",
        [vec![0x08], vec![0xff; 10], vec![0x01]].concat(),
        Expect::DecodeError,
    ));
    out.push(case(
        "unterminated varint",
        [vec![0x08], vec![0x80; 9]].concat(),
        Expect::DecodeError,
    ));
    out.push(case(
        "length prefix is an overlong varint",
        [vec![0x3a], vec![0xff; 12]].concat(),
        Expect::DecodeError,
    ));
    out
}

/// Nesting: types nested to depth 10,000 through every recursive `TypeProto` kind,
/// depths around prost's recursion limit, and deeply nested unknown groups.
pub fn nesting_cases() -> Vec<Case> {
    let mut out = Vec::new();
    let wraps: [(&str, Wrap); 3] = [
        ("sequence", sequence_of),
        ("optional", optional_of),
        ("map", map_of),
    ];
    for (what, wrap) in wraps {
        for depth in [10_000, 1_000, 101, 100, 99] {
            out.push(case(
                format!("{what} nested {depth} deep"),
                deep_model(depth, wrap),
                Expect::DecodeError,
            ));
        }
        // Each level is two messages (`TypeProto` + its kind), under prost's limit of
        // 100 nested messages: 44 levels decode as protobuf but are past ort-bind's
        // limit of MAX_TYPE_DEPTH levels (a `TypeTooDeep` error); around 47 prost's limit is
        // reached (a decode error). Exactly MAX_TYPE_DEPTH levels (the tensor and
        // MAX_TYPE_DEPTH - 1 wrappers) decode and codegen refuses them.
        for depth in [44, MAX_TYPE_DEPTH] {
            out.push(case(
                format!("{what} nested {depth} deep"),
                deep_model(depth, wrap),
                Expect::TooDeep,
            ));
        }
        out.push(case(
            format!("{what} nested {} deep", MAX_TYPE_DEPTH - 1),
            deep_model(MAX_TYPE_DEPTH - 1, wrap),
            Expect::Decodes,
        ));
        for depth in 45..=50 {
            out.push(case(
                format!("{what} nested {depth} deep"),
                deep_model(depth, wrap),
                Expect::Either,
            ));
        }
    }
    // Alternating sequence/optional/map to depth 10,000.
    let mut ty = tensor_type(1, None);
    for i in 0..10_000 {
        ty = match i % 3 {
            0 => sequence_of(&ty),
            1 => optional_of(&ty),
            _ => map_of(&ty),
        };
    }
    out.push(case(
        "mixed sequence/optional/map nested 10000 deep",
        model(&graph(&[value_info(b"deep", &ty)], &[])),
        Expect::DecodeError,
    ));
    // 100,000 nested start-groups in an unknown graph field (wire type 3), closed or not.
    let mut open = Vec::new();
    for _ in 0..100_000 {
        open.extend(key(20, 3));
    }
    let mut closed = open.clone();
    for _ in 0..100_000 {
        closed.extend(key(20, 4));
    }
    out.push(case(
        "unknown group nested 100000 deep, unclosed",
        model(&open),
        Expect::DecodeError,
    ));
    out.push(case(
        "unknown group nested 100000 deep, closed",
        model(&closed),
        Expect::DecodeError,
    ));
    // The graph message nested in itself through an unknown length-delimited field
    // (skipped as bytes, no recursion): 10,000 levels.
    let mut g = graph(&[], &[f32_value(b"y", &[W::Value(1)])]);
    for _ in 0..10_000 {
        let mut outer = ld(30, &g);
        outer.extend(graph(&[], &[f32_value(b"y", &[W::Value(1)])]));
        g = outer;
        if g.len() > 4 << 20 {
            break;
        }
    }
    out.push(case(
        "unknown length-delimited fields nested deep",
        model(&g),
        Expect::Either,
    ));
    out
}

/// Sequences, maps and optionals as ONNX allows them and as it does not: map keys that
/// are not integers or strings, unset element types, skl2onnx's ZipMap type.
pub fn kind_cases() -> Vec<Case> {
    let f32_any = tensor_type(1, None);
    let mut out = Vec::new();
    for (what, key) in [
        ("float32", 1),
        ("bool", 9),
        ("float16", 10),
        ("float64", 11),
        ("complex64", 14),
        ("bfloat16", 16),
        ("float8e4m3fn", 17),
        ("unknown code 99", 99),
        ("negative code", -5),
        ("undefined", 0),
    ] {
        out.push(case(
            format!("map with {what} keys"),
            typed_model(&map_with_key(key, Some(&f32_any))),
            Expect::Refused,
        ));
    }
    // Keys ONNX allows: the ones ONNX Runtime's C API reads bind, the others are refused.
    for (what, key, expect) in [
        ("string", 8, Expect::Binds),
        ("int64", 7, Expect::Binds),
        ("uint8", 2, Expect::Refused),
    ] {
        out.push(case(
            format!("map with {what} keys"),
            typed_model(&map_with_key(key, Some(&f32_any))),
            expect,
        ));
    }
    for (what, ty) in [
        (
            "ZipMap output seq(map(string, float32))",
            sequence_of(&map_with_key(8, Some(&f32_any))),
        ),
        (
            "optional(seq(float32[2]))",
            optional_of(&sequence_of(&tensor_type(1, Some(&[W::Value(2)])))),
        ),
        (
            "string tensor",
            tensor_type(8, Some(&[W::Param(b"n".to_vec())])),
        ),
    ] {
        out.push(case(what, typed_model(&ty), Expect::Binds));
    }
    let unset = ld(1, b""); // a TypeProto field present but with no type in it
    for (what, ty) in [
        ("sequence without elem type", ld(4, b"")),
        ("sequence of an empty TypeProto", ld(4, &ld(1, b""))),
        ("optional without elem type", ld(9, b"")),
        ("optional of an empty TypeProto", ld(9, &ld(1, b""))),
        ("map without value type", map_with_key(7, None)),
        ("map without key or value type", ld(5, b"")),
        (
            "seq(map(float32 key)) inside",
            sequence_of(&map_with_key(1, Some(&f32_any))),
        ),
        ("seq of sparse tensor", sequence_of(&ld(8, &vi(1, 1)))),
        ("seq of empty type", sequence_of(&unset)),
    ] {
        out.push(case(what, typed_model(&ty), Expect::Refused));
    }
    out
}

/// `count` distinct float inputs `[batch]` named by `name(i)`, and one output.
pub fn many_inputs(count: usize, name: impl Fn(usize) -> Vec<u8>, outputs: usize) -> Vec<u8> {
    let batch = [W::Param(b"batch".to_vec())];
    let inputs: Vec<Vec<u8>> = (0..count).map(|i| f32_value(&name(i), &batch)).collect();
    let outputs: Vec<Vec<u8>> = (0..outputs)
        .map(|i| f32_value(format!("out{i}").as_bytes(), &batch))
        .collect();
    model(&graph(&inputs, &outputs))
}

/// A name for index `i` built only of separators after an `x`, so that every name is
/// distinct but all sanitise to the identifier `x`.
pub fn colliding_name(i: usize) -> Vec<u8> {
    const SEPS: &[u8] = b"./-: ";
    let mut name = b"x".to_vec();
    let mut n = i;
    loop {
        name.push(SEPS[n % SEPS.len()]);
        n /= SEPS.len();
        if n == 0 {
            return name;
        }
    }
}

/// Counts: 100,000 inputs (plain, colliding after sanitising), 100,000 outputs, many
/// related names (recurrent-pair search), a rank-10,000 tensor, empty values.
pub fn count_cases() -> Vec<Case> {
    let mut out = vec![
        case(
            "100000 inputs",
            many_inputs(100_000, |i| format!("in{i}").into_bytes(), 1),
            Expect::Decodes,
        ),
        case(
            "100000 inputs whose names all sanitise to `x`",
            many_inputs(100_000, colliding_name, 1),
            Expect::Decodes,
        ),
        case(
            "2000 inputs (full codegen, parsed)",
            many_inputs(2_000, |i| format!("in{i}").into_bytes(), 1),
            Expect::Decodes,
        ),
        case(
            "20000 inputs (planned and expanded)",
            many_inputs(20_000, |i| format!("in{i}").into_bytes(), 1),
            Expect::Decodes,
        ),
        case(
            "100000 inputs and 100000 outputs",
            many_inputs(100_000, |i| format!("in{i}").into_bytes(), 100_000),
            Expect::Decodes,
        ),
    ];
    // 2,000 inputs `s`, `ss`, ... and 2,000 outputs `s..s_out0`, ...: every pair is
    // related by name (one is a prefix of the other), equal in type and shape.
    let batch = [W::Param(b"batch".to_vec())];
    let inputs: Vec<Vec<u8>> = (1..=2_000)
        .map(|i| f32_value(&vec![b's'; i], &batch))
        .collect();
    let stem = "s".repeat(2_000);
    let outputs: Vec<Vec<u8>> = (0..2_000)
        .map(|i| f32_value(format!("{stem}_out{i}").as_bytes(), &batch))
        .collect();
    out.push(case(
        "2000x2000 inputs/outputs all related by name",
        model(&graph(&inputs, &outputs)),
        Expect::Decodes,
    ));
    // 100,000 empty `ValueInfoProto`s (2 bytes each): decodes, then rejected.
    let mut g = Vec::new();
    for _ in 0..100_000 {
        g.extend(ld(11, &[]));
    }
    out.push(case("100000 empty inputs", model(&g), Expect::AnyError));
    // Rank 10,000 and 100,000 dims of one tensor.
    for rank in [10_000, 100_000] {
        let dims: Vec<W> = (0..rank)
            .map(|i| match i % 3 {
                0 => W::Value(2),
                1 => W::Param(format!("d{}", i % 7).into_bytes()),
                _ => W::Unset,
            })
            .collect();
        out.push(case(
            format!("rank {rank} tensor"),
            model(&graph(&[f32_value(b"x", &dims)], &[f32_value(b"y", &dims)])),
            Expect::Decodes,
        ));
    }
    // Initializers listed as inputs, plus one real input: 100,000 in IR 3 (weights, not
    // inputs), 20,000 in IR 8 (each an overridable input with a typed field).
    for (count, ir) in [(100_000, 3), (20_000, 8)] {
        let mut g = graph(
            &[f32_value(b"real", &[W::Value(1)])],
            &[f32_value(b"y", &[W::Value(1)])],
        );
        for i in 0..count {
            let name = format!("w{i}");
            g.extend(ld(5, &ld(8, name.as_bytes())));
            g.extend(ld(11, &f32_value(name.as_bytes(), &[W::Value(3)])));
        }
        out.push(case(
            format!("{count} initializers listed as inputs (IR {ir})"),
            model_ir(&g, ir),
            Expect::Decodes,
        ));
    }
    out
}

/// Names and strings: NUL, invalid UTF-8, control characters, text that would end a
/// comment or a string in generated code, 1 MiB names, keywords.
pub fn name_cases() -> Vec<Case> {
    let mut out = Vec::new();
    let one = |name: &[u8]| {
        model(&graph(
            &[f32_value(name, &[W::Param(b"n".to_vec())])],
            &[f32_value(b"y", &[W::Param(b"n".to_vec())])],
        ))
    };
    let decodes: &[(&str, &[u8])] = &[
        ("NUL in a name", b"a\0b"),
        ("name is only NUL", b"\0"),
        ("CR in a name", b"a\rb"),
        ("CRLF in a name", b"a\r\nb"),
        ("LF in a name", b"a\nb"),
        ("quotes and backslashes in a name", b"\"\\\"'\\"),
        ("comment terminator in a name", b"*/ x /* /** //"),
        ("backticks and brackets in a name", b"`[]`]("),
        ("keyword name", b"type"),
        ("reserved name", b"self"),
        ("right-to-left override in a name", "a\u{202e}b".as_bytes()),
        ("non-ASCII name", "température/Δ".as_bytes()),
        ("name of separators only", b"./:-"),
    ];
    for (what, name) in decodes {
        out.push(case(*what, one(name), Expect::Decodes));
    }
    let invalid: &[(&str, &[u8])] = &[
        ("invalid UTF-8 in a name", b"a\xffb"),
        ("lone continuation byte in a name", b"\x80"),
        ("surrogate encoded in a name", b"\xed\xa0\x80"),
        ("overlong encoding in a name", b"\xc0\xaf"),
        ("truncated UTF-8 sequence in a name", b"ab\xe2\x82"),
    ];
    for (what, name) in invalid {
        out.push(case(*what, one(name), Expect::DecodeError));
    }
    // Invalid UTF-8 in a dim_param, in a producer name, and (readable, lossy) in doc strings.
    out.push(case(
        "invalid UTF-8 in a dim_param",
        model(&graph(
            &[f32_value(b"x", &[W::Param(b"b\xffatch".to_vec())])],
            &[f32_value(b"y", &[W::Value(1)])],
        )),
        Expect::DecodeError,
    ));
    let mut m = simple_model();
    m.extend(ld(6, b"model doc \xff\xfe with CR\r and */ and \0"));
    out.push(case(
        "invalid UTF-8 and CR in the model doc string",
        m,
        Expect::Decodes,
    ));
    let mut v = f32_value(b"x", &[W::Value(1)]);
    v.extend(ld(3, b"value doc \r\n line \r two \xc3"));
    out.push(case(
        "CR and invalid UTF-8 in a value doc string",
        model(&graph(&[v], &[f32_value(b"y", &[W::Value(1)])])),
        Expect::Decodes,
    ));
    let mut m = vi(1, 8);
    m.extend(ld(2, b"prod\xff"));
    m.extend(ld(7, &graph(&[], &[f32_value(b"y", &[W::Value(1)])])));
    out.push(case(
        "invalid UTF-8 in producer_name",
        m,
        Expect::DecodeError,
    ));
    // 1 MiB names: one input, and a dim_param.
    let long = vec![b'n'; 1 << 20];
    out.push(case("1 MiB input name", one(&long), Expect::Decodes));
    out.push(case(
        "1 MiB dim_param",
        model(&graph(
            &[f32_value(b"x", &[W::Param(long.clone())])],
            &[f32_value(b"y", &[W::Param(long)])],
        )),
        Expect::Decodes,
    ));
    // Empty and duplicate names.
    out.push(case("empty input name", one(b""), Expect::AnyError));
    out.push(case(
        "duplicate input names",
        model(&graph(
            &[f32_value(b"x", &[]), f32_value(b"x", &[])],
            &[f32_value(b"y", &[])],
        )),
        Expect::AnyError,
    ));
    out
}

/// Dims: values no `usize`/`i64` holds on the wire, the extremes of `i64`, zero and
/// negative sizes, and element types outside the table.
pub fn dim_cases() -> Vec<Case> {
    let one = |dims: &[W]| model(&graph(&[f32_value(b"x", dims)], &[f32_value(b"y", dims)]));
    let mut out = vec![
        case(
            "dim i64::MAX",
            one(&[W::Value(i64::MAX as u64)]),
            Expect::Decodes,
        ),
        case(
            "dims i64::MAX x i64::MAX (product overflows)",
            one(&[W::Value(i64::MAX as u64), W::Value(i64::MAX as u64)]),
            Expect::Decodes,
        ),
        case(
            "dim u64::MAX (reads as -1)",
            one(&[W::Value(u64::MAX)]),
            Expect::Decodes,
        ),
        case(
            "dim 2^63 (reads as i64::MIN)",
            one(&[W::Value(1 << 63)]),
            Expect::Decodes,
        ),
        case("dim 0", one(&[W::Value(0)]), Expect::Decodes),
        case(
            "dim usize::MAX/2+1",
            one(&[W::Value((usize::MAX / 2 + 1) as u64)]),
            Expect::Decodes,
        ),
        case(
            "every dim 2^32 (product > u64)",
            one(&[W::Value(1 << 32), W::Value(1 << 32), W::Value(1 << 32)]),
            Expect::Decodes,
        ),
    ];
    // dim_value as an 11-byte varint (a number larger than 64 bits).
    let mut dim = key(1, 0);
    dim.extend([0xff; 10]);
    dim.push(0x01);
    let mut t = vi(1, 1);
    t.extend(ld(2, &ld(1, &dim)));
    out.push(case(
        "dim_value wider than 64 bits",
        model(&graph(&[value_info(b"x", &ld(1, &t))], &[])),
        Expect::DecodeError,
    ));
    // dim_value sent with the wrong wire type (fixed64, length-delimited).
    let mut dim = key(1, 1);
    dim.extend([0xff; 8]);
    let mut t = vi(1, 1);
    t.extend(ld(2, &ld(1, &dim)));
    out.push(case(
        "dim_value with a fixed64 wire type",
        model(&graph(&[value_info(b"x", &ld(1, &t))], &[])),
        Expect::DecodeError,
    ));
    // Element codes: unknown, negative, huge.
    for (what, code) in [
        ("elem_type 0", 0),
        ("elem_type 999", 999),
        ("elem_type -1", -1),
        ("elem_type i32::MIN", i32::MIN),
    ] {
        out.push(case(
            what,
            model(&graph(
                &[value_info(b"x", &tensor_type(code, Some(&[W::Value(1)])))],
                &[f32_value(b"y", &[W::Value(1)])],
            )),
            Expect::Decodes,
        ));
    }
    // Wire types 6 and 7 do not exist.
    for wire in [6u8, 7] {
        let mut m = simple_model();
        m.extend(key(3, wire));
        m.extend([0u8; 8]);
        out.push(case(format!("wire type {wire}"), m, Expect::DecodeError));
    }
    out
}

/// Recurrent pairs whose method names read alike, and names that collide after
/// sanitising (found by the `codegen_from_signature` fuzz target's oracle).
pub fn codegen_cases() -> Vec<Case> {
    let n = [W::Param(b"n".to_vec())];
    vec![
        case(
            "feed-back methods that would share a name",
            model(&graph(
                &[f32_value(b"ab_into_a", &n), f32_value(b"a", &n)],
                &[f32_value(b"a", &n), f32_value(b"a_into_ab", &n)],
            )),
            Expect::Decodes,
        ),
        case(
            "names colliding with generated names",
            model(&graph(
                &[
                    f32_value(b"dims", &n),
                    f32_value(b"_device", &n),
                    f32_value(b"inner", &n),
                    f32_value(b"x_dim0", &[W::Unset]),
                    f32_value(b"x", &[W::Unset]),
                    f32_value(b"X", &n),
                ],
                &[
                    f32_value(b"dims", &n),
                    f32_value(b"feed_back", &n),
                    f32_value(b"x_into_x", &n),
                    f32_value(b"type", &n),
                    f32_value(b"Self", &n),
                ],
            )),
            Expect::Decodes,
        ),
    ]
}

/// The files of `tests/fixtures/hostile/`, as the ignored test `write_hostile_corpus`
/// writes them: small representatives of each kind of case, also seeds for fuzzing.
pub fn corpus_files() -> Vec<(&'static str, Vec<u8>, Expect)> {
    let pick = |cases: Vec<Case>, name: &str| {
        cases
            .into_iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("no case {name}"))
    };
    let files: Vec<(&'static str, Case)> = vec![
        (
            "graph_claims_4gib.onnx",
            pick(huge_length_cases(), "graph claims 4GiB"),
        ),
        (
            "input_claims_u64max.onnx",
            pick(huge_length_cases(), "graph.input claims u64::MAX"),
        ),
        (
            "name_claims_1gib.onnx",
            pick(huge_length_cases(), "value name claims 1GiB"),
        ),
        (
            "unknown_field_claims_2p62.onnx",
            pick(huge_length_cases(), "unknown field claims 2^62"),
        ),
        (
            "overlong_varint.onnx",
            pick(huge_length_cases(), "overlong varint (11 bytes)"),
        ),
        (
            "sequence_nested_1000.onnx",
            pick(nesting_cases(), "sequence nested 1000 deep"),
        ),
        (
            "map_nested_44.onnx",
            pick(nesting_cases(), "map nested 44 deep"),
        ),
        (
            "map_nested_16.onnx",
            pick(nesting_cases(), "map nested 16 deep"),
        ),
        (
            "map_float_keys.onnx",
            pick(kind_cases(), "map with float32 keys"),
        ),
        (
            "map_unknown_keys.onnx",
            pick(kind_cases(), "map with unknown code 99 keys"),
        ),
        (
            "sequence_no_elem_type.onnx",
            pick(kind_cases(), "sequence without elem type"),
        ),
        (
            "optional_no_elem_type.onnx",
            pick(kind_cases(), "optional without elem type"),
        ),
        (
            "map_no_value_type.onnx",
            pick(kind_cases(), "map without value type"),
        ),
        (
            "zipmap_type.onnx",
            pick(kind_cases(), "ZipMap output seq(map(string, float32))"),
        ),
        ("nul_in_name.onnx", pick(name_cases(), "NUL in a name")),
        ("cr_in_name.onnx", pick(name_cases(), "CR in a name")),
        (
            "cr_in_docs.onnx",
            pick(name_cases(), "CR and invalid UTF-8 in a value doc string"),
        ),
        (
            "comment_end_in_name.onnx",
            pick(name_cases(), "comment terminator in a name"),
        ),
        (
            "invalid_utf8_name.onnx",
            pick(name_cases(), "invalid UTF-8 in a name"),
        ),
        (
            "dim_i64_max.onnx",
            pick(dim_cases(), "dims i64::MAX x i64::MAX (product overflows)"),
        ),
        (
            "dim_u64_max.onnx",
            pick(dim_cases(), "dim u64::MAX (reads as -1)"),
        ),
        (
            "dim_wider_than_64_bits.onnx",
            pick(dim_cases(), "dim_value wider than 64 bits"),
        ),
        ("elem_type_unknown.onnx", pick(dim_cases(), "elem_type 999")),
        (
            "feed_back_name_clash.onnx",
            pick(codegen_cases(), "feed-back methods that would share a name"),
        ),
        (
            "generated_name_clash.onnx",
            pick(codegen_cases(), "names colliding with generated names"),
        ),
    ];
    files
        .into_iter()
        .map(|(file, c)| (file, c.bytes, c.expect))
        .collect()
}

/// Every generated case.
pub fn generated_cases() -> Vec<Case> {
    let mut all = huge_length_cases();
    all.extend(nesting_cases());
    all.extend(count_cases());
    all.extend(name_cases());
    all.extend(dim_cases());
    all.extend(codegen_cases());
    all.extend(kind_cases());
    all
}

// ---- the oracle -----------------------------------------------------------------------

/// What happened to one input.
#[derive(Debug)]
pub enum Outcome {
    /// Decoding failed cleanly.
    Rejected(ModelError),
    /// Decoded; codegen refused with a plan error.
    Unplannable(PlanError),
    /// Decoded and went through codegen: planned only, or also expanded, or also
    /// formatted and parsed (`stage`; see [`PARSE_LIMIT`]).
    Generated {
        inputs: usize,
        outputs: usize,
        stage: &'static str,
    },
}

fn bindable(v: &ValueInfo) -> bool {
    matches!(&v.kind, ValueType::Tensor { elem, .. } if elem.is_bindable())
}

/// Decodes `bytes`; when that succeeds, plans, expands, formats and parses the module.
/// Panics (failing the test) on any inconsistency: the caller wraps it in `catch_unwind`
/// only to name the case.
pub fn run_pipeline(bytes: &[u8], origin: &str) -> Outcome {
    let sig = match signature_from_bytes(bytes, origin) {
        Err(e) => {
            assert!(
                e.to_string().contains(origin),
                "error does not name origin: {e}"
            );
            return Outcome::Rejected(e);
        }
        Ok(sig) => sig,
    };
    check_signature(&sig);
    codegen(&sig)
}

/// Invariants of a decoded signature.
pub fn check_signature(sig: &ModelSignature) {
    for list in [&sig.inputs, &sig.outputs] {
        let mut seen = HashSet::new();
        for v in list {
            assert!(!v.name.is_empty());
            assert!(seen.insert(v.name.as_str()), "duplicate {:?}", v.name);
        }
    }
}

/// Models with more values plus dims than this are planned and expanded, not parsed:
/// `syn` parses a few thousand generated values a second (linearly), so parsing 100,000 would
/// take minutes of test time without showing more. Decoding and planning must stay fast
/// at any size; that is what the big cases check.
pub const PARSE_LIMIT: usize = 5_000;
/// Models with more values plus dims than this are planned only (expansion is linear too).
pub const EXPAND_LIMIT: usize = 50_000;

/// Plan + expand + format + parse; checks what the generated module declares.
pub fn codegen(sig: &ModelSignature) -> Outcome {
    let plan = match plan(sig) {
        Err(e) => {
            match &e {
                PlanError::NoOutputs => assert!(sig.outputs.is_empty()),
                PlanError::Unsupported { .. } => assert!(
                    !sig.inputs.iter().chain(&sig.outputs).all(bindable),
                    "rejected a bindable model: {e}"
                ),
                other => panic!("unexpected plan error {other}"),
            }
            return Outcome::Unplannable(e);
        }
        Ok(p) => p,
    };
    // Size of the generated module: about one field per value and per dim, overridable
    // inputs included (each is a typed field, a bind line and a view field).
    let values: usize = sig
        .inputs
        .iter()
        .chain(&sig.outputs)
        .map(|v| 1 + v.tensor().and_then(|(_, d)| d).map_or(0, <[_]>::len))
        .sum::<usize>()
        + plan.overridable.len();
    for list in [&plan.inputs, &plan.outputs] {
        let mut fields = HashSet::new();
        assert!(
            list.iter().all(|v| fields.insert(v.field.as_str())),
            "field twice"
        );
    }
    let mut fields = HashSet::new();
    assert!(
        plan.dims.iter().all(|d| fields.insert(d.field.as_str())),
        "dims field twice"
    );
    let (mut outs, mut ins) = (HashSet::new(), HashSet::new());
    for fb in &plan.feed_back {
        assert!(
            outs.insert(fb.output) && ins.insert(fb.input),
            "value in two pairs"
        );
    }
    if values > EXPAND_LIMIT {
        return Outcome::Generated {
            inputs: sig.inputs.len(),
            outputs: sig.outputs.len(),
            stage: "planned",
        };
    }
    let opts = ExpandOptions {
        label: "hostile.onnx".into(),
        ..ExpandOptions::default()
    };
    let tokens = expand(sig, &plan, &opts);
    if values > PARSE_LIMIT {
        assert!(!tokens.is_empty());
        return Outcome::Generated {
            inputs: sig.inputs.len(),
            outputs: sig.outputs.len(),
            stage: "planned and expanded",
        };
    }
    let file: syn::File = syn::parse2(tokens.clone()).expect("generated tokens parse");
    let source = ort_bind_codegen::__private::builder::format_source(&tokens, "hostile\n.onnx");
    let formatted = syn::parse_file(&source).expect("formatted module parses");
    assert_eq!(formatted.items.len(), file.items.len());
    check_unique_names(&formatted);
    Outcome::Generated {
        inputs: sig.inputs.len(),
        outputs: sig.outputs.len(),
        stage: "generated, parsed",
    }
}

/// No struct with two fields of one name, no impl with two fns of one name, no two
/// module items of one name: each would be a compile error in the generated module.
pub fn check_unique_names(file: &syn::File) {
    let mut items = HashSet::new();
    let mut fns = HashSet::new();
    for item in &file.items {
        match item {
            syn::Item::Struct(s) => {
                assert!(items.insert(s.ident.to_string()), "item {} twice", s.ident);
                let mut fields = HashSet::new();
                for f in &s.fields {
                    if let Some(id) = &f.ident {
                        assert!(fields.insert(id.to_string()), "{}.{id} twice", s.ident);
                    }
                }
            }
            syn::Item::Const(c) => {
                assert!(items.insert(c.ident.to_string()), "item {} twice", c.ident);
            }
            syn::Item::Impl(imp) => {
                let owner = match &*imp.self_ty {
                    syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
                    _ => None,
                };
                let tr = imp
                    .trait_
                    .as_ref()
                    .and_then(|(_, p, _)| p.segments.last())
                    .map(|s| s.ident.to_string());
                for it in &imp.items {
                    if let syn::ImplItem::Fn(f) = it {
                        let k = (owner.clone(), tr.clone(), f.sig.ident.to_string());
                        assert!(fns.insert(k.clone()), "fn {k:?} twice");
                    }
                }
            }
            _ => {}
        }
    }
}

// ---- shape inference --------------------------------------------------------------------

/// A `NodeProto`: operator, inputs, outputs and encoded attributes.
pub fn node(op: &str, inputs: &[&str], outputs: &[&str], attributes: &[Vec<u8>]) -> Vec<u8> {
    let mut n = Vec::new();
    for i in inputs {
        n.extend(ld(1, i.as_bytes()));
    }
    for o in outputs {
        n.extend(ld(2, o.as_bytes()));
    }
    n.extend(ld(4, op.as_bytes()));
    for a in attributes {
        n.extend(ld(5, a));
    }
    n
}

/// An `ints` attribute (values as raw varints: any `i64`).
pub fn ints_attr(name: &str, values: &[i64]) -> Vec<u8> {
    let mut a = ld(1, name.as_bytes());
    for v in values {
        a.extend(vi(8, *v as u64));
    }
    a.extend(vi(20, 7));
    a
}

/// An `int` attribute.
pub fn int_attr(name: &str, value: i64) -> Vec<u8> {
    let mut a = ld(1, name.as_bytes());
    a.extend(vi(3, value as u64));
    a.extend(vi(20, 2));
    a
}

/// A graph attribute.
pub fn graph_attr(name: &str, graph: &[u8]) -> Vec<u8> {
    let mut a = ld(1, name.as_bytes());
    a.extend(ld(6, graph));
    a.extend(vi(20, 5));
    a
}

/// An int64 initializer with these values (raw data).
pub fn int64_initializer(name: &str, values: &[i64]) -> Vec<u8> {
    let mut t = vi(1, values.len() as u64);
    t.extend(vi(2, 7));
    t.extend(ld(8, name.as_bytes()));
    let raw: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    t.extend(ld(9, &raw));
    t
}

/// A graph of nodes and initializers over float inputs and outputs, each `[n, ?]`-like as
/// `dims` gives.
pub fn node_graph(
    nodes: &[Vec<u8>],
    initializers: &[Vec<u8>],
    inputs: &[(&str, &[W])],
    outputs: &[&str],
) -> Vec<u8> {
    let mut g = Vec::new();
    for n in nodes {
        g.extend(ld(1, n));
    }
    g.extend(ld(2, b"hostile"));
    for t in initializers {
        g.extend(ld(5, t));
    }
    for (name, dims) in inputs {
        g.extend(ld(11, &f32_value(name.as_bytes(), dims)));
    }
    for o in outputs {
        g.extend(ld(12, &value_info(o.as_bytes(), &tensor_type(1, None))));
    }
    g
}

/// Graphs made to trip shape inference: cycles, absurd attributes, long chains, growing
/// expressions, nested graphs. Each must decode (inference leaves what it cannot settle
/// open) and generate code, fast.
pub fn inference_cases() -> Vec<Case> {
    let n = [W::Param(b"n".to_vec()), W::Param(b"m".to_vec())];
    let x = [("x", &n[..])];
    let one = |op: &str, attributes: Vec<Vec<u8>>| {
        model(&node_graph(
            &[node(op, &["x"], &["y"], &attributes)],
            &[],
            &x,
            &["y"],
        ))
    };
    let mut cases = vec![
        case(
            "a node reading its own output",
            model(&node_graph(
                &[node("Add", &["x", "y"], &["y"], &[])],
                &[],
                &x,
                &["y"],
            )),
            Expect::Decodes,
        ),
        case(
            "two nodes reading each other",
            model(&node_graph(
                &[
                    node("Relu", &["b"], &["a"], &[]),
                    node("Relu", &["a"], &["b"], &[]),
                    node("Add", &["x", "a"], &["y"], &[]),
                ],
                &[],
                &x,
                &["y"],
            )),
            Expect::Decodes,
        ),
        case(
            "a pool with kernel 2^62",
            one("MaxPool", vec![ints_attr("kernel_shape", &[1 << 62])]),
            Expect::Decodes,
        ),
        case(
            "a pool with stride 0 and pads past i64",
            one(
                "MaxPool",
                vec![
                    ints_attr("kernel_shape", &[2]),
                    ints_attr("strides", &[0]),
                    ints_attr("pads", &[i64::MAX, i64::MAX]),
                ],
            ),
            Expect::Decodes,
        ),
        case(
            "a pool with negative dilations",
            one(
                "AveragePool",
                vec![
                    ints_attr("kernel_shape", &[3]),
                    ints_attr("dilations", &[-5]),
                ],
            ),
            Expect::Decodes,
        ),
        case(
            "a transpose with a perm out of range",
            one("Transpose", vec![ints_attr("perm", &[7, -9])]),
            Expect::Decodes,
        ),
        case(
            "a flatten at i64::MIN",
            one("Flatten", vec![int_attr("axis", i64::MIN)]),
            Expect::Decodes,
        ),
        case(
            "a split into 2^40 parts",
            one("Split", vec![int_attr("num_outputs", 1 << 40)]),
            Expect::Decodes,
        ),
        case(
            "a depth-to-space of block 2^40",
            one("DepthToSpace", vec![int_attr("blocksize", 1 << 40)]),
            Expect::Decodes,
        ),
        case(
            "a reshape to i64 extremes",
            model(&node_graph(
                &[node("Reshape", &["x", "s"], &["y"], &[])],
                &[int64_initializer("s", &[i64::MAX, i64::MIN, -1, -1])],
                &x,
                &["y"],
            )),
            Expect::Decodes,
        ),
        case(
            "a slice with i64 extremes",
            model(&node_graph(
                &[node("Slice", &["x", "a", "b", "c", "d"], &["y"], &[])],
                &[
                    int64_initializer("a", &[i64::MIN]),
                    int64_initializer("b", &[i64::MAX]),
                    int64_initializer("c", &[0]),
                    int64_initializer("d", &[i64::MIN]),
                ],
                &x,
                &["y"],
            )),
            Expect::Decodes,
        ),
        case(
            "a range of 2^62 elements",
            model(&node_graph(
                &[node("Range", &["a", "b", "c"], &["y"], &[])],
                &[
                    int64_initializer("a", &[i64::MIN]),
                    int64_initializer("b", &[i64::MAX]),
                    int64_initializer("c", &[1]),
                ],
                &x,
                &["y"],
            )),
            Expect::Decodes,
        ),
    ];
    // Found by the `infer_shapes` fuzz target: a kernel shorter than the spatial axes.
    let xyz = [
        W::Param(b"n".to_vec()),
        W::Value(3),
        W::Param(b"h".to_vec()),
        W::Param(b"w".to_vec()),
    ];
    for op in ["Conv", "ConvTranspose", "MaxPool", "MaxUnpool"] {
        let bytes = model(&node_graph(
            &[node(
                op,
                &["x", "x"],
                &["y"],
                &[ints_attr("kernel_shape", &[2])],
            )],
            &[],
            &[("x", &xyz[..])],
            &["y"],
        ));
        cases.push(case(
            format!("a {op} kernel shorter than the input"),
            bytes,
            Expect::Decodes,
        ));
    }
    // x*x*x*...: a product that grows past what an expression holds.
    let squares: Vec<Vec<u8>> = (0..64)
        .map(|k| {
            let input = if k == 0 {
                "x".to_owned()
            } else {
                format!("t{}", k - 1)
            };
            node("MatMul", &[&input, &input], &[&format!("t{k}")], &[])
        })
        .chain((0..64).map(|k| {
            let input = if k == 0 {
                "s0".to_owned()
            } else {
                format!("p{}", k - 1)
            };
            node("Mul", &[&input, &input], &[&format!("p{k}")], &[])
        }))
        .chain([
            node("Shape", &["x"], &["s0"], &[]),
            node("Reshape", &["x", "p63"], &["y"], &[]),
        ])
        .collect();
    cases.push(case(
        "a shape squared 64 times",
        model(&node_graph(&squares, &[], &x, &["y"])),
        Expect::Decodes,
    ));
    // Concat doubling an axis 200 times: 2^200 * n overflows.
    let doubling: Vec<Vec<u8>> = (0..200)
        .map(|k| {
            let input = if k == 0 {
                "x".to_owned()
            } else {
                format!("d{}", k - 1)
            };
            let out = if k == 199 {
                "y".to_owned()
            } else {
                format!("d{k}")
            };
            node("Concat", &[&input, &input], &[&out], &[int_attr("axis", 0)])
        })
        .collect();
    cases.push(case(
        "an axis doubled 200 times",
        model(&node_graph(&doubling, &[], &x, &["y"])),
        Expect::Decodes,
    ));
    // Strided pools 300 deep: nested floor divisions, folded into one.
    let pools: Vec<Vec<u8>> = (0..300)
        .map(|k| {
            let input = if k == 0 {
                "x".to_owned()
            } else {
                format!("q{}", k - 1)
            };
            let out = if k == 299 {
                "y".to_owned()
            } else {
                format!("q{k}")
            };
            node(
                "MaxPool",
                &[&input],
                &[&out],
                &[
                    ints_attr("kernel_shape", &[3]),
                    ints_attr("strides", &[2]),
                    ints_attr("pads", &[1, 1]),
                ],
            )
        })
        .collect();
    cases.push(case(
        "300 strided pools",
        model(&node_graph(&pools, &[], &x, &["y"])),
        Expect::Decodes,
    ));
    // Ifs nested in their branches as deep as protobuf nesting allows. (Each level holds
    // the next once, in its `then` branch: every subgraph is in the file, walked once.)
    let leaf = node_graph(&[node("Relu", &["x"], &["r"], &[])], &[], &[], &["r"]);
    let mut inner = leaf.clone();
    for _ in 0..30 {
        let branch = node_graph(
            &[node(
                "If",
                &["c"],
                &["r"],
                &[
                    graph_attr("then_branch", &inner),
                    graph_attr("else_branch", &leaf),
                ],
            )],
            &[],
            &[],
            &["r"],
        );
        inner = branch;
    }
    cases.push(case(
        "ifs nested 30 deep",
        model(&node_graph(
            &[node(
                "If",
                &["c"],
                &["y"],
                &[
                    graph_attr("then_branch", &inner),
                    graph_attr("else_branch", &leaf),
                ],
            )],
            &[],
            &x,
            &["y"],
        )),
        Expect::Either,
    ));
    cases
}

/// A chain of `len` `Relu` nodes from `x` to `y` (`x` float `[n]`).
pub fn relu_chain(len: usize) -> Vec<u8> {
    let nodes: Vec<Vec<u8>> = (0..len)
        .map(|k| {
            let input = if k == 0 {
                "x".to_owned()
            } else {
                format!("v{}", k - 1)
            };
            let out = if k + 1 == len {
                "y".to_owned()
            } else {
                format!("v{k}")
            };
            node("Relu", &[&input], &[&out], &[])
        })
        .collect();
    model(&node_graph(
        &nodes,
        &[],
        &[("x", &[W::Param(b"n".to_vec())])],
        &["y"],
    ))
}
