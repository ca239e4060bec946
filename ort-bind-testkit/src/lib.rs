//! Test support shared by the ort-bind workspace's crates (`publish = false`, no
//! dependencies, so every crate of the workspace can take it as a dev-dependency without
//! a cycle).
//!
//! Today it holds one thing: [`alloc::Counting`], the counting global allocator behind the
//! allocation tests (`ort-bind-tests/tests/alloc.rs`, `ort-bind-runtime/tests/values_alloc.rs`),
//! the bounded-memory test of the model decoder (`ort-bind-codegen/tests/hostile_alloc.rs`)
//! and the benchmark harness's allocation counts (`ort-bind-bench`).

pub mod alloc;
