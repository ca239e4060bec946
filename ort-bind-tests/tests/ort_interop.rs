//! Generated modules over sessions the `ort` crate built (the `ort` feature): a typed
//! binding runs an `ort` session, a mismatched model is an error, and tensors cross between
//! the crates in place.

use ort_bind::{Dyn, Error, Feed, OrtTensorView, Session, ort, ort_interop};

mod add {
    ort_bind::include_bindings!("add");
}
mod dynamic {
    ort_bind::include_bindings!("dynamic");
}

fn ort_session(path: &str) -> ort::session::Session {
    let env = ort_interop::environment().unwrap();
    ort::session::Session::builder(&env)
        .unwrap()
        .commit_from_file(path)
        .unwrap()
}

#[test]
fn a_generated_model_runs_an_ort_session() {
    let session = Session::from_ort(ort_session(add::MODEL_PATH)).unwrap();
    let model = add::Model::from_session(session).unwrap();
    let mut binding = model.bind(add::Dims { n: 3 }).unwrap();
    binding
        .inputs()
        .x
        .copy_from_slice(&[1.0, 2.0, 3.0])
        .unwrap();
    binding.inputs().y.fill(1.5);
    binding.run().unwrap();
    assert_eq!(binding.outputs().sum.as_slice(), &[2.5, 3.5, 4.5]);
}

#[test]
fn a_generated_model_refuses_another_models_ort_session() {
    let session = Session::from_ort(ort_session(dynamic::MODEL_PATH)).unwrap();
    let err = add::Model::from_session(session).unwrap_err();
    assert!(matches!(err, Error::SignatureMismatch { .. }), "{err}");
    let session = Session::from_ort(ort_session(add::MODEL_PATH)).unwrap();
    let err = dynamic::Model::from_session(session).unwrap_err();
    assert!(matches!(err, Error::SignatureMismatch { .. }), "{err}");
}

#[test]
fn tensors_cross_between_a_typed_binding_and_an_ort_session_in_place() {
    // ort-bind -> ort: the binding's output `y` ([2, 3]) is `ort`'s `x` ([6]).
    let dynamic_model = dynamic::Model::load().unwrap();
    let mut first = dynamic_model.bind(dynamic::Dims { batch: 2 }).unwrap();
    first
        .inputs()
        .x
        .copy_from_slice(&[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0])
        .unwrap();
    first.run().unwrap();
    let y = first.outputs().y;
    let expected: Vec<f32> = y.as_slice().iter().map(|v| v + 1.0).collect();
    let y_ort = y.to_ort_with_dims(&[6]).unwrap();
    assert_eq!(y_ort.data_ptr().addr(), y.as_slice().as_ptr().addr());
    let ones = ort::value::Tensor::from_array(([6usize], vec![1.0f32; 6])).unwrap();
    let mut ort_add = ort_session(add::MODEL_PATH);
    let outputs = ort_add
        .run(ort::inputs!["x" => y_ort, "y" => ones])
        .unwrap();

    // ort -> ort-bind: `ort`'s output read in place, then fed to a typed binding's input.
    let sum = OrtTensorView::<f32, (Dyn,)>::new(&outputs["sum"]).unwrap();
    assert_eq!(sum.view().as_slice(), expected.as_slice());
    let address = outputs["sum"]
        .try_extract_tensor::<f32>()
        .unwrap()
        .1
        .as_ptr();
    assert_eq!(sum.view().as_slice().as_ptr(), address);

    let add_model = add::Model::load().unwrap();
    let binding = add_model.bind(add::Dims { n: 6 }).unwrap();
    let mut binding: ort_bind::Binding<add::Io<ort_bind::Cpu>> = binding.into();
    binding.inputs().y.fill(-1.0);
    binding
        .run_fed(&[Feed::from_ort(&outputs["sum"], "x")])
        .unwrap();
    assert_eq!(binding.fed_address("x"), Some(address.addr()));
    // (y + 1) - 1: `y` back, to rounding.
    let back = binding.outputs().sum;
    let y = first.outputs().y;
    assert_eq!(back.dims(), &[6]);
    for (a, b) in back.as_slice().iter().zip(y.as_slice()) {
        assert!(
            (a - b).abs() < 1e-6,
            "{:?} vs {:?}",
            back.as_slice(),
            y.as_slice()
        );
    }
}
