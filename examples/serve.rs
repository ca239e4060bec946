//! An HTTP text-detection service: PP-OCRv4's detector (trained weights, fetched from
//! the `rapidocr-onnxruntime` wheel on first use) behind axum on tokio, served through
//! the typed batcher and pool that ort-bind generates for the model.
//!
//! ```text
//! cargo run --release --example serve -- [--addr 127.0.0.1:8080] [--size 64x96]
//!     [--max-batch 8] [--delay-ms 2] [--workers 2] [--pool 4] [--model FILE.onnx]
//! ```
//!
//! `POST /detect` takes one normalised image `[3, H, W]` as little-endian float32 and
//! answers with its text probability map `[H, W]`; concurrent requests run batched.
//! `POST /detect/single` serves each request on its own pooled binding (unbatched), and
//! `GET /health` answers `ok`. See `serve/app.rs` for the routes.
//!
//! ```text
//! python3 -c "import numpy as n, sys; sys.stdout.buffer.write(n.ones((3,64,96), n.float32).tobytes())" \
//!     | curl -s --data-binary @- localhost:8080/detect | wc -c     # 24576 = 64 * 96 * 4
//! ```

/// The detector's typed bindings, from its signature (the model itself is fetched at run
/// time). The exporter named every dynamic dim apart; the options say the output's N, H
/// and W are the input's, so the output is bound once, and call N `batch`, which gives
/// the module its typed batcher (`det::Batcher`, `det::Item`, `det::Reply`).
mod det {
    ort_bind::bindings!(
        "examples/models/ppocr_det.signature.onnx",
        rename_dim("p2o.DynamicDimension.0", "batch"),
        rename_dim("p2o.DynamicDimension.3", "batch"),
        rename_dim("p2o.DynamicDimension.4", "p2o.DynamicDimension.1"),
        rename_dim("p2o.DynamicDimension.5", "p2o.DynamicDimension.2"),
    );
}

#[path = "serve/app.rs"]
mod app;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The command line.
struct Args {
    addr: String,
    limits: app::Limits,
    model: Option<PathBuf>,
}

const USAGE: &str = "usage: serve [--addr HOST:PORT] [--size HxW] [--max-batch N] \
                     [--delay-ms MS] [--workers N] [--pool N] [--model FILE.onnx]";

fn parse_args() -> Result<Args, BoxError> {
    let mut args = Args {
        addr: "127.0.0.1:8080".into(),
        limits: app::Limits {
            height: 64,
            width: 96,
            batch: ort_bind::BatchOptions::default(),
            pool: 4,
        },
        model: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--addr" => args.addr = value()?,
            "--size" => {
                let v = value()?;
                let (h, w) = v.split_once('x').ok_or("--size is HxW, e.g. 64x96")?;
                (args.limits.height, args.limits.width) = (h.parse()?, w.parse()?);
            }
            "--max-batch" => args.limits.batch.max_batch = value()?.parse()?,
            "--delay-ms" => {
                args.limits.batch.max_delay = Duration::from_millis(value()?.parse()?);
            }
            "--workers" => args.limits.batch.workers = value()?.parse()?,
            "--pool" => args.limits.pool = value()?.parse()?,
            "--model" => args.model = Some(value()?.into()),
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => return Err(format!("unexpected argument `{other}`\n{USAGE}").into()),
        }
    }
    Ok(args)
}

fn main() {
    if let Err(e) = run() {
        eprintln!("serve: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), BoxError> {
    let args = parse_args()?;
    let path = match args.model {
        Some(path) => path,
        None => app::model_path()?,
    };
    // Two intra-op threads: `/detect/single` runs with `run_async`, which ONNX Runtime
    // executes on the session's intra-op pool (with one intra-op thread it would run on
    // ort-bind's worker threads instead; see `ort_bind::guide::serving`).
    let model = det::Model::from_file(&path, &ort_bind::SessionOptions::new().intra_threads(2))?;
    let detector = Arc::new(app::Detector::new(&model, args.limits)?);
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(&args.addr).await?;
        eprintln!(
            "serving {} on http://{} ({}x{} images)",
            path.display(),
            listener.local_addr()?,
            args.limits.height,
            args.limits.width
        );
        axum::serve(listener, app::router(detector)).await?;
        Ok(())
    })
}
