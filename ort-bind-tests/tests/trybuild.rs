//! Compile-time checks of `#[derive(OnnxBinding)]` and `bindings!`: every mistake class
//! is a compile-fail case under `tests/ui/<kind of mistake>/` (the folders of [`KINDS`])
//! with its expected diagnostics beside it, and the pass cases under `tests/ui/pass/` must
//! build.
//!
//! trybuild builds the cases as binaries of a project in
//! `<target>/tests/trybuild/ort-bind-tests/`, which is their `CARGO_MANIFEST_DIR`: model paths in
//! the cases (`models/add.onnx`) resolve there. This test first puts the models the cases
//! use into `<project>/models/`: copies of the fixtures, a malformed file, a model whose
//! offline signature cache is stale, and a cache whose model is absent.
//!
//! `tests/ui/default_features/` holds cases whose diagnostics list implementors of a trait
//! (which the `cuda` feature extends); they run in builds without it.
//!
//! To accept changed diagnostics after reading them: `TRYBUILD=overwrite cargo test --test
//! trybuild`.

use std::path::{Path, PathBuf};

use ort_bind_tests::paths::{crate_dir, fixture, target_dir};

/// The trybuild project dir (trybuild puts it under the target dir Cargo reports).
fn project_dir() -> PathBuf {
    target_dir().join("tests/trybuild/ort-bind-tests")
}

fn prepare(project: &Path) {
    let models = project.join("models");
    std::fs::create_dir_all(&models).unwrap();
    let _ = std::fs::remove_dir_all(project.join(ort_bind_codegen::__private::cache::CACHE_DIR));
    for name in [
        "add",
        "add16",
        "alltypes",
        "dynamic",
        "messy",
        "nonzero",
        "scalar",
        "state",
        "narrow",
        "ir3_init_as_input",
    ] {
        std::fs::copy(
            fixture(&format!("{name}.onnx")),
            models.join(format!("{name}.onnx")),
        )
        .unwrap();
    }
    // A real model's signature (no weights: enough for compile-time checks).
    std::fs::copy(
        fixture("signatures/silero_vad.onnx"),
        models.join("silero_vad.onnx"),
    )
    .unwrap();
    // skl2onnx models (string tensors, ZipMap's sequence of maps) and the runtime's
    // optionals model, for the cases of the types beyond numeric tensors.
    for name in ["sklearn_iris", "sklearn_text"] {
        std::fs::copy(
            fixture(&format!("{name}.onnx")),
            models.join(format!("{name}.onnx")),
        )
        .unwrap();
    }
    std::fs::copy(
        crate_dir().join("../ort-bind-runtime/tests/data/optionals.onnx"),
        models.join("optionals.onnx"),
    )
    .unwrap();
    // A model with LoRA inputs and adapters that fit it or not.
    let lora = models.join("lora");
    std::fs::create_dir_all(&lora).unwrap();
    for name in [
        "lora.onnx",
        "math.onnx_adapter",
        "wide.onnx_adapter",
        "unknown.onnx_adapter",
        "mixed_rank.onnx_adapter",
    ] {
        std::fs::copy(fixture("lora").join(name), lora.join(name)).unwrap();
    }
    // Decoders: three that recognise, one whose cache pair disagrees.
    for (from, to) in [
        ("decoders/mha_concat/model.onnx", "decoder_mha.onnx"),
        ("decoders/gqa_paged/model.onnx", "decoder_paged.onnx"),
        ("decoders/bad_pair.onnx", "decoder_bad_pair.onnx"),
        ("decoders/gpt2_stacked/model.onnx", "decoder_gpt2.onnx"),
        // vocab 256 (the others 512): a speculative draft that does not fit.
        (
            "decoders/speculative/other_vocab/model.onnx",
            "decoder_other_vocab.onnx",
        ),
        ("pipelines/speech/encoder.onnx", "speech_encoder.onnx"),
        ("pipelines/speech/decoder.onnx", "speech_decoder.onnx"),
        ("pipelines/marian/encoder.onnx", "marian_encoder.onnx"),
        ("pipelines/marian/decoder.onnx", "marian_decoder.onnx"),
        ("pipelines/ocr/detector.onnx", "ocr_detector.onnx"),
        ("pipelines/ocr/recognizer.onnx", "ocr_recognizer.onnx"),
    ] {
        std::fs::copy(fixture(from), models.join(to)).unwrap();
    }
    std::fs::write(
        models.join("malformed.onnx"),
        b"this is not an ONNX model\n",
    )
    .unwrap();

    // `models/stale.onnx`: its cache was written for add.onnx, the model is now add16.onnx.
    std::fs::copy(fixture("add.onnx"), models.join("stale.onnx")).unwrap();
    ort_bind_codegen::__private::cache::write(project, Path::new("models/stale.onnx")).unwrap();
    std::fs::copy(fixture("add16.onnx"), models.join("stale.onnx")).unwrap();

    // `models/offline.onnx`: only its cache exists (written from add.onnx).
    std::fs::copy(fixture("add.onnx"), models.join("offline.onnx")).unwrap();
    ort_bind_codegen::__private::cache::write(project, Path::new("models/offline.onnx")).unwrap();
    std::fs::remove_file(models.join("offline.onnx")).unwrap();
}

/// The folders of compile-fail cases under `tests/ui/`, one per kind of mistake.
const KINDS: [&str; 10] = [
    // Which model value each field binds: unknown, duplicate, missing or misdirected
    // names, and the struct as a whole (named fields, every mistake reported at once).
    "names",
    // Field types: element types (narrow ones too), tensors vs strings, sequences, maps and
    // optionals, outputs as inputs, devices; aliases do not hide a mistake.
    "types",
    // Ranks, fixed dims, `dims = [...]`, and symbolic dims pinned to different sizes.
    "shapes",
    // Recurrent state: `feed_back` pairs and the shapes a pair shares.
    "state_pairs",
    // The `onnx` attribute itself: misspelt, misplaced, missing `model`.
    "attributes",
    // `bindings!`: its arguments, a failing model, the typed module it generates.
    "bindings_macro",
    // `#[onnx(decoder)]`: models that are not decoders, modes a model does not support.
    "decoder",
    // The model file: missing (with "did you mean"), malformed, a stale offline cache.
    "model_file",
    // LoRA adapters: files that do not fit the model's overridable inputs (wrong size, an
    // unknown parameter, two sizes for the rank), an adapter dropped while set.
    "adapters",
    // `pipeline!`: edges the wrong way, unknown names, mismatched types, ranks and sizes,
    // cycles, a decoder input nothing feeds.
    "pipeline",
];

/// Every folder under `tests/ui/` is a kind in [`KINDS`] or one of the folders `ui` runs
/// apart: a new folder cannot be left out of the run by mistake, nor a case left loose.
#[test]
fn every_ui_folder_runs() {
    let ui = crate_dir().join("tests/ui");
    for entry in std::fs::read_dir(&ui).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        assert!(
            entry.path().is_dir(),
            "tests/ui/{name}: cases go in a folder for their kind of mistake (see KINDS)"
        );
        assert!(
            KINDS.contains(&name.as_str()) || ["default_features", "pass"].contains(&name.as_str()),
            "tests/ui/{name}/ is not run: add it to KINDS in tests/trybuild.rs"
        );
    }
}

#[test]
fn ui() {
    prepare(&project_dir());
    let t = trybuild::TestCases::new();
    for kind in KINDS {
        t.compile_fail(format!("tests/ui/{kind}/*.rs"));
    }
    // rustc lists the types that implement a missing trait, and `--features cuda` adds
    // device types to that list: these cases' diagnostics are those of the default build.
    #[cfg(not(feature = "cuda"))]
    t.compile_fail("tests/ui/default_features/*.rs");
    t.pass("tests/ui/pass/*.rs");
}
