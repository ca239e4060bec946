//! String tensors, sequences, maps and optionals through the typed binding (`Bound` over
//! hand-written `BindingIo`s: what generated code emits for these types), on the models of
//! `tests/data/make_models.py`. Values are checked against what Python onnxruntime 1.31.1
//! gives for the same inputs (see the script's table).
#![allow(unreachable_pub)]

mod common;

use ort_bind_runtime::{
    AllocatedOutput, AnyRank, Binder, BindingIo, Bound, Dyn, Error, Map, MapSequence, Optional,
    OutputSlot, OutputValue, Result, Sequence, Session, SessionOptions, StringOutput, StringTensor,
    Strings, Tensor, TensorRef, ValueSpec,
};

fn session(name: &str) -> Session {
    Session::from_file(common::data(name), &SessionOptions::new().intra_threads(1)).unwrap()
}

/// `strings.onnx`: `echo = Identity(a)`, `joined = StringConcat(a, b)`, `lengths = Shape(a)`.
#[derive(Debug)]
struct StringsIo {
    a: StringTensor<(Dyn,)>,
    b: StringTensor<(Dyn,)>,
    echo: StringOutput<(Dyn,)>,
    joined: StringOutput<(Dyn,)>,
    lengths: AllocatedOutput<i64, (Dyn,)>,
}

// SAFETY: inputs change only inside `Bound::modify` (no views hand out mutable access);
// outputs are slots ONNX Runtime allocates into.
unsafe impl BindingIo for StringsIo {
    const INPUTS: &'static [ValueSpec] = &[
        ValueSpec::string("a", Some(1)),
        ValueSpec::string("b", Some(1)),
    ];
    const OUTPUTS: &'static [ValueSpec] = &[
        ValueSpec::string("echo", Some(1)),
        ValueSpec::string("joined", Some(1)),
        ValueSpec::of::<i64>("lengths", Some(1)),
    ];
    const HAS_ALLOCATED_OUTPUTS: bool = true;
    type Dims = ();
    type InputsMut<'a> = ();
    type OutputsRef<'a> = &'a StringsIo;

    fn bind<'io>(&'io self, binder: &mut Binder<'_, 'io>) -> Result<()> {
        binder.value_input(0, &self.a)?;
        binder.value_input(1, &self.b)?;
        binder.value_output(0, &self.echo)?;
        binder.value_output(1, &self.joined)?;
        binder.allocated_output(2, &self.lengths)
    }
    fn set_dims(&mut self, _: &()) -> Result<()> {
        Ok(())
    }
    fn store_output(&mut self, index: usize, value: OutputValue) -> Result<()> {
        match index {
            0 => value.store_in_slot(&mut self.echo),
            1 => value.store_in_slot(&mut self.joined),
            _ => value.store_in(&mut self.lengths),
        }
    }
    fn clear_allocated(&mut self) {
        self.echo.clear();
        self.joined.clear();
        self.lengths.clear();
    }
    fn inputs_mut(&mut self) {}
    fn outputs(&self) -> &StringsIo {
        self
    }
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
    let mut bound = Bound::new(&s, io).unwrap();
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

/// `sequences.onnx`.
#[derive(Debug)]
struct SeqIo {
    x: Tensor<f32, (Dyn,)>,
    y: Tensor<f32, (Dyn,)>,
    s: Sequence<f32, (Dyn,)>,
    text: StringTensor<(Dyn,)>,
    pair: Sequence<f32, (Dyn,)>,
    pieces: Sequence<f32, (Dyn,)>,
    second: AllocatedOutput<f32, (Dyn,)>,
    count: AllocatedOutput<i64, ()>,
    first: AllocatedOutput<f32, (Dyn,)>,
    echo: Sequence<f32>,
    words: Sequence<String, (Dyn,)>,
}

// SAFETY: as for `StringsIo`.
unsafe impl BindingIo for SeqIo {
    const INPUTS: &'static [ValueSpec] = &[
        ValueSpec::of::<f32>("x", Some(1)),
        ValueSpec::of::<f32>("y", Some(1)),
        ValueSpec::sequence::<f32>("s", Some(1)),
        ValueSpec::string("text", Some(1)),
    ];
    const OUTPUTS: &'static [ValueSpec] = &[
        ValueSpec::sequence::<f32>("pair", Some(1)),
        ValueSpec::sequence::<f32>("pieces", Some(1)),
        ValueSpec::of::<f32>("second", Some(1)),
        ValueSpec::of::<i64>("count", Some(0)),
        ValueSpec::of::<f32>("first", Some(1)),
        ValueSpec::sequence::<f32>("echo", None),
        ValueSpec::sequence::<String>("words", Some(1)),
    ];
    const HAS_ALLOCATED_OUTPUTS: bool = true;
    type Dims = ();
    type InputsMut<'a> = ();
    type OutputsRef<'a> = &'a SeqIo;

    fn bind<'io>(&'io self, binder: &mut Binder<'_, 'io>) -> Result<()> {
        binder.input(0, &self.x)?;
        binder.input(1, &self.y)?;
        binder.value_input(2, &self.s)?;
        binder.value_input(3, &self.text)?;
        binder.value_output(0, &self.pair)?;
        binder.value_output(1, &self.pieces)?;
        binder.allocated_output(2, &self.second)?;
        binder.allocated_output(3, &self.count)?;
        binder.allocated_output(4, &self.first)?;
        binder.value_output(5, &self.echo)?;
        binder.value_output(6, &self.words)
    }
    fn set_dims(&mut self, _: &()) -> Result<()> {
        Ok(())
    }
    fn store_output(&mut self, index: usize, value: OutputValue) -> Result<()> {
        match index {
            0 => value.store_in_slot(&mut self.pair),
            1 => value.store_in_slot(&mut self.pieces),
            2 => value.store_in(&mut self.second),
            3 => value.store_in(&mut self.count),
            4 => value.store_in(&mut self.first),
            5 => value.store_in_slot(&mut self.echo),
            _ => value.store_in_slot(&mut self.words),
        }
    }
    fn clear_allocated(&mut self) {
        self.pair.clear();
        self.pieces.clear();
        self.second.clear();
        self.count.clear();
        self.first.clear();
        self.echo.clear();
        self.words.clear();
    }
    fn inputs_mut(&mut self) {}
    fn outputs(&self) -> &SeqIo {
        self
    }
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
    let mut bound = Bound::new(&s, io).unwrap();
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

/// `maps.onnx`.
#[derive(Debug)]
struct MapsIo {
    probs: Tensor<f32, (Dyn, ort_bind_runtime::Fix<3>)>,
    m: Map<String, f32>,
    by_id: MapSequence<i64, f32>,
    by_name: MapSequence<String, f32>,
    dense: AllocatedOutput<f32, AnyRank>,
    m_out: Map<String, f32>,
}

// SAFETY: as for `StringsIo`.
unsafe impl BindingIo for MapsIo {
    const INPUTS: &'static [ValueSpec] = &[
        ValueSpec::of::<f32>("probs", Some(2)),
        ValueSpec::map::<String, f32>("m"),
    ];
    const OUTPUTS: &'static [ValueSpec] = &[
        ValueSpec::map_sequence::<i64, f32>("by_id"),
        ValueSpec::map_sequence::<String, f32>("by_name"),
        ValueSpec::of::<f32>("dense", None),
        ValueSpec::map::<String, f32>("m"),
    ];
    const HAS_ALLOCATED_OUTPUTS: bool = true;
    type Dims = ();
    type InputsMut<'a> = ();
    type OutputsRef<'a> = &'a MapsIo;

    fn bind<'io>(&'io self, binder: &mut Binder<'_, 'io>) -> Result<()> {
        binder.input(0, &self.probs)?;
        binder.value_input(1, &self.m)?;
        binder.value_output(0, &self.by_id)?;
        binder.value_output(1, &self.by_name)?;
        binder.allocated_output(2, &self.dense)?;
        binder.value_output(3, &self.m_out)
    }
    fn set_dims(&mut self, _: &()) -> Result<()> {
        Ok(())
    }
    fn store_output(&mut self, index: usize, value: OutputValue) -> Result<()> {
        match index {
            0 => value.store_in_slot(&mut self.by_id),
            1 => value.store_in_slot(&mut self.by_name),
            2 => value.store_in(&mut self.dense),
            _ => value.store_in_slot(&mut self.m_out),
        }
    }
    fn clear_allocated(&mut self) {
        self.by_id.clear();
        self.by_name.clear();
        self.dense.clear();
        self.m_out.clear();
    }
    fn inputs_mut(&mut self) {}
    fn outputs(&self) -> &MapsIo {
        self
    }
}

#[test]
fn maps_and_sequences_of_maps() {
    let s = session("maps.onnx");
    let mut probs = Tensor::new("probs", &[2, 3]).unwrap();
    probs
        .as_mut_slice()
        .copy_from_slice(&[0.1, 0.2, 0.7, 0.3, 0.3, 0.4]);
    let m = Map::from_pairs(
        "m",
        [
            ("c".to_owned(), 3.0f32),
            ("a".to_owned(), 1.0),
            ("z".to_owned(), 5.0),
        ],
    )
    .unwrap();
    let io = MapsIo {
        probs,
        m,
        by_id: MapSequence::new("by_id"),
        by_name: MapSequence::new("by_name"),
        dense: AllocatedOutput::new_in("dense", ort_bind_runtime::Cpu),
        m_out: Map::new("m"),
    };
    let mut bound = Bound::new(&s, io).unwrap();
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
    let err = Map::<i64, f32>::from_pairs("m", [(1, 1.0), (2, 2.0), (1, 3.0)]).unwrap_err();
    assert!(
        err.to_string().contains("the key 1 appears more than once"),
        "{err}"
    );
    // Sequences of maps as inputs (a map per element), read back unchanged.
    let seq = MapSequence::from_maps(
        "rows",
        [
            Map::<i64, f32>::from_pairs("r0", [(1, 0.5)]).unwrap(),
            Map::<i64, f32>::from_pairs("r1", [(2, 0.25), (3, 0.125)]).unwrap(),
        ],
    )
    .unwrap();
    assert_eq!(seq.len(), 2);
    assert_eq!(seq.get(1).unwrap().get(3), Some(0.125));
}

/// `optionals.onnx`.
#[derive(Debug)]
struct OptIo {
    x: Tensor<f32, (Dyn,)>,
    o: Optional<Tensor<f32, (Dyn,)>>,
    some: Optional<AllocatedOutput<f32, (Dyn,)>>,
    none: Optional<AllocatedOutput<f32, AnyRank>>,
    some_seq: Optional<Sequence<f32, (Dyn,)>>,
    has: AllocatedOutput<bool, ()>,
}

// SAFETY: as for `StringsIo`.
unsafe impl BindingIo for OptIo {
    const INPUTS: &'static [ValueSpec] = &[
        ValueSpec::of::<f32>("x", Some(1)),
        ValueSpec::of::<f32>("o", None).optional(),
    ];
    const OUTPUTS: &'static [ValueSpec] = &[
        ValueSpec::of::<f32>("some", Some(1)).optional(),
        ValueSpec::of::<f32>("none", None).optional(),
        ValueSpec::sequence::<f32>("some_seq", None).optional(),
        ValueSpec::of::<bool>("has", Some(0)),
    ];
    const HAS_ALLOCATED_OUTPUTS: bool = true;
    type Dims = ();
    type InputsMut<'a> = ();
    type OutputsRef<'a> = &'a OptIo;

    fn bind<'io>(&'io self, binder: &mut Binder<'_, 'io>) -> Result<()> {
        binder.input(0, &self.x)?;
        binder.value_input(1, &self.o)?;
        binder.value_output(0, &self.some)?;
        binder.value_output(1, &self.none)?;
        binder.value_output(2, &self.some_seq)?;
        binder.allocated_output(3, &self.has)
    }
    fn set_dims(&mut self, _: &()) -> Result<()> {
        Ok(())
    }
    fn store_output(&mut self, index: usize, value: OutputValue) -> Result<()> {
        match index {
            0 => value.store_in_slot(&mut self.some),
            1 => value.store_in_slot(&mut self.none),
            2 => value.store_in_slot(&mut self.some_seq),
            _ => value.store_in(&mut self.has),
        }
    }
    fn clear_allocated(&mut self) {
        self.some.clear();
        self.none.clear();
        self.some_seq.clear();
        self.has.clear();
    }
    fn inputs_mut(&mut self) {}
    fn outputs(&self) -> &OptIo {
        self
    }
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
    let mut bound = Bound::new(&s, io).unwrap();
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

use ort_bind_runtime::{DType, DynMap, DynValue, DynamicBinding, ElemType, HostArray, ValueType};

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
            elem: ElemType::String,
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
    // An empty sequence: ONNX Runtime's C API cannot make one; a clear error says so.
    let err = b
        .set_input_value(i, &DynValue::Sequence(vec![]))
        .unwrap_err()
        .to_string();
    assert!(err.contains("empty sequence"), "{err}");
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
    assert_eq!(DType::F32.name(), "float32");
}
