//! Dynamic batching: concurrent single-item requests gathered into batches, each result
//! scattered back to its caller.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{AffineIo, AffineOut, data};
use ort_bind_runtime::{
    BatchOptions, Batcher, Batching, Bound, Dyn, Error, Fix, Result, Session, SessionOptions,
    TensorMut,
};

/// `affine.onnx` batches along `batch`: an item is one row of 4, its reply `2x + 1`.
struct Rows;

impl Batching<AffineIo> for Rows {
    type Item = [f32; 4];
    type Reply = [f32; 4];
    fn dims(&self, n: usize) -> usize {
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
        Bound::new(&session, AffineIo::new(*batch)?)
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
    let b = Arc::new(batcher(BatchOptions::default())?);
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
    assert_eq!(scatter_row(&t.view(), 1)?, [1.0, 2.0, 3.0, 4.0]);
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
