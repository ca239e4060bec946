//! String tensors, sequences, maps and optionals through the typed binding (`Binding` over
//! hand-written `BindingIo`s: what generated code emits for these types), on the models of
//! `tests/data/make_models.py`. Values are checked against what Python onnxruntime 1.31.1
//! gives for the same inputs (see the script's table).

mod common;

use common::values::{MapsIo, OptIo, SeqIo, StringsIo};
use ort_bind_runtime::{
    AllocatedOutput, Binding, Dyn, Error, Map, MapSequence, Optional, Sequence, Session,
    SessionOptions, StringOutput, StringTensor, Strings, Tensor, TensorRef, ValueOutputSlot,
};

fn session(name: &str) -> Session {
    Session::from_file(common::data(name), &SessionOptions::new().intra_threads(1)).unwrap()
}

#[test]
fn string_tensors_in_and_out() {
    let s = session("strings.onnx");
    let io = StringsIo {
        a: StringTensor::from_strs("a", &[3], &["x", "héllo", ""]).unwrap(),
        b: StringTensor::from_strs("b", &[3], &["1", "2", "z\0w"]).unwrap(),
        echo: StringOutput::new("echo"),
        joined: StringOutput::new("joined"),
        lengths: AllocatedOutput::new_in("lengths", ort_bind_runtime::Cpu),
    };
    let mut bound = Binding::new(&s, io).unwrap();
    assert!(matches!(
        bound.outputs().echo.get(),
        Err(Error::NotRun { .. })
    ));
    bound.run().unwrap();
    let out = bound.outputs();
    assert_eq!(out.echo.get().unwrap().to_vec(), ["x", "héllo", ""]);
    let joined = out.joined.get().unwrap();
    assert_eq!(joined.dims(), &[3]);
    assert_eq!(&joined[1], "héllo2");
    // A NUL byte inside a string passes through whole (no C-string truncation).
    assert_eq!(joined.get(2), Some("z\0w"));
    assert_eq!(out.lengths.get().unwrap().as_slice(), &[3]);

    // Same count: written in place, no rebind.
    bound
        .modify(|io| {
            io.a.fill(&["p", "q", "r"])?;
            io.b.fill(&["1", "22", "333"])
        })
        .unwrap();
    bound.run().unwrap();
    assert_eq!(
        bound
            .outputs()
            .joined
            .get()
            .unwrap()
            .iter()
            .collect::<Vec<_>>(),
        ["p1", "q22", "r333"]
    );
    // New dims: new ONNX Runtime tensors, bound again by `modify`.
    bound
        .modify(|io| {
            io.a.set(&[1], &["only"])?;
            io.b.set(&[1], &["!"]).map(drop)
        })
        .unwrap();
    bound.run().unwrap();
    assert_eq!(bound.outputs().joined.get().unwrap().to_vec(), ["only!"]);
    assert_eq!(bound.outputs().lengths.get().unwrap().as_slice(), &[1]);

    // A shape the type forbids is refused before ONNX Runtime sees it.
    let err = StringTensor::<(Dyn,)>::from_strs("a", &[1, 1], &["x"]).unwrap_err();
    assert!(matches!(err, Error::Shape { .. }), "{err}");
}

fn tensor(name: &str, values: &[f32]) -> Tensor<f32, (Dyn,)> {
    let mut t = Tensor::new(name, &[values.len()]).unwrap();
    t.as_mut_slice().copy_from_slice(values);
    t
}

#[test]
fn sequences_in_and_out() {
    let s = session("sequences.onnx");
    let io = SeqIo {
        x: tensor("x", &[1.0, 2.0, 3.0]),
        y: tensor("y", &[4.0, 5.0]),
        s: Sequence::from_arrays(
            "s",
            [(&[2][..], &[7.0f32, 8.0][..]), (&[1][..], &[9.0][..])],
        )
        .unwrap(),
        text: StringTensor::from_strs("text", &[2], &["a", "bc"]).unwrap(),
        pair: Sequence::new("pair"),
        pieces: Sequence::new("pieces"),
        second: AllocatedOutput::new_in("second", ort_bind_runtime::Cpu),
        count: AllocatedOutput::new_in("count", ort_bind_runtime::Cpu),
        first: AllocatedOutput::new_in("first", ort_bind_runtime::Cpu),
        echo: Sequence::new("echo"),
        words: Sequence::new("words"),
    };
    let mut bound = Binding::new(&s, io).unwrap();
    for _ in 0..2 {
        bound.run().unwrap();
        let out = bound.outputs();
        let pair: Vec<Vec<f32>> = out.pair.iter().map(|t| t.to_vec()).collect();
        assert_eq!(pair, [vec![1.0, 2.0, 3.0], vec![4.0, 5.0]]);
        assert_eq!(out.pair.get(1).unwrap().dims(), &[2]);
        assert_eq!(out.pieces.len(), 3);
        let pieces: Vec<(Vec<usize>, Vec<f32>)> = out
            .pieces
            .iter()
            .map(|t: TensorRef<'_, f32, (Dyn,)>| (t.dims().to_vec(), t.to_vec()))
            .collect();
        assert_eq!(
            pieces,
            [
                (vec![1], vec![1.0]),
                (vec![1], vec![2.0]),
                (vec![1], vec![3.0])
            ]
        );
        assert_eq!(out.second.get().unwrap().as_slice(), &[4.0, 5.0]);
        assert_eq!(out.count.get().unwrap().as_slice(), &[2]);
        assert_eq!(out.first.get().unwrap().as_slice(), &[7.0, 8.0]);
        let echo: Vec<Vec<f32>> = (&out.echo).into_iter().map(|t| t.to_vec()).collect();
        assert_eq!(echo, [vec![7.0, 8.0], vec![9.0]]);
        let words: Vec<Vec<String>> = out.words.iter().map(Strings::to_vec).collect();
        assert_eq!(words, [vec!["a".to_owned()], vec!["bc".to_owned()]]);
        assert!(out.words.view().is_ok());
    }
    // A new input sequence (new ONNX Runtime value, bound again by `modify`).
    bound
        .modify(|io| io.s.set_arrays([(&[3][..], &[0.5f32, 0.25, 0.125][..])]))
        .unwrap();
    bound.run().unwrap();
    assert_eq!(bound.outputs().count.get().unwrap().as_slice(), &[1]);
    assert_eq!(
        bound.outputs().first.get().unwrap().as_slice(),
        &[0.5, 0.25, 0.125]
    );
    // Elements of the wrong length or shape are refused while building.
    let err = Sequence::<f32, (Dyn,)>::from_arrays("s", [(&[3][..], &[1.0f32][..])]).unwrap_err();
    assert!(matches!(err, Error::Length { .. }), "{err}");
    let err =
        Sequence::<f32, (Dyn,)>::from_arrays("s", [(&[1, 1][..], &[1.0f32][..])]).unwrap_err();
    assert!(matches!(err, Error::Shape { .. }), "{err}");
}

#[test]
fn maps_and_sequences_of_maps() {
    let s = session("maps.onnx");
    let mut probs = Tensor::new("probs", &[2, 3]).unwrap();
    probs
        .as_mut_slice()
        .copy_from_slice(&[0.1, 0.2, 0.7, 0.3, 0.3, 0.4]);
    let m = Map::with_pairs([
        ("c".to_owned(), 3.0f32),
        ("a".to_owned(), 1.0),
        ("z".to_owned(), 5.0),
    ])
    .unwrap();
    let io = MapsIo {
        probs,
        m,
        by_id: MapSequence::new("by_id"),
        by_name: MapSequence::new("by_name"),
        dense: AllocatedOutput::new_in("dense", ort_bind_runtime::Cpu),
        m_out: Map::new("m"),
    };
    let mut bound = Binding::new(&s, io).unwrap();
    bound.run().unwrap();
    let out = bound.outputs();
    assert_eq!(out.by_id.len(), 2);
    let rows: Vec<Vec<(i64, f32)>> = out.by_id.iter().map(|m| m.iter().collect()).collect();
    assert_eq!(
        rows,
        [
            vec![(10, 0.1), (20, 0.2), (30, 0.7)],
            vec![(10, 0.3), (20, 0.3), (30, 0.4)]
        ]
    );
    let first = out.by_name.get(0).unwrap();
    assert_eq!(first.get("eel"), Some(0.7));
    assert_eq!(first.get("fox"), None);
    let hm = out.by_name.get(1).unwrap().to_hash_map();
    assert_eq!(hm.len(), 3);
    assert_eq!(hm["dog"], 0.3);
    assert_eq!(out.dense.get().unwrap().as_slice(), &[1.0, 0.0, 3.0]);
    // The map output: ONNX Runtime's std::map gives the entries sorted by key.
    let echoed = out.m_out.view().unwrap();
    assert_eq!(
        echoed.iter().collect::<Vec<_>>(),
        [("a", 1.0), ("c", 3.0), ("z", 5.0)]
    );
    assert_eq!(
        echoed.to_btree_map().keys().collect::<Vec<_>>(),
        ["a", "c", "z"]
    );

    // Duplicate keys are an error, not a silent choice.
    let err = Map::<i64, f32>::with_pairs([(1, 1.0), (2, 2.0), (1, 3.0)]).unwrap_err();
    assert!(
        err.to_string().contains("the key 1 appears more than once"),
        "{err}"
    );
    // Sequences of maps as inputs (a map per element), read back unchanged.
    let seq = MapSequence::from_maps(
        "rows",
        [
            Map::<i64, f32>::with_pairs([(1, 0.5)]).unwrap(),
            Map::<i64, f32>::with_pairs([(2, 0.25), (3, 0.125)]).unwrap(),
        ],
    )
    .unwrap();
    assert_eq!(seq.len(), 2);
    assert_eq!(seq.get(1).unwrap().get(3), Some(0.125));
}

#[test]
fn optionals_in_and_out() {
    let s = session("optionals.onnx");
    let io = OptIo {
        x: tensor("x", &[1.0, 2.0]),
        o: Optional::none(tensor("o", &[1.0])),
        some: Optional::slot(AllocatedOutput::new_in("some", ort_bind_runtime::Cpu)),
        none: Optional::slot(AllocatedOutput::new_in("none", ort_bind_runtime::Cpu)),
        some_seq: Optional::slot(Sequence::new("some_seq")),
        has: AllocatedOutput::new_in("has", ort_bind_runtime::Cpu),
    };
    let mut bound = Binding::new(&s, io).unwrap();
    assert!(matches!(
        bound.outputs().some.get(),
        Err(Error::NotRun { .. })
    ));
    bound.run().unwrap();
    let out = bound.outputs();
    let some = out.some.get().unwrap().expect("Optional(x) has a value");
    assert_eq!(some.as_slice(), &[1.0, 2.0]);
    assert!(out.none.get().unwrap().is_none());
    let seq = out.some_seq.get().unwrap().expect("a sequence");
    assert_eq!(seq.len(), 2);
    assert_eq!(seq.get(1).unwrap().as_slice(), &[1.0, 2.0]);
    // The optional input was left unbound: ONNX Runtime saw no element.
    assert_eq!(out.has.get().unwrap().as_slice(), &[false]);

    bound
        .modify(|io| {
            io.o.set_present(true);
            Ok(())
        })
        .unwrap();
    bound.run().unwrap();
    assert_eq!(bound.outputs().has.get().unwrap().as_slice(), &[true]);
}

// The dynamic route: every type in and out of `DynamicBinding`, as `DynValue`s.

use ort_bind_runtime::{
    DynMap, DynValue, DynamicBinding, ElementType, HostArray, NumericType, ValueType,
};

fn f32s(dims: &[usize], v: &[f32]) -> DynValue {
    DynValue::Tensor(HostArray::from_vec(dims.to_vec(), v.to_vec()).unwrap())
}

fn strs(items: &[&str]) -> DynValue {
    DynValue::Strings(Strings::from_strs(&[items.len()], items).unwrap())
}

fn dynamic(name: &str) -> DynamicBinding {
    DynamicBinding::new(&session(name)).unwrap()
}

fn set(b: &mut DynamicBinding, name: &str, v: DynValue) {
    let i = b.input_index(name).unwrap();
    b.set_input_value(i, &v).unwrap();
}

fn get(b: &DynamicBinding, name: &str) -> DynValue {
    b.output_value(b.output_index(name).unwrap()).unwrap()
}

#[test]
fn dynamic_strings_and_sequences() {
    let mut b = dynamic("strings.onnx");
    let a = b.input_info().next().unwrap().clone();
    assert_eq!(
        a.ty,
        ValueType::Tensor {
            elem: ElementType::String,
            dims: vec![None]
        }
    );
    assert_eq!(a.ty.to_string(), "string[?]");
    assert_eq!(a.dtype(), None);
    set(&mut b, "a", strs(&["x", "héllo"]));
    set(&mut b, "b", strs(&["1", "2"]));
    b.run().unwrap();
    assert_eq!(get(&b, "joined"), strs(&["x1", "héllo2"]));
    assert_eq!(get(&b, "echo"), strs(&["x", "héllo"]));
    // A numeric output still reads in place; a string one says to use `output_value`.
    assert_eq!(b.output(2).unwrap().as_slice::<i64>(), Some(&[2i64][..]));
    let err = b.output(1).unwrap_err().to_string();
    assert!(err.contains("output_value"), "{err}");
    // Wrong kinds are refused before ONNX Runtime sees them.
    let err = b
        .set_input_value(0, &f32s(&[1], &[1.0]))
        .unwrap_err()
        .to_string();
    assert!(err.contains("the model declares string[?]"), "{err}");

    let mut b = dynamic("sequences.onnx");
    set(&mut b, "x", f32s(&[3], &[1.0, 2.0, 3.0]));
    set(&mut b, "y", f32s(&[2], &[4.0, 5.0]));
    set(
        &mut b,
        "s",
        DynValue::Sequence(vec![f32s(&[2], &[7.0, 8.0]), f32s(&[1], &[9.0])]),
    );
    set(&mut b, "text", strs(&["a", "bc"]));
    b.run().unwrap();
    assert_eq!(
        get(&b, "pair"),
        DynValue::Sequence(vec![f32s(&[3], &[1.0, 2.0, 3.0]), f32s(&[2], &[4.0, 5.0])])
    );
    assert_eq!(get(&b, "pieces").as_sequence().unwrap().len(), 3);
    assert_eq!(get(&b, "second"), f32s(&[2], &[4.0, 5.0]));
    assert_eq!(
        get(&b, "echo"),
        DynValue::Sequence(vec![f32s(&[2], &[7.0, 8.0]), f32s(&[1], &[9.0])])
    );
    assert_eq!(
        get(&b, "words"),
        DynValue::Sequence(vec![strs(&["a"]), strs(&["bc"])])
    );
    // A sequence element of the wrong type is refused with its position.
    let i = b.input_index("s").unwrap();
    let err = b
        .set_input_value(i, &DynValue::Sequence(vec![strs(&["no"])]))
        .unwrap_err()
        .to_string();
    assert!(err.contains("s[0]"), "{err}");
    // An empty sequence is accepted (made with `SequenceEmpty`, see `empty_sequences.rs`);
    // this model's `SequenceAt(s, 0)` then fails the run, as an error.
    b.set_input_value(i, &DynValue::Sequence(vec![])).unwrap();
    let err = b.run().unwrap_err().to_string();
    assert!(
        err.contains("Invalid sequence index (0) specified for sequence of size (0)"),
        "{err}"
    );
}

#[test]
fn dynamic_maps_and_optionals() {
    let mut b = dynamic("maps.onnx");
    let by_id = b.output_info().next().unwrap().ty.clone();
    assert_eq!(by_id.to_string(), "seq(map(int64, float32))");
    set(
        &mut b,
        "probs",
        f32s(&[2, 3], &[0.1, 0.2, 0.7, 0.3, 0.3, 0.4]),
    );
    let m = DynMap::new(strs(&["c", "a"]), f32s(&[2], &[3.0, 1.0])).unwrap();
    set(&mut b, "m", DynValue::Map(m));
    b.run().unwrap();
    let rows = get(&b, "by_id");
    let rows = rows.as_sequence().unwrap();
    assert_eq!(rows.len(), 2);
    let first = rows[0].as_map().unwrap();
    assert_eq!(
        first.keys(),
        &DynValue::Tensor(HostArray::from_vec(vec![3], vec![10i64, 20, 30]).unwrap())
    );
    assert_eq!(first.values(), &f32s(&[3], &[0.1, 0.2, 0.7]));
    let echoed = get(&b, "m");
    let echoed = echoed.as_map().unwrap();
    assert_eq!(echoed.keys(), &strs(&["a", "c"]));
    assert_eq!(echoed.values(), &f32s(&[2], &[1.0, 3.0]));
    assert_eq!(get(&b, "dense"), f32s(&[1, 3], &[1.0, 0.0, 3.0]));

    let mut b = dynamic("optionals.onnx");
    set(&mut b, "x", f32s(&[2], &[1.0, 2.0]));
    set(&mut b, "o", DynValue::Optional(None));
    b.run().unwrap();
    assert_eq!(get(&b, "none"), DynValue::Optional(None));
    assert_eq!(
        get(&b, "some"),
        DynValue::Optional(Some(Box::new(f32s(&[2], &[1.0, 2.0]))))
    );
    let has = b.output(b.output_index("has").unwrap()).unwrap();
    assert_eq!(has.as_slice::<bool>(), Some(&[false][..]));
    // A bare tensor stands for a present optional.
    set(&mut b, "o", f32s(&[1], &[5.0]));
    b.run().unwrap();
    let has = b.output(b.output_index("has").unwrap()).unwrap();
    assert_eq!(has.as_slice::<bool>(), Some(&[true][..]));
    assert_eq!(
        get(&b, "some_seq"),
        DynValue::Optional(Some(Box::new(DynValue::Sequence(vec![
            f32s(&[2], &[1.0, 2.0]),
            f32s(&[2], &[1.0, 2.0])
        ]))))
    );
    assert_eq!(NumericType::F32.name(), "float32");
}

#[test]
fn string_and_map_outputs_through_run_async() {
    let s = Session::from_file(
        common::data("maps.onnx"),
        &SessionOptions::new().intra_threads(2),
    )
    .unwrap();
    let mut probs = Tensor::new("probs", &[1, 3]).unwrap();
    probs.as_mut_slice().copy_from_slice(&[0.25, 0.5, 0.25]);
    let io = MapsIo {
        probs,
        m: Map::with_pairs([("b".to_owned(), 2.0f32)]).unwrap(),
        by_id: MapSequence::new("by_id"),
        by_name: MapSequence::new("by_name"),
        dense: AllocatedOutput::new_in("dense", ort_bind_runtime::Cpu),
        m_out: Map::new("m"),
    };
    let mut bound = Binding::new(&s, io).unwrap();
    for _ in 0..3 {
        futures_executor::block_on(bound.run_async()).unwrap();
        let out = bound.outputs();
        assert_eq!(out.by_name.get(0).unwrap().get("dog"), Some(0.5));
        assert_eq!(
            out.m_out.view().unwrap().to_pairs(),
            [("b".to_owned(), 2.0)]
        );
        assert_eq!(out.dense.get().unwrap().as_slice(), &[0.0, 2.0, 0.0]);
    }
}
