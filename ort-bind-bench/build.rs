//! Generates typed bindings for the workload models in `models/` (written by
//! `models/make_models.py`, committed so this build needs no Python). The bench depends
//! on `ort-bind-runtime` directly (what the `ort-bind` facade re-exports), so generated
//! code names it `::ort_bind_runtime`.

fn main() {
    let models = ["tiny", "big", "dynamic", "light_squeezenet"];
    let mut builder = ort_bind_codegen::Builder::new().runtime_path("::ort_bind_runtime");
    for m in models {
        builder = builder.model(format!("models/{m}.onnx"));
    }
    if let Err(e) = builder.compile() {
        panic!("ort-bind codegen failed for the bench models: {e}");
    }
}
