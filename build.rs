//! Dogfoods build-time codegen: bindings for the fixture models that the
//! examples and tests of this repository use.

fn main() {
    let fixtures = std::path::Path::new("tests/fixtures");
    if !fixtures.exists() {
        // Packaged without fixtures (e.g. as a dependency): nothing to generate.
        return;
    }
    let models = [
        "add",
        "add16",
        "messy",
        "dynamic",
        "nonzero",
        "scalar",
        "alltypes",
        "state",
        "ir3_init_as_input",
        "external",
    ];
    let mut builder = ort_bind_codegen::Builder::new();
    for m in models {
        builder = builder.model(fixtures.join(format!("{m}.onnx")));
    }
    if let Err(e) = builder.compile() {
        panic!("ort-bind codegen failed: {e}");
    }
}
