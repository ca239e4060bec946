//! The ort-bind repository's test crate (`publish = false`). Everything is in `tests/`
//! (integration tests, `tests/fixtures` and how each was made, `tests/ui` compile-fail
//! cases) and in `build.rs`, which generates bindings for the fixtures and for ONNX's
//! backend test models. This library is empty on purpose.
