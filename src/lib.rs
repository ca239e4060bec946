//! # ort-bind
//!
//! Strongly typed, zero-copy ONNX Runtime bindings generated from ONNX model files.
//!
//! ort-bind reads a model's signature at build time and generates, per model, a
//! module with a `Model` (the loaded session), a `Dims` struct (one field per
//! dynamic dimension), and a `Binding` whose `Inputs`/`Outputs` views are typed
//! tensors: the compiler knows every name, element type, rank and fixed size.
//! Buffers are bound to ONNX Runtime once and reused; a run copies nothing and
//! allocates nothing in ort-bind.
//!
//! ## Route 1: `build.rs`
//!
//! ```toml
//! [dependencies]
//! ort-bind = "0.1"
//! [build-dependencies]
//! ort-bind-codegen = "0.1"
//! ```
//! ```no_run
//! // in build.rs's `main`:
//! ort_bind_codegen::Builder::new()
//!     .model("models/add.onnx")
//!     .compile()
//!     .unwrap_or_else(|e| panic!("{e}"));
//! ```
//! ```ignore
//! mod add {
//!     ort_bind::include_bindings!("add");
//! }
//!
//! let model = add::Model::load()?;
//! let mut binding = model.bind(add::Dims { n: 4 })?;
//! binding.inputs().x.copy_from_slice(&[1.0, 2.0, 3.0, 4.0])?;
//! binding.inputs().y.fill(10.0);
//! binding.run()?;
//! assert_eq!(binding.outputs().sum.as_slice(), &[11.0, 12.0, 13.0, 14.0]);
//! ```
//!
//! The runtime types ([`Tensor`], [`Bound`], devices, shapes) are re-exported
//! from `ort-bind-runtime`.

pub use ort_bind_runtime::*;

/// Includes the bindings `build.rs` generated for the model named `$name`
/// (the file stem, or the name given to `Builder::model_as`).
///
/// Expands to `include!(concat!(env!("OUT_DIR"), "/ort-bind/", $name, ".rs"))`;
/// use it inside a module of its own.
#[macro_export]
macro_rules! include_bindings {
    ($name:literal) => {
        include!(concat!(env!("OUT_DIR"), "/ort-bind/", $name, ".rs"));
    };
}
