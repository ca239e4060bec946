//! Test support shared by the ort-bind workspace's crates (`publish = false`, no
//! dependencies, so every crate of the workspace can take it as a dev-dependency without
//! a cycle).
//!
//! It holds [`alloc::Counting`], the counting global allocator behind the allocation tests
//! (`ort-bind-tests/tests/alloc.rs`, `ort-bind-runtime/tests/values_alloc.rs`), the
//! bounded-memory test of the model decoder (`ort-bind-codegen/tests/hostile_alloc.rs`) and
//! the benchmark harness's allocation counts (`ort-bind-bench`); and
//! [`cc::shared_library`], which builds the fake C libraries the runtime's tests load
//! (`cuda_fake_driver.rs`, `library.rs`).

pub mod alloc;
pub mod cc;
