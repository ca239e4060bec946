//! Code generation from decoded (when the input is an ONNX model) or arbitrary-generated
//! signatures: plan + expand must not panic, and what they produce must parse with `syn`
//! (also after formatting) and declare no name twice. See `ort_bind_fuzz::check_codegen`.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(sig) = ort_bind_fuzz::signature_for(data) {
        ort_bind_fuzz::check_codegen(&sig);
    }
});
