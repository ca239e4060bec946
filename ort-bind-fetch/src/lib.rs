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
//! # #[cfg(not(feature = "fetch"))] fn main() {}
//! # #[cfg(feature = "fetch")]
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

//!
//! Fetching sits behind the `fetch` feature (on by default). Without it the crate is the
//! cache's layout alone ([`CacheEnv`], [`onnxruntime::Platform`]): what the runtime's
//! library search needs in every user's program, where pip and wheels have no place.

mod cache;
pub mod onnxruntime;
#[cfg(feature = "fetch")]
mod packages;
#[cfg(feature = "fetch")]
mod python;
#[cfg(feature = "fetch")]
mod wheel;

pub use cache::{CacheEnv, ENV_VARS, NO_FETCH_VAR, cache_root};
#[cfg(feature = "fetch")]
pub use packages::{PythonEnv, PythonPackages};
#[cfg(feature = "fetch")]
pub use wheel::{FetchError, WheelCache};
