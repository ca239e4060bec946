//! Generates typed bindings for the workload models in `models/` (written by
//! `models/make_models.py`, committed so this build needs no Python), and for PP-OCRv4's
//! text detector from its signature in `examples/models/` (the model itself, with its
//! weights, is fetched at run time by `serving.rs`), for the decoder fixtures of
//! `decode.rs` and the encoder-decoder pairs of `seq2seq.rs`. The bench depends on
//! `ort-bind-runtime` directly (what the `ort-bind` facade re-exports), so generated code
//! names it `::ort_bind_runtime`.

fn main() {
    let models = ["tiny", "big", "dynamic", "light_squeezenet"];
    let mut builder = ort_bind_codegen::Builder::new().runtime_path("::ort_bind_runtime");
    for m in models {
        builder = builder.model(format!("models/{m}.onnx"));
    }
    // The detector's exporter named every dynamic dim apart: the output's N, H and W are
    // the input's, and N is the batch dim, so the module gets its typed pool and batcher
    // (`Model::pool`, `Model::batcher`, `Item`, `Reply`, `BatchSpec`).
    builder = builder.model_with(
        "../examples/models/ppocr_det.signature.onnx",
        ort_bind_codegen::ModelOptions::new()
            .module_name("ppocr_det")
            .rename_dim("p2o.DynamicDimension.0", "batch")
            .rename_dim("p2o.DynamicDimension.3", "batch")
            .rename_dim("p2o.DynamicDimension.4", "p2o.DynamicDimension.1")
            .rename_dim("p2o.DynamicDimension.5", "p2o.DynamicDimension.2"),
    );
    // The decoder fixtures of the decode-loop figures (`decode.rs`).
    for fixture in [
        "gqa_f32",
        "gqa_f16",
        "mha_concat",
        "gpt2_stacked",
        "hybrid_conv",
        "gqa_paged",
    ] {
        builder = builder.model_with(
            format!("../ort-bind-tests/tests/fixtures/decoders/{fixture}/model.onnx"),
            ort_bind_codegen::ModelOptions::new().module_name(fixture),
        );
    }
    // The speculative-decoding pair (`speculative.rs`): an 8-layer target and its first
    // layer as the draft.
    for (fixture, module) in [("target", "spec_target"), ("draft", "spec_draft")] {
        builder = builder.model_with(
            format!("../ort-bind-tests/tests/fixtures/decoders/speculative/{fixture}/model.onnx"),
            ort_bind_codegen::ModelOptions::new().module_name(module),
        );
    }
    // The encoder-decoder pairs of the seq2seq figures (`seq2seq.rs`): the decoders'
    // roles (self caches, cross caches and encoder states held for a sequence, Marian's
    // recurrent state and `past_key_values_length`) are recognised by their names.
    for (fixture, model) in [
        ("speech", "encoder"),
        ("speech", "decoder"),
        ("marian", "encoder"),
        ("marian", "decoder"),
    ] {
        builder = builder.model_with(
            format!("../ort-bind-tests/tests/fixtures/pipelines/{fixture}/{model}.onnx"),
            ort_bind_codegen::ModelOptions::new().module_name(&format!("{fixture}_{model}")),
        );
    }
    if let Err(e) = builder.compile() {
        panic!("ort-bind codegen failed for the bench models: {e}");
    }
}
