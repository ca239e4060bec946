//! Files from pinned Python wheels, kept in a per-user cache: ort-bind's one home for
//! fetching.
//!
//! Python wheels are zip files, and `pip download` fetches them through whatever package
//! index the machine is configured for, so a build script can get ONNX Runtime's shared
//! library, a model or test data with no manual step. [`WheelCache`] downloads a pinned
//! wheel once, extracts only the entries asked for into a folder of the cache, and answers
//! later calls from the cache without running pip. [`onnxruntime`] knows the layout of the
//! ONNX Runtime copy in that cache, for the runtime's build script (which fetches it) and
//! its run-time library search (which looks there). [`PythonPackages`] installs pinned
//! Python packages into the cache once (`pip install --target`), for a build script that
//! runs a Python script of its own.
//!
//! ```no_run
//! # fn main() -> Result<(), ort_bind_fetch::FetchError> {
//! use ort_bind_fetch::WheelCache;
//! // build.rs
//! let root = WheelCache::new("onnx==1.23.2", "onnx-1.23.2-backend-data")
//!     .keep_prefix("onnx/backend/test/data/simple/")
//!     .get()?;
//! let model = root.join("onnx/backend/test/data/simple/test_sign_model/model.onnx");
//! # let _ = model;
//! # Ok(())
//! # }
//! ```
//!
//! The crate has no dependencies (it is compiled into every build of ort-bind): Python,
//! which pip needs anyway, lists and extracts the wheel.

mod cache;
pub mod onnxruntime;
mod packages;
mod python;
mod wheel;

pub use cache::{CacheEnv, ENV_VARS, NO_FETCH_VAR, cache_root};
pub use packages::{PythonEnv, PythonPackages};
pub use wheel::{FetchError, WheelCache};
