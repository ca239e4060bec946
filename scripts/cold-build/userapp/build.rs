fn main() {
    ort_bind_codegen::Builder::new()
        .model("models/add.onnx")
        .compile()
        .unwrap_or_else(|e| panic!("{e}"));
}
