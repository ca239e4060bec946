//! ONNX model metadata and Rust code generation for ort-bind.
//!
//! This crate never links ONNX Runtime. It is a pipeline:
//!
//! 1. [`model`]: the only file I/O; reads an ONNX file in place and decodes its
//!    [`ModelSignature`] (payloads of weights are never read), whose output shapes
//!    [`shape`] infers from the graph's nodes (each axis a [`shape::DimExpr`] of the
//!    inputs' dims);
//! 2. [`plan`]: validates the signature and makes every decision codegen needs
//!    (identifiers via [`ident`], dims the user sets, which outputs are pre-allocated and
//!    how each of their axes is sized);
//! 3. [`expand`]: turns the plan into Rust tokens;
//! 4. [`Builder`]: the `build.rs` front end that writes modules to `OUT_DIR`.
//!
//! The proc macros, users' build scripts and the `ort-bind` CLI share it. For the macros:
//! [`check`] validates a user's struct against a signature (`#[derive(OnnxBinding)]`),
//! [`cache`] is the offline signature cache (`ort-bind prepare`), and [`macros`] holds
//! what each macro does, as plain functions over tokens.

pub mod builder;
pub mod cache;
pub mod check;
pub mod dtype;
pub mod expand;
pub mod ident;
pub mod json;
pub mod macros;
pub mod model;
pub mod plan;
pub mod report;
pub mod shape;
pub mod signature;
mod written;

pub use builder::{Builder, CodegenError, GeneratedModule, PipelineOptions};
pub use dtype::ElementType;
pub use model::{ModelError, read_signature};
pub use plan::ModelOptions;
pub use signature::{Dim, ModelSignature, ValueInfo, ValueType};

/// Renamed to [`ValueInfo`] (kept for one release).
#[deprecated(note = "renamed to `ort_bind_codegen::ValueInfo`")]
#[doc(hidden)]
pub type ValueSig = ValueInfo;

/// Renamed to [`ValueType`] (kept for one release).
#[deprecated(note = "renamed to `ort_bind_codegen::ValueType`")]
#[doc(hidden)]
pub type ValueKind = ValueType;
