//! Compile-time device checks (the `cuda` feature; no GPU needed):
//! `cargo test --features cuda --test ui_cuda`.
//!
//! Host memory where a binding holds CUDA memory, device memory read or written as host
//! memory, and tensors of different device ordinals mixed: each is a compile error, one
//! case per file under `tests/ui_cuda/` with the diagnostics beside it. The pass case
//! shows the explicit forms that compile. (Kept apart from `tests/ui/`, whose harness
//! builds without the `cuda` feature.)
//!
//! To accept changed diagnostics after reading them:
//! `TRYBUILD=overwrite cargo test --features cuda --test ui_cuda`.
#![cfg(feature = "cuda")]

#[test]
fn device_mismatches_do_not_compile() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui_cuda/*.rs");
    t.pass("tests/ui_cuda/pass/*.rs");
}
