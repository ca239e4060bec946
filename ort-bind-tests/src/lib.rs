//! The ort-bind repository's test crate (`publish = false`). The tests are in `tests/`
//! (integration tests, `tests/fixtures` and how each was made, `tests/ui` compile-fail
//! cases), and `build.rs` generates bindings for the fixtures and for ONNX's backend test
//! models. This library is the support those tests share, one home for each helper:
//!
//! - [`paths`]: where the fixtures, references and the workspace are, and the target
//!   directory Cargo builds into;
//! - [`scratch`]: scratch crates outside the workspace, built as a user's crate would be;
//! - [`decoders`]: the decoder fixtures' expected greedy decodes (`greedy.json`);
//! - [`fixtures`]: what fixture models compute, and the inputs reference scripts feed them.
//!
//! It is also a normal dependency of the projects trybuild builds from this crate (so the
//! `cuda` feature reaches them): it stays small and std-only apart from `serde_json`, which
//! those projects compile anyway (trybuild gives them this crate's dev-dependencies, and
//! `ort-bind-codegen` depends on it).

pub mod decoders;
pub mod fixtures;
pub mod paths;
pub mod scratch;
