//! How long the macros take to expand, measured on the functions they call (no rustc).
//!
//! ```sh
//! python3 ort-bind-macros/bench/make_models.py /tmp/ort-bind-bench
//! cargo run --release -p ort-bind-macros --example expand_timing -- /tmp/ort-bind-bench
//! ```
//!
//! For `wide.onnx` (1,000 inputs, 1,000 outputs) and `big.onnx` (1 GiB of initializer
//! payload) it times, as the fastest and the median of several runs: decoding the signature,
//! `#[derive(OnnxBinding)]` on a struct binding every value, and `bindings!`. Each
//! expansion includes everything the proc macro does: reading the model, checking,
//! generating tokens and refreshing the dependency-tracking placeholder.

use std::path::Path;
use std::time::{Duration, Instant};

use ort_bind_codegen::__private::macros::{self, MacroEnv};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// `(fastest, median)` time of `runs` calls of `f`, each on its own copy of `input`
/// (copying and dropping the tokens is not part of what a proc macro does, so it is not
/// timed). On a machine shared with other work the fastest run is the one least
/// disturbed; both are printed.
fn timed(
    input: &TokenStream,
    runs: usize,
    f: impl Fn(TokenStream) -> TokenStream,
) -> ((Duration, Duration), TokenStream) {
    let inputs: Vec<TokenStream> = (0..runs).map(|_| input.clone()).collect();
    let mut outputs = Vec::with_capacity(runs);
    let mut times: Vec<Duration> = inputs
        .into_iter()
        .map(|i| {
            let start = Instant::now();
            let out = f(i);
            let t = start.elapsed();
            outputs.push(out);
            t
        })
        .collect();
    times.sort();
    (
        (times[0], times[runs / 2]),
        outputs.pop().expect("runs > 0"),
    )
}

fn ms((fastest, median): (Duration, Duration)) -> String {
    format!(
        "{:.2} ms (median {:.2} ms)",
        fastest.as_secs_f64() * 1e3,
        median.as_secs_f64() * 1e3
    )
}

/// A struct binding every value of the model at `file` (relative to the env's dir).
fn struct_for(dir: &Path, file: &str) -> TokenStream {
    let sig = ort_bind_codegen::read_signature(dir.join(file)).expect("model reads");
    let fields = sig.inputs.iter().chain(&sig.outputs).map(|v| {
        let (elem, dims) = v.tensor().expect("tensors only");
        let id = format_ident!(
            "{}",
            ort_bind_codegen::__private::ident::snake_case(&v.name)
        );
        let elem = format_ident!("{}", elem.rust_name());
        let shape: TokenStream = ort_bind_codegen::__private::check::shape_type_text(dims)
            .parse()
            .expect("a type");
        quote!(#id: Tensor<#elem, #shape>,)
    });
    quote! {
        #[onnx(model = #file)]
        struct Io { #(#fields)* }
    }
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "/tmp/ort-bind-bench".into());
    let dir = Path::new(&dir);
    let env = MacroEnv {
        manifest_dir: dir.to_path_buf(),
        offline: false,
        site: "expand_timing".into(),
    };
    for (file, runs) in [("wide.onnx", 21), ("big.onnx", 21)] {
        let path = dir.join(file);
        let bytes = std::fs::metadata(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (run bench/make_models.py first)", path.display()))
            .len();
        let input = struct_for(dir, file);
        let fields = input.to_string().matches("Tensor <").count();
        let (decode, _) = timed(&TokenStream::new(), runs, |t| {
            ort_bind_codegen::read_signature(&path).expect("model reads");
            t
        });
        let (derive, derive_out) = timed(&input, runs, |i| macros::derive_onnx_binding(i, &env));
        assert!(
            !derive_out.to_string().contains("compile_error"),
            "the derive expands without errors"
        );
        let lit = quote!(#file);
        let (bindings, bindings_out) = timed(&lit, runs, |i| macros::bindings(i, &env));
        assert!(!bindings_out.to_string().contains("compile_error"));
        println!(
            "{file}: {bytes} bytes, {fields} fields | decode signature {} | derive {} ({} KiB of tokens) | bindings! {} ({} KiB)",
            ms(decode),
            ms(derive),
            derive_out.to_string().len() / 1024,
            ms(bindings),
            bindings_out.to_string().len() / 1024,
        );
    }
}
