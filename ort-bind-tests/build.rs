//! The test crate's build script: dogfoods build-time codegen for the fixture models the
//! tests use, and binds ONNX's backend test models (`build/conformance.rs`) and its
//! per-operator tests (`build/node.rs`, which generates them).

#[path = "build/conformance.rs"]
mod conformance;
#[path = "build/node.rs"]
mod node;

fn main() {
    let fixtures = std::path::Path::new("tests/fixtures");
    let models = [
        "add",
        "add16",
        "messy",
        "dynamic",
        // `x` [batch, n]: rows of any length, batched (tests/serving.rs).
        "rows",
        "nonzero",
        "scalar",
        "alltypes",
        "state",
        "ir3_init_as_input",
        "external",
        "lying_shape",
        "lying_allocated",
        // skl2onnx: string labels + ZipMap's seq(map(string, float32)); string input.
        "sklearn_iris",
        "sklearn_text",
        "narrow",
    ];
    let mut builder = ort_bind_codegen::Builder::new();
    for m in models {
        builder = builder.model(fixtures.join(format!("{m}.onnx")));
    }
    // The runtime's models of sequences, maps and optionals (see
    // ort-bind-runtime/tests/data/make_models.py), through generated modules.
    let runtime_data = std::path::Path::new("../ort-bind-runtime/tests/data");
    for m in ["sequences", "maps", "optionals"] {
        builder = builder.model(runtime_data.join(format!("{m}.onnx")));
    }
    // Outputs whose sizes only shape inference knows (tests/shapes.rs; written by
    // tests/fixtures/shapes/make_shape_fixtures.py).
    for m in [
        "recognizer",
        "detector",
        "audio_encoder",
        "transformer_block",
        "decoder_logits",
        "recurrent_if",
        "wrong_rank",
    ] {
        builder = builder.model(fixtures.join(format!("shapes/{m}.onnx")));
    }
    builder = with_options(builder, fixtures);
    if let Err(e) = builder.compile() {
        panic!("ort-bind codegen failed: {e}");
    }
    // ONNX's backend test models, for `tests/conformance.rs` (see build/conformance.rs).
    conformance::generate();
}

/// Models whose exporters named (or left unnamed) dims that are really the same, planned
/// with `ModelOptions`; and real models fetched on first use, whose bindings come from
/// their signatures in `tests/fixtures/signatures/` (written by the scripts in
/// `tests/reference/`).
fn with_options(
    builder: ort_bind_codegen::Builder,
    fixtures: &std::path::Path,
) -> ort_bind_codegen::Builder {
    use ort_bind_codegen::{ModelOptions, PipelineOptions};
    let signatures = fixtures.join("signatures");
    let silero = signatures.join("silero_vad.onnx");
    let det = signatures.join("ppocr_det.onnx");
    builder
        // `z` is `[N, 3]` where `N` is the input's `batch`.
        .model_with(
            fixtures.join("dynamic.onnx"),
            ModelOptions::new()
                .module_name("dynamic_renamed")
                .rename_dim("N", "batch"),
        )
        // Silero VAD leaves every dynamic dim unnamed: `input` [?, ?], `state` [2, ?, 128],
        // `output` [?, 1], `stateN` [?, ?, ?]. Axis 0 of `input` and `output` and axis 1 of
        // `state` are the batch. (`stateN` takes `state`'s shape as its recurrent pair.)
        .model_with(
            &silero,
            ModelOptions::new()
                .module_name("silero_vad")
                .dim("input", 0, "batch")
                .dim("input", 1, "samples")
                .dim("state", 1, "batch")
                .dim("output", 0, "batch"),
        )
        // The same model as exported: one dims field per unnamed axis, `output`
        // allocated by ONNX Runtime.
        .model_with(&silero, ModelOptions::new().module_name("silero_vad_raw"))
        // PP-OCRv4's detector as exported: the output's dims are named apart from the
        // input's, so ONNX Runtime allocates the output ...
        .model_with(&det, ModelOptions::new().module_name("ppocr_det"))
        // ... unless the user says they are the input's N, H and W.
        .model_with(
            &det,
            ModelOptions::new()
                .module_name("ppocr_det_sized")
                .rename_dim("p2o.DynamicDimension.3", "p2o.DynamicDimension.0")
                .rename_dim("p2o.DynamicDimension.4", "p2o.DynamicDimension.1")
                .rename_dim("p2o.DynamicDimension.5", "p2o.DynamicDimension.2"),
        )
        // ... and with N called `batch`, as examples/serve.rs binds it (tests/serve.rs).
        .model_with(
            &det,
            ModelOptions::new()
                .module_name("ppocr_det_batched")
                .rename_dim("p2o.DynamicDimension.0", "batch")
                .rename_dim("p2o.DynamicDimension.3", "batch")
                .rename_dim("p2o.DynamicDimension.4", "p2o.DynamicDimension.1")
                .rename_dim("p2o.DynamicDimension.5", "p2o.DynamicDimension.2"),
        )
        // A decoder through build.rs (tests/decode.rs): the fp16 GroupQueryAttention
        // fixture, required to be one.
        .model_with(
            fixtures.join("decoders/gqa_f16/model.onnx"),
            ModelOptions::new().module_name("decoder_gqa_f16").decoder(),
        )
        // The float32 one too (tests/beam.rs: beam search against onnxruntime-genai).
        .model_with(
            fixtures.join("decoders/gqa_f32/model.onnx"),
            ModelOptions::new().module_name("decoder_gqa_f32").decoder(),
        )
        // The paged-cache decoder (tests/paged.rs: the build.rs route).
        .model_with(
            fixtures.join("decoders/gqa_paged/model.onnx"),
            ModelOptions::new()
                .module_name("decoder_gqa_paged")
                .decoder(),
        )
        // A pipeline through build.rs (tests/pipelines.rs): Optimum's merged seq2seq pair,
        // the hidden states declared, the source mask found by name.
        .pipeline(
            "merged_pipeline",
            PipelineOptions::new()
                .model(
                    "encoder",
                    fixtures.join("pipelines/merged/encoder_model.onnx"),
                )
                .model_with(
                    "decoder",
                    fixtures.join("pipelines/merged/decoder_model_merged.onnx"),
                    ModelOptions::new().decoder(),
                )
                .edge("encoder.last_hidden_state", "decoder.encoder_hidden_states"),
        )
}
