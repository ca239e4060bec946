//! ort-bind: strongly typed, zero-copy ONNX Runtime bindings generated from ONNX model files.

pub use ort_bind_runtime::*;
