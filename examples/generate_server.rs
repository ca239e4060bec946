//! A streaming generation server: token ids in, generated ids streamed back one line per
//! token as they are picked, over the repository's decoder fixture (random weights: the
//! tokens mean nothing, the serving is real). A client that disconnects stops its
//! generation within one step, and its decoder serves the next request.
//!
//! ```text
//! cargo run --release --example generate_server -- [--addr 127.0.0.1:8081] [--decoders 2]
//! curl -sN --data '5 42 79 116' localhost:8081/generate/32     # 32 ids, one per line
//! ```
//!
//! Routes in `generate_server/app.rs`; `ort-bind-tests/tests/generate_server.rs` serves
//! them under test.

/// The decoder fixture's typed bindings (random weights: its tokens mean nothing).
mod lm {
    ort_bind::bindings!("ort-bind-tests/tests/fixtures/decoders/gqa_f32/model.onnx");
}

#[path = "generate_server/app.rs"]
mod app;

use std::sync::Arc;
use std::time::Duration;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

fn main() -> Result<(), BoxError> {
    let mut addr = "127.0.0.1:8081".to_owned();
    let mut decoders = 2;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--addr" => addr = value,
            "--decoders" => decoders = value.parse()?,
            _ => return Err(format!("unknown flag {flag}").into()),
        }
    }
    let model = lm::Model::load_with(&ort_bind::SessionOptions::new().intra_threads(1))?;
    let limits = app::Limits {
        capacity: 2048,
        timeout: Duration::from_secs(30),
    };
    let server = Arc::new(app::Server::new(&model, decoders, limits));
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(&addr).await?;
        eprintln!("generating on http://{addr}/generate/{{max}} with {decoders} decoders");
        axum::serve(listener, app::router(server)).await?;
        Ok(())
    })
}
