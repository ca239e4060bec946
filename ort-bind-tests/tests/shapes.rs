//! Outputs sized by shape inference: models whose outputs are declared `?` or with fresh
//! symbols (`unk__1`, `p2o.DynamicDimension.4`) as real exporters write them, although the
//! graph computes their sizes from the inputs' dims. Every output is pre-allocated (a
//! `Tensor`, not an `AllocatedOutput`: the types below would not compile otherwise), bound
//! once, and equals Python onnxruntime's results for two input sizes in one binding.
//!
//! Fixtures: `tests/fixtures/shapes/` (README there: each model and its true output
//! shapes); expected outputs: `tests/reference/shapes.txt`, both written by
//! `tests/fixtures/shapes/make_shape_fixtures.py` and `tests/reference/shapes_reference.py`
//! with onnxruntime 1.31.1.

use ort_bind::{BindingIo, Cpu, Dyn, Fix, TensorRef};

mod recognizer {
    ort_bind::include_bindings!("recognizer");
}
mod detector {
    ort_bind::include_bindings!("detector");
}
mod audio_encoder {
    ort_bind::include_bindings!("audio_encoder");
}
mod transformer_block {
    ort_bind::include_bindings!("transformer_block");
}
mod decoder_logits {
    ort_bind::include_bindings!("decoder_logits");
}
mod recurrent_if {
    ort_bind::include_bindings!("recurrent_if");
}
mod wrong_rank {
    ort_bind::include_bindings!("wrong_rank");
}

/// One tensor of a case: dims and values (floats as `f64`, integers and bools as `i64`).
#[derive(Debug, Clone)]
struct Record {
    dims: Vec<usize>,
    values: Vec<f64>,
}

/// One run of one model: its inputs and Python onnxruntime's outputs, by name.
#[derive(Debug, Default)]
struct Case {
    inputs: Vec<(String, Record)>,
    outputs: Vec<(String, Record)>,
}

impl Case {
    fn input(&self, name: &str) -> &Record {
        &self.inputs.iter().find(|(n, _)| n == name).unwrap().1
    }
    fn output(&self, name: &str) -> &Record {
        &self.outputs.iter().find(|(n, _)| n == name).unwrap().1
    }
}

/// The cases of `model` in `tests/reference/shapes.txt`.
fn cases(model: &str) -> Vec<Case> {
    let text = std::fs::read_to_string(ort_bind_tests::paths::reference("shapes.txt")).unwrap();
    let mut out: Vec<Case> = Vec::new();
    let mut current: Option<Case> = None;
    for line in text.lines() {
        let mut words = line.split_whitespace();
        match words.next() {
            Some("case") => {
                out.extend(current.take());
                if words.next() == Some(model) {
                    current = Some(Case::default());
                }
            }
            Some(kind @ ("input" | "output")) => {
                let Some(case) = current.as_mut() else {
                    continue;
                };
                let name = words.next().unwrap().to_owned();
                let _dtype = words.next().unwrap();
                let rank: usize = words.next().unwrap().parse().unwrap();
                let dims: Vec<usize> = (0..rank)
                    .map(|_| words.next().unwrap().parse().unwrap())
                    .collect();
                let values: Vec<f64> = words.map(|w| w.parse().unwrap()).collect();
                let r = Record { dims, values };
                if kind == "input" {
                    case.inputs.push((name, r));
                } else {
                    case.outputs.push((name, r));
                }
            }
            _ => {}
        }
    }
    out.extend(current);
    assert!(!out.is_empty(), "no case of {model} in shapes.txt");
    out
}

fn f32s(r: &Record) -> Vec<f32> {
    r.values.iter().map(|&v| v as f32).collect()
}

/// The output equals Python's: same dims, values within float tolerance.
#[track_caller]
fn check<S: ort_bind::Shape>(name: &str, got: TensorRef<'_, f32, S, Cpu>, want: &Record) {
    assert_eq!(got.dims(), want.dims.as_slice(), "`{name}` dims");
    for (k, (g, w)) in got.as_slice().iter().zip(&want.values).enumerate() {
        assert!(
            (f64::from(*g) - w).abs() <= 1e-4 + 1e-4 * w.abs(),
            "`{name}`[{k}]: {g} vs {w}"
        );
    }
}

#[test]
fn a_recognizers_sequence_axis_is_sized_from_the_width() -> ort_bind::Result<()> {
    const { assert!(!<recognizer::Io<Cpu> as BindingIo>::HAS_ALLOCATED_OUTPUTS) };
    let model = recognizer::Model::load()?;
    let mut binding = None;
    for case in cases("recognizer") {
        let x = case.input("x");
        let dims = recognizer::Dims::from_input_shapes(&x.dims)?;
        let b = match binding.as_mut() {
            None => binding.insert(model.bind(dims)?),
            Some(b) => {
                b.set_dims(dims)?;
                b
            }
        };
        b.inputs().x.copy_from_slice(&f32s(x))?;
        b.run()?;
        let probs: TensorRef<'_, f32, (Dyn, Dyn, Fix<10>)> = b.outputs().probs;
        check("probs", probs, case.output("probs"));
    }
    Ok(())
}

#[test]
fn a_detectors_map_returns_to_the_input_size() -> ort_bind::Result<()> {
    let model = detector::Model::load()?;
    for case in cases("detector") {
        let x = case.input("x");
        let mut b = model.bind(detector::Dims::from_input_shapes(&x.dims)?)?;
        b.inputs().x.copy_from_slice(&f32s(x))?;
        b.run()?;
        check("maps", b.outputs().maps, case.output("maps"));
    }
    Ok(())
}

#[test]
fn a_stride_two_encoder_halves_the_frames() -> ort_bind::Result<()> {
    let model = audio_encoder::Model::load()?;
    for case in cases("audio_encoder") {
        let x = case.input("features");
        let mut b = model.bind(audio_encoder::Dims::from_input_shapes(&x.dims)?)?;
        b.inputs().features.copy_from_slice(&f32s(x))?;
        b.run()?;
        check("hidden", b.outputs().hidden, case.output("hidden"));
    }
    Ok(())
}

#[test]
fn a_transformer_block_reshapes_through_shape_gather_concat() -> ort_bind::Result<()> {
    let model = transformer_block::Model::load()?;
    for case in cases("transformer_block") {
        let h = case.input("h");
        let mut b = model.bind(transformer_block::Dims::from_input_shapes(&h.dims)?)?;
        b.inputs().h.copy_from_slice(&f32s(h))?;
        b.run()?;
        let o = b.outputs();
        check("out", o.out, case.output("out"));
        check("attn", o.attn, case.output("attn"));
    }
    Ok(())
}

#[test]
fn decoder_logits_declared_open_are_batch_by_sequence() -> ort_bind::Result<()> {
    let model = decoder_logits::Model::load()?;
    for case in cases("decoder_logits") {
        let ids = case.input("input_ids");
        let mut b = model.bind(decoder_logits::Dims::from_input_shapes(&ids.dims)?)?;
        let values: Vec<i64> = ids.values.iter().map(|&v| v as i64).collect();
        b.inputs().input_ids.copy_from_slice(&values)?;
        b.run()?;
        let o = b.outputs();
        check("logits", o.logits, case.output("logits"));
        check("last", o.last, case.output("last"));
    }
    Ok(())
}

#[test]
fn an_if_whose_branches_agree_and_an_lstm_are_sized() -> ort_bind::Result<()> {
    let model = recurrent_if::Model::load()?;
    for case in cases("recurrent_if") {
        let (x, state, flag) = (case.input("x"), case.input("state"), case.input("flag"));
        let dims = recurrent_if::Dims::from_input_shapes(&x.dims, &state.dims, &[])?;
        let mut b = model.bind(dims)?;
        {
            let mut i = b.inputs();
            i.x.copy_from_slice(&f32s(x))?;
            i.state.copy_from_slice(&f32s(state))?;
            i.flag.fill(flag.values[0] != 0.0);
        }
        b.run()?;
        let o = b.outputs();
        check("stateN", o.state_n, case.output("stateN"));
        // Declared `[?, ?, ?, ?]`: the axes the graph fixes are typed so.
        let lstm_y: TensorRef<'_, f32, (Fix<1>, Fix<1>, Dyn, Fix<8>)> = o.lstm_y;
        check("lstm_y", lstm_y, case.output("lstm_y"));
    }
    Ok(())
}

#[test]
fn outputs_declared_wrong_are_typed_and_sized_as_the_graph_computes() -> ort_bind::Result<()> {
    let model = wrong_rank::Model::load()?;
    for case in cases("wrong_rank") {
        let x = case.input("x");
        let mut b = model.bind(wrong_rank::Dims::from_input_shapes(&x.dims)?)?;
        b.inputs().x.copy_from_slice(&f32s(x))?;
        b.run()?;
        let o = b.outputs();
        // Declared `[n, 4, 1]`: rank 2 as computed, its constant axis typed `Fix<4>`.
        let y: TensorRef<'_, f32, (Dyn, Fix<4>)> = o.y;
        check("y", y, case.output("y"));
        // Declared `[5]`: ONNX Runtime refuses a pre-allocated `[n]` that breaks the
        // declaration, so it allocates `z`, typed `[n]`-shaped (`Dyn`) as computed.
        let z: TensorRef<'_, f32, (Dyn,)> = o.z.get()?;
        check("z", z, case.output("z"));
    }
    Ok(())
}

/// The run-time net: where ONNX Runtime computes another shape than the one inference
/// pre-allocated, the run fails naming the output and both shapes, never wrong data. The
/// recognizer's max pool over a width-1 map is such a case: ONNX Runtime divides with C
/// truncation there (`(1 - 2) / 2 + 1 = 1`), where ONNX's formula, and inference, floor
/// (`0`); a width of 1 or 2 therefore gets an error, and any other width runs.
#[test]
fn a_shape_onnx_runtime_computes_otherwise_is_an_error_naming_the_output() -> ort_bind::Result<()> {
    let model = recognizer::Model::load()?;
    let mut b = model.bind(recognizer::Dims::from_input_shapes(&[1, 3, 32, 1])?)?;
    assert_eq!(b.outputs().probs.dims(), &[1, 0, 10]);
    let err = b.run().unwrap_err();
    let text = err.to_string();
    assert!(text.contains("probs"), "{text}");
    // The binding runs again at a size where the two agree.
    b.set_dims(recognizer::Dims::from_input_shapes(&[1, 3, 32, 3])?)?;
    b.run()?;
    assert_eq!(b.outputs().probs.dims(), &[1, 1, 10]);
    Ok(())
}
