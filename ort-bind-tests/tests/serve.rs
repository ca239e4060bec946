//! The example service (`examples/serve.rs`, routes in `examples/serve/app.rs`) under a
//! bounded HTTP load test on 127.0.0.1: 16 concurrent clients, each on its own
//! keep-alive connection, send 10 requests to each detection route (320 in all, within
//! two minutes), and every response is checked against Python onnxruntime 1.31.1's
//! output for the same page (`tests/reference/ppocr_det_serve.txt`, written by
//! `tests/reference/ppocr_det_serve_reference.py`). Each client cycles through 8
//! distinct pages, so a row scattered to the wrong request fails the check.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use ort_bind_tests::fixtures::ppocr_page;

/// PP-OCRv4's detector as the example binds it (`build.rs`: `ppocr_det_batched`).
mod det {
    ort_bind::include_bindings!("ppocr_det_batched");
}
#[path = "../../examples/serve/app.rs"]
mod app;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

const CLIENTS: usize = 16;
const PER_CLIENT: usize = 10;
const LIMIT: Duration = Duration::from_secs(120);
const SAMPLES: usize = 32;

/// One page's expected output: the sum of each row, and sampled values.
#[derive(Debug)]
struct Expected {
    rows: Vec<f64>,
    samples: Vec<f32>,
}

/// The reference file: the image size, and one entry per page.
fn reference() -> ((usize, usize), Vec<Expected>) {
    let path = ort_bind_tests::paths::reference("ppocr_det_serve.txt");
    let text = std::fs::read_to_string(&path).expect("reference file");
    let mut lines = text.lines();
    let size: Vec<usize> = lines.next().expect("size line")["size ".len()..]
        .split(' ')
        .map(|v| v.parse().expect("size"))
        .collect();
    let mut pages = Vec::new();
    while let Some(header) = lines.next() {
        assert_eq!(header, format!("page {}", pages.len()));
        let numbers = |line: Option<&str>, tag: &str| -> Vec<f64> {
            let line = line.expect("reference line");
            line.strip_prefix(tag)
                .expect("tagged line")
                .split(' ')
                .map(|v| v.parse().expect("number"))
                .collect()
        };
        let rows = numbers(lines.next(), "rows ");
        let samples = numbers(lines.next(), "samples ");
        pages.push(Expected {
            rows,
            samples: samples.into_iter().map(|v| v as f32).collect(),
        });
    }
    ((size[0], size[1]), pages)
}

fn sample_at(i: usize, h: usize, w: usize) -> (usize, usize) {
    ((i * 37 + 5) % h, (i * 53 + 11) % w)
}

fn check(map: &[f32], want: &Expected, (h, w): (usize, usize), what: &str) {
    assert_eq!(map.len(), h * w, "{what}");
    for (r, &row) in want.rows.iter().enumerate() {
        let sum: f64 = map[r * w..(r + 1) * w].iter().map(|&v| f64::from(v)).sum();
        assert!((sum - row).abs() < 1e-3, "{what}: row {r}: {sum} vs {row}");
    }
    for (i, &s) in want.samples.iter().enumerate().take(SAMPLES) {
        let (r, c) = sample_at(i, h, w);
        let got = map[r * w + c];
        assert!((got - s).abs() < 1e-4, "{what}: ({r}, {c}): {got} vs {s}");
    }
}

fn to_bytes(values: &[f32]) -> Bytes {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn to_floats(body: &[u8]) -> Vec<f32> {
    body.chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// One HTTP/1.1 connection that sends requests one after another (keep-alive).
struct Client {
    addr: SocketAddr,
    sender: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
}

impl Client {
    async fn connect(addr: SocketAddr) -> Result<Client, BoxError> {
        let stream = tokio::net::TcpStream::connect(addr).await?;
        let (sender, connection) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await?;
        tokio::spawn(connection);
        Ok(Client { addr, sender })
    }

    async fn request(
        &mut self,
        method: &str,
        path: &str,
        body: Bytes,
    ) -> Result<(u16, Bytes), BoxError> {
        self.sender.ready().await?;
        let request = hyper::Request::builder()
            .method(method)
            .uri(path)
            .header("host", self.addr.to_string())
            .body(Full::new(body))?;
        let response = self.sender.send_request(request).await?;
        let status = response.status().as_u16();
        Ok((status, response.into_body().collect().await?.to_bytes()))
    }
}

/// `CLIENTS` clients, `PER_CLIENT` requests each to `route`, every reply checked.
async fn load(addr: SocketAddr, route: &'static str) -> Result<(), BoxError> {
    let (size, pages) = reference();
    let pages = Arc::new(pages);
    let inputs: Arc<Vec<Bytes>> = Arc::new(
        (0..pages.len())
            .map(|k| to_bytes(&ppocr_page(k, size.0, size.1)))
            .collect(),
    );
    let mut clients = tokio::task::JoinSet::new();
    for client in 0..CLIENTS {
        let (pages, inputs) = (Arc::clone(&pages), Arc::clone(&inputs));
        clients.spawn(async move {
            let mut http = Client::connect(addr).await?;
            for i in 0..PER_CLIENT {
                let k = (client + i) % pages.len();
                let (status, body) = http.request("POST", route, inputs[k].clone()).await?;
                let what = format!("{route}, client {client}, request {i}, page {k}");
                assert_eq!(status, 200, "{what}: {}", String::from_utf8_lossy(&body));
                check(&to_floats(&body), &pages[k], size, &what);
            }
            Ok::<(), BoxError>(())
        });
    }
    while let Some(done) = clients.join_next().await {
        done??;
    }
    Ok(())
}

#[test]
fn the_service_answers_every_concurrent_request_as_python_onnxruntime_does() -> Result<(), BoxError>
{
    let ((h, w), _) = reference();
    let model = det::Model::from_file(
        app::model_path()?,
        &ort_bind::SessionOptions::new().intra_threads(2),
    )?;
    let detector = Arc::new(app::Detector::new(
        &model,
        app::Limits {
            height: h,
            width: w,
            batch: ort_bind::BatchOptions {
                max_batch: 8,
                max_delay: Duration::from_millis(2),
                workers: 2,
                sizing: ort_bind::BatchSizing::Adaptive,
            },
            pool: 4,
        },
    )?);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        tokio::spawn(async move { axum::serve(listener, app::router(detector)).await });

        let started = std::time::Instant::now();
        tokio::time::timeout(LIMIT, async {
            load(addr, "/detect").await?;
            load(addr, "/detect/single").await
        })
        .await
        .map_err(|_| format!("320 requests did not finish within {LIMIT:?}"))??;
        eprintln!(
            "{} requests answered and checked in {:?}",
            2 * CLIENTS * PER_CLIENT,
            started.elapsed()
        );

        let mut http = Client::connect(addr).await?;
        // The batched route gathered requests: fewer runs than requests.
        let (status, stats) = http.request("GET", "/stats", Bytes::new()).await?;
        assert_eq!(status, 200);
        let stats = String::from_utf8(stats.to_vec())?;
        let numbers: Vec<u64> = stats
            .split_whitespace()
            .filter_map(|t| t.parse().ok())
            .collect();
        let [runs, items] = numbers[..] else {
            panic!("stats: {stats}")
        };
        assert_eq!(items, (CLIENTS * PER_CLIENT) as u64, "{stats}");
        assert!(runs < items, "nothing was batched: {stats}");
        eprintln!("batched route: {stats}");

        // A body of the wrong size is the caller's error, and says which size it wants.
        let (status, body) = http
            .request("POST", "/detect", Bytes::from_static(b"abc"))
            .await?;
        assert_eq!(status, 400);
        assert_eq!(
            String::from_utf8_lossy(&body),
            format!(
                "expected a [3, {h}, {w}] float32 image ({} bytes), got 3 bytes\n",
                3 * h * w * 4
            )
        );
        let (status, body) = http.request("GET", "/health", Bytes::new()).await?;
        assert_eq!((status, &body[..]), (200, &b"ok"[..]));
        Ok(())
    })
}
