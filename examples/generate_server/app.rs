//! The routes of the generation server (`examples/generate_server.rs`), apart from its
//! command line so that `ort-bind-tests/tests/generate_server.rs` serves them too.
//!
//! `POST /generate/{max}` takes prompt token ids (text, separated by spaces) and answers
//! with the generated ids, one per line, each sent as soon as it is picked. A generation
//! runs on a blocking thread with a decoder checked out of a small pool; every token goes
//! through a channel to the response body. When the client goes away the body is dropped,
//! the next send fails, and the generation stops there: at most one more run, and the
//! decoder goes back to the pool for the next request.

use std::collections::VecDeque;
use std::ops::ControlFlow;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use ort_bind::decode::{Decoder, GenerateOptions, SharedBuffer};
use tokio::sync::mpsc;

// The includer's bindings of the decoder fixture (the path is relative to its crate).
use crate::lm;

/// A decoder of the model, batch 1, one buffer per key/value written in place.
pub(crate) type LmDecoder = Decoder<lm::Model, SharedBuffer>;

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

/// Decoders to check out (a request waits while all are busy) and the counters.
pub(crate) struct Server {
    idle: Mutex<VecDeque<LmDecoder>>,
    returned: Condvar,
    limits: Limits,
    /// What the server has done.
    pub(crate) counters: Counters,
}

impl Server {
    /// `decoders` decoders of the model, each of `limits.capacity` positions.
    pub(crate) fn new(
        model: &lm::Model,
        decoders: usize,
        limits: Limits,
    ) -> ort_bind::Result<Self> {
        let idle = (0..decoders)
            .map(|_| model.shared_decoder(1, limits.capacity))
            .collect::<ort_bind::Result<_>>()?;
        Ok(Server {
            idle: Mutex::new(idle),
            returned: Condvar::new(),
            limits,
            counters: Counters::default(),
        })
    }

    fn checkout(&self) -> LmDecoder {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(d) = idle.pop_front() {
                return d;
            }
            idle = self.returned.wait(idle).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn checkin(&self, decoder: LmDecoder) {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        idle.push_back(decoder);
        self.returned.notify_one();
    }

    /// Generates after `prompt` on a decoder of the pool, sending each token as a line to
    /// `tx`; stops when `tx`'s receiver is gone (the client left).
    pub(crate) fn generate(&self, prompt: &[i64], max: usize, tx: &mpsc::Sender<Bytes>) {
        let mut decoder = self.checkout();
        let options = GenerateOptions::new(max).timeout(self.limits.timeout);
        let mut left = false;
        let result = decoder.generate(prompt, &options, |tokens| {
            self.counters.tokens.fetch_add(1, Ordering::Relaxed);
            match tx.blocking_send(Bytes::from(format!("{}\n", tokens[0]))) {
                Ok(()) => ControlFlow::Continue(()),
                Err(_) => {
                    left = true;
                    ControlFlow::Break(())
                }
            }
        });
        match (result, left) {
            (_, true) => self.counters.abandoned.fetch_add(1, Ordering::Relaxed),
            (Ok(_), false) => self.counters.finished.fetch_add(1, Ordering::Relaxed),
            (Err(e), false) => {
                let _ = tx.blocking_send(Bytes::from(format!("error: {e}\n")));
                0
            }
        };
        self.checkin(decoder);
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
    tokio::task::spawn_blocking(move || server.generate(&prompt, max, &tx));
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
