//! Chains of models with no decoder (`pipeline!` -> `Dims`, `Pipeline`, `Chain`): each
//! edge's input reads its source's buffer in place (`Binding::run_fed`), checked by
//! address; results equal Python onnxruntime's (`ocr/expected.json`, written by
//! `reference_chains.py`) and the models run one by one with the values copied across.

use ort_bind::{Error, Result};

/// A detector and a recognizer whose crops are the detector's heatmap read as bands
/// (`[1, 1, height, width]` as `[num_crops, 1, 16, crop_width]`): a view edge.
mod ocr {
    ort_bind::pipeline!(
        detector = "tests/fixtures/pipelines/ocr/detector.onnx",
        recognizer = "tests/fixtures/pipelines/ocr/recognizer.onnx",
        detector.heatmap -> recognizer.crops as view,
    );
}

/// A vision model and the embedding model it feeds (`image_features`, found by name):
/// the edge equates `embedding.batch_size` with `vision.batch_size` and fixes
/// `embedding.num_image_tokens` at the 16 the vision model makes, so the chain's `Dims`
/// has two fields.
mod vision_embedding {
    ort_bind::pipeline!(
        vision = "tests/fixtures/pipelines/vision_text/vision.onnx",
        embedding = "tests/fixtures/pipelines/vision_text/embedding.onnx",
    );
}

fn expected() -> serde_json::Value {
    let path = ort_bind_tests::paths::fixture("pipelines").join("ocr/expected.json");
    serde_json::from_slice(&std::fs::read(&path).expect("ocr/expected.json")).expect("json")
}

/// `image[0, 0, y, x] = 0.5 + 0.5 sin(0.07 x) cos(0.11 y)` (f64, then f32), as
/// `reference_chains.py`.
fn image(height: usize, width: usize) -> Vec<f32> {
    let mut out = Vec::with_capacity(height * width);
    for y in 0..height {
        for x in 0..width {
            let v = 0.5 + 0.5 * (0.07 * x as f64).sin() * (0.11 * y as f64).cos();
            out.push(v as f32);
        }
    }
    out
}

fn close(got: f64, want: &serde_json::Value, what: &str) {
    let want = want.as_f64().expect("a number");
    assert!(
        (got - want).abs() <= 1e-3 * want.abs().max(1.0),
        "{what}: {got} vs Python's {want}"
    );
}

fn argmax(row: &[f32]) -> usize {
    row.iter()
        .enumerate()
        .fold((0, f32::NEG_INFINITY), |best, (i, &v)| {
            if v > best.1 { (i, v) } else { best }
        })
        .0
}

#[test]
fn an_ocr_chain_reads_the_heatmap_in_place_and_matches_python() -> Result<()> {
    let want = expected();
    let pipeline = ocr::Pipeline::load()?;
    let dims = ocr::Dims {
        height: 64,
        width: 64,
        num_crops: 4,
        crop_width: 64,
    };
    let mut chain = pipeline.bind(dims.clone())?;
    chain
        .detector
        .inputs()
        .image
        .copy_from_slice(&image(64, 64))?;
    chain.run()?;

    let heatmap = chain.detector.outputs().heatmap;
    let h: Vec<f64> = heatmap.as_slice().iter().map(|&v| f64::from(v)).collect();
    let stats = &want["heatmap"];
    close(h.iter().sum(), &stats["sum"], "heatmap sum");
    close(
        h.iter().map(|v| v * v).sum(),
        &stats["sum_sq"],
        "heatmap sum of squares",
    );
    let weighted: f64 = h.iter().enumerate().map(|(i, v)| v * (i % 97) as f64).sum();
    close(weighted, &stats["weighted_sum"], "heatmap weighted sum");
    for (k, band) in h.chunks(16 * 64).enumerate() {
        close(
            band.iter().sum(),
            &stats["band_sums"][k],
            "heatmap band sum",
        );
    }
    // The recognizer read the detector's buffer itself: nothing was copied.
    assert_eq!(
        chain.recognizer.fed_address("crops"),
        Some(heatmap.as_slice().as_ptr() as usize)
    );

    let probs = chain.recognizer.outputs().probs;
    assert_eq!(probs.dims(), &[4, 16, 20]);
    let p = probs.as_slice();
    for (i, w) in want["probs_first"]
        .as_array()
        .expect("list")
        .iter()
        .enumerate()
    {
        close(f64::from(p[i]), w, "probs[0, 0, i]");
    }
    let picked: Vec<Vec<usize>> = p
        .chunks(16 * 20)
        .map(|crop| crop.chunks(20).map(argmax).collect())
        .collect();
    let want_argmax: Vec<Vec<usize>> =
        serde_json::from_value(want["argmax"].clone()).expect("argmax");
    assert_eq!(picked, want_argmax);
    Ok(())
}

#[test]
fn a_chain_follows_new_dims_and_refuses_what_does_not_fit() -> Result<()> {
    let pipeline = ocr::Pipeline::load()?;
    let mut chain = pipeline.bind(ocr::Dims {
        height: 64,
        width: 64,
        num_crops: 4,
        crop_width: 64,
    })?;
    chain
        .detector
        .inputs()
        .image
        .copy_from_slice(&image(64, 64))?;
    chain.run()?;
    // Once fed, a binding runs only through its chain.
    let err = chain.recognizer.run().expect_err("fed input");
    assert!(err.to_string().contains("crops"), "{err}");

    // 3 crops of 64 columns are not the 64 x 64 heatmap: the run says so, naming both.
    chain.set_dims(ocr::Dims {
        height: 64,
        width: 64,
        num_crops: 3,
        crop_width: 64,
    })?;
    let err = chain.run().expect_err("3 x 16 x 64 != 64 x 64");
    assert!(matches!(err, Error::Value { .. }), "{err}");
    let message = err.to_string();
    assert!(
        message.contains("crops") && message.contains("heatmap"),
        "{message}"
    );

    // Other dims: 32 x 48 read as 2 crops of 48 columns, the same as copying the heatmap
    // into the recognizer run on its own.
    chain.set_dims(ocr::Dims {
        height: 32,
        width: 48,
        num_crops: 2,
        crop_width: 48,
    })?;
    chain
        .detector
        .inputs()
        .image
        .copy_from_slice(&image(32, 48))?;
    chain.run()?;
    let heatmap = chain.detector.outputs().heatmap.as_slice().to_vec();
    assert_eq!(
        chain.recognizer.fed_address("crops"),
        Some(chain.detector.outputs().heatmap.as_slice().as_ptr() as usize)
    );
    let mut alone = pipeline.recognizer.bind(ocr::recognizer::Dims {
        num_crops: 2,
        crop_width: 48,
    })?;
    alone.inputs().crops.copy_from_slice(&heatmap)?;
    alone.run()?;
    assert_eq!(
        chain.recognizer.outputs().probs.as_slice(),
        alone.outputs().probs.as_slice()
    );
    Ok(())
}

#[test]
fn a_chain_has_one_dims_for_its_models_and_feeds_by_name() -> Result<()> {
    let dims = vision_embedding::Dims {
        batch_size: 2,
        sequence_length: 20,
    };
    // The edge made these: the vision model's batch, and the 16 features it makes.
    let embedding_dims = dims.embedding()?;
    assert_eq!(
        (embedding_dims.batch_size, embedding_dims.num_image_tokens),
        (2, 16)
    );
    let pipeline = vision_embedding::Pipeline::load()?;
    let mut chain = pipeline.bind(dims)?;
    let pixels: Vec<f32> = (0..2 * 3 * 32 * 32)
        .map(|i| (0.013 * i as f64).sin() as f32)
        .collect();
    chain
        .vision
        .inputs()
        .pixel_values
        .copy_from_slice(&pixels)?;
    // Each row: two text tokens, the 16 image tokens (id 511), two text tokens.
    let row: Vec<i64> = [5, 9].into_iter().chain([511; 16]).chain([7, 3]).collect();
    let ids = [row.clone(), row].concat();
    chain.embedding.inputs().input_ids.copy_from_slice(&ids)?;
    chain.run()?;
    assert_eq!(
        chain.embedding.fed_address("image_features"),
        Some(chain.vision.outputs().image_features.as_slice().as_ptr() as usize)
    );

    // The same as the embedding model run on its own with the features copied in.
    let features = chain.vision.outputs().image_features.as_slice().to_vec();
    let mut alone = pipeline.embedding.bind(vision_embedding::embedding::Dims {
        batch_size: 2,
        sequence_length: 20,
        num_image_tokens: 16,
    })?;
    alone.inputs().input_ids.copy_from_slice(&ids)?;
    alone.inputs().image_features.copy_from_slice(&features)?;
    alone.run()?;
    let embeds = chain.embedding.outputs().inputs_embeds.as_slice().to_vec();
    assert_eq!(embeds, alone.outputs().inputs_embeds.as_slice());
    // Image positions hold the features' rows, bit for bit.
    for b in 0..2 {
        for j in 0..16 {
            let at = (b * 20 + 2 + j) * 64;
            let feature = (b * 16 + j) * 64;
            assert_eq!(embeds[at..at + 64], features[feature..feature + 64]);
        }
    }
    Ok(())
}
