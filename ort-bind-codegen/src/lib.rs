//! ONNX model metadata and Rust code generation for ort-bind.
//!
//! This crate never links ONNX Runtime: it reads a model file's signature
//! ([`model::read_signature`]), validates it, and expands it into Rust source
//! ([`Builder`]). The proc macros and users' `build.rs` files share it.

pub mod dtype;
pub mod model;
pub mod signature;

pub use dtype::ElementType;
pub use model::{ModelError, read_signature};
pub use signature::{Dim, ModelSignature, ValueKind, ValueSig};
