//! Dynamic batching: concurrent single-item requests gathered into batches, each result
//! scattered back to its caller.

mod common;

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{AffineIo, AffineOut, data};
use ort_bind_runtime::{
    BatchOptions, BatchSizing, Batcher, Batching, Binding, Dyn, Error, Fix, Result, Session,
    SessionOptions, TensorMut,
};

/// `affine.onnx` batches along `batch`: an item is one row of 4, its reply `2x + 1`.
struct Rows;

impl Batching<AffineIo> for Rows {
    type Item = [f32; 4];
    type Reply = [f32; 4];
    fn item_dims(&self, item: &[f32; 4]) -> Result<usize> {
        // A NaN marks a malformed request here (the generated batchers check shapes).
        match item.iter().any(|v| v.is_nan()) {
            true => Err(Error::Dim {
                dim: "x".into(),
                reason: "NaN in the item".into(),
            }),
            false => Ok(1),
        }
    }
    fn batch_dims(&self, _: &usize, n: usize) -> usize {
        n
    }
    fn gather(
        &self,
        x: &mut TensorMut<'_, f32, (Dyn, Fix<4>)>,
        row: usize,
        item: &[f32; 4],
    ) -> Result<()> {
        x.as_mut_slice()[row * 4..][..4].copy_from_slice(item);
        Ok(())
    }
    fn scatter(&self, out: &AffineOut<'_>, row: usize) -> Result<[f32; 4]> {
        let mut reply = [0.0; 4];
        reply.copy_from_slice(&out.y.as_slice()[row * 4..][..4]);
        Ok(reply)
    }
}

fn batcher(options: BatchOptions) -> Result<Batcher<AffineIo, Rows>> {
    let session = Session::from_file(data("affine.onnx"), &SessionOptions::new().intra_threads(1))?;
    Batcher::new(Rows, options, move |batch: &usize| {
        Binding::new(&session, AffineIo::new(*batch)?)
    })
}

fn item(client: usize, i: usize) -> [f32; 4] {
    let base = (client * 1000 + i) as f32;
    [base, base + 0.25, base + 0.5, -base]
}

fn expected(x: [f32; 4]) -> [f32; 4] {
    x.map(|v| 2.0 * v + 1.0)
}

#[test]
fn concurrent_requests_are_batched_and_each_gets_its_own_result() -> Result<()> {
    let b = Arc::new(batcher(BatchOptions {
        max_batch: 8,
        max_delay: Duration::from_millis(5),
        workers: 2,
        sizing: BatchSizing::Fixed,
    })?);
    const CLIENTS: usize = 16;
    const EACH: usize = 100;
    let clients: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let b = Arc::clone(&b);
            std::thread::spawn(move || -> Result<()> {
                for i in 0..EACH {
                    let x = item(c, i);
                    assert_eq!(b.submit(x)?, expected(x), "client {c} request {i}");
                }
                Ok(())
            })
        })
        .collect();
    for c in clients {
        c.join().expect("no panic")?;
    }
    let (runs, items) = b.stats();
    eprintln!(
        "{items} requests in {runs} runs: {:.1} per run",
        items as f64 / runs as f64
    );
    assert_eq!(items, (CLIENTS * EACH) as u64);
    assert!(
        runs * 2 < items,
        "batched: {runs} runs for {items} requests"
    );
    Ok(())
}

#[test]
fn async_requests_from_tokio_tasks() -> Result<()> {
    let b = Arc::new(batcher(BatchOptions {
        sizing: BatchSizing::Fixed,
        ..BatchOptions::default()
    })?);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .expect("tokio");
    rt.block_on(async {
        let tasks: Vec<_> = (0..16)
            .map(|c| {
                let b = Arc::clone(&b);
                tokio::spawn(async move {
                    for i in 0..50 {
                        let x = item(c, i);
                        assert_eq!(b.submit_async(x).await?, expected(x));
                    }
                    Ok::<_, Error>(())
                })
            })
            .collect();
        for t in tasks {
            t.await.expect("task panicked")?;
        }
        Ok::<_, Error>(())
    })?;
    let (runs, items) = b.stats();
    assert_eq!(items, 800);
    assert!(runs < items, "{runs} runs");
    Ok(())
}

#[test]
fn a_lone_request_waits_at_most_about_max_delay() -> Result<()> {
    let b = batcher(BatchOptions {
        max_batch: 64,
        max_delay: Duration::from_millis(20),
        workers: 1,
        sizing: BatchSizing::Fixed,
    })?;
    let t = Instant::now();
    assert_eq!(b.submit([1.0, 2.0, 3.0, 4.0])?, [3.0, 5.0, 7.0, 9.0]);
    let took = t.elapsed();
    assert!(took >= Duration::from_millis(20), "{took:?}");
    assert!(took < Duration::from_millis(500), "{took:?}");
    assert_eq!(b.stats(), (1, 1));
    Ok(())
}

#[test]
fn dropping_the_batcher_serves_what_is_queued() -> Result<()> {
    let b = batcher(BatchOptions {
        max_batch: 4,
        max_delay: Duration::from_secs(5),
        workers: 1,
        sizing: BatchSizing::Fixed,
    })?;
    let pending: Vec<_> = (0..6).map(|i| b.submit_async(item(0, i))).collect();
    drop(b); // closes: the worker stops waiting for more and drains the queue
    for (i, p) in pending.into_iter().enumerate() {
        assert_eq!(futures_executor::block_on(p)?, expected(item(0, i)));
    }
    Ok(())
}

#[test]
fn rows_are_items_along_axis_0_and_a_wrong_item_length_is_an_error() -> Result<()> {
    use ort_bind_runtime::Tensor;
    use ort_bind_runtime::batch::{gather_row, scatter_row};
    let mut t = Tensor::<f32, (Dyn, Fix<2>, Fix<2>)>::new("x", &[3, 2, 2])?;
    gather_row(&mut t.view_mut(), 1, &[1.0, 2.0, 3.0, 4.0])?;
    assert_eq!(
        t.as_slice(),
        [0., 0., 0., 0., 1., 2., 3., 4., 0., 0., 0., 0.]
    );
    let row = scatter_row(&t.view(), 1)?;
    assert_eq!(
        (row.dims(), row.data()),
        (&[2, 2][..], &[1.0, 2.0, 3.0, 4.0][..])
    );
    match gather_row(&mut t.view_mut(), 2, &[1.0; 3]) {
        Err(Error::Length {
            tensor,
            expected: 4,
            found: 3,
            dims,
        }) => assert_eq!((tensor.as_str(), dims), ("x", vec![2, 2])),
        other => panic!("{other:?}"),
    }
    let past = scatter_row(&t.view(), 3).unwrap_err().to_string();
    assert_eq!(
        past,
        "tensor `x`: dims [3, 2, 2] do not fit: row 3 is past the last of its 3 rows"
    );
    let scalar = Tensor::<f32, ()>::new("s", &[])?;
    assert!(scalar.view().row(0).is_err());
    Ok(())
}

/// Opened by a test to let a held batch go on.
type Gate = Arc<(std::sync::Mutex<bool>, std::sync::Condvar)>;

/// `Rows` with a gate: gathering item `[-1, ..]` waits until the gate opens, so a test can
/// hold the only worker busy; gathering item `[-2, ..]` fails (a batch that fails).
struct Gated {
    gate: Gate,
}

impl Gated {
    fn new() -> (Self, Gate) {
        let gate = Arc::new((std::sync::Mutex::new(false), std::sync::Condvar::new()));
        (
            Gated {
                gate: Arc::clone(&gate),
            },
            gate,
        )
    }
}

fn open(gate: &(std::sync::Mutex<bool>, std::sync::Condvar)) {
    *gate.0.lock().unwrap() = true;
    gate.1.notify_all();
}

impl Batching<AffineIo> for Gated {
    type Item = [f32; 4];
    type Reply = [f32; 4];
    fn item_dims(&self, item: &[f32; 4]) -> Result<usize> {
        Rows.item_dims(item)
    }
    fn batch_dims(&self, _: &usize, n: usize) -> usize {
        n
    }
    fn gather(
        &self,
        x: &mut TensorMut<'_, f32, (Dyn, Fix<4>)>,
        row: usize,
        item: &[f32; 4],
    ) -> Result<()> {
        if item[0] == -1.0 {
            let mut open = self.gate.0.lock().unwrap();
            while !*open {
                open = self.gate.1.wait(open).unwrap();
            }
        }
        if item[0] == -2.0 {
            return Err(Error::Dim {
                dim: "x".into(),
                reason: "the test's failing item".into(),
            });
        }
        Rows.gather(x, row, item)
    }
    fn scatter(&self, out: &AffineOut<'_>, row: usize) -> Result<[f32; 4]> {
        Rows.scatter(out, row)
    }
}

fn gated(max_batch: usize, max_delay: Duration) -> Result<(Batcher<AffineIo, Gated>, Gate)> {
    let session = Session::from_file(data("affine.onnx"), &SessionOptions::new().intra_threads(1))?;
    let (spec, gate) = Gated::new();
    let options = BatchOptions {
        max_batch,
        max_delay,
        workers: 1,
        sizing: BatchSizing::Fixed,
    };
    let b = Batcher::new(spec, options, move |n: &usize| {
        Binding::new(&session, AffineIo::new(*n)?)
    })?;
    Ok((b, gate))
}

const BLOCKER: [f32; 4] = [-1.0, 0.0, 0.0, 0.0];

/// Waits until the worker has taken the blocker (it is counted before it gathers).
fn until_running(b: &Batcher<AffineIo, Gated>) {
    let t = Instant::now();
    while b.stats().0 == 0 {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "the blocker never ran"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn a_dropped_request_that_no_batch_took_is_never_run() -> Result<()> {
    let (b, gate) = gated(1, Duration::ZERO)?;
    let blocker = b.submit_async(BLOCKER);
    until_running(&b);
    let gone = b.submit_async(item(1, 1));
    let kept = b.submit_async(item(2, 2));
    drop(gone);
    open(&gate);
    assert_eq!(futures_executor::block_on(kept)?, expected(item(2, 2)));
    assert_eq!(futures_executor::block_on(blocker)?, expected(BLOCKER));
    assert_eq!(b.stats(), (2, 2), "the dropped request ran");
    Ok(())
}

#[test]
fn a_request_past_its_timeout_fails_alone_and_is_never_run() -> Result<()> {
    let (b, gate) = gated(1, Duration::ZERO)?;
    let b = Arc::new(b);
    let blocker = b.submit_async(BLOCKER);
    until_running(&b);
    // Blocking and async callers alike: the timer answers them while the worker is busy.
    let t = Instant::now();
    match b.submit_with_timeout(item(3, 3), Duration::from_millis(40)) {
        Err(Error::TimedOut { timeout }) => assert_eq!(timeout, Duration::from_millis(40)),
        other => panic!("{other:?}"),
    }
    let waited = t.elapsed();
    assert!(
        waited >= Duration::from_millis(40) && waited < Duration::from_secs(2),
        "{waited:?}"
    );
    let late = b.submit_async_with_timeout(item(4, 4), Duration::from_millis(10));
    assert!(matches!(
        futures_executor::block_on(late),
        Err(Error::TimedOut { .. })
    ));
    // A timeout that does not pass changes nothing.
    let in_time = b.submit_async_with_timeout(item(5, 5), Duration::from_secs(30));
    open(&gate);
    assert_eq!(futures_executor::block_on(in_time)?, expected(item(5, 5)));
    futures_executor::block_on(blocker)?;
    assert_eq!(b.stats(), (2, 2), "a timed-out request ran");
    Ok(())
}

#[test]
fn every_caller_of_a_failed_batch_gets_its_cause_to_match_on() -> Result<()> {
    let (b, gate) = gated(3, Duration::from_secs(5))?;
    open(&gate);
    let replies: Vec<_> = [item(6, 0), [-2.0, 0.0, 0.0, 0.0], item(6, 1)]
        .into_iter()
        .map(|x| b.submit_async(x))
        .collect();
    for reply in replies {
        match futures_executor::block_on(reply) {
            Err(Error::Batch { cause }) => match &*cause {
                Error::Dim { reason, .. } => assert_eq!(reason, "the test's failing item"),
                other => panic!("cause {other:?}"),
            },
            other => panic!("{other:?}"),
        }
    }
    // The batcher keeps serving, and a malformed item fails alone, before any batch.
    assert!(matches!(b.submit([f32::NAN; 4]), Err(Error::Dim { .. })));
    assert_eq!(b.submit(item(7, 0))?, expected(item(7, 0)));
    Ok(())
}

#[test]
fn dropping_a_batcher_never_blocks_and_shutdown_waits_for_its_workers() -> Result<()> {
    let (b, gate) = gated(1, Duration::ZERO)?;
    let blocker = b.submit_async(BLOCKER);
    until_running(&b);
    let queued = b.submit_async(item(8, 0));
    let t = Instant::now();
    drop(b); // the worker is stuck in a batch: drop must not wait for it
    assert!(t.elapsed() < Duration::from_millis(50), "{:?}", t.elapsed());
    open(&gate);
    assert_eq!(futures_executor::block_on(blocker)?, expected(BLOCKER));
    assert_eq!(
        futures_executor::block_on(queued)?,
        expected(item(8, 0)),
        "queued requests are served"
    );

    let (b, gate) = gated(1, Duration::ZERO)?;
    let blocker = b.submit_async(BLOCKER);
    until_running(&b);
    let mut shutdown = std::pin::pin!(b.shutdown());
    let waker = std::task::Waker::noop();
    let mut cx = std::task::Context::from_waker(waker);
    assert!(
        shutdown.as_mut().poll(&mut cx).is_pending(),
        "a worker is still in its batch"
    );
    open(&gate);
    futures_executor::block_on(shutdown);
    futures_executor::block_on(blocker)?;

    let (b, gate) = gated(1, Duration::ZERO)?;
    open(&gate);
    let served = b.submit_async(item(9, 0));
    b.shutdown().wait();
    assert_eq!(futures_executor::block_on(served)?, expected(item(9, 0)));
    Ok(())
}

/// `slow.onnx` (64 x MatMul 256x256 + Tanh) batches well: a batch of 8 costs little more
/// than one item.
struct SlowRows;

impl Batching<common::SlowIo> for SlowRows {
    type Item = f32;
    type Reply = Vec<f32>;
    fn item_dims(&self, _: &f32) -> Result<usize> {
        Ok(1)
    }
    fn batch_dims(&self, _: &usize, n: usize) -> usize {
        n
    }
    fn gather(
        &self,
        x: &mut TensorMut<'_, f32, (Dyn, Fix<256>)>,
        row: usize,
        item: &f32,
    ) -> Result<()> {
        x.row_mut(row)?.fill(*item);
        Ok(())
    }
    fn scatter(
        &self,
        y: &ort_bind_runtime::TensorRef<'_, f32, (Dyn, Fix<256>)>,
        row: usize,
    ) -> Result<Vec<f32>> {
        Ok(y.row(row)?.to_vec())
    }
}

#[test]
fn the_adaptive_batcher_settles_on_big_batches_for_a_model_that_gains_from_them() -> Result<()> {
    let session = Session::from_file(data("slow.onnx"), &SessionOptions::new().intra_threads(1))?;
    let b = Arc::new(Batcher::new(
        SlowRows,
        BatchOptions::default(),
        move |m: &usize| Binding::new(&session, common::SlowIo::new(*m)?),
    )?);
    let clients: Vec<_> = (0..16)
        .map(|c| {
            let b = Arc::clone(&b);
            std::thread::spawn(move || -> Result<()> {
                for i in 0..200 {
                    let v = ((c + i) % 7 + 1) as f32 / 8.0;
                    let y = b.submit(v)?;
                    let mut expect = f64::from(v);
                    for _ in 0..common::SLOW_LAYERS {
                        expect = (expect * (0.5 + 256e-3)).tanh();
                    }
                    assert!(
                        y.iter()
                            .all(|&g| (f64::from(g) - expect).abs() < 5e-4 * expect.abs()),
                        "client {c} request {i}"
                    );
                }
                Ok(())
            })
        })
        .collect();
    for c in clients {
        c.join().expect("no panic")?;
    }
    let report = b.sizing();
    eprintln!("{report:?}, (runs, items) {:?}", b.stats());
    assert!(report.chosen >= 4, "{report:?}");
    assert!(
        report.throughput.iter().all(|(_, t)| t.is_some()),
        "every size measured: {report:?}"
    );
    Ok(())
}
