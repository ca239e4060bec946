//! Dynamic shapes through generated bindings: unset, `-1` and `?` dims, scalars, output
//! dims named differently from the input dims they equal, data-dependent outputs, and a
//! real exported model (PP-OCRv4's text detector) whose output height and width follow
//! the input image while the model names them apart.
//!
//! Fixtures: `tests/fixtures/README.md`. The detector is fetched on first use from the
//! `rapidocr-onnxruntime==1.4.4` wheel (Apache-2.0); its bindings come from
//! `tests/fixtures/signatures/ppocr_det.onnx` and its expected outputs from
//! `tests/reference/ppocr_det.txt` (both written by `tests/reference/ppocr_det_reference.py`
//! with Python onnxruntime 1.31.1).

use std::path::PathBuf;

use ort_bind_tests::fixtures::{dynamic_y, ppocr_page};

use ort_bind::{Dyn, Error, Fix, TensorRef};

mod messy {
    ort_bind::include_bindings!("messy");
}
mod scalar {
    ort_bind::include_bindings!("scalar");
}
mod dynamic {
    ort_bind::include_bindings!("dynamic");
}
mod dynamic_renamed {
    ort_bind::include_bindings!("dynamic_renamed");
}
mod nonzero {
    ort_bind::include_bindings!("nonzero");
}
mod silero_vad_raw {
    ort_bind::include_bindings!("silero_vad_raw");
}
mod ppocr_det {
    ort_bind::include_bindings!("ppocr_det");
}
mod ppocr_det_sized {
    ort_bind::include_bindings!("ppocr_det_sized");
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

fn messy_dims(batch: usize, ty: usize, one_x: usize, unset: usize) -> messy::Dims {
    messy::Dims {
        batch,
        type_dim0: ty,
        v_1x_dim0: one_x,
        save_infer_model_scale_0_tmp_1_dim1: unset,
    }
}

#[test]
fn unset_minus_one_and_question_mark_dims_are_user_sized() -> ort_bind::Result<()> {
    let model = messy::Model::load()?;
    let mut b = model.bind(messy_dims(2, 3, 2, 5))?;
    for (dims, (batch, ty, one_x, unset)) in [
        (messy_dims(2, 3, 2, 5), (2, 3, 2, 5)),
        (messy_dims(1, 1, 4, 1), (1, 1, 4, 1)),
        (messy_dims(3, 2, 1, 7), (3, 2, 1, 7)),
    ] {
        b.set_dims(dims)?;
        {
            let mut i = b.inputs();
            assert_eq!(i.gpu_0_data_0.dims(), &[batch, 3]);
            assert_eq!(i.r#type.dims(), &[ty]); // `-1` dim
            assert_eq!(i.v_1x.dims(), &[one_x]); // `?` dim
            assert_eq!(i.save_infer_model_scale_0_tmp_1.dims(), &[2, unset]); // unset dim
            let data: Vec<f32> = (0..batch * 3).map(|v| v as f32).collect();
            i.gpu_0_data_0.copy_from_slice(&data)?;
            i.r#type.fill(0.0);
            i.v_1x.fill(-2.0);
            i.save_infer_model_scale_0_tmp_1.fill(1.5);
            i.a_b.copy_from_slice(&[1.0, 2.0, 3.0, 4.0])?;
            i.a_b_2.copy_from_slice(&[10.0, 20.0, 30.0, 40.0])?;
            i.step.fill(7); // scalar
            i.half.fill(ort_bind::f16::from_f32(0.5));
        }
        b.run()?;
        let o = b.outputs();
        assert_eq!(o.gpu_0_softmax_1.dims(), &[batch, 3]);
        assert_eq!(
            o.gpu_0_softmax_1.as_slice()[batch * 3 - 1],
            (batch * 3 - 1) as f32
        );
        // Outputs whose dims nothing names are sized as the graph computes them (each
        // its input's unnamed axis), pre-allocated like the others.
        let sig = o.sigmoid_0_tmp_0;
        assert_eq!(sig.dims(), &[ty]);
        assert!(sig.as_slice().iter().all(|&v| v == 0.5));
        let neg: TensorRef<'_, f32, (Dyn,)> = o.out_1x;
        assert_eq!(neg.dims(), &[one_x]);
        assert!(neg.as_slice().iter().all(|&v| v == 2.0));
        let same = o.save_infer_model_scale_1_tmp_1;
        assert_eq!(same.dims(), &[2, unset]);
        assert_eq!(o.a_b.as_slice(), &[11.0, 22.0, 33.0, 44.0]);
        let step: TensorRef<'_, i64, ()> = o.self_;
        assert_eq!((step.dims(), step.as_slice()), (&[][..], &[7][..]));
        assert_eq!(o.half_out.dims(), &[batch, 2]);
    }
    Ok(())
}

#[test]
fn dims_from_input_shapes_check_the_model_and_each_other() -> ort_bind::Result<()> {
    let shapes = |data: &[usize], half: &[usize], a: &[usize]| {
        messy::Dims::from_input_shapes(data, &[3], &[2], &[2, 5], a, &[4], &[], half)
    };
    assert_eq!(shapes(&[2, 3], &[2, 2], &[4])?, messy_dims(2, 3, 2, 5));
    // `gpu_0/data_0` [batch, 3] and `half` [batch, 2] share `batch`.
    let err = shapes(&[2, 3], &[4, 2], &[4]).unwrap_err();
    assert!(
        matches!(&err, Error::Dim { dim, .. } if dim == "batch"),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "dimension `batch`: axis 0 of `gpu_0/data_0` says 2, axis 0 of `half` says 4"
    );
    // A fixed axis that differs from the model.
    let err = shapes(&[2, 3], &[2, 2], &[5]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "dimension `a.b[0]`: the model fixes axis 0 of `a.b` to 4, the shape says 5"
    );
    // A wrong rank names the tensor.
    let err = shapes(&[2, 3, 1], &[2, 2], &[4]).unwrap_err();
    assert!(err.to_string().contains("tensor `gpu_0/data_0`"), "{err}");
    Ok(())
}

#[test]
fn scalar_inputs_and_outputs() -> ort_bind::Result<()> {
    let model = scalar::Model::load()?;
    let mut b = model.bind(scalar::Dims::from_input_shapes(&[])?)?;
    for x in [1.25f32, -3.0, 0.0] {
        b.inputs().x.fill(x);
        b.run()?;
        let y: TensorRef<'_, f32, ()> = b.outputs().y;
        assert_eq!(y.as_slice(), &[x * 2.0]);
    }
    assert!(scalar::Dims::from_input_shapes(&[1]).is_err());
    Ok(())
}

/// `y = x @ W`, W = arange(12).reshape(4, 3) / 10: row r of y for x row = one-hot(k).
fn close(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-5)
}

#[test]
fn output_dims_named_differently_are_inferred_or_renamed() -> ort_bind::Result<()> {
    // As exported, `z` [N, 3]: `N` is on no input, but the graph computes `z` as
    // `relu(x @ W)`, `[batch, 3]`: pre-allocated from the dims.
    let model = dynamic::Model::load()?;
    let mut b = model.bind(dynamic::Dims { batch: 2 })?;
    // With `rename_dim("N", "batch")`, the same: the user's name for it.
    let renamed = dynamic_renamed::Model::load()?;
    let mut r = renamed.bind(dynamic_renamed::Dims { batch: 2 })?;
    for batch in [2usize, 5, 1, 3] {
        let x: Vec<f32> = (0..batch * 4).map(|v| (v as f32 - 6.0) / 3.0).collect();
        let y = dynamic_y(&x);
        let z: Vec<f32> = y.iter().map(|v| v.max(0.0)).collect();

        b.set_dims(dynamic::Dims { batch })?;
        b.inputs().x.copy_from_slice(&x)?;
        b.run()?;
        let out = b.outputs();
        assert!(close(out.y.as_slice(), &y));
        let got: TensorRef<'_, f32, (Dyn, Fix<3>)> = out.z;
        assert_eq!(got.dims(), &[batch, 3]);
        assert!(close(got.as_slice(), &z));

        r.set_dims(dynamic_renamed::Dims { batch })?;
        r.inputs().x.copy_from_slice(&x)?;
        r.run()?;
        let got: TensorRef<'_, f32, (Dyn, Fix<3>)> = r.outputs().z;
        assert_eq!(got.dims(), &[batch, 3]);
        assert!(close(got.as_slice(), &z));
    }
    Ok(())
}

#[test]
fn data_dependent_output_shapes_follow_each_run() -> ort_bind::Result<()> {
    let model = nonzero::Model::load()?;
    let mut b = model.bind(nonzero::Dims {})?;
    assert!(b.outputs().indices.get().is_err());
    for x in [
        [0.0, 1.5, 0.0, -2.0, 0.0, 3.0],
        [1.0; 6],
        [0.0; 6],
        [0.0, 0.0, 0.0, 0.0, 0.0, 9.0],
        [0.0, 1.5, 0.0, -2.0, 0.0, 3.0],
    ] {
        b.inputs().x.copy_from_slice(&x)?;
        b.run()?;
        let want: Vec<i64> = (0..6).filter(|&i| x[i] != 0.0).map(|i| i as i64).collect();
        let got: TensorRef<'_, i64, (Fix<1>, Dyn)> = b.outputs().indices.get().expect("produced");
        assert_eq!(got.dims(), &[1, want.len()]);
        assert_eq!(got.as_slice(), want.as_slice());
    }
    Ok(())
}

#[test]
fn an_open_state_output_feeds_back_without_naming_any_dim() -> Result<(), BoxError> {
    // silero_vad.onnx as exported: every dynamic dim unnamed. `stateN` [?, ?, ?] is the
    // recurrent pair of `state` [2, ?, 128], so it is pre-allocated with that shape and
    // swaps into `state`; `output` [?, 1] is allocated by ONNX Runtime.
    let path = ort_bind_fetch::WheelCache::new("silero-vad==6.2.3", "silero-vad-6.2.3")
        .keep(|n| n == "silero_vad/data/silero_vad.onnx")
        .get()?
        .join("silero_vad/data/silero_vad.onnx");
    let model = silero_vad_raw::Model::from_file(&path, &ort_bind::SessionOptions::new())?;
    let mut b = model.bind(silero_vad_raw::Dims::from_input_shapes(
        &[1, 576],
        &[2, 1, 128],
        &[],
    )?)?;
    assert_eq!(
        *b.dims(),
        silero_vad_raw::Dims {
            input_dim0: 1,
            input_dim1: 576,
            state_dim1: 1
        }
    );
    b.inputs().sr.fill(16_000);
    let mut probs = Vec::new();
    for step in 0..20 {
        let mut i = b.inputs();
        for (k, v) in i.input.as_mut_slice().iter_mut().enumerate() {
            *v = ((k + step * 512) as f32 * 0.07).sin() * 0.5;
        }
        b.run()?;
        let out = b.outputs();
        let p: TensorRef<'_, f32, (Dyn, Fix<1>)> = out.output.get().expect("produced");
        assert_eq!(p.dims(), &[1, 1]);
        probs.push(p.as_slice()[0]);
        let state_n: TensorRef<'_, f32, (Fix<2>, Dyn, Fix<128>)> = out.state_n;
        assert_eq!(state_n.dims(), &[2, 1, 128]);
        b.feed_state_n_into_state()?;
    }
    assert!(probs.iter().all(|p| (0.0..=1.0).contains(p)));
    // The state input now holds the last run's state (it started as zeros).
    assert!(b.inputs().state.as_slice().iter().any(|&v| v != 0.0));
    Ok(())
}

// ---- PP-OCRv4 text detector -----------------------------------------------------------

const DET_WHEEL: &str = "rapidocr-onnxruntime==1.4.4";
const DET_ENTRY: &str = "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx";

fn det_model_path() -> Result<PathBuf, BoxError> {
    let root = ort_bind_fetch::WheelCache::new(DET_WHEEL, "rapidocr-onnxruntime-1.4.4")
        .keep(|n| n == DET_ENTRY)
        .get()?;
    Ok(root.join(DET_ENTRY))
}

fn samples(h: usize, w: usize) -> Vec<(usize, usize)> {
    (0..32)
        .map(|i| (12 + i % 10 + 32 * ((i / 10) % (h / 32)), (i * 53 + 11) % w))
        .collect()
}

struct DetReference {
    shape: Vec<usize>,
    rows: Vec<f64>,
    samples: Vec<f32>,
}

fn det_reference() -> Vec<DetReference> {
    let text = std::fs::read_to_string(ort_bind_tests::paths::reference("ppocr_det.txt"))
        .expect("reference file");
    let lines: Vec<&str> = text.lines().collect();
    lines
        .chunks(3)
        .map(|c| {
            let field = |line: &str, tag: &str| -> Vec<String> {
                let rest = line.strip_prefix(tag).expect("reference line tag");
                rest.split_whitespace().map(str::to_owned).collect()
            };
            DetReference {
                shape: field(c[0], "shape ")
                    .iter()
                    .map(|v| v.parse().unwrap())
                    .collect(),
                rows: field(c[1], "rows ")
                    .iter()
                    .map(|v| v.parse().unwrap())
                    .collect(),
                samples: field(c[2], "samples ")
                    .iter()
                    .map(|v| v.parse().unwrap())
                    .collect(),
            }
        })
        .collect()
}

fn check_det(out: TensorRef<'_, f32, (Dyn, Fix<1>, Dyn, Dyn)>, want: &DetReference) {
    assert_eq!(out.dims(), want.shape.as_slice());
    let (h, w) = (want.shape[2], want.shape[3]);
    let v = out.as_slice();
    for (r, &row) in want.rows.iter().enumerate() {
        let sum: f64 = v[r * w..(r + 1) * w].iter().map(|&x| f64::from(x)).sum();
        assert!((sum - row).abs() < 1e-3, "row {r}: {sum} vs {row}");
    }
    for ((r, c), &s) in samples(h, w).iter().zip(&want.samples) {
        let got = v[r * w + c];
        assert!((got - s).abs() < 1e-4, "({r}, {c}): {got} vs {s}");
    }
}

#[test]
fn real_text_detector_output_follows_the_image_size() -> Result<(), BoxError> {
    let path = det_model_path()?;
    let reference = det_reference();
    assert_eq!(reference.len(), 2);

    // As exported: ONNX Runtime allocates the probability map and says its shape.
    let model = ppocr_det::Model::from_file(&path, &ort_bind::SessionOptions::new())?;
    let first = &reference[0].shape;
    let mut b = model.bind(ppocr_det::Dims::from_input_shapes(&[
        1, 3, first[2], first[3],
    ])?)?;
    // With the output's dims renamed to the input's: pre-allocated, bound once.
    let sized = ppocr_det_sized::Model::from_file(&path, &ort_bind::SessionOptions::new())?;
    let mut s = sized.bind(ppocr_det_sized::Dims::from_input_shapes(&[
        1, 3, first[2], first[3],
    ])?)?;
    // Both sizes through one binding each, back and forth.
    for want in reference.iter().chain(&reference) {
        let (h, w) = (want.shape[2], want.shape[3]);
        let image = ppocr_page(0, h, w);

        b.set_dims(ppocr_det::Dims::from_input_shapes(&[1, 3, h, w])?)?;
        b.inputs().x.copy_from_slice(&image)?;
        b.run()?;
        check_det(b.outputs().sigmoid_0_tmp_0.get().expect("produced"), want);

        s.set_dims(ppocr_det_sized::Dims::from_input_shapes(&[1, 3, h, w])?)?;
        s.inputs().x.copy_from_slice(&image)?;
        s.run()?;
        check_det(s.outputs().sigmoid_0_tmp_0, want);
    }
    Ok(())
}

#[test]
fn the_detector_signature_in_git_is_the_fetched_model_s() -> Result<(), BoxError> {
    let stub = ort_bind_tests::paths::fixture("signatures/ppocr_det.onnx");
    let stub = ort_bind_codegen::read_signature(&stub)?;
    let real = ort_bind_codegen::read_signature(&det_model_path()?)?;
    assert_eq!((stub.inputs, stub.outputs), (real.inputs, real.outputs));
    Ok(())
}
