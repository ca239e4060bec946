//! Empty sequences as inputs: ONNX Runtime's C API cannot build one from elements, so
//! ort-bind makes them with a one-node `SequenceEmpty` model (`values/empty.rs`). These
//! tests bind them into `tests/data/empties.onnx` through the typed and the dynamic route
//! and read empty sequence outputs back.
//!
//! The cost measurement is `#[ignore]`d (it must run alone to see the first call):
//! `cargo test --release -p ort-bind-runtime --test empty_sequences -- --ignored --nocapture`.

mod common;

use std::time::{Duration, Instant};

use common::values::EmptiesIo;
use ort_bind_runtime::{
    AllocatedOutput, Binding, DynValue, DynamicBinding, Element, Error, HostArray, Map,
    MapSequence, NumericType, Sequence, Session, SessionOptions, Strings, Tensor, ValueOutputSlot,
    bf16, f16,
    narrow::{
        Float4E2M1x2, Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2, Float8E5M2FNUZ, Float8E8M0, Int2x4,
        Int4x2, UInt2x4, UInt4x2,
    },
};

fn session() -> Session {
    Session::from_file(
        common::data("empties.onnx"),
        &SessionOptions::new().intra_threads(1),
    )
    .unwrap()
}

fn x(values: &[f32]) -> Tensor<f32, (ort_bind_runtime::Dyn,)> {
    let mut t = Tensor::new("x", &[values.len()]).unwrap();
    t.as_mut_slice().copy_from_slice(values);
    t
}

#[test]
fn empty_typed_sequences_bind_and_run() {
    let s = session();
    let io = EmptiesIo {
        s: Sequence::from_arrays("s", []).unwrap(),
        t: Sequence::from_strings("t", []).unwrap(),
        x: x(&[1.0, 2.0]),
        s_count: AllocatedOutput::new_in("s_count", ort_bind_runtime::Cpu),
        s_echo: Sequence::new("s_echo"),
        grown: Sequence::new("grown"),
        t_count: AllocatedOutput::new_in("t_count", ort_bind_runtime::Cpu),
        t_echo: Sequence::new("t_echo"),
        made: Sequence::new("made"),
    };
    assert!(io.s.is_empty() && io.t.is_empty());
    let mut bound = Binding::new(&s, io).unwrap();
    for _ in 0..2 {
        bound.run().unwrap();
        let out = bound.outputs();
        assert_eq!(out.s_count.get().unwrap().as_slice(), &[0]);
        assert_eq!(out.t_count.get().unwrap().as_slice(), &[0]);
        // Empty sequence outputs read as empty, and as run (not `NotRun`).
        assert!(out.s_echo.view().unwrap().is_empty());
        assert_eq!(out.s_echo.iter().count(), 0);
        assert!(out.s_echo.get(0).is_none());
        assert!(out.t_echo.view().unwrap().is_empty());
        assert!(out.made.view().unwrap().is_empty());
        // SequenceInsert into the empty input: one element, `x`.
        assert_eq!(out.grown.len(), 1);
        assert_eq!(out.grown.get(0).unwrap().as_slice(), &[1.0, 2.0]);
    }

    // From empty to full and back, through `modify` (a new value each time, bound again).
    bound
        .modify(|io| {
            io.s.set_arrays([(&[1][..], &[5.0f32][..]), (&[2][..], &[6.0, 7.0][..])])?;
            io.t.set_strings([&Strings::from_strs(&[2], &["a", "b"])?])
        })
        .unwrap();
    bound.run().unwrap();
    assert_eq!(bound.outputs().s_count.get().unwrap().as_slice(), &[2]);
    assert_eq!(bound.outputs().t_count.get().unwrap().as_slice(), &[1]);
    assert_eq!(bound.outputs().grown.len(), 3);
    assert_eq!(bound.outputs().t_echo.get(0).unwrap().to_vec(), ["a", "b"]);
    bound
        .modify(|io| {
            io.s.set_arrays([])?;
            io.t.set_strings([])
        })
        .unwrap();
    bound.run().unwrap();
    let out = bound.outputs();
    assert_eq!(out.s_count.get().unwrap().as_slice(), &[0]);
    assert_eq!(out.t_count.get().unwrap().as_slice(), &[0]);
    assert!(out.s_echo.is_empty() && out.t_echo.is_empty());
    assert_eq!(out.grown.len(), 1);
}

#[test]
fn empty_dynamic_sequences_bind_and_run() {
    let mut b = DynamicBinding::new(&session()).unwrap();
    let empty = DynValue::Sequence(vec![]);
    let x = DynValue::Tensor(HostArray::from_vec(vec![2], vec![1.0f32, 2.0]).unwrap());
    for (name, value) in [("s", &empty), ("t", &empty), ("x", &x)] {
        b.set_input_value(b.input_index(name).unwrap(), value)
            .unwrap();
    }
    b.run().unwrap();
    let get = |name: &str| b.output_value(b.output_index(name).unwrap()).unwrap();
    let zero = DynValue::Tensor(HostArray::from_vec(vec![], vec![0i64]).unwrap());
    assert_eq!(get("s_count"), zero);
    assert_eq!(get("t_count"), zero);
    assert_eq!(get("s_echo"), empty);
    assert_eq!(get("t_echo"), empty);
    assert_eq!(get("made"), empty);
    assert_eq!(get("grown"), DynValue::Sequence(vec![x.clone()]));

    // An empty sequence where the model declares a tensor is still a type error.
    let err = b
        .set_input_value(b.input_index("x").unwrap(), &empty)
        .unwrap_err();
    assert!(matches!(err, Error::Value { .. }), "{err}");
}

fn empty_of<T: Element>() -> Result<usize, Error> {
    Sequence::<T>::from_arrays("s", []).map(|s| s.len())
}

#[test]
fn every_element_type_onnx_runtime_sequences_can_be_empty() {
    assert_eq!(empty_of::<f32>().unwrap(), 0);
    assert_eq!(empty_of::<f64>().unwrap(), 0);
    assert_eq!(empty_of::<f16>().unwrap(), 0);
    assert_eq!(empty_of::<bf16>().unwrap(), 0);
    assert_eq!(empty_of::<i8>().unwrap(), 0);
    assert_eq!(empty_of::<i16>().unwrap(), 0);
    assert_eq!(empty_of::<i32>().unwrap(), 0);
    assert_eq!(empty_of::<i64>().unwrap(), 0);
    assert_eq!(empty_of::<u8>().unwrap(), 0);
    assert_eq!(empty_of::<u16>().unwrap(), 0);
    assert_eq!(empty_of::<u32>().unwrap(), 0);
    assert_eq!(empty_of::<u64>().unwrap(), 0);
    assert_eq!(empty_of::<bool>().unwrap(), 0);
    assert_eq!(Sequence::<String>::from_strings("t", []).unwrap().len(), 0);
    // ONNX's SequenceEmpty does not take the narrow types: a clear error, not a panic.
    let narrow: [fn() -> Result<usize, Error>; 10] = [
        empty_of::<Float8E4M3FN>,
        empty_of::<Float8E4M3FNUZ>,
        empty_of::<Float8E5M2>,
        empty_of::<Float8E5M2FNUZ>,
        empty_of::<Float8E8M0>,
        empty_of::<Int4x2>,
        empty_of::<UInt4x2>,
        empty_of::<Float4E2M1x2>,
        empty_of::<Int2x4>,
        empty_of::<UInt2x4>,
    ];
    for make in narrow {
        let text = make().unwrap_err().to_string();
        assert!(text.contains("SequenceEmpty"), "{text}");
    }
    // Every element type of the dynamic route is among those above: 13 wide, 10 narrow.
    assert_eq!(NumericType::ALL.len(), 13 + narrow.len());
}

#[test]
fn empty_sequences_from_many_threads() {
    let threads: Vec<_> = (0..4)
        .map(|i| {
            std::thread::spawn(move || {
                for _ in 0..50 {
                    let s = if i % 2 == 0 {
                        Sequence::<f32>::from_arrays("s", []).unwrap().len()
                    } else {
                        Sequence::<String>::from_strings("t", []).unwrap().len()
                    };
                    assert_eq!(s, 0);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

#[test]
fn an_empty_sequence_of_maps_is_a_clear_error() {
    let err = MapSequence::<i64, f32>::from_maps("rows", Vec::<Map<i64, f32>>::new()).unwrap_err();
    assert!(matches!(err, Error::Value { .. }), "{err}");
    let text = err.to_string();
    assert!(text.contains("rows"), "{text}");
    assert!(text.contains("empty sequence of maps"), "{text}");
    assert!(text.contains("SequenceEmpty"), "{text}");
}

#[test]
#[ignore = "a measurement: run alone with --ignored --nocapture to see the first call"]
fn cost_of_one_empty_sequence() {
    ort_bind_runtime::library::init().unwrap();
    let t0 = Instant::now();
    let first = Sequence::<f32>::from_arrays("s", []).unwrap();
    let first_call = t0.elapsed();
    drop(first);
    let n = 20_000u32;
    let mut each: Vec<Duration> = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let t = Instant::now();
        let s = Sequence::<f32>::from_arrays("s", []).unwrap();
        each.push(t.elapsed());
        drop(s);
    }
    each.sort();
    let mean = each.iter().sum::<Duration>() / n;
    // For scale: a sequence of one one-element tensor (`CreateTensorAsOrtValue` + `CreateValue`).
    let t1 = Instant::now();
    for _ in 0..n {
        drop(Sequence::<f32>::from_arrays("s", [(&[1][..], &[1.0f32][..])]).unwrap());
    }
    let one = t1.elapsed() / n;
    println!(
        "empty Sequence<f32>: first call (session creation) {first_call:?}; later calls \
         median {:?}, p99 {:?}, mean {mean:?} over {n}; a one-element sequence: {one:?}",
        each[each.len() / 2],
        each[each.len() * 99 / 100],
    );
}
