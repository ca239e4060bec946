//! The `ort` crate loads ONNX Runtime and builds its environment before ort-bind needs
//! either (the `ort` feature): ort-bind then uses `ort`'s library, C API table and
//! environment. A test binary of its own: which crate goes first is decided once per process.

mod common;

use std::path::PathBuf;

use ort_bind_runtime::library::{self, CandidateSource};
use ort_bind_runtime::{Binding, Error, Session, ort, ort_interop};

/// The ONNX Runtime file ort-bind would load (the first of its candidates that exists).
fn onnxruntime_file() -> PathBuf {
    library::candidates()
        .into_iter()
        .map(|c| c.path)
        .find(|p| p.is_absolute() && p.exists())
        .expect("an ONNX Runtime library on this machine (ORT_DYLIB_PATH, or the fetched copy)")
}

#[test]
fn ort_first_then_ort_bind_shares_its_library_and_environment() {
    let file = onnxruntime_file();
    assert!(
        library::get().is_none(),
        "nothing loaded ort-bind's library yet"
    );
    let env = ort::init_from(&file)
        .expect("ort loads ONNX Runtime")
        .with_telemetry(false)
        .build()
        .expect("ort builds its environment");

    let lib = library::init().expect("ort-bind takes ort's library");
    assert_eq!(lib.source(), CandidateSource::OrtCrate);
    assert_eq!(
        std::fs::canonicalize(lib.path()).unwrap(),
        std::fs::canonicalize(&file).unwrap()
    );
    assert!(lib.version().starts_with("1.31."), "{}", lib.version());
    // One C API table: ort-bind calls exactly the functions `ort` calls.
    assert!(std::ptr::eq(lib.api(), ort::api()));
    // One environment: ONNX Runtime's, which `ort` created.
    assert!(ort_interop::shares_environment(&env).unwrap());
    // `ort`'s handle exists (the program built it), so ort-bind does not build another.
    let err = ort_interop::environment().unwrap_err();
    assert!(matches!(err, Error::Ort { .. }), "{err}");
    assert!(err.to_string().contains("use that one"), "{err}");

    // An `ort` session runs under ort-bind's typed binding.
    let ort_session = ort::session::Session::builder(&env)
        .unwrap()
        .commit_from_file(common::data("add.onnx"))
        .unwrap();
    let session = Session::from_ort(ort_session).unwrap();
    let mut binding = Binding::new(&session, common::AddIo::new(3).unwrap()).unwrap();
    binding
        .inputs()
        .0
        .copy_from_slice(&[1.0, 2.0, 3.0])
        .unwrap();
    binding.inputs().1.fill(0.5);
    binding.run().unwrap();
    assert_eq!(binding.outputs().as_slice(), &[1.5, 2.5, 3.5]);

    // ort-bind's own sessions are created in the same environment and run as usual.
    let own = Session::from_file(common::data("add.onnx"), &Default::default()).unwrap();
    let mut binding = Binding::new(&own, common::AddIo::new(2).unwrap()).unwrap();
    binding.inputs().0.fill(1.0);
    binding.inputs().1.fill(2.0);
    binding.run().unwrap();
    assert_eq!(binding.outputs().as_slice(), &[3.0, 3.0]);
}
