//! Golden-file tests of generated source: a change to codegen output shows up as a
//! diff here. Set `ORT_BIND_BLESS=1` to rewrite the snapshots after reviewing it.

use std::path::Path;

use ort_bind_codegen::ModelOptions;

fn check(model: &str) {
    check_with(model, model, &ModelOptions::new());
}

/// Snapshot `snapshot` of fixture `model` generated with `options`.
fn check_with(model: &str, snapshot: &str, options: &ModelOptions) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ort-bind-tests");
    let path = root.join("tests/fixtures").join(format!("{model}.onnx"));
    let sig = ort_bind_codegen::read_signature(&path).expect("fixture decodes");
    // A fixed model path keeps snapshots independent of where the repo is checked out.
    let source = ort_bind_codegen::__private::builder::generate_source_with(
        &sig,
        Path::new(&format!("tests/fixtures/{model}.onnx")),
        &syn::parse_quote!(::ort_bind),
        options,
    )
    .expect("fixture generates");
    let source = source.replace(
        &root.canonicalize().unwrap().display().to_string(),
        "<repo>",
    );
    let snap =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/snapshots/{snapshot}.rs.snap"));
    if std::env::var_os("ORT_BIND_BLESS").is_some() {
        std::fs::write(&snap, &source).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&snap).unwrap_or_else(|_| {
        panic!(
            "missing snapshot {}; run with ORT_BIND_BLESS=1",
            snap.display()
        )
    });
    if want != source {
        let first = want
            .lines()
            .zip(source.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(want.lines().count().min(source.lines().count()));
        panic!(
            "generated source for {model} differs from {} at line {}:\n  snapshot: {:?}\n  now:      {:?}\n(rerun with ORT_BIND_BLESS=1 to accept)",
            snap.display(),
            first + 1,
            want.lines().nth(first),
            source.lines().nth(first)
        );
    }
    // The snapshot must also be valid Rust.
    syn::parse_file(&source).expect("generated source parses");
}

#[test]
fn add() {
    check("add");
}

/// Overridable inputs (`Overrides`, `override_inputs`, `set_adapter`) and an adapter file
/// checked at generation time (`adapters::math`).
#[test]
fn lora() {
    check_with(
        "lora/lora",
        "lora",
        &ModelOptions::new().adapter(
            "math",
            "../ort-bind-tests/tests/fixtures/lora/math.onnx_adapter",
        ),
    );
}

#[test]
fn messy() {
    check("messy");
}

/// The narrow element types: runtime types named through the runtime path
/// (`::ort_bind::Float8E4M3FN`, `::ort_bind::Int4x2`), docs with ONNX's type names.
#[test]
fn narrow() {
    check("narrow");
}

#[test]
fn nonzero() {
    check("nonzero");
}

#[test]
fn state() {
    check("state");
}

/// Real models' signatures (`tests/fixtures/signatures`): how exporter dim names
/// (`p2o.DynamicDimension.0`) and unnamed axes become `Dims` fields.
#[test]
fn ppocr_det() {
    check("signatures/ppocr_det");
}

#[test]
fn silero_vad() {
    check("signatures/silero_vad");
}

/// PP-OCRv4's detector with its dims named as the input's (`batch`, H, W): the output is
/// pre-allocated, and `batch` being axis 0 of both gives the typed batcher.
#[test]
fn ppocr_det_batched() {
    check_with(
        "signatures/ppocr_det",
        "signatures/ppocr_det_batched",
        &ModelOptions::new()
            .rename_dim("p2o.DynamicDimension.0", "batch")
            .rename_dim("p2o.DynamicDimension.3", "batch")
            .rename_dim("p2o.DynamicDimension.4", "p2o.DynamicDimension.1")
            .rename_dim("p2o.DynamicDimension.5", "p2o.DynamicDimension.2"),
    );
}

/// skl2onnx models: string tensors in and out, and ZipMap's `seq(map(string, float32))`.
#[test]
fn sklearn_iris() {
    check("sklearn_iris");
}

#[test]
fn sklearn_text() {
    check("sklearn_text");
}

/// A GroupQueryAttention decoder: `DECODER`, `Decoder`, `SharedDecoder`, `Model::decoder*`.
#[test]
fn decoder_gqa_f16() {
    check_with(
        "decoders/gqa_f16/model",
        "decoder_gqa_f16",
        &ModelOptions::new().module_name("decoder_gqa_f16"),
    );
}

/// A stacked GPT-2 decoder: growing mode only.
#[test]
fn decoder_gpt2_stacked() {
    check_with(
        "decoders/gpt2_stacked/model",
        "decoder_gpt2_stacked",
        &ModelOptions::new().module_name("decoder_gpt2_stacked"),
    );
}

/// A paged-cache decoder: `PagedDecoder` and `paged_decoder`, with `decoder` and
/// `shared_decoder` compile errors that say why.
#[test]
fn decoder_gqa_paged() {
    check_with(
        "decoders/gqa_paged/model",
        "decoder_gqa_paged",
        &ModelOptions::new().module_name("decoder_gqa_paged"),
    );
}

/// A pipeline's module (`Builder::pipeline`, the items `pipeline!` generates too): the
/// speech pair, its cross-attention edges found by name.
#[test]
fn speech_pipeline() {
    let dir = "../ort-bind-tests/tests/fixtures/pipelines/speech";
    pipeline_snapshot(
        "speech",
        ort_bind_codegen::PipelineOptions::new()
            .model("encoder", format!("{dir}/encoder.onnx"))
            .model("decoder", format!("{dir}/decoder.onnx")),
    );
}

/// A chain with no decoder: the OCR pair, the recognizer's crops a view of the detector's
/// heatmap (`Dims`, `Pipeline`, `Chain`).
#[test]
fn ocr_chain() {
    let dir = "../ort-bind-tests/tests/fixtures/pipelines/ocr";
    pipeline_snapshot(
        "ocr",
        ort_bind_codegen::PipelineOptions::new()
            .model("detector", format!("{dir}/detector.onnx"))
            .model("recognizer", format!("{dir}/recognizer.onnx"))
            .view_edge("detector.heatmap", "recognizer.crops"),
    );
}

/// Compares the module `Builder::pipeline(name, options)` writes with
/// `tests/snapshots/{name}_pipeline.rs.snap` (or writes it, with `ORT_BIND_BLESS`).
fn pipeline_snapshot(name: &str, options: ort_bind_codegen::PipelineOptions) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ort-bind-tests");
    let modules = ort_bind_codegen::Builder::new()
        .pipeline(name, options)
        .generate()
        .expect("the pipeline generates");
    let source = modules[0].source.replace(
        &root.canonicalize().unwrap().display().to_string(),
        "<repo>",
    );
    let snap = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("tests/snapshots/{name}_pipeline.rs.snap"));
    if std::env::var_os("ORT_BIND_BLESS").is_some() {
        std::fs::write(&snap, &source).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&snap).expect("snapshot; run with ORT_BIND_BLESS=1");
    assert!(
        want == source,
        "the {name} pipeline's source differs from {}; rerun with ORT_BIND_BLESS=1 to accept",
        snap.display()
    );
    syn::parse_file(&source).expect("generated source parses");
}
