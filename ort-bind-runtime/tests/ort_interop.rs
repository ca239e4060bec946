//! ort-bind's tensors as `ort` values and back, `ort` sessions under typed bindings, and an
//! `ort` tensor feeding a binding's input (the `ort` feature): nothing copied, which the
//! tests check by comparing data addresses.

mod common;

use common::AddIo;
use ort_bind_runtime::ort::value::{DynValue, Tensor as OrtTensor, TensorRef as OrtTensorRef};
use ort_bind_runtime::{
    Binding, BindingIo, Dyn, Error, Feed, Fix, OrtTensorView, Session, Tensor, f16, ort,
    ort_interop,
};

fn ort_session(model: &str) -> ort::session::Session {
    let env = ort_interop::environment().expect("ort's handle to the shared environment");
    ort::session::Session::builder(&env)
        .unwrap()
        .commit_from_file(common::data(model))
        .unwrap()
}

/// The address an `ort` tensor value reads its elements at.
fn ort_address<T>(value: &OrtTensorRef<'_, T>) -> usize
where
    T: ort::value::PrimitiveTensorElementType + std::fmt::Debug,
{
    value.data_ptr().addr()
}

#[test]
fn host_f32_tensors_run_in_an_ort_session_in_place_and_its_output_reads_in_place() {
    let mut session = ort_session("add.onnx");
    let mut x = Tensor::<f32, (Dyn,)>::new("x", &[4]).unwrap();
    let mut y = Tensor::<f32, (Dyn,)>::new("y", &[4]).unwrap();
    x.as_mut_slice().copy_from_slice(&[1.0, 2.0, 3.0, 4.0]);
    y.view_mut().fill(0.25);

    let x_ort = x.to_ort().unwrap();
    let y_ort = y.view().to_ort().unwrap();
    assert_eq!(ort_address(&x_ort), x.as_slice().as_ptr().addr());
    assert_eq!(ort_address(&y_ort), y.as_slice().as_ptr().addr());
    assert_eq!(**x_ort.shape(), [4]);

    let outputs = session
        .run(ort::inputs!["x" => x_ort, "y" => y_ort])
        .unwrap();
    let sum_value: &DynValue = &outputs["sum"];
    let (_, ort_sum) = sum_value.try_extract_tensor::<f32>().unwrap();
    let sum = OrtTensorView::<f32, (Fix<4>,)>::new(sum_value).unwrap();
    let view = sum.view();
    assert_eq!(view.as_slice(), &[1.25, 2.25, 3.25, 4.25]);
    assert_eq!(view.dims(), &[4]);
    assert_eq!(view.as_slice().as_ptr(), ort_sum.as_ptr());
}

#[test]
fn a_mutable_view_is_written_through_ort_in_place() {
    let mut t = Tensor::<i64, (Dyn, Dyn)>::new("ids", &[2, 3]).unwrap();
    let address = t.as_slice().as_ptr().addr();
    {
        let mut view = t.view_mut();
        let mut value = view.to_ort_mut().unwrap();
        let (shape, data) = value.try_extract_tensor_mut::<i64>().unwrap();
        assert_eq!(**shape, [2, 3]);
        assert_eq!(data.as_ptr().addr(), address);
        data.copy_from_slice(&[1, 2, 3, 4, 5, 6]);
    }
    assert_eq!(t.as_slice(), &[1, 2, 3, 4, 5, 6]);
    let value = t.to_ort_mut().unwrap();
    assert_eq!(value.data_ptr().addr(), address);
    drop(value);
    let whole = t.view_mut().into_ort_mut().unwrap();
    assert_eq!(whole.data_ptr().addr(), address);
}

#[test]
fn ort_tensors_of_other_element_types_read_in_place() {
    // int64, made by `ort` from a Rust vector it keeps.
    let ids = OrtTensor::from_array(([2usize, 2], vec![7i64, 8, 9, 10])).unwrap();
    let view = OrtTensorView::<i64, (Dyn, Dyn)>::new(&ids).unwrap();
    assert_eq!(view.dims(), &[2, 2]);
    assert_eq!(view.view().row(1).unwrap(), &[9, 10]);
    assert_eq!(
        view.view().as_slice().as_ptr().addr(),
        ids.data_ptr().addr()
    );

    // float16 both ways: the same `half` type in both crates.
    let mut h = Tensor::<f16, (Dyn,)>::new("h", &[3]).unwrap();
    h.as_mut_slice()
        .copy_from_slice(&[f16::from_f32(0.5), f16::ONE, f16::from_f32(-2.0)]);
    let value = h.to_ort().unwrap();
    assert_eq!(ort_address(&value), h.as_slice().as_ptr().addr());
    let back = OrtTensorView::<f16, (Dyn,)>::new(&*value).unwrap();
    assert_eq!(back.view().as_slice(), h.as_slice());
    assert_eq!(back.view().as_slice().as_ptr(), h.as_slice().as_ptr());

    // bool.
    let flags = OrtTensor::from_array(([3usize], vec![true, false, true])).unwrap();
    let view = OrtTensorView::<bool, (Dyn,)>::new(&flags).unwrap();
    assert_eq!(view.view().to_vec(), [true, false, true]);
}

#[test]
fn views_of_ort_values_check_type_shape_and_dims() {
    let ids = OrtTensor::from_array(([4usize], vec![1i64, 2, 3, 4])).unwrap();
    let err = OrtTensorView::<f32, (Dyn,)>::new(&ids).unwrap_err();
    assert!(matches!(err, Error::Value { .. }), "{err}");
    assert!(err.to_string().contains("int64"), "{err}");
    let err = OrtTensorView::<i64, (Fix<3>,)>::new(&ids).unwrap_err();
    assert!(matches!(err, Error::Shape { .. }), "{err}");
    let err = OrtTensorView::<i64, (Dyn, Dyn)>::new(&ids).unwrap_err();
    assert!(matches!(err, Error::Shape { .. }), "{err}");

    let t = Tensor::<f32, (Dyn, Dyn)>::new("y", &[2, 3]).unwrap();
    let flat = t.view().to_ort_with_dims(&[6]).unwrap();
    assert_eq!(**flat.shape(), [6]);
    assert_eq!(ort_address(&flat), t.as_slice().as_ptr().addr());
    let err = t.view().to_ort_with_dims(&[5]).unwrap_err();
    assert!(matches!(err, Error::Shape { .. }), "{err}");
}

#[test]
fn an_ort_session_runs_a_typed_binding_and_is_kept_alive_by_it() {
    let mut binding = {
        let session = Session::from_ort(ort_session("add.onnx")).unwrap();
        session
            .check_signature(AddIo::INPUTS, AddIo::OUTPUTS)
            .unwrap();
        Binding::new(&session, AddIo::new(3).unwrap()).unwrap()
        // The `ort` session's last owner outside the binding is dropped here.
    };
    for round in 0..3 {
        let r = round as f32;
        binding.inputs().0.copy_from_slice(&[r, 1.0, 2.0]).unwrap();
        binding.inputs().1.fill(10.0);
        binding.run().unwrap();
        assert_eq!(binding.outputs().as_slice(), &[10.0 + r, 11.0, 12.0]);
    }
}

#[test]
fn a_shared_ort_session_keeps_running_under_ort_too() {
    let mut ort_add = ort_session("add.onnx");
    let session = Session::from_ort_shared(&ort_add).unwrap();
    assert_eq!(
        session.as_raw().as_ptr().cast_const(),
        ort::AsPointer::ptr(&ort_add)
    );
    let mut binding = Binding::new(&session, AddIo::new(2).unwrap()).unwrap();
    binding.inputs().0.fill(1.0);
    binding.inputs().1.fill(2.0);
    binding.run().unwrap();
    assert_eq!(binding.outputs().as_slice(), &[3.0, 3.0]);

    let x = OrtTensor::from_array(([1usize], vec![4.0f32])).unwrap();
    let y = OrtTensor::from_array(([1usize], vec![5.0f32])).unwrap();
    let outputs = ort_add.run(ort::inputs!["x" => x, "y" => y]).unwrap();
    assert_eq!(
        outputs["sum"].try_extract_tensor::<f32>().unwrap().1,
        &[9.0]
    );
    drop(outputs);
    drop(ort_add);
    // ort-bind's session still holds ONNX Runtime's session.
    binding.run().unwrap();
    assert_eq!(binding.outputs().as_slice(), &[3.0, 3.0]);
}

#[test]
fn a_signature_mismatch_is_an_error_not_a_panic() {
    let session = Session::from_ort(ort_session("affine.onnx")).unwrap();
    let err = session
        .check_signature(AddIo::INPUTS, AddIo::OUTPUTS)
        .unwrap_err();
    assert!(matches!(err, Error::SignatureMismatch { .. }), "{err}");
}

#[test]
fn an_ort_output_feeds_a_binding_input_in_place() {
    let mut ort_add = ort_session("add.onnx");
    let x = OrtTensor::from_array(([4usize], vec![1.0f32, 2.0, 3.0, 4.0])).unwrap();
    let y = OrtTensor::from_array(([4usize], vec![1.0f32; 4])).unwrap();
    let outputs = ort_add.run(ort::inputs!["x" => x, "y" => y]).unwrap();
    let ort_sum = &outputs["sum"];
    let address = ort_sum
        .try_extract_tensor::<f32>()
        .unwrap()
        .1
        .as_ptr()
        .addr();

    let session = Session::from_file(common::data("add.onnx"), &Default::default()).unwrap();
    let mut binding = Binding::new(&session, AddIo::new(4).unwrap()).unwrap();
    binding.inputs().1.fill(100.0);
    binding.run_fed(&[Feed::from_ort(ort_sum, "x")]).unwrap();
    assert_eq!(binding.outputs().as_slice(), &[102.0, 103.0, 104.0, 105.0]);
    assert_eq!(binding.fed_address("x"), Some(address));

    // Another element count than the input's is an error naming both.
    let short = OrtTensor::from_array(([3usize], vec![0.0f32; 3])).unwrap();
    let err = binding.run_fed(&[Feed::from_ort(&short, "x")]).unwrap_err();
    assert!(err.to_string().contains("ort value"), "{err}");
}
