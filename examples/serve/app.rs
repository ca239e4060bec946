//! The text-detection service of `examples/serve.rs`: its state and routes, also driven by
//! the HTTP load test (`ort-bind-tests/tests/serve.rs`). The including crate provides the
//! detector's typed bindings as `crate::det` (with `batch` as the batch dim, so the module
//! has a typed batcher and pool).
//!
//! Routes (bodies are little-endian `f32`s, row-major):
//! - `POST /detect`: one normalised image `[3, H, W]`; the reply is the probability map
//!   `[H, W]`. Concurrent requests are gathered into batches (`det::Batcher`).
//! - `POST /detect/single`: the same, each request on a binding of its own from the pool
//!   (`det::Pool`), run with `run_async`: unbatched serving, for comparison.
//! - `GET /health`: `ok`; `GET /stats`: `runs R items I`, the batcher's runs so far and
//!   the requests they served (`I / R` is the mean batch size).
//!
//! A body of the wrong size is a 400 that says which size; a failed run is a 500 with
//! ONNX Runtime's message.

use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};

use crate::det;

/// The wheel that ships the detector (Apache-2.0), and the model's path in it.
const WHEEL: &str = "rapidocr-onnxruntime==1.4.4";
const ENTRY: &str = "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx";

/// The detector's model file: fetched from its wheel with `pip download` on first use
/// and kept in the per-user cache (`$ORT_BIND_CACHE_DIR`, else `$XDG_CACHE_HOME/ort-bind`,
/// else `~/.cache/ort-bind`); later calls read the cache only.
pub(crate) fn model_path() -> Result<PathBuf, ort_bind_fetch::FetchError> {
    let root = ort_bind_fetch::WheelCache::new(WHEEL, "rapidocr-onnxruntime-1.4.4")
        .keep(|name| name == ENTRY)
        .get()?;
    Ok(root.join(ENTRY))
}

/// What the routes share: the batcher and the pool, both on one session.
#[derive(Debug)]
pub(crate) struct Detector {
    batcher: det::Batcher,
    pool: det::Pool,
    dims: det::Dims,
}

/// How the service batches and pools.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Image height and width every request has.
    pub(crate) height: usize,
    /// See `height`.
    pub(crate) width: usize,
    /// The batcher's limits.
    pub(crate) batch: ort_bind::BatchOptions,
    /// Bindings in the pool of `/detect/single`.
    pub(crate) pool: usize,
}

impl Detector {
    /// The service for `model`, serving images of `limits.height` x `limits.width`.
    pub(crate) fn new(model: &det::Model, limits: Limits) -> ort_bind::Result<Detector> {
        let dims = det::Dims {
            batch: 1,
            x_dim2: limits.height,
            x_dim3: limits.width,
        };
        let batcher = model.batcher(limits.batch)?;
        let pool = model.pool(limits.pool);
        // Every pooled binding sized once: requests then allocate nothing in ort-bind.
        pool.fill(&dims)?;
        Ok(Detector {
            batcher,
            pool,
            dims,
        })
    }

    /// Batched runs made so far, and the requests they served.
    pub(crate) fn batch_stats(&self) -> (u64, u64) {
        self.batcher.stats()
    }
}

/// The service's routes.
pub(crate) fn router(detector: Arc<Detector>) -> Router {
    Router::new()
        .route("/detect", post(detect))
        .route("/detect/single", post(detect_single))
        .route("/health", get(|| async { "ok" }))
        .route("/stats", get(stats))
        .with_state(detector)
}

type Reply = (StatusCode, Vec<u8>);

fn floats(body: &[u8]) -> Vec<f32> {
    body.chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

fn bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// The image in the body, or the 400 that says what size it must be.
fn image(detector: &Detector, body: &[u8]) -> Result<Vec<f32>, Reply> {
    let want = 3 * detector.dims.x_dim2 * detector.dims.x_dim3;
    if body.len() != want * 4 {
        let message = format!(
            "expected a [3, {}, {}] float32 image ({} bytes), got {} bytes\n",
            detector.dims.x_dim2,
            detector.dims.x_dim3,
            want * 4,
            body.len()
        );
        return Err((StatusCode::BAD_REQUEST, message.into_bytes()));
    }
    Ok(floats(body))
}

fn failed(e: ort_bind::Error) -> Reply {
    (
        StatusCode::INTERNAL_SERVER_ERROR,
        format!("{e}\n").into_bytes(),
    )
}

async fn detect(State(detector): State<Arc<Detector>>, body: Bytes) -> Reply {
    let x = match image(&detector, &body) {
        Ok(x) => x,
        Err(reply) => return reply,
    };
    let (h, w) = (detector.dims.x_dim2, detector.dims.x_dim3);
    let item = match ort_bind::Row::new([3, h, w], x) {
        Ok(x) => det::Item { x },
        Err(e) => return failed(e),
    };
    // Dropped (the client went away) before a batch took it, the request is not run.
    match detector.batcher.submit_async(item).await {
        Ok(reply) => (StatusCode::OK, bytes(reply.sigmoid_0_tmp_0.data())),
        Err(e) => failed(e),
    }
}

async fn detect_single(State(detector): State<Arc<Detector>>, body: Bytes) -> Reply {
    let x = match image(&detector, &body) {
        Ok(x) => x,
        Err(reply) => return reply,
    };
    let run = async {
        let mut binding = detector.pool.get_async(&detector.dims).await?;
        binding.inputs().x.copy_from_slice(&x)?;
        binding.run_async().await?;
        Ok(bytes(binding.outputs().sigmoid_0_tmp_0.as_slice()))
    };
    match run.await {
        Ok(map) => (StatusCode::OK, map),
        Err(e) => failed(e),
    }
}

async fn stats(State(detector): State<Arc<Detector>>) -> String {
    let (runs, items) = detector.batch_stats();
    format!("runs {runs} items {items}\n")
}
