//! Procedural macros for ort-bind: `#[derive(OnnxBinding)]`, `bindings!` and `pipeline!`.
//!
//! This crate is a thin shell: every macro hands its tokens to `ort_bind_codegen`'s
//! `macros` stage (not a public API), where parsing, checking against the model and
//! expansion live (and are unit-tested). Use the macros through the `ort_bind` facade, whose docs
//! describe them; the generated code names the facade as `::ort_bind` (override with
//! `crate = "..."`).

use proc_macro::TokenStream;

use ort_bind_codegen::__private::macros::{self, MacroEnv};

/// `file:line:column` of the macro call, to tell invocations apart.
fn call_site() -> String {
    let span = proc_macro::Span::call_site();
    format!("{}:{}:{}", span.file(), span.line(), span.column())
}

fn env_or_error(f: impl FnOnce(&MacroEnv) -> proc_macro2::TokenStream) -> TokenStream {
    match MacroEnv::from_env(&call_site()) {
        Ok(env) => f(&env).into(),
        Err(message) => syn::Error::new(proc_macro2::Span::call_site(), message)
            .to_compile_error()
            .into(),
    }
}

/// Derives a zero-copy binding for a struct of tensors, checked against an ONNX model at
/// compile time. See the `ort_bind` crate docs ("derive route").
#[proc_macro_derive(OnnxBinding, attributes(onnx))]
pub fn derive_onnx_binding(input: TokenStream) -> TokenStream {
    env_or_error(|env| macros::derive_onnx_binding(input.into(), env))
}

/// Generates, at compile time, the module build-time codegen writes for an ONNX model.
/// See the `ort_bind` crate docs ("macro route").
#[proc_macro]
pub fn bindings(input: TokenStream) -> TokenStream {
    env_or_error(|env| macros::bindings(input.into(), env))
}

/// Generates, at compile time, the modules of several models and checks the edges between
/// them. See the `ort_bind` crate docs (`pipeline!`).
#[proc_macro]
pub fn pipeline(input: TokenStream) -> TokenStream {
    env_or_error(|env| macros::pipeline(input.into(), env))
}

/// Internal: points a dependency-tracking link at a model file (see
/// `track` in `ort_bind_codegen`'s `macros` stage). Expands to nothing.
#[doc(hidden)]
#[proc_macro]
pub fn track_model(input: TokenStream) -> TokenStream {
    macros::track_model(input.into()).into()
}
