//! Integration tests: real inference on CPU through bindings that the root
//! `build.rs` generated from the fixture models (see `tests/fixtures/README.md`).

mod add {
    ort_bind::include_bindings!("add");
}
mod add16 {
    ort_bind::include_bindings!("add16");
}
mod messy {
    ort_bind::include_bindings!("messy");
}
mod scalar {
    ort_bind::include_bindings!("scalar");
}
mod alltypes {
    ort_bind::include_bindings!("alltypes");
}
mod ir3 {
    ort_bind::include_bindings!("ir3_init_as_input");
}
mod external {
    ort_bind::include_bindings!("external");
}
mod state {
    ort_bind::include_bindings!("state");
}

use ort_bind::{Error, bf16, f16};

#[test]
fn add_runs_in_place() -> ort_bind::Result<()> {
    let model = add::Model::load()?;
    let mut binding = model.bind(add::Dims { n: 4 })?;
    binding.inputs().x.copy_from_slice(&[1.0, 2.0, 3.0, 4.0])?;
    binding.inputs().y.fill(10.0);
    binding.run()?;
    assert_eq!(binding.outputs().sum.as_slice(), &[11.0, 12.0, 13.0, 14.0]);
    // Inputs keep their values between runs: change one and run again.
    binding.inputs().y.fill(-1.0);
    binding.run()?;
    assert_eq!(binding.outputs().sum.as_slice(), &[0.0, 1.0, 2.0, 3.0]);
    Ok(())
}

/// The data gives the size once: `fill_resized` sizes each input's one dynamic axis from its
/// data, and the binding derives its dims (and so every output's shape) from the inputs
/// before the next run.
#[test]
fn inputs_sized_by_their_data_size_the_binding() -> ort_bind::Result<()> {
    let model = add::Model::load()?;
    let mut binding = model.bind(add::Dims::default())?;
    assert_eq!(binding.dims().n, 0);
    binding.inputs().x.fill_resized(&[1.0, 2.0, 3.0])?;
    binding.inputs().y.fill_resized(&[10.0, 20.0, 30.0])?;
    binding.run()?;
    assert_eq!(binding.dims().n, 3);
    assert_eq!(binding.outputs().sum.as_slice(), &[11.0, 22.0, 33.0]);
    // Inputs that disagree: the run is an error naming the dim, and runs nothing.
    binding
        .inputs()
        .x
        .fill_resized(&[1.0, 2.0, 3.0, 4.0, 5.0])?;
    let err = binding.run().unwrap_err();
    assert!(
        matches!(&err, Error::Dim { dim, .. } if dim == "n"),
        "{err}"
    );
    assert!(err.to_string().contains("says 5"), "{err}");
    // Fixed by giving the other input the same size.
    binding.inputs().y.set(&[5], &[1.0; 5])?;
    binding.run()?;
    assert_eq!(binding.dims().n, 5);
    assert_eq!(binding.outputs().sum.as_slice(), &[2.0, 3.0, 4.0, 5.0, 6.0]);
    // Back to 3 (a shape bucket kept for it), then filled in place as before.
    binding.inputs().x.fill_resized(&[0.5; 3])?;
    binding.inputs().y.fill_resized(&[0.25; 3])?;
    binding.run()?;
    assert_eq!(binding.outputs().sum.as_slice(), &[0.75; 3]);
    binding.inputs().x.fill(1.0);
    binding.run()?;
    assert_eq!(binding.outputs().sum.as_slice(), &[1.25; 3]);
    // `set_dims` after a view's change replaces it.
    binding.inputs().x.fill_resized(&[1.0; 7])?;
    binding.set_dims(add::Dims { n: 3 })?;
    assert_eq!(binding.inputs().x.dims(), &[3]);
    binding.inputs().x.fill(2.0);
    binding.run()?;
    assert_eq!(binding.outputs().sum.as_slice(), &[2.25; 3]);
    // A wrong count for `set` changes nothing.
    let err = binding.inputs().x.set(&[4], &[1.0; 3]).unwrap_err();
    assert!(
        matches!(&err, Error::Length { tensor, .. } if tensor == "x"),
        "{err}"
    );
    assert_eq!(binding.inputs().x.dims(), &[3]);
    Ok(())
}

#[test]
fn outputs_are_read_in_place_from_the_bound_buffer() -> ort_bind::Result<()> {
    let model = add16::Model::load()?;
    let mut binding = model.bind(add16::Dims {})?;
    let before = binding.outputs().out.as_slice().as_ptr();
    let a: Vec<f32> = (0..16).map(|i| i as f32).collect();
    binding.inputs().a.copy_from_slice(&a)?;
    binding.inputs().b.fill(0.5);
    binding.run()?;
    let out = binding.outputs().out;
    // Same buffer before and after the run: ONNX Runtime wrote into our memory.
    assert_eq!(out.as_slice().as_ptr(), before);
    let want: Vec<f32> = a.iter().map(|v| v + 0.5).collect();
    assert_eq!(out.as_slice(), want.as_slice());
    assert_eq!(out.dims(), &[16]);
    Ok(())
}

#[test]
fn wrong_length_is_an_error_naming_the_tensor() -> ort_bind::Result<()> {
    let model = add::Model::load()?;
    let mut binding = model.bind(add::Dims { n: 3 })?;
    let err = binding.inputs().x.copy_from_slice(&[1.0, 2.0]).unwrap_err();
    match &err {
        Error::Length {
            tensor,
            expected,
            found,
            ..
        } => {
            assert_eq!((tensor.as_str(), *expected, *found), ("x", 3, 2));
        }
        other => panic!("unexpected error {other:?}"),
    }
    assert!(err.to_string().contains("`x`"), "{err}");
    Ok(())
}

#[test]
fn messy_names_bind_and_run() -> ort_bind::Result<()> {
    let model = messy::Model::load()?;
    let mut b = model.bind(messy::Dims {
        batch: 2,
        type_dim0: 1,
        v_1x_dim0: 2,
        save_infer_model_scale_0_tmp_1_dim1: 5,
    })?;
    {
        let mut i = b.inputs();
        i.gpu_0_data_0
            .copy_from_slice(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0])?;
        i.r#type.copy_from_slice(&[0.0])?;
        i.v_1x.copy_from_slice(&[1.0, -2.0])?;
        i.save_infer_model_scale_0_tmp_1.fill(1.0);
        i.a_b.copy_from_slice(&[1.0, 2.0, 3.0, 4.0])?;
        i.a_b_2.copy_from_slice(&[10.0, 20.0, 30.0, 40.0])?;
        i.step.copy_from_slice(&[7])?;
        let h: Vec<f16> = [1.0f32, 2.0, 3.0, 4.0].map(f16::from_f32).to_vec();
        i.half.copy_from_slice(&h)?;
    }
    b.run()?;
    let o = b.outputs();
    assert_eq!(
        o.gpu_0_softmax_1.as_slice(),
        &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    );
    // Declared with unnamed axes; sized as the graph computes them.
    assert_eq!(o.sigmoid_0_tmp_0.as_slice(), &[0.5]);
    assert_eq!(o.out_1x.as_slice(), &[-1.0, 2.0]);
    assert_eq!(o.save_infer_model_scale_1_tmp_1.as_slice(), &[1.0; 10]);
    assert_eq!(o.a_b.as_slice(), &[11.0, 22.0, 33.0, 44.0]);
    assert_eq!(o.self_.as_slice(), &[7]);
    assert_eq!(o.self_.dims(), &[] as &[usize]);
    let h: Vec<f32> = o.half_out.as_slice().iter().map(|v| v.to_f32()).collect();
    assert_eq!(h, [1.0, 2.0, 3.0, 4.0]);
    Ok(())
}

#[test]
fn scalar_input_and_output() -> ort_bind::Result<()> {
    let model = scalar::Model::load()?;
    let mut b = model.bind(scalar::Dims {})?;
    b.inputs().x.copy_from_slice(&[1.25])?;
    b.run()?;
    assert_eq!(b.outputs().y.as_slice(), &[2.5]);
    assert!(b.outputs().y.dims().is_empty());
    Ok(())
}

#[test]
fn every_element_type_round_trips() -> ort_bind::Result<()> {
    let model = alltypes::Model::load()?;
    let mut b = model.bind(alltypes::Dims {})?;
    {
        let mut i = b.inputs();
        i.x_float32.copy_from_slice(&[1.5, -2.0])?;
        i.x_float64.copy_from_slice(&[1.5, -2.0])?;
        i.x_float16
            .copy_from_slice(&[f16::from_f32(1.5), f16::from_f32(-2.0)])?;
        i.x_bfloat16
            .copy_from_slice(&[bf16::from_bits(0x3FC0), bf16::from_bits(0xC000)])?;
        i.x_int8.copy_from_slice(&[i8::MIN, i8::MAX])?;
        i.x_int16.copy_from_slice(&[i16::MIN, i16::MAX])?;
        i.x_int32.copy_from_slice(&[i32::MIN, i32::MAX])?;
        i.x_int64.copy_from_slice(&[i64::MIN, i64::MAX])?;
        i.x_uint8.copy_from_slice(&[0, u8::MAX])?;
        i.x_uint16.copy_from_slice(&[0, u16::MAX])?;
        i.x_uint32.copy_from_slice(&[0, u32::MAX])?;
        i.x_uint64.copy_from_slice(&[0, u64::MAX])?;
        i.x_bool.copy_from_slice(&[true, false])?;
    }
    b.run()?;
    let o = b.outputs();
    assert_eq!(o.y_float32.as_slice(), &[1.5, -2.0]);
    assert_eq!(o.y_float64.as_slice(), &[1.5, -2.0]);
    assert_eq!(o.y_float16.as_slice()[1].to_f32(), -2.0);
    assert_eq!(o.y_bfloat16.as_slice()[0].to_bits(), 0x3FC0);
    assert_eq!(o.y_int8.as_slice(), &[i8::MIN, i8::MAX]);
    assert_eq!(o.y_int16.as_slice(), &[i16::MIN, i16::MAX]);
    assert_eq!(o.y_int32.as_slice(), &[i32::MIN, i32::MAX]);
    assert_eq!(o.y_int64.as_slice(), &[i64::MIN, i64::MAX]);
    assert_eq!(o.y_uint8.as_slice(), &[0, u8::MAX]);
    assert_eq!(o.y_uint16.as_slice(), &[0, u16::MAX]);
    assert_eq!(o.y_uint32.as_slice(), &[0, u32::MAX]);
    assert_eq!(o.y_uint64.as_slice(), &[0, u64::MAX]);
    assert_eq!(o.y_bool.as_slice(), &[true, false]);
    Ok(())
}

#[test]
fn initializers_listed_as_inputs_are_not_inputs() -> ort_bind::Result<()> {
    let model = ir3::Model::load()?;
    let mut b = model.bind(ir3::Dims {})?;
    b.inputs().x.copy_from_slice(&[1.0, 2.0, 3.0])?;
    b.run()?;
    assert_eq!(b.outputs().y.as_slice(), &[11.0, 22.0, 33.0]);
    Ok(())
}

#[test]
fn external_data_models_run() -> ort_bind::Result<()> {
    let model = external::Model::load()?;
    let mut b = model.bind(external::Dims {})?;
    b.inputs().x.fill(0.5);
    b.run()?;
    assert_eq!(b.outputs().y.as_slice(), &[1.5, 2.5, 3.5, 4.5]);
    Ok(())
}

#[test]
fn state_feeds_back_without_copy() -> ort_bind::Result<()> {
    let model = state::Model::load()?;
    let mut b = model.bind(state::Dims {})?;
    b.inputs().x.copy_from_slice(&[1.0, 2.0, 3.0, 4.0])?;
    let s0: Vec<f32> = (0..16).map(|v| v as f32).collect();
    b.inputs().state.copy_from_slice(&s0)?;
    b.run()?;
    let s1: Vec<f32> = s0.iter().map(|v| v + 10.0).collect();
    assert_eq!(b.outputs().state_n.as_slice(), s1.as_slice());
    let out_ptr = b.outputs().state_n.as_slice().as_ptr();
    b.feed_state_n_into_state()?;
    // The input now owns the buffer the output was written into: no copy happened.
    assert_eq!(b.inputs().state.as_slice().as_ptr(), out_ptr);
    assert_eq!(b.inputs().state.as_slice(), s1.as_slice());
    b.run()?;
    let s2: Vec<f32> = s1.iter().map(|v| v + 10.0).collect();
    assert_eq!(b.outputs().state_n.as_slice(), s2.as_slice());
    Ok(())
}

#[test]
fn a_model_that_does_not_match_the_bindings_is_rejected() {
    let err = add::Model::from_file(
        "tests/fixtures/add16.onnx",
        &ort_bind::SessionOptions::new(),
    )
    .unwrap_err();
    assert!(matches!(err, Error::SignatureMismatch { .. }), "{err:?}");
    assert!(err.to_string().contains("no input `x`"), "{err}");
}

#[test]
fn a_missing_model_file_is_an_error() {
    let err = add::Model::from_file("tests/fixtures/nope.onnx", &ort_bind::SessionOptions::new())
        .unwrap_err();
    assert!(err.to_string().contains("nope.onnx"), "{err}");
}

#[test]
fn codegen_library_writes_what_build_rs_wrote() {
    // `ort-bind generate` prints what the library returns (ort-bind-cli's tests check it).
    let modules = ort_bind_codegen::Builder::new()
        .model("tests/fixtures/messy.onnx")
        .generate()
        .expect("codegen");
    let written = std::fs::read_to_string(concat!(env!("OUT_DIR"), "/ort-bind/messy.rs"))
        .expect("build.rs wrote messy.rs");
    assert_eq!(modules[0].source, written);
}

mod sklearn;
mod sklearn_iris {
    ort_bind::include_bindings!("sklearn_iris");
}
mod sklearn_text {
    ort_bind::include_bindings!("sklearn_text");
}

/// The skl2onnx iris classifier (string labels, ZipMap's `seq(map(string, float32))`)
/// through build-time codegen: labels and every probability equal to Python
/// onnxruntime's, bit for bit, over two runs of the same binding.
#[test]
fn sklearn_iris_classifier_equals_python() -> ort_bind::Result<()> {
    let rows = sklearn::iris();
    let model = sklearn_iris::Model::load()?;
    let mut binding = model.bind(sklearn_iris::Dims {
        float_input_dim0: rows.len(),
    })?;
    let err = binding.outputs().output_label.get().unwrap_err();
    assert!(
        err.to_string()
            .contains("output `output_label` has no value yet: run the binding first"),
        "{err}"
    );
    let features: Vec<f32> = rows.iter().flat_map(|r| r.input).collect();
    binding.inputs().float_input.copy_from_slice(&features)?;
    for _ in 0..2 {
        binding.run()?;
        let out = binding.outputs();
        let labels = out.output_label.get()?;
        assert_eq!(labels.dims(), &[rows.len()]);
        let maps = out.output_probability.get()?;
        assert_eq!(maps.len(), rows.len());
        for ((row, label), map) in rows.iter().zip(labels).zip(maps) {
            assert_eq!(label, row.label);
            let got: Vec<(String, f32)> = map.iter().map(|(k, v)| (k.to_owned(), v)).collect();
            assert_eq!(got, row.probabilities, "row {:?}", row.input);
        }
    }
    // One row: new dims, the outputs follow. (Python ran the rows as one batch; one row
    // alone goes through another GEMM path, which may round the last bit differently.)
    binding.set_dims(sklearn_iris::Dims {
        float_input_dim0: 1,
    })?;
    binding
        .inputs()
        .float_input
        .copy_from_slice(&rows[2].input)?;
    binding.run()?;
    let out = binding.outputs();
    assert_eq!(out.output_label.get()?.to_vec(), [rows[2].label.clone()]);
    let hm = out.output_probability.get()?.get(0).unwrap().to_hash_map();
    assert!((hm["versicolor"] - rows[2].probabilities[1].1).abs() <= 1e-6);
    Ok(())
}

/// The skl2onnx text pipeline (TfidfVectorizer + LogisticRegression) on a string tensor
/// input `[N, 1]`: labels and probabilities equal to Python onnxruntime's.
#[test]
fn sklearn_text_pipeline_equals_python() -> ort_bind::Result<()> {
    let (rows, classes) = sklearn::text_model();
    assert_eq!(classes, ["finance", "sport", "tech"]);
    let model = sklearn_text::Model::load()?;
    let dims = sklearn_text::Dims::from_input_shapes(&[rows.len(), 1])?;
    let mut binding = model.bind(dims)?;
    assert_eq!(binding.inputs().text.dims(), &[rows.len(), 1]);
    let sentences: Vec<&str> = rows.iter().map(|r| r.input.as_str()).collect();
    binding.inputs().text.fill(&sentences)?;
    binding.run()?;
    let out = binding.outputs();
    let labels = out.label.get()?;
    let probs = out.probabilities.get()?;
    assert_eq!(probs.dims(), &[rows.len(), 3]);
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(&labels[i], row.label, "{:?}", row.input);
        let want: Vec<f32> = row.probabilities.iter().map(|(_, p)| *p).collect();
        assert_eq!(
            &probs.as_slice()[i * 3..i * 3 + 3],
            want.as_slice(),
            "{:?}",
            row.input
        );
    }
    // A wrong number of strings is an error naming the input, not a truncation.
    let err = binding.inputs().text.fill(&["one"]).unwrap_err();
    assert!(
        matches!(&err, Error::Length { tensor, .. } if tensor == "text"),
        "{err}"
    );
    // Fewer sentences: `set_dims` makes a new string tensor and binds it.
    binding.set_dims(sklearn_text::Dims::from_input_shapes(&[2, 1])?)?;
    binding.inputs().text.fill(&sentences[..2])?;
    binding.run()?;
    let labels = binding.outputs().label.get()?.to_vec();
    assert_eq!(labels, [rows[0].label.clone(), rows[1].label.clone()]);
    // Back to the first size: still right (a fresh tensor, bound again).
    binding.set_dims(dims)?;
    binding.inputs().text.fill(&sentences)?;
    binding.run()?;
    assert_eq!(binding.outputs().label.get()?.len(), rows.len());
    assert_eq!(&binding.outputs().label.get()?[4], rows[4].label);
    Ok(())
}

/// The text pipeline with the number of sentences given once, by the sentences:
/// `fill_resized` makes the `[N, 1]` string tensor, the binding follows before the run.
#[test]
fn sklearn_text_rows_come_from_the_sentences() -> ort_bind::Result<()> {
    let (rows, _) = sklearn::text_model();
    let model = sklearn_text::Model::load()?;
    let mut binding = model.bind(sklearn_text::Dims::default())?;
    let sentences: Vec<&str> = rows.iter().map(|r| r.input.as_str()).collect();
    binding.inputs().text.fill_resized(&sentences)?;
    binding.run()?;
    assert_eq!(binding.dims().text_dim0, rows.len());
    let labels = binding.outputs().label.get()?.to_vec();
    let want: Vec<String> = rows.iter().map(|r| r.label.clone()).collect();
    assert_eq!(labels, want);
    assert_eq!(
        binding.outputs().probabilities.get()?.dims(),
        &[rows.len(), 3]
    );
    // Two sentences, then back to all of them before any run: each change is a new string
    // tensor, and the binding binds what the inputs hold at the run.
    binding.inputs().text.fill_resized(&sentences[..2])?;
    binding.run()?;
    assert_eq!(binding.outputs().label.get()?.to_vec(), want[..2]);
    binding.inputs().text.fill_resized(&sentences[3..4])?;
    binding.inputs().text.fill_resized(&sentences[2..4])?;
    binding.run()?;
    assert_eq!(binding.outputs().label.get()?.to_vec(), want[2..4]);
    binding.inputs().text.fill_resized(&sentences[4..])?;
    binding.run()?;
    assert_eq!(binding.outputs().label.get()?.to_vec(), want[4..]);
    Ok(())
}

/// A numeric input `[?, 4]` sized by its data: 4 values a row.
#[test]
fn sklearn_iris_rows_come_from_the_data() -> ort_bind::Result<()> {
    let rows = sklearn::iris();
    let model = sklearn_iris::Model::load()?;
    let mut binding = model.bind(sklearn_iris::Dims::default())?;
    let flat: Vec<f32> = rows.iter().flat_map(|r| r.input.iter().copied()).collect();
    binding.inputs().float_input.fill_resized(&flat)?;
    binding.run()?;
    let labels = binding.outputs().output_label.get()?.to_vec();
    let want: Vec<String> = rows.iter().map(|r| r.label.clone()).collect();
    assert_eq!(labels, want);
    // Not whole rows: an error before anything changes.
    let err = binding
        .inputs()
        .float_input
        .fill_resized(&flat[..6])
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("6 elements do not fill whole slices of 4"),
        "{err}"
    );
    assert_eq!(binding.inputs().float_input.dims(), &[rows.len(), 4]);
    Ok(())
}

mod sequences {
    ort_bind::include_bindings!("sequences");
}
mod maps {
    ort_bind::include_bindings!("maps");
}
mod optionals {
    ort_bind::include_bindings!("optionals");
}

/// Sequence inputs and outputs through a generated module
/// (`ort-bind-runtime/tests/data/sequences.onnx`): a sequence input is set whole and
/// bound; running without it is an error naming it; outputs are read as typed views.
#[test]
fn generated_sequences_in_and_out() -> ort_bind::Result<()> {
    let model = sequences::Model::load()?;
    let mut binding = model.bind(sequences::Dims { n: 3, m: 2, k: 2 })?;
    binding.inputs().x.copy_from_slice(&[1.0, 2.0, 3.0])?;
    binding.inputs().y.copy_from_slice(&[4.0, 5.0])?;
    binding.inputs().text.fill(&["a", "bc"])?;
    assert!(binding.inputs().s.is_empty());
    let err = binding.run().unwrap_err();
    assert!(
        matches!(&err, Error::MissingInput { input } if input == "s"),
        "{err}"
    );
    // The serving methods check the same: a timed run, and an asynchronous one (whose
    // future resolves to the error without starting a run).
    let err = binding
        .run_with_timeout(std::time::Duration::from_secs(60))
        .unwrap_err();
    assert!(
        matches!(&err, Error::MissingInput { input } if input == "s"),
        "{err}"
    );
    let err = futures_executor::block_on(binding.run_async()).unwrap_err();
    assert!(
        matches!(&err, Error::MissingInput { input } if input == "s"),
        "{err}"
    );
    let err = futures_executor::block_on(
        binding.run_async_with_timeout(std::time::Duration::from_secs(60)),
    )
    .unwrap_err();
    assert!(
        matches!(&err, Error::MissingInput { input } if input == "s"),
        "{err}"
    );
    binding
        .inputs()
        .s
        .set_arrays([(&[2][..], &[7.0f32, 8.0][..]), (&[1][..], &[9.0][..])])?;
    binding.run()?;
    let out = binding.outputs();
    let pair: Vec<Vec<f32>> = out.pair.get()?.iter().map(|t| t.to_vec()).collect();
    assert_eq!(pair, [vec![1.0, 2.0, 3.0], vec![4.0, 5.0]]);
    assert_eq!(out.pieces.get()?.len(), 3);
    let echo: Vec<Vec<f32>> = out.echo.get()?.iter().map(|t| t.to_vec()).collect();
    assert_eq!(echo, [vec![7.0, 8.0], vec![9.0]]);
    let words: Vec<Vec<String>> = out.words.get()?.iter().map(|s| s.to_vec()).collect();
    assert_eq!(words, [vec!["a".to_owned()], vec!["bc".to_owned()]]);
    Ok(())
}

/// Maps through a generated module (`maps.onnx`): a map input filled in place through
/// `inputs()` like a tensor (named after the model input, refilled between runs), a map
/// output sorted by key as ONNX Runtime keeps it, and sequences of maps.
#[test]
fn generated_maps_in_and_out() -> ort_bind::Result<()> {
    let model = maps::Model::load()?;
    let mut binding = model.bind(maps::Dims { n: 2 })?;
    binding
        .inputs()
        .probs
        .copy_from_slice(&[0.1, 0.2, 0.7, 0.3, 0.3, 0.4])?;
    // Not filled yet: a run names the input.
    let err = binding.run().unwrap_err();
    assert!(
        matches!(&err, Error::MissingInput { input } if input == "m"),
        "{err}"
    );
    // Filled in place, the same way as a tensor input; the map is the model input's.
    assert_eq!(binding.inputs().m.name(), "m");
    binding
        .inputs()
        .m
        .set_pairs([("c".to_owned(), 3.0f32), ("a".to_owned(), 1.0)])?;
    binding.run()?;
    let out = binding.outputs();
    let by_id: Vec<Vec<(i64, f32)>> = out
        .by_id
        .get()?
        .iter()
        .map(|m| m.iter().collect())
        .collect();
    assert_eq!(
        by_id,
        [
            vec![(10, 0.1), (20, 0.2), (30, 0.7)],
            vec![(10, 0.3), (20, 0.3), (30, 0.4)]
        ]
    );
    assert_eq!(out.by_name.get()?.get(0).unwrap().get("eel"), Some(0.7));
    assert_eq!(
        out.m.get()?.iter().collect::<Vec<_>>(),
        [("a", 1.0), ("c", 3.0)]
    );
    // Filled again with other entries: the next run binds the new map.
    binding.inputs().m.set_pairs([("b".to_owned(), 2.0f32)])?;
    binding.run()?;
    assert_eq!(
        binding.outputs().m.get()?.iter().collect::<Vec<_>>(),
        [("b", 2.0)]
    );
    // A duplicate key is an error naming the input.
    let err = binding
        .inputs()
        .m
        .set_pairs([("b".to_owned(), 1.0f32), ("b".to_owned(), 2.0)])
        .unwrap_err();
    assert!(err.to_string().contains("`m`"), "{err}");
    Ok(())
}

/// Optionals through a generated module (`optionals.onnx`): an optional input left unset
/// is absent; outputs are read through `get()`, which makes absence a case to handle.
#[test]
fn generated_optionals() -> ort_bind::Result<()> {
    let model = optionals::Model::load()?;
    let mut binding = model.bind(optionals::Dims { n: 2 })?;
    binding.inputs().x.copy_from_slice(&[1.5, -2.0])?;
    binding.run()?; // `o` unset: absent
    let out = binding.outputs();
    assert_eq!(out.some.get()?.expect("a value").as_slice(), &[1.5, -2.0]);
    assert!(out.none.get()?.is_none());
    assert_eq!(out.some_seq.get()?.expect("a value").len(), 2);
    assert_eq!(out.has.as_slice(), &[false]);
    let mut o = ort_bind::Tensor::new("o", &[1])?;
    o.as_mut_slice()[0] = 4.0;
    *binding.inputs().o = ort_bind::Optional::some(o);
    binding.run()?;
    assert_eq!(binding.outputs().has.as_slice(), &[true]);
    Ok(())
}
