//! ONNX model metadata and Rust code generation for ort-bind.
//!
//! This crate never links ONNX Runtime. Its face is small:
//!
//! - the builder a `build.rs` drives: [`Builder`], which writes one module per model (or
//!   pipeline of models) to `OUT_DIR` ([`GeneratedModule`]); per model [`ModelOptions`]
//!   (module name, dims, feed-back pairs, decoders with [`DecoderRole`], LoRA adapters),
//!   per pipeline [`PipelineOptions`]; and why it fails, [`CodegenError`] (with
//!   [`PlanError`] and [`PipelineError`]);
//! - a model's signature, read without ONNX Runtime: [`read_signature`] gives a
//!   [`ModelSignature`] (or a [`ModelError`]): its inputs and outputs ([`ValueInfo`], of a
//!   [`ValueType`] whose tensors have an [`ElementType`] and [`Dim`]s), and the output
//!   shapes inferred from the graph ([`InferredShape`], each axis a [`DimExpr`] of the
//!   inputs' dims, or the [`Stop`] where inference stopped).
//!
//! ```no_run
//! // build.rs
//! ort_bind_codegen::Builder::new()
//!     .model("models/detector.onnx")
//!     .model_with(
//!         "models/recognizer.onnx",
//!         ort_bind_codegen::ModelOptions::new().rename_dim("p2o.DynamicDimension.0", "batch"),
//!     )
//!     .compile()
//!     .unwrap_or_else(|e| panic!("{e}"));
//! ```
//!
//! Behind it is a pipeline: reading the model file (the only file I/O; weights are sought
//! past, never read) into a signature, with shape inference over the graph's nodes;
//! planning, which validates the signature and makes every decision codegen needs
//! (identifiers, dims the user sets, which outputs are pre-allocated and how each of their
//! axes is sized); and expansion of the plan into Rust tokens, which the builder formats
//! and writes. The proc macros (`ort-bind-macros`), the `ort-bind` CLI and the repository's
//! tests and benchmarks run the same stages; they reach them through
//! `ort_bind_codegen::__private`, which is not a stable API.
//!
//! # Migrating from the public modules
//!
//! Before 0.2 the stages were public modules (`builder`, `plan`, `signature`, `model`,
//! `shape`, `dtype`, ...). Their user-facing items are at the crate root now; the old paths
//! (`ort_bind_codegen::plan::ModelOptions`, `ort_bind_codegen::model::read_signature`, ...)
//! still compile for one release, with a deprecation warning that names the new path.

// The stages, private. Six keep their files but take other names inside the crate: the
// old names belong to the deprecated public modules at the end of this file until they go
// (then the `#[path]`s go too).
#[path = "builder.rs"]
mod build;
mod cache;
mod check;
#[path = "dtype.rs"]
mod element;
mod expand;
mod ident;
mod json;
mod macros;
#[path = "model/mod.rs"]
mod onnx;
#[path = "plan/mod.rs"]
mod planner;
mod report;
#[path = "shape/mod.rs"]
mod shapes;
#[path = "signature.rs"]
mod sig;
mod written;

pub use build::{Builder, CodegenError, GeneratedModule, PipelineOptions};
pub use element::ElementType;
pub use onnx::{ModelError, read_signature};
pub use planner::pipeline::PipelineError;
pub use planner::{DecoderRole, ModelOptions, PinContradicts, PinsDisagree, PlanError};
pub use shapes::{DimExpr, EvalError, InferredShape, Stop, StopReason};
pub use sig::{Dim, ModelSignature, ValueInfo, ValueType};

/// The pipeline's stages, for ort-bind's own crates (the proc macros, the CLI, the tests,
/// the benchmarks, the fuzz targets). **Not a stable API**: anything here may change in
/// any release.
#[doc(hidden)]
pub mod __private {
    /// The builder and the generated source.
    pub mod builder {
        pub use crate::build::*;
    }
    /// The offline signature cache.
    pub mod cache {
        pub use crate::cache::*;
    }
    /// Checks of user structs against a signature.
    pub mod check {
        pub use crate::check::*;
    }
    /// ONNX element types.
    pub mod dtype {
        pub use crate::element::*;
    }
    /// Plans to Rust tokens.
    pub mod expand {
        pub use crate::expand::*;
    }
    /// Identifiers.
    pub mod ident {
        pub use crate::ident::*;
    }
    /// JSON of signatures.
    pub mod json {
        pub use crate::json::*;
    }
    /// What each proc macro does.
    pub mod macros {
        pub use crate::macros::*;
    }
    /// Reading ONNX files.
    pub mod model {
        pub use crate::onnx::*;
    }
    /// Planning.
    pub mod plan {
        pub use crate::planner::*;
    }
    /// `ort-bind inspect`'s reports.
    pub mod report {
        pub use crate::report::*;
    }
    /// Shape inference.
    pub mod shape {
        pub use crate::shapes::*;
    }
    /// Signatures.
    pub mod signature {
        pub use crate::sig::*;
    }
}

/// Renamed to [`ValueInfo`] (kept for one release).
#[deprecated(note = "renamed to `ort_bind_codegen::ValueInfo`")]
#[doc(hidden)]
pub type ValueSig = ValueInfo;

/// Renamed to [`ValueType`] (kept for one release).
#[deprecated(note = "renamed to `ort_bind_codegen::ValueType`")]
#[doc(hidden)]
pub type ValueKind = ValueType;

// The public modules of 0.1, for one release: their user-facing items, each deprecated
// with the path to use instead. (`#[deprecated]` on a module or a `pub use` does not warn
// where the path is used, so these are type aliases and a wrapper function.)

/// Moved to the crate root (kept for one release).
#[doc(hidden)]
pub mod builder {
    /// Moved to [`crate::Builder`].
    #[deprecated(note = "use `ort_bind_codegen::Builder`")]
    pub type Builder = crate::Builder;
    /// Moved to [`crate::CodegenError`].
    #[deprecated(note = "use `ort_bind_codegen::CodegenError`")]
    pub type CodegenError = crate::CodegenError;
    /// Moved to [`crate::GeneratedModule`].
    #[deprecated(note = "use `ort_bind_codegen::GeneratedModule`")]
    pub type GeneratedModule = crate::GeneratedModule;
    /// Moved to [`crate::PipelineOptions`].
    #[deprecated(note = "use `ort_bind_codegen::PipelineOptions`")]
    pub type PipelineOptions = crate::PipelineOptions;
}

/// Moved to the crate root (kept for one release).
#[doc(hidden)]
pub mod plan {
    /// Moved to [`crate::ModelOptions`].
    #[deprecated(note = "use `ort_bind_codegen::ModelOptions`")]
    pub type ModelOptions = crate::ModelOptions;
    /// Moved to [`crate::DecoderRole`].
    #[deprecated(note = "use `ort_bind_codegen::DecoderRole`")]
    pub type DecoderRole = crate::DecoderRole;
    /// Moved to [`crate::PlanError`].
    #[deprecated(note = "use `ort_bind_codegen::PlanError`")]
    pub type PlanError = crate::PlanError;
}

/// Moved to the crate root (kept for one release).
#[doc(hidden)]
pub mod signature {
    /// Moved to [`crate::ModelSignature`].
    #[deprecated(note = "use `ort_bind_codegen::ModelSignature`")]
    pub type ModelSignature = crate::ModelSignature;
    /// Moved to [`crate::ValueInfo`].
    #[deprecated(note = "use `ort_bind_codegen::ValueInfo`")]
    pub type ValueInfo = crate::ValueInfo;
    /// Moved to [`crate::ValueType`].
    #[deprecated(note = "use `ort_bind_codegen::ValueType`")]
    pub type ValueType = crate::ValueType;
    /// Moved to [`crate::Dim`].
    #[deprecated(note = "use `ort_bind_codegen::Dim`")]
    pub type Dim = crate::Dim;
}

/// Moved to the crate root (kept for one release).
#[doc(hidden)]
pub mod dtype {
    /// Moved to [`crate::ElementType`].
    #[deprecated(note = "use `ort_bind_codegen::ElementType`")]
    pub type ElementType = crate::ElementType;
}

/// Moved to the crate root (kept for one release).
#[doc(hidden)]
pub mod model {
    /// Moved to [`crate::ModelError`].
    #[deprecated(note = "use `ort_bind_codegen::ModelError`")]
    pub type ModelError = crate::ModelError;

    /// Moved to [`crate::read_signature`].
    #[deprecated(note = "use `ort_bind_codegen::read_signature`")]
    pub fn read_signature(
        path: impl AsRef<std::path::Path>,
    ) -> Result<crate::ModelSignature, crate::ModelError> {
        crate::read_signature(path)
    }
}

/// Moved to the crate root (kept for one release).
#[doc(hidden)]
pub mod shape {
    /// Moved to [`crate::DimExpr`].
    #[deprecated(note = "use `ort_bind_codegen::DimExpr`")]
    pub type DimExpr = crate::DimExpr;
    /// Moved to [`crate::InferredShape`].
    #[deprecated(note = "use `ort_bind_codegen::InferredShape`")]
    pub type InferredShape = crate::InferredShape;
    /// Moved to [`crate::Stop`].
    #[deprecated(note = "use `ort_bind_codegen::Stop`")]
    pub type Stop = crate::Stop;
    /// Moved to [`crate::StopReason`].
    #[deprecated(note = "use `ort_bind_codegen::StopReason`")]
    pub type StopReason = crate::StopReason;
}
