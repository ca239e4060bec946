//! The routes of the generation server (`examples/generate_server.rs`), apart from its
//! command line so that `ort-bind-tests/tests/generate_server.rs` serves them too.
//!
//! `POST /generate/{max}` takes prompt token ids (text, separated by spaces) and answers
//! with the generated ids, one per line, each sent as soon as it is picked. A generation is
//! a task on the async runtime: it checks a decoder out of a `DecoderPool` (waiting, without
//! blocking a thread, while all are busy) and reads the decoder's `stream_async`, whose runs
//! are made on ort-bind's worker threads; every token goes through a channel to the
//! response body. When the client goes away the body is dropped and the channel closes;
//! the task then drops the token stream at once, which stops the run in flight (ONNX
//! Runtime stops after the kernel it is in), and the decoder goes back to the pool for the
//! next request.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use futures_core::Stream;
use ort_bind::decode::{DecoderPool, GenerateOptions, SharedBuffer};
use tokio::sync::mpsc;

// The includer's bindings of the decoder fixture (the path is relative to its crate).
use crate::lm;

/// The server's limits.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Positions a decoder holds (prompt and generated tokens).
    pub(crate) capacity: usize,
    /// The longest generation allowed.
    pub(crate) timeout: Duration,
}

/// Counters, for tests and logs.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    /// Generations that ran to their end (budget or stop token).
    pub(crate) finished: AtomicU64,
    /// Generations stopped because their client went away.
    pub(crate) abandoned: AtomicU64,
    /// Tokens generated, all requests together.
    pub(crate) tokens: AtomicU64,
}

/// Decoders to check out and the counters.
pub(crate) struct Server {
    pool: DecoderPool<lm::Model, SharedBuffer>,
    limits: Limits,
    /// What the server has done.
    pub(crate) counters: Counters,
}

/// How a generation ended.
enum End {
    Finished,
    Left,
    Failed(ort_bind::Error),
}

impl Server {
    /// A pool of at most `decoders` decoders of the model (made when first needed), each
    /// of `limits.capacity` positions, batch 1, one buffer per key/value written in place.
    pub(crate) fn new(model: &lm::Model, decoders: usize, limits: Limits) -> Self {
        let model = model.clone();
        Server {
            pool: DecoderPool::of_decoders(decoders, move || {
                model.shared_decoder(1, limits.capacity)
            }),
            limits,
            counters: Counters::default(),
        }
    }

    /// Generates after `prompt` on a decoder of the pool, sending each token as a line to
    /// `tx`; stops as soon as `tx`'s receiver is gone (the client left), the run in flight
    /// included.
    pub(crate) async fn generate(&self, prompt: &[i64], max: usize, tx: &mpsc::Sender<Bytes>) {
        let end = self.stream(prompt, max, tx).await;
        let counter = match end {
            End::Finished => &self.counters.finished,
            End::Left => &self.counters.abandoned,
            End::Failed(e) => {
                let _ = tx.send(Bytes::from(format!("error: {e}\n"))).await;
                return;
            }
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    async fn stream(&self, prompt: &[i64], max: usize, tx: &mpsc::Sender<Bytes>) -> End {
        let mut decoder = match self.pool.checkout_async().await {
            Ok(decoder) => decoder,
            Err(e) => return End::Failed(e),
        };
        let options = GenerateOptions::new(max).timeout(self.limits.timeout);
        let mut tokens = match decoder.stream_async(prompt, options) {
            Ok(tokens) => tokens,
            Err(e) => return End::Failed(e),
        };
        loop {
            // The next token, or the client leaving while it is computed: then the stream
            // is dropped at once, and so is the run it has in flight.
            let token = tokio::select! {
                token = std::future::poll_fn(|cx| Pin::new(&mut tokens).poll_next(cx)) => token,
                () = tx.closed() => return End::Left,
            };
            let token = match token {
                None => return End::Finished,
                Some(Ok(token)) => token,
                Some(Err(e)) => return End::Failed(e),
            };
            self.counters.tokens.fetch_add(1, Ordering::Relaxed);
            if tx.send(Bytes::from(format!("{token}\n"))).await.is_err() {
                return End::Left;
            }
        }
    }
}

/// The routes over `server`.
pub(crate) fn router(server: Arc<Server>) -> Router {
    Router::new()
        .route("/generate/{max}", post(generate))
        .with_state(server)
}

async fn generate(
    State(server): State<Arc<Server>>,
    Path(max): Path<usize>,
    body: String,
) -> Response {
    let prompt: Result<Vec<i64>, _> = body.split_whitespace().map(str::parse).collect();
    let prompt = match prompt {
        Ok(p) if !p.is_empty() => p,
        _ => {
            return (
                StatusCode::BAD_REQUEST,
                "prompt: token ids separated by spaces\n",
            )
                .into_response();
        }
    };
    // One token in flight: the generation runs at the pace the client reads.
    let (tx, rx) = mpsc::channel(1);
    tokio::spawn(async move { server.generate(&prompt, max, &tx).await });
    Body::from_stream(Lines(rx)).into_response()
}

/// The channel's lines as a body stream; dropping it (the client left) closes the channel.
struct Lines(mpsc::Receiver<Bytes>);

impl futures_core::Stream for Lines {
    type Item = Result<Bytes, std::convert::Infallible>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.0.poll_recv(cx).map(|line| line.map(Ok))
    }
}
