//! The example generation server (`examples/generate_server.rs`, routes in
//! `examples/generate_server/app.rs`) under test: streamed tokens equal Python
//! onnxruntime's greedy tokens (`greedy.json`); a client that disconnects after a few
//! tokens stops its generation long before its 4,000 (at the first token its dropped
//! channel refuses: checked apart from the socket's buffering), and the one decoder of the
//! pool then serves the next client.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use http_body_util::BodyExt;
use http_body_util::Full;
use hyper::body::Bytes;
use ort_bind_tests::decoders::Expected;

mod lm {
    ort_bind::bindings!("tests/fixtures/decoders/gqa_f32/model.onnx");
}

#[path = "../../examples/generate_server/app.rs"]
mod app;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Sends `POST /generate/{max}` with `prompt`; returns the response body as it streams.
async fn generate(
    addr: SocketAddr,
    prompt: &[i64],
    max: usize,
) -> Result<hyper::body::Incoming, BoxError> {
    let stream = tokio::net::TcpStream::connect(addr).await?;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await?;
    tokio::spawn(connection);
    let body: Vec<String> = prompt.iter().map(i64::to_string).collect();
    let request = hyper::Request::builder()
        .method("POST")
        .uri(format!("/generate/{max}"))
        .header("host", addr.to_string())
        .body(Full::new(Bytes::from(body.join(" "))))?;
    let response = sender.send_request(request).await?;
    assert_eq!(response.status(), 200);
    Ok(response.into_body())
}

/// The ids in `text`, one per line.
fn ids(text: &[u8]) -> Vec<i64> {
    std::str::from_utf8(text)
        .expect("utf-8")
        .lines()
        .map(|l| l.parse().expect("an id per line"))
        .collect()
}

/// The server over the decoder fixture with one decoder (room for 4,200 positions), and
/// Python's greedy tokens for its prompt.
fn one_decoder_server() -> Result<(Arc<app::Server>, Expected), BoxError> {
    let model = lm::Model::load_with(&ort_bind::SessionOptions::new().intra_threads(1))?;
    let limits = app::Limits {
        capacity: 4200,
        timeout: Duration::from_secs(60),
    };
    let want = ort_bind_tests::decoders::expected("gqa_f32", "greedy.json");
    Ok((Arc::new(app::Server::new(&model, 1, limits)), want))
}

#[test]
fn streams_pythons_tokens_and_stops_a_generation_whose_client_left() -> Result<(), BoxError> {
    // One decoder: each request waits for the one before to give it back.
    let (server, want) = one_decoder_server()?;
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        tokio::spawn(axum::serve(listener, app::router(Arc::clone(&server))).into_future());

        // A whole generation, streamed: Python's tokens.
        let body = generate(addr, &want.prompts[0], 64).await?;
        let all = body.collect().await?.to_bytes();
        assert_eq!(ids(&all), want.tokens[0][..64]);
        assert_eq!(server.counters.finished.load(Ordering::SeqCst), 1);

        // 4,000 tokens asked for; the client reads three lines and goes away.
        let before = server.counters.tokens.load(Ordering::SeqCst);
        let mut body = generate(addr, &want.prompts[0], 4000).await?;
        let mut read = Vec::new();
        while ids(&read).len() < 3 {
            let frame = body.frame().await.expect("a frame")?;
            read.extend_from_slice(&frame.into_data().expect("data"));
        }
        assert_eq!(ids(&read)[..3], want.tokens[0][..3]);
        drop(body);
        let start = Instant::now();
        while server.counters.abandoned.load(Ordering::SeqCst) == 0 {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "still generating"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        // Over HTTP the server sees the client go when a write fails, after the socket's
        // buffers took what was sent (8 to 21 tokens in runs here): the generation stops
        // there, far short of its 4,000 (the bound per token is checked below, without
        // the socket).
        let made = server.counters.tokens.load(Ordering::SeqCst) - before;
        assert!(made < 4000, "{made} tokens for a client that left");

        // The decoder is back: the next client gets its tokens.
        let body = generate(addr, &want.prompts[0], 20).await?;
        let all = body.collect().await?.to_bytes();
        assert_eq!(ids(&all), want.tokens[0][..20]);
        assert_eq!(server.counters.finished.load(Ordering::SeqCst), 2);
        Ok(())
    })
}

#[test]
fn a_generation_stops_at_the_first_token_nobody_takes() -> Result<(), BoxError> {
    let (server, want) = one_decoder_server()?;
    // The route's channel (one token in flight), read three times and then dropped, as
    // the response body is when its client goes.
    let (tx, mut rx) = tokio::sync::mpsc::channel(1);
    let generating = {
        let server = Arc::clone(&server);
        let prompt = want.prompts[0].clone();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .build()
                .expect("runtime");
            runtime.block_on(server.generate(&prompt, 4000, &tx));
        })
    };
    let mut read = Vec::new();
    for _ in 0..3 {
        read.extend_from_slice(&rx.blocking_recv().expect("a line"));
    }
    assert_eq!(ids(&read), want.tokens[0][..3]);
    drop(rx);
    generating.join().expect("the generation ends");
    // The three read, the one in the channel, the one whose send failed.
    let made = server.counters.tokens.load(Ordering::SeqCst);
    assert!(made <= 5, "{made} tokens for a client that left after 3");
    assert_eq!(server.counters.abandoned.load(Ordering::SeqCst), 1);
    Ok(())
}
