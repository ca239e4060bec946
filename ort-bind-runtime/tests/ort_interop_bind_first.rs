//! ort-bind loads ONNX Runtime before the `ort` crate is used (the `ort` feature): `ort` is
//! pointed at the same library, and `ort_interop::environment` is `ort`'s handle to
//! ort-bind's environment. A test binary of its own: which crate goes first is decided once
//! per process.

mod common;

use ort_bind_runtime::library::{self, CandidateSource};
use ort_bind_runtime::{ort, ort_interop};

#[test]
fn ort_bind_first_then_ort_uses_its_library_and_environment() {
    let lib = library::init().expect("ort-bind loads ONNX Runtime");
    assert_ne!(lib.source(), CandidateSource::OrtCrate);

    // `ort` has been pointed at the same file: its table is the one ort-bind calls.
    assert!(std::ptr::eq(ort::api(), lib.api()));
    assert_eq!(ort::info(), lib.build_info());

    let env = ort_interop::environment().expect("ort's handle to ort-bind's environment");
    assert!(ort_interop::shares_environment(&env).unwrap());
    let again = ort_interop::environment().unwrap();
    assert!(std::ptr::eq(
        ort::AsPointer::ptr(&env),
        ort::AsPointer::ptr(&again)
    ));
    // `ort` allows one handle per process: this one.
    assert!(ort::init().build().is_err());

    // `ort` runs sessions in it.
    let mut session = ort::session::Session::builder(&env)
        .unwrap()
        .commit_from_file(common::data("add.onnx"))
        .unwrap();
    let x = ort::value::Tensor::from_array(([3usize], vec![1.0f32, 2.0, 3.0])).unwrap();
    let y = ort::value::Tensor::from_array(([3usize], vec![10.0f32, 20.0, 30.0])).unwrap();
    let outputs = session.run(ort::inputs!["x" => x, "y" => y]).unwrap();
    let (_, sum) = outputs["sum"].try_extract_tensor::<f32>().unwrap();
    assert_eq!(sum, &[11.0, 22.0, 33.0]);
}
