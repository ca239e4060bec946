//! Dynamic batching on a CNN: PP-OCRv4's text detector (trained weights) at a small image
//! size, through the pool and the batcher that codegen generates for it
//! (`models::ppocr_det`: `Model::pool`, `Model::batcher`, `Item`, `Reply`). 16 client
//! threads send one image per request, each client its own images; unbatched serving
//! checks a binding out of the pool per request, batched serving submits to the batcher.
//! Every reply is checked against a run of the same image alone, made up front.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use ort_bind_runtime::{BatchOptions, BatchSizing, Row, SessionOptions};

use crate::Result;
use crate::harness::median_f64;
use crate::workloads::models::ppocr_det as det;

/// The wheel that ships the detector, and the model's path in it.
const WHEEL: &str = "rapidocr-onnxruntime==1.4.4";
const ENTRY: &str = "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx";

/// Client threads.
pub(super) const CLIENTS: usize = 16;
/// Distinct images per client (request `i` of client `c` sends image `c * IMAGES + i % IMAGES`).
pub(super) const IMAGES: usize = 4;
/// Image height and width.
pub(super) const SIDE: usize = 32;
/// Bindings in the unbatched pool: one per core of the machines this runs on.
pub(super) const POOL: usize = 2;
/// Largest difference allowed between a reply and the image's run alone (probabilities in
/// [0, 1]; a batch of several images may take other kernel paths than one image).
const TOLERANCE: f32 = 1e-4;

/// The batcher settings tried, in the order of the table.
pub(super) const SETTINGS: [BatchOptions; 4] = [
    BatchOptions {
        max_batch: 16,
        max_delay: Duration::from_millis(2),
        workers: 1,
        sizing: BatchSizing::Fixed,
    },
    BatchOptions {
        max_batch: 8,
        max_delay: Duration::from_millis(2),
        workers: 2,
        sizing: BatchSizing::Fixed,
    },
    BatchOptions {
        max_batch: 16,
        max_delay: Duration::from_millis(2),
        workers: 2,
        sizing: BatchSizing::Fixed,
    },
    BatchOptions {
        max_batch: 16,
        max_delay: Duration::from_millis(5),
        workers: 2,
        sizing: BatchSizing::Fixed,
    },
];

/// The detector's model file, from the per-user cache (fetched from its wheel on first
/// use).
fn model_path() -> Result<PathBuf> {
    let root = ort_bind_fetch::WheelCache::new(WHEEL, "rapidocr-onnxruntime-1.4.4")
        .keep(|name| name == ENTRY)
        .get()?;
    Ok(root.join(ENTRY))
}

/// A normalised `[3, SIDE, SIDE]` image, distinct per `id`: dark strokes (text-like bars
/// whose place and length depend on `id`) on a light, slightly noisy background.
fn image(id: usize) -> Vec<f32> {
    let mut state = (id as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut noise = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 24) as f32
    };
    let row = 4 + id % (SIDE / 2);
    let (start, len) = (id % 7, SIDE / 3 + id % (SIDE / 2));
    let mut x = vec![0.0; 3 * SIDE * SIDE];
    for c in 0..3 {
        for h in 0..SIDE {
            for w in 0..SIDE {
                let stroke = (row..row + 3).contains(&h) && (start..start + len).contains(&w);
                let v = if stroke { 0.1 } else { 0.85 } + 0.1 * noise();
                // The detector's normalisation: (v - 0.5) / 0.5.
                x[(c * SIDE + h) * SIDE + w] = (v - 0.5) / 0.5;
            }
        }
    }
    x
}

/// One serving pass's figures.
#[derive(Debug, Default, Clone)]
pub(super) struct Pass {
    /// Wall time of all requests.
    pub(super) wall: Duration,
    /// Every request's latency.
    pub(super) latencies: Vec<Duration>,
    /// Largest difference of a reply from its image's run alone.
    pub(super) max_diff: f32,
}

impl Pass {
    /// p50 and p99 latency.
    pub(super) fn percentiles(&self) -> [Duration; 2] {
        let mut v = self.latencies.clone();
        v.sort();
        [v[v.len() / 2], v[v.len() * 99 / 100]]
    }
}

/// What [`batching`] measured.
#[derive(Debug)]
pub(super) struct Figures {
    /// A run of one image alone (median of the reference runs).
    pub(super) single_run: Duration,
    /// Per setting of [`SETTINGS`]: per-round throughput ratios batched over unbatched,
    /// the batched passes (all rounds' latencies), the mean batch size.
    pub(super) settings: Vec<(Vec<f64>, Pass, f64)>,
    /// The unbatched passes (all rounds' latencies).
    pub(super) unbatched: Pass,
}

type ThreadResult<T> = std::result::Result<T, String>;

/// `CLIENTS` client threads, each sending `each` requests through `serve`, which returns
/// the reply to image `id`; every reply checked against `reference[id]`.
fn serve_all(
    each: usize,
    reference: &[Vec<f32>],
    inputs: &[Vec<f32>],
    serve: &(dyn Fn(&[f32]) -> ThreadResult<Vec<f32>> + Sync),
) -> Result<Pass> {
    let t = Instant::now();
    let per_client = std::thread::scope(|scope| -> Result<Vec<(Vec<Duration>, f32)>> {
        let handles: Vec<_> = (0..CLIENTS)
            .map(|c| {
                scope.spawn(move || -> ThreadResult<(Vec<Duration>, f32)> {
                    let mut lat = Vec::with_capacity(each);
                    let mut max_diff = 0.0f32;
                    for i in 0..each {
                        let id = c * IMAGES + i % IMAGES;
                        let start = Instant::now();
                        let reply = serve(&inputs[id])?;
                        lat.push(start.elapsed());
                        let want = &reference[id];
                        if reply.len() != want.len() {
                            return Err(format!(
                                "client {c} request {i}: {} values, not {}",
                                reply.len(),
                                want.len()
                            ));
                        }
                        let diff = reply
                            .iter()
                            .zip(want)
                            .map(|(g, w)| (g - w).abs())
                            .fold(0.0, f32::max);
                        if diff > TOLERANCE || reply.iter().any(|v| v.is_nan()) {
                            return Err(format!(
                                "client {c} request {i} (image {id}): a reply differs from \
                                 the image's run alone by {diff}"
                            ));
                        }
                        max_diff = max_diff.max(diff);
                    }
                    Ok((lat, max_diff))
                })
            })
            .collect();
        let mut all = Vec::new();
        for h in handles {
            all.push(h.join().map_err(|_| "a client thread panicked")??);
        }
        Ok(all)
    })?;
    let wall = t.elapsed();
    let mut pass = Pass {
        wall,
        ..Pass::default()
    };
    for (lat, diff) in per_client {
        pass.latencies.extend(lat);
        pass.max_diff = pass.max_diff.max(diff);
    }
    Ok(pass)
}

/// Unbatched (the generated pool, [`POOL`] bindings) against each of [`SETTINGS`] (the
/// generated batcher), `rounds` paired rounds of `CLIENTS x each` requests, the order
/// rotating per round.
pub(super) fn batching(rounds: usize, each: usize) -> Result<Figures> {
    let model = det::Model::from_file(
        model_path()?,
        &SessionOptions::new().intra_threads(1).optimization_level(3),
    )?;
    let dims = det::Dims {
        batch: 1,
        x_dim2: SIDE,
        x_dim3: SIDE,
    };
    let inputs: Vec<Vec<f32>> = (0..CLIENTS * IMAGES).map(image).collect();
    // The reference: every image run alone on one binding.
    let mut alone = model.bind(dims)?;
    let mut reference = Vec::with_capacity(inputs.len());
    let mut times = Vec::with_capacity(inputs.len());
    for x in &inputs {
        alone.inputs().x.copy_from_slice(x)?;
        let t = Instant::now();
        alone.run()?;
        times.push(t.elapsed().as_secs_f64());
        reference.push(alone.outputs().sigmoid_0_tmp_0.as_slice().to_vec());
    }
    if reference.windows(2).all(|w| w[0] == w[1]) {
        return Err("the detector gave every image the same map: the check proves nothing".into());
    }
    drop(alone);
    let pool = model.pool(POOL);
    pool.fill(&dims)?;
    let unbatched = |x: &[f32]| -> ThreadResult<Vec<f32>> {
        let e = |e: ort_bind_runtime::Error| e.to_string();
        let mut b = pool.get(&dims).map_err(e)?;
        b.inputs().x.copy_from_slice(x).map_err(e)?;
        b.run().map_err(e)?;
        Ok(b.outputs().sigmoid_0_tmp_0.as_slice().to_vec())
    };
    let mut figures = Figures {
        single_run: Duration::from_secs_f64(median_f64(&times)),
        settings: vec![(Vec::new(), Pass::default(), 0.0); SETTINGS.len()],
        unbatched: Pass::default(),
    };
    let mut stats = vec![(0u64, 0u64); SETTINGS.len()];
    // Warm-up, unmeasured: one short pass unbatched and one per setting (ONNX Runtime
    // plans memory per input shape on a shape's first run; the session keeps the plans).
    serve_all(2, &reference, &inputs, &unbatched)?;
    for options in SETTINGS {
        let batcher = model.batcher(options)?;
        serve_all(2, &reference, &inputs, &|x: &[f32]| {
            let x = Row::new([3, SIDE, SIDE], x).map_err(|e| e.to_string())?;
            batcher
                .submit(det::Item { x })
                .map(|r| r.sigmoid_0_tmp_0.into_data())
                .map_err(|e| e.to_string())
        })?;
    }
    for round in 0..rounds {
        let k = SETTINGS.len() + 1;
        let mut walls = vec![Duration::ZERO; k];
        for j in 0..k {
            let which = (j + round) % k;
            if which == 0 {
                let pass = serve_all(each, &reference, &inputs, &unbatched)?;
                walls[0] = pass.wall;
                let u = &mut figures.unbatched;
                u.latencies.extend(pass.latencies);
                u.max_diff = u.max_diff.max(pass.max_diff);
                continue;
            }
            let batcher = model.batcher(SETTINGS[which - 1])?;
            let batched = |x: &[f32]| -> ThreadResult<Vec<f32>> {
                let x = Row::new([3, SIDE, SIDE], x).map_err(|e| e.to_string())?;
                let reply = batcher.submit(det::Item { x }).map_err(|e| e.to_string())?;
                Ok(reply.sigmoid_0_tmp_0.into_data())
            };
            let pass = serve_all(each, &reference, &inputs, &batched)?;
            let (runs, items) = batcher.stats();
            stats[which - 1].0 += runs;
            stats[which - 1].1 += items;
            walls[which] = pass.wall;
            let b = &mut figures.settings[which - 1].1;
            b.latencies.extend(pass.latencies);
            b.max_diff = b.max_diff.max(pass.max_diff);
        }
        for (s, wall) in figures.settings.iter_mut().zip(&walls[1..]) {
            s.0.push(walls[0].as_secs_f64() / wall.as_secs_f64());
        }
    }
    for (s, (runs, items)) in figures.settings.iter_mut().zip(stats) {
        s.2 = items as f64 / runs.max(1) as f64;
    }
    Ok(figures)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_differ_per_id_and_are_normalised() {
        let images: Vec<Vec<f32>> = (0..CLIENTS * IMAGES).map(image).collect();
        for (i, a) in images.iter().enumerate() {
            assert_eq!(a.len(), 3 * SIDE * SIDE);
            assert!(a.iter().all(|v| (-1.0..=1.0).contains(v)), "image {i}");
            for b in &images[i + 1..] {
                assert_ne!(a, b, "image {i} repeats");
            }
        }
        assert_eq!(image(5), image(5), "images are deterministic");
    }

    #[test]
    fn a_pass_fails_on_a_wrong_reply() {
        let inputs: Vec<Vec<f32>> = (0..CLIENTS * IMAGES).map(image).collect();
        // A stand-in server whose right answer is the image's first channel.
        let reference: Vec<Vec<f32>> = inputs.iter().map(|x| x[..SIDE * SIDE].to_vec()).collect();
        let right = serve_all(2, &reference, &inputs, &|x| Ok(x[..SIDE * SIDE].to_vec()));
        assert_eq!(right.map(|p| p.latencies.len()).ok(), Some(CLIENTS * 2));
        let off = serve_all(2, &reference, &inputs, &|x| {
            let mut v = x[..SIDE * SIDE].to_vec();
            v[7] += 1e-3;
            Ok(v)
        });
        let e = off.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("differs from the image's run alone"), "{e}");
        let short = serve_all(1, &reference, &inputs, &|x| Ok(x[..SIDE].to_vec()));
        assert!(short.is_err());
    }

    /// One short round through the real detector (fetched on first use, as the
    /// ort-bind-tests serve test does): every reply is checked inside `batching`.
    #[test]
    fn batching_serves_every_setting_with_checked_replies() -> Result<()> {
        let f = batching(1, 2)?;
        assert!(f.single_run > Duration::ZERO);
        assert_eq!(f.unbatched.latencies.len(), CLIENTS * 2);
        assert_eq!(f.settings.len(), SETTINGS.len());
        for ((ratios, pass, mean), o) in f.settings.iter().zip(&SETTINGS) {
            assert_eq!(ratios.len(), 1);
            assert!(
                ratios[0] > 0.0 && ratios[0].is_finite(),
                "{o:?}: {ratios:?}"
            );
            assert_eq!(pass.latencies.len(), CLIENTS * 2, "{o:?}");
            assert!(pass.max_diff <= TOLERANCE, "{o:?}: {}", pass.max_diff);
            assert!(
                *mean >= 1.0 && *mean <= o.max_batch as f64,
                "{o:?}: mean batch {mean}"
            );
        }
        Ok(())
    }
}
