//! `#[derive(OnnxBinding)]`: real inference through derived bindings, on the fixture
//! models (`tests/fixtures/`, see its README for what each computes).

use ort_bind::{
    AllocatedOutput, AnyRank, Binding, Cpu, Device, Dyn, Fix, OnnxBinding, Session, SessionOptions,
    Tensor, bf16, f16,
};

fn session(path: &str) -> ort_bind::Result<Session> {
    Session::from_file(path, &SessionOptions::new().intra_threads(1))
}

#[derive(OnnxBinding)]
#[onnx(model = "tests/fixtures/add.onnx")]
struct AddIo<D: Device = Cpu> {
    x: Tensor<f32, (Dyn,), D>,
    #[onnx(name = "y")]
    other: Tensor<f32, (Dyn,), D>,
    sum: Tensor<f32, (Dyn,), D>,
}

#[test]
fn add_runs_in_place_and_resizes() -> ort_bind::Result<()> {
    // `MODEL_FILE.find()`: where a deployed program looks (here: the build path).
    let session = session(AddIo::<Cpu>::MODEL_FILE.find()?.to_str().unwrap())?;
    let io = AddIo::allocate(&Cpu, &AddIoDims { n: 3 })?;
    let mut bound = Binding::new(&session, io)?;
    bound.inputs().x.copy_from_slice(&[1.0, 2.0, 3.0])?;
    bound.inputs().other.fill(10.0);
    bound.run()?;
    assert_eq!(bound.outputs().sum.as_slice(), &[11.0, 12.0, 13.0]);

    // The same buffers, bound once, serve every run.
    bound.inputs().x.copy_from_slice(&[5.0, 6.0, 7.0])?;
    bound.run()?;
    assert_eq!(bound.outputs().sum.as_slice(), &[15.0, 16.0, 17.0]);

    // A smaller `n` reuses capacity; a larger one grows once. Both rebind.
    bound.set_dims(&AddIoDims { n: 2 })?;
    assert_eq!(bound.outputs().sum.dims(), &[2]);
    bound.inputs().x.copy_from_slice(&[1.0, 1.0])?;
    bound.inputs().other.copy_from_slice(&[2.0, 3.0])?;
    bound.run()?;
    assert_eq!(bound.outputs().sum.as_slice(), &[3.0, 4.0]);
    bound.set_dims(&AddIoDims { n: 5 })?;
    bound.inputs().x.fill(1.0);
    bound.inputs().other.fill(0.5);
    bound.run()?;
    assert_eq!(bound.outputs().sum.as_slice(), &[1.5; 5]);

    // Wrong lengths are errors naming the ONNX value.
    let err = bound.inputs().x.copy_from_slice(&[1.0]).unwrap_err();
    assert!(err.to_string().contains("`x`"), "{err}");
    Ok(())
}

#[test]
fn a_struct_built_by_hand_binds_the_same() -> ort_bind::Result<()> {
    let session = session(AddIo::<Cpu>::MODEL_PATH)?;
    let io: AddIo = AddIo {
        x: Tensor::new("x", &[2])?,
        other: Tensor::new("y", &[2])?,
        sum: Tensor::new("sum", &[2])?,
    };
    let mut bound = Binding::new(&session, io)?;
    let (mut inputs, outputs) = bound.split();
    inputs.x.fill(2.0);
    inputs.other.fill(3.0);
    assert_eq!(outputs.sum.len(), 2);
    bound.run()?;
    assert_eq!(bound.outputs().sum.to_vec(), vec![5.0, 5.0]);
    Ok(())
}

#[test]
fn a_derived_struct_refuses_another_model() -> ort_bind::Result<()> {
    // The derive checked add.onnx at compile time; the session runs add16.onnx.
    let other = session("tests/fixtures/add16.onnx")?;
    let err = Binding::new(&other, AddIo::allocate(&Cpu, &AddIoDims { n: 16 })?).unwrap_err();
    assert!(err.to_string().contains("`x`"), "{err}");
    Ok(())
}

mod types {
    /// Aliases and types from another module bind like the types they name.
    pub(crate) type Batch<D> = ort_bind::Tensor<f32, (ort_bind::Dyn, ort_bind::Fix<4>), D>;
}

// Outputs `y` (bound) and `z` (left out: ONNX Runtime computes and drops it).
#[derive(OnnxBinding)]
#[onnx(model = "tests/fixtures/dynamic.onnx", device = Cpu)]
struct Projection {
    x: types::Batch<Cpu>,
    y: Tensor<f32, (Dyn, Fix<3>)>,
}

#[test]
fn outputs_may_be_left_out() -> ort_bind::Result<()> {
    let session = session(Projection::MODEL_PATH)?;
    let mut bound = Binding::new(
        &session,
        Projection::allocate(&Cpu, &ProjectionDims { batch: 2 })?,
    )?;
    bound
        .inputs()
        .x
        .copy_from_slice(&[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0])?;
    bound.run()?;
    let y = bound.outputs().y.to_vec();
    let want = [0.0, 0.1, 0.2, -0.9, -1.0, -1.1];
    assert!(
        y.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-6),
        "{y:?}"
    );
    Ok(())
}

// `z` only, with its symbolic `N` fixed to 2 by the field type.
#[derive(OnnxBinding)]
#[onnx(model = "tests/fixtures/dynamic.onnx")]
struct Relu {
    x: Tensor<f32, (Fix<2>, Fix<4>)>,
    z: Tensor<f32, (Fix<2>, Fix<3>)>,
}

#[test]
fn a_symbolic_dim_fixed_by_the_field() -> ort_bind::Result<()> {
    let session = session(Relu::MODEL_PATH)?;
    // The field types fix `batch` and `N` to 2: no dims are left to give.
    let ReluDims {} = ReluDims::default();
    let mut bound = Binding::new(&session, Relu::allocate(&Cpu)?)?;
    bound
        .inputs()
        .x
        .copy_from_slice(&[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0])?;
    bound.run()?;
    let z = bound.outputs().z.to_vec();
    let want = [0.0, 0.1, 0.2, 0.0, 0.0, 0.0];
    assert!(
        z.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-6),
        "{z:?}"
    );
    Ok(())
}

// The same model with `N` left `Dyn` on the output: the graph computes it (`x`'s rows,
// which the field type fixes to 2), so the dims ask for nothing.
#[derive(OnnxBinding)]
#[onnx(model = "tests/fixtures/dynamic.onnx")]
struct ReluOpen {
    x: Tensor<f32, (Fix<2>, Fix<4>)>,
    z: Tensor<f32, (Dyn, Fix<3>)>,
}

#[test]
fn an_output_axis_the_graph_sizes_asks_for_no_dim() -> ort_bind::Result<()> {
    let session = session(ReluOpen::MODEL_PATH)?;
    let ReluOpenDims {} = ReluOpenDims {};
    let mut bound = Binding::new(&session, ReluOpen::allocate(&Cpu)?)?;
    bound
        .inputs()
        .x
        .copy_from_slice(&[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0])?;
    bound.run()?;
    assert_eq!(bound.outputs().z.dims(), &[2, 3]);
    Ok(())
}

// `dims` names axes: the output's `N` is the input's `batch`, so one dim sizes both.
#[derive(OnnxBinding)]
#[onnx(model = "tests/fixtures/dynamic.onnx")]
struct Named {
    #[onnx(dims = "rows, _")]
    x: Tensor<f32, (Dyn, Fix<4>)>,
    #[onnx(dims = "rows, 3")]
    z: Tensor<f32, (Dyn, Fix<3>)>,
}

#[test]
fn dims_attribute_names_and_unifies_axes() -> ort_bind::Result<()> {
    let session = session(Named::MODEL_PATH)?;
    let NamedDims { rows } = NamedDims::from_input_shapes(&[2, 4])?;
    assert_eq!(rows, 2);
    assert!(NamedDims::from_input_shapes(&[2, 5]).is_err());
    let mut bound = Binding::new(&session, Named::allocate(&Cpu, &NamedDims { rows })?)?;
    bound
        .inputs()
        .x
        .copy_from_slice(&[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0])?;
    bound.run()?;
    assert_eq!(bound.outputs().z.dims(), &[2, 3]);
    bound.set_dims(&NamedDims { rows: 1 })?;
    assert_eq!(bound.outputs().z.dims(), &[1, 3]);
    Ok(())
}

#[derive(OnnxBinding)]
#[onnx(model = "tests/fixtures/nonzero.onnx")]
struct NonZero {
    x: Tensor<f32, (Fix<6>,)>,
    indices: AllocatedOutput<i64, (Fix<1>, Dyn)>,
}

#[test]
fn data_dependent_outputs_are_allocated_by_onnx_runtime() -> ort_bind::Result<()> {
    let session = session(NonZero::MODEL_PATH)?;
    let mut bound = Binding::new(&session, NonZero::allocate(&Cpu)?)?;
    assert!(
        bound.outputs().indices.get().is_err(),
        "nothing before the first run"
    );
    bound
        .inputs()
        .x
        .copy_from_slice(&[0.0, 1.5, 0.0, -2.0, 0.0, 3.0])?;
    bound.run()?;
    let indices = bound.outputs().indices.get()?;
    assert_eq!(indices.dims(), &[1, 3]);
    assert_eq!(indices.as_slice(), &[1, 3, 5]);
    bound.inputs().x.fill(1.0);
    bound.run()?;
    assert_eq!(bound.outputs().indices.get()?.dims(), &[1, 6]);
    Ok(())
}

#[derive(OnnxBinding)]
#[onnx(model = "tests/fixtures/scalar.onnx")]
struct Scalar {
    x: Tensor<f32, ()>,
    y: Tensor<f32, AnyRank>,
}

#[test]
fn scalars() -> ort_bind::Result<()> {
    let session = session(Scalar::MODEL_PATH)?;
    let io = Scalar {
        x: Tensor::new("x", &[])?,
        y: Tensor::new("y", &[])?,
    };
    let mut bound = Binding::new(&session, io)?;
    bound.inputs().x.copy_from_slice(&[1.25])?;
    bound.run()?;
    assert_eq!(bound.outputs().y.as_slice(), &[2.5]);
    Ok(())
}

#[derive(OnnxBinding)]
#[onnx(model = "tests/fixtures/alltypes.onnx")]
struct AllTypes {
    x_float32: Tensor<f32, (Fix<2>,)>,
    x_float64: Tensor<f64, (Fix<2>,)>,
    x_float16: Tensor<f16, (Fix<2>,)>,
    x_bfloat16: Tensor<bf16, (Fix<2>,)>,
    x_int8: Tensor<i8, (Fix<2>,)>,
    x_int16: Tensor<i16, (Fix<2>,)>,
    x_int32: Tensor<i32, (Fix<2>,)>,
    x_int64: Tensor<i64, (Fix<2>,)>,
    x_uint8: Tensor<u8, (Fix<2>,)>,
    x_uint16: Tensor<u16, (Fix<2>,)>,
    x_uint32: Tensor<u32, (Fix<2>,)>,
    x_uint64: Tensor<u64, (Fix<2>,)>,
    x_bool: Tensor<bool, (Fix<2>,)>,
    y_float32: Tensor<f32, (Fix<2>,)>,
    y_float64: Tensor<f64, (Fix<2>,)>,
    y_float16: Tensor<f16, (Fix<2>,)>,
    y_bfloat16: Tensor<bf16, (Fix<2>,)>,
    y_int8: Tensor<i8, (Fix<2>,)>,
    y_int16: Tensor<i16, (Fix<2>,)>,
    y_int32: Tensor<i32, (Fix<2>,)>,
    y_int64: AllocatedOutput<i64, (Fix<2>,)>,
    y_uint8: Tensor<u8, (Fix<2>,)>,
    y_uint16: Tensor<u16, (Fix<2>,)>,
    y_uint32: Tensor<u32, (Fix<2>,)>,
    y_uint64: Tensor<u64, (Fix<2>,)>,
    y_bool: Tensor<bool, (Fix<2>,)>,
}

#[test]
fn every_element_type() -> ort_bind::Result<()> {
    let session = session(AllTypes::MODEL_PATH)?;
    let mut bound = Binding::new(&session, AllTypes::allocate(&Cpu)?)?;
    {
        let mut i = bound.inputs();
        i.x_float32.copy_from_slice(&[1.0, -2.0])?;
        i.x_float64.copy_from_slice(&[1.0, -2.0])?;
        i.x_float16
            .copy_from_slice(&[f16::from_f32(1.5), f16::from_f32(-2.0)])?;
        i.x_bfloat16
            .copy_from_slice(&[bf16::from_f32(1.5), bf16::from_f32(-2.0)])?;
        i.x_int8.copy_from_slice(&[-8, 8])?;
        i.x_int16.copy_from_slice(&[-16, 16])?;
        i.x_int32.copy_from_slice(&[-32, 32])?;
        i.x_int64.copy_from_slice(&[-64, 64])?;
        i.x_uint8.copy_from_slice(&[8, 255])?;
        i.x_uint16.copy_from_slice(&[16, 65535])?;
        i.x_uint32.copy_from_slice(&[32, u32::MAX])?;
        i.x_uint64.copy_from_slice(&[64, u64::MAX])?;
        i.x_bool.copy_from_slice(&[true, false])?;
    }
    bound.run()?;
    let o = bound.outputs();
    assert_eq!(o.y_float32.as_slice(), &[1.0, -2.0]);
    assert_eq!(o.y_float64.as_slice(), &[1.0, -2.0]);
    assert_eq!(
        o.y_float16.as_slice(),
        &[f16::from_f32(1.5), f16::from_f32(-2.0)]
    );
    assert_eq!(
        o.y_bfloat16.as_slice(),
        &[bf16::from_f32(1.5), bf16::from_f32(-2.0)]
    );
    assert_eq!(o.y_int8.as_slice(), &[-8, 8]);
    assert_eq!(o.y_int16.as_slice(), &[-16, 16]);
    assert_eq!(o.y_int32.as_slice(), &[-32, 32]);
    assert_eq!(o.y_int64.get()?.as_slice(), &[-64, 64]);
    assert_eq!(o.y_uint8.as_slice(), &[8, 255]);
    assert_eq!(o.y_uint16.as_slice(), &[16, 65535]);
    assert_eq!(o.y_uint32.as_slice(), &[32, u32::MAX]);
    assert_eq!(o.y_uint64.as_slice(), &[64, u64::MAX]);
    assert_eq!(o.y_bool.as_slice(), &[true, false]);
    Ok(())
}

// Exporter names: by identifier (`gpu_0_data_0`), raw identifier (`r#type`), or
// `name = ...`; only some outputs bound.
#[derive(OnnxBinding)]
#[onnx(model = "tests/fixtures/messy.onnx")]
struct Messy {
    gpu_0_data_0: Tensor<f32, (Dyn, Fix<3>)>,
    r#type: Tensor<f32, (Dyn,)>,
    #[onnx(name = "1x")]
    one_x: Tensor<f32, (Dyn,)>,
    #[onnx(name = "save_infer_model/scale_0.tmp_1")]
    scale: Tensor<f32, (Fix<2>, Dyn)>,
    #[onnx(name = "a.b")]
    a_dot_b: Tensor<f32, (Fix<4>,)>,
    #[onnx(name = "a/b")]
    a_slash_b: Tensor<f32, (Fix<4>,)>,
    step: Tensor<i64, ()>,
    half: Tensor<f16, (Dyn, Fix<2>)>,
    #[onnx(output)]
    a_b: Tensor<f32, (Fix<4>,)>,
    #[onnx(name = "sigmoid_0.tmp_0")]
    sigmoid: Tensor<f32, (Dyn,)>,
    #[onnx(name = "self")]
    step_out: Tensor<i64, ()>,
}

#[test]
fn exporter_names() -> ort_bind::Result<()> {
    let session = session(Messy::MODEL_PATH)?;
    let dims = MessyDims {
        batch: 2,
        type_dim0: 1,
        // Unnamed axes are named after the model's value, as the generated module names
        // them, whatever the struct calls its fields.
        v_1x_dim0: 2,
        save_infer_model_scale_0_tmp_1_dim1: 5,
        // `sigmoid_0.tmp_0` asks for no dim: the graph sizes it like `type`.
    };
    let mut bound = Binding::new(&session, Messy::allocate(&Cpu, &dims)?)?;
    {
        let mut i = bound.inputs();
        i.gpu_0_data_0
            .copy_from_slice(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0])?;
        i.r#type.copy_from_slice(&[0.0])?;
        i.one_x.copy_from_slice(&[1.0, -2.0])?;
        i.scale.fill(1.0);
        i.a_dot_b.copy_from_slice(&[1.0, 2.0, 3.0, 4.0])?;
        i.a_slash_b.copy_from_slice(&[10.0, 20.0, 30.0, 40.0])?;
        i.step.copy_from_slice(&[7])?;
        i.half.fill(f16::from_f32(1.0));
    }
    bound.run()?;
    let o = bound.outputs();
    assert_eq!(o.a_b.as_slice(), &[11.0, 22.0, 33.0, 44.0]);
    assert_eq!(o.sigmoid.as_slice(), &[0.5]);
    assert_eq!(o.step_out.as_slice(), &[7]);
    Ok(())
}

// Recurrent state: `stateN` fed back into `state` by swapping buffers, no copy.
#[derive(OnnxBinding)]
#[onnx(model = "tests/fixtures/state.onnx")]
struct Recurrent {
    x: Tensor<f32, (Fix<1>, Fix<4>)>,
    state: Tensor<f32, (Fix<2>, Fix<1>, Fix<8>)>,
    #[onnx(name = "stateN")]
    next_state: Tensor<f32, (Fix<2>, Fix<1>, Fix<8>)>,
    y: Tensor<f32, (Fix<1>, Fix<8>)>,
}

#[test]
fn state_feeds_back_without_a_copy() -> ort_bind::Result<()> {
    let session = session(Recurrent::MODEL_PATH)?;
    let mut bound = Binding::new(&session, Recurrent::allocate(&Cpu)?)?;
    bound.inputs().x.copy_from_slice(&[1.0, 2.0, 3.0, 4.0])?;
    let start: Vec<f32> = (0..16).map(|v| v as f32).collect();
    bound.inputs().state.copy_from_slice(&start)?;
    bound.run()?;
    let after_one: Vec<f32> = start.iter().map(|v| v + 10.0).collect();
    assert_eq!(bound.outputs().next_state.as_slice(), after_one.as_slice());
    // `stateN` / `state` pair by name, as in the generated module.
    Recurrent::feed_back(&mut bound)?;
    bound.run()?;
    let after_two: Vec<f32> = start.iter().map(|v| v + 20.0).collect();
    assert_eq!(bound.outputs().next_state.as_slice(), after_two.as_slice());
    let y: Vec<f32> = (0..8).map(|i| (i + 20 + i + 8 + 20) as f32).collect();
    assert_eq!(bound.outputs().y.as_slice(), y.as_slice());
    Ok(())
}

// The pair declared, by ONNX name; `split()` reads an output while filling an input.
#[derive(OnnxBinding)]
#[onnx(
    model = "tests/fixtures/state.onnx",
    feed_back = "stateN -> state",
    no_auto_feed_back
)]
struct Declared {
    x: Tensor<f32, (Fix<1>, Fix<4>)>,
    state: Tensor<f32, (Fix<2>, Fix<1>, Fix<8>)>,
    #[onnx(name = "stateN")]
    next_state: Tensor<f32, (Fix<2>, Fix<1>, Fix<8>)>,
}

#[test]
fn declared_feed_back_and_split() -> ort_bind::Result<()> {
    let session = session(Declared::MODEL_PATH)?;
    let mut bound = Binding::new(&session, Declared::allocate(&Cpu)?)?;
    bound.inputs().x.copy_from_slice(&[1.0, 2.0, 3.0, 4.0])?;
    bound.inputs().state.fill(0.0);
    bound.run()?;
    Declared::feed_next_state_into_state(&mut bound)?;
    assert!(bound.inputs().state.as_slice().iter().all(|&v| v == 10.0));
    {
        let (mut i, o) = bound.split();
        i.x.copy_from_slice(&[0.0; 4])?;
        assert_eq!(o.next_state.dims(), &[2, 1, 8]);
    }
    bound.run()?;
    assert!(
        bound
            .outputs()
            .next_state
            .as_slice()
            .iter()
            .all(|&v| v == 10.0)
    );
    Ok(())
}

// An output ONNX Runtime allocates reads as absent once the dims change, until the next run.
#[derive(OnnxBinding)]
#[onnx(model = "tests/fixtures/dynamic.onnx")]
struct Allocated {
    x: Tensor<f32, (Dyn, Fix<4>)>,
    z: AllocatedOutput<f32, (Dyn, Fix<3>)>,
}

#[test]
fn allocated_outputs_are_absent_after_set_dims() -> ort_bind::Result<()> {
    let session = session(Allocated::MODEL_PATH)?;
    let mut bound = Binding::new(
        &session,
        Allocated::allocate(&Cpu, &AllocatedDims { batch: 2 })?,
    )?;
    bound.inputs().x.fill(1.0);
    bound.run()?;
    assert_eq!(bound.outputs().z.get()?.dims(), &[2, 3]);
    bound.set_dims(&AllocatedDims { batch: 1 })?;
    let err = bound.outputs().z.get().unwrap_err();
    assert!(
        matches!(&err, ort_bind::Error::NotRun { output } if output == "z"),
        "stale output after set_dims: {err}"
    );
    bound.inputs().x.fill(1.0);
    bound.run()?;
    assert_eq!(bound.outputs().z.get()?.dims(), &[1, 3]);
    Ok(())
}

mod sklearn;

/// The skl2onnx iris classifier through the derive: string labels as a `StringOutput`,
/// ZipMap's `seq(map(string, float32))` as a `MapSequence`, equal to Python onnxruntime.
#[derive(OnnxBinding)]
#[onnx(model = "tests/fixtures/sklearn_iris.onnx")]
struct Iris {
    #[onnx(dims = "rows, 4")]
    float_input: Tensor<f32, (Dyn, Fix<4>)>,
    #[onnx(name = "output_label")]
    labels: ort_bind::StringOutput<(Dyn,)>,
    #[onnx(name = "output_probability")]
    probabilities: ort_bind::MapSequence<String, f32>,
}

#[test]
fn sklearn_iris_through_the_derive_equals_python() -> ort_bind::Result<()> {
    let rows = sklearn::iris();
    let session = session(Iris::MODEL_PATH)?;
    let mut bound = Binding::new(
        &session,
        Iris::allocate(&Cpu, &IrisDims { rows: rows.len() })?,
    )?;
    let features: Vec<f32> = rows.iter().flat_map(|r| r.input).collect();
    bound.inputs().float_input.copy_from_slice(&features)?;
    assert!(bound.outputs().labels.get().is_err(), "not run yet");
    for _ in 0..2 {
        bound.run()?;
        let out = bound.outputs();
        let labels = out.labels.get()?;
        let maps = out.probabilities.get()?;
        assert_eq!(maps.len(), rows.len());
        for (i, row) in rows.iter().enumerate() {
            assert_eq!(&labels[i], row.label);
            let map = maps.get(i).unwrap();
            let got: Vec<(String, f32)> = map.iter().map(|(k, v)| (k.to_owned(), v)).collect();
            assert_eq!(got, row.probabilities);
        }
    }
    Ok(())
}

/// The skl2onnx text pipeline through the derive: a `StringTensor` input filled in place.
#[derive(OnnxBinding)]
#[onnx(model = "tests/fixtures/sklearn_text.onnx")]
struct Text {
    text: ort_bind::StringTensor<(Dyn, Fix<1>)>,
    label: ort_bind::StringOutput<(Dyn,)>,
    probabilities: AllocatedOutput<f32, (Dyn, Fix<3>)>,
}

#[test]
fn sklearn_text_through_the_derive_equals_python() -> ort_bind::Result<()> {
    let (rows, _) = sklearn::text_model();
    let session = session(Text::MODEL_PATH)?;
    let dims = TextDims::from_input_shapes(&[rows.len(), 1])?;
    let mut bound = Binding::new(&session, Text::allocate(&Cpu, &dims)?)?;
    let sentences: Vec<&str> = rows.iter().map(|r| r.input.as_str()).collect();
    bound.inputs().text.fill(&sentences)?;
    bound.run()?;
    let out = bound.outputs();
    let labels = out.label.get()?;
    let probs = out.probabilities.get()?;
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(&labels[i], row.label);
        let want: Vec<f32> = row.probabilities.iter().map(|(_, p)| *p).collect();
        assert_eq!(&probs.as_slice()[i * 3..i * 3 + 3], want.as_slice());
    }
    // Other dims: `set_dims` makes a new string tensor and rebinds it.
    bound.set_dims(&TextDims::from_input_shapes(&[1, 1])?)?;
    bound.inputs().text.fill(&[sentences[2]])?;
    bound.run()?;
    assert_eq!(
        bound.outputs().label.get()?.to_vec(),
        [rows[2].label.clone()]
    );
    Ok(())
}

/// The derive's string input sized by its sentences (`fill_resized`): the binding derives
/// `TextDims` from its inputs before the run, and filling in place afterwards binds nothing.
#[test]
fn sklearn_text_through_the_derive_sized_by_the_sentences() -> ort_bind::Result<()> {
    let (rows, _) = sklearn::text_model();
    let session = session(Text::MODEL_PATH)?;
    let mut bound = Binding::new(&session, Text::allocate(&Cpu, &TextDims::default())?)?;
    let sentences: Vec<&str> = rows.iter().map(|r| r.input.as_str()).collect();
    bound.inputs().text.fill_resized(&sentences)?;
    assert!(bound.inputs_resized());
    bound.run()?;
    assert!(!bound.inputs_resized());
    assert_eq!(
        bound.dims(),
        Some(&TextDims::from_input_shapes(&[rows.len(), 1])?)
    );
    let want: Vec<String> = rows.iter().map(|r| r.label.clone()).collect();
    assert_eq!(bound.outputs().label.get()?.to_vec(), want);
    let binds = bound.binds();
    bound.inputs().text.fill(&sentences)?;
    bound.run()?;
    assert_eq!(bound.binds(), binds, "a fill in place binds nothing");
    assert_eq!(bound.outputs().label.get()?.to_vec(), want);
    Ok(())
}

/// Optionals through the derive (`ort-bind-runtime/tests/data/optionals.onnx`): an
/// optional input, optional tensor and sequence outputs, read only through `get()`.
#[derive(OnnxBinding)]
#[onnx(model = "../ort-bind-runtime/tests/data/optionals.onnx")]
struct Optionals {
    x: Tensor<f32, (Dyn,)>,
    o: ort_bind::Optional<Tensor<f32, AnyRank>>,
    some: ort_bind::Optional<AllocatedOutput<f32, (Dyn,)>>,
    none: ort_bind::Optional<AllocatedOutput<f32, AnyRank>>,
    some_seq: ort_bind::Optional<ort_bind::Sequence<f32>>,
    has: Tensor<bool, ()>,
}

#[test]
fn optionals_through_the_derive() -> ort_bind::Result<()> {
    let session = session(Optionals::MODEL_PATH)?;
    let mut x = Tensor::new("x", &[2])?;
    x.as_mut_slice().copy_from_slice(&[1.5, -2.0]);
    let io = Optionals {
        x,
        o: ort_bind::Optional::none(Tensor::new("o", &[1])?),
        some: ort_bind::Optional::slot(AllocatedOutput::new_in("some", Cpu)),
        none: ort_bind::Optional::slot(AllocatedOutput::new_in("none", Cpu)),
        some_seq: ort_bind::Optional::slot(ort_bind::Sequence::new("some_seq")),
        has: Tensor::new("has", &[])?,
    };
    let mut bound = Binding::new(&session, io)?;
    assert!(bound.outputs().some.get().is_err(), "not run yet");
    bound.run()?;
    let out = bound.outputs();
    assert_eq!(out.some.get()?.expect("a value").as_slice(), &[1.5, -2.0]);
    assert!(out.none.get()?.is_none());
    let seq = out.some_seq.get()?.expect("a value");
    assert_eq!(seq.len(), 2);
    assert_eq!(out.has.as_slice(), &[false]);
    // With a value for `o`: set through `inputs()`, as in a generated module; the next
    // run binds it.
    bound.inputs().o.set_present(true);
    bound.run()?;
    assert_eq!(bound.outputs().has.as_slice(), &[true]);
    bound.inputs().o.set_present(false);
    bound.run()?;
    assert_eq!(bound.outputs().has.as_slice(), &[false]);
    Ok(())
}

/// `allocate()` covers optional inputs too: each starts absent, over an empty placeholder
/// of its declared type, and is made present through `modify`.
#[test]
fn allocate_starts_optional_inputs_absent() -> ort_bind::Result<()> {
    let session = session(Optionals::MODEL_PATH)?;
    let io = Optionals::allocate(&Cpu, &OptionalsDims { n: 2 })?;
    assert!(!io.o.is_present());
    let mut bound = Binding::new(&session, io)?;
    bound.inputs().x.copy_from_slice(&[1.5, -2.0])?;
    bound.run()?;
    assert_eq!(bound.outputs().has.as_slice(), &[false]);
    bound.modify(|io| {
        *io.o.inner_mut() = Tensor::new("o", &[3])?;
        io.o.set_present(true);
        Ok(())
    })?;
    bound.run()?;
    assert_eq!(bound.outputs().has.as_slice(), &[true]);
    Ok(())
}

/// The narrow types through the derive: user-written fields of `ort_bind::narrow` types,
/// checked against `narrow.onnx` at compile time
/// (`tests/ui/types/narrow_wrong_element.rs` has the mistakes), and run for real.
#[derive(OnnxBinding)]
#[onnx(model = "tests/fixtures/narrow.onnx")]
struct NarrowIo {
    x: Tensor<f32, (Fix<5>,)>,
    in_float8e4m3fn: Tensor<ort_bind::Float8E4M3FN, (Fix<5>,)>,
    in_float8e4m3fnuz: Tensor<ort_bind::Float8E4M3FNUZ, (Fix<5>,)>,
    in_float8e5m2: Tensor<ort_bind::Float8E5M2, (Fix<5>,)>,
    in_float8e5m2fnuz: Tensor<ort_bind::Float8E5M2FNUZ, (Fix<5>,)>,
    in_float8e8m0: Tensor<ort_bind::Float8E8M0, (Fix<5>,)>,
    in_int4: Tensor<ort_bind::Int4x2, (Fix<5>,)>,
    in_uint4: Tensor<ort_bind::UInt4x2, (Fix<5>,)>,
    in_int2: Tensor<ort_bind::Int2x4, (Fix<5>,)>,
    in_uint2: Tensor<ort_bind::UInt2x4, (Fix<5>,)>,
    q_float8e4m3fn: Tensor<ort_bind::Float8E4M3FN, (Fix<5>,)>,
    q_int4: Tensor<ort_bind::Int4x2, (Fix<5>,)>,
    d_int4: Tensor<f32, (Fix<5>,)>,
    d_int2: Tensor<f32, (Fix<5>,)>,
}

#[test]
fn narrow_types_bind_through_the_derive() -> ort_bind::Result<()> {
    use ort_bind::Float8E4M3FN;
    let session = session(NarrowIo::MODEL_PATH)?;
    let mut bound = Binding::new(&session, NarrowIo::allocate(&Cpu)?)?;
    {
        let mut i = bound.inputs();
        i.x.copy_from_slice(&[0.3, -1.7, 100.0, 1e9, -3.0625])?;
        i.in_int4.pack_from(&[-8, 7, 0, -1, 5])?;
        i.in_int2.pack_from(&[-2, 1, 0, -1, 1])?;
    }
    bound.run()?;
    let o = bound.outputs();
    // Python onnxruntime's results for the same inputs (tests/reference/narrow.txt).
    let q: Vec<u8> = o
        .q_float8e4m3fn
        .as_slice()
        .iter()
        .map(|v| v.to_bits())
        .collect();
    assert_eq!(q, [0x2a, 0xbe, 0x6c, 0x7e, 0xc4]);
    assert_eq!(
        o.q_float8e4m3fn.as_slice()[1],
        Float8E4M3FN::from_f32(-1.7),
        "ONNX Runtime's Cast and the Rust conversion agree"
    );
    assert_eq!(o.q_int4.unpacked().collect::<Vec<_>>(), [1, -3, 7, 7, -6]);
    assert_eq!(o.d_int4.as_slice(), &[-4.0, 3.5, 0.0, -0.5, 2.5]);
    assert_eq!(o.d_int2.as_slice(), &[-1.0, 0.5, 0.0, -0.5, 0.5]);
    Ok(())
}

// Issue 22, point 2: one way to read each output kind and to fill each input kind,
// whichever route made the struct. The build.rs module of `sklearn_iris.onnx` and a
// derived struct whose fields are named like the module's: the same code (one macro body)
// drives both, so every difference between the routes would fail to compile here.
mod sklearn_iris_module {
    ort_bind::include_bindings!("sklearn_iris");
}

/// The iris classifier through the derive, fields named as the module names them and no
/// `dims` attribute: its dims struct is the module's (`float_input_dim0`).
#[derive(OnnxBinding)]
#[onnx(model = "tests/fixtures/sklearn_iris.onnx")]
struct IrisAsModule {
    float_input: Tensor<f32, (Dyn, Fix<4>)>,
    output_label: ort_bind::StringOutput<(Dyn,)>,
    output_probability: ort_bind::MapSequence<String, f32>,
}

/// Fills, runs and reads a binding of `sklearn_iris.onnx` with the same code whichever
/// route made it: before a run, every output ONNX Runtime allocates reads as
/// `Error::NotRun`; after it, `get()?` borrows it in place.
macro_rules! iris_run_and_read {
    ($binding:expr, $rows:expr) => {{
        let rows = $rows;
        let b = &mut $binding;
        let features: Vec<f32> = rows.iter().flat_map(|r| r.input).collect();
        b.inputs().float_input.copy_from_slice(&features)?;
        let err = b.outputs().output_label.get().unwrap_err();
        assert_eq!(
            err.to_string(),
            "output `output_label` has no value yet: run the binding first"
        );
        assert!(b.outputs().output_probability.get().is_err());
        b.run()?;
        let out = b.outputs();
        let labels = out.output_label.get()?;
        let maps = out.output_probability.get()?;
        labels
            .iter()
            .zip(maps)
            .map(|(l, m)| {
                let pairs: Vec<(String, f32)> = m.iter().map(|(k, v)| (k.to_owned(), v)).collect();
                (l.to_owned(), pairs)
            })
            .collect::<Vec<_>>()
    }};
}

#[test]
fn sklearn_iris_reads_the_same_through_the_module_and_the_derive() -> ort_bind::Result<()> {
    let rows = sklearn::iris();
    // Same model, same dim names, whichever route: `float_input_dim0` in both.
    let module_dims = sklearn_iris_module::Dims {
        float_input_dim0: rows.len(),
    };
    let derive_dims = IrisAsModuleDims {
        float_input_dim0: rows.len(),
    };
    let model = sklearn_iris_module::Model::load()?;
    let mut module = model.bind(module_dims)?;
    let from_module = iris_run_and_read!(module, &rows);

    let session = session(IrisAsModule::MODEL_PATH)?;
    let mut derived = Binding::new(&session, IrisAsModule::allocate(&Cpu, &derive_dims)?)?;
    let from_derive = iris_run_and_read!(derived, &rows);

    assert_eq!(from_module, from_derive);
    for (row, (label, probabilities)) in rows.iter().zip(&from_module) {
        assert_eq!(label, &row.label);
        assert_eq!(probabilities, &row.probabilities);
    }
    Ok(())
}

/// `maps.onnx` through the derive: its map input is filled through `inputs()` as in a
/// generated module (`route_build_rs::generated_maps_in_and_out`), and its outputs (a
/// map, sequences of maps, an `AllocatedOutput`) are read with `get()?`.
#[derive(OnnxBinding)]
#[onnx(model = "../ort-bind-runtime/tests/data/maps.onnx")]
struct Maps {
    probs: Tensor<f32, (Dyn, Fix<3>)>,
    #[onnx(input, name = "m")]
    m: ort_bind::Map<String, f32>,
    by_id: ort_bind::MapSequence<i64, f32>,
    by_name: ort_bind::MapSequence<String, f32>,
    dense: AllocatedOutput<f32, (Fix<1>, Fix<3>)>,
    #[onnx(output, name = "m")]
    m_out: ort_bind::Map<String, f32>,
}

#[test]
fn a_map_input_fills_through_inputs_in_the_derive() -> ort_bind::Result<()> {
    let session = session(Maps::MODEL_PATH)?;
    let mut bound = Binding::new(&session, Maps::allocate(&Cpu, &MapsDims { n: 2 })?)?;
    bound
        .inputs()
        .probs
        .copy_from_slice(&[0.1, 0.2, 0.7, 0.3, 0.3, 0.4])?;
    // Not filled yet: the run names the input, as a generated module's does.
    let err = bound.run().unwrap_err();
    assert!(
        matches!(&err, ort_bind::Error::MissingInput { input } if input == "m"),
        "{err}"
    );
    assert_eq!(bound.inputs().m.name(), "m");
    bound
        .inputs()
        .m
        .set_pairs([("c".to_owned(), 3.0f32), ("a".to_owned(), 1.0)])?;
    bound.run()?;
    let out = bound.outputs();
    assert_eq!(
        out.m_out.get()?.iter().collect::<Vec<_>>(),
        [("a", 1.0), ("c", 3.0)]
    );
    assert_eq!(out.by_name.get()?.get(0).unwrap().get("eel"), Some(0.7));
    assert_eq!(out.by_id.get()?.len(), 2);
    assert_eq!(out.dense.get()?.dims(), &[1, 3]);
    // Refilled in place: the next run binds the new map.
    bound.inputs().m.set_pairs([("z".to_owned(), 5.0f32)])?;
    bound.run()?;
    assert_eq!(
        bound.outputs().m_out.get()?.iter().collect::<Vec<_>>(),
        [("z", 5.0)]
    );
    Ok(())
}

// The recognizer of tests/fixtures/shapes/: `probs` is declared `[unk__1, unk__2, 10]`;
// the graph computes `[batch, floor((w + 5) / 8), 10]`, so the derive's dims are just the
// input's `batch` and `w`, and `probs` is pre-allocated from them.
#[derive(OnnxBinding)]
#[onnx(model = "tests/fixtures/shapes/recognizer.onnx")]
struct Recognizer {
    x: Tensor<f32, (Dyn, Fix<3>, Fix<32>, Dyn)>,
    probs: Tensor<f32, (Dyn, Dyn, Fix<10>)>,
}

#[test]
fn the_derive_sizes_outputs_from_the_graph() -> ort_bind::Result<()> {
    let session = session(Recognizer::MODEL_PATH)?;
    let RecognizerDims { batch, w } = RecognizerDims { batch: 2, w: 100 };
    let mut bound = Binding::new(
        &session,
        Recognizer::allocate(&Cpu, &RecognizerDims { batch, w })?,
    )?;
    bound.inputs().x.fill(0.25);
    bound.run()?;
    assert_eq!(bound.outputs().probs.dims(), &[2, 13, 10]);
    // Each position's probabilities sum to 1 (a softmax).
    let sum: f32 = bound.outputs().probs.as_slice()[..10].iter().sum();
    assert!((sum - 1.0).abs() < 1e-5, "{sum}");
    bound.set_dims(&RecognizerDims { batch: 1, w: 37 })?;
    bound.run()?;
    assert_eq!(bound.outputs().probs.dims(), &[1, 5, 10]);
    Ok(())
}
