//! Serving through generated modules: `Model::pool` (typed bindings checked out per
//! request) and, where the batch dim is known, `Model::batcher` with the generated
//! `Item`/`Reply`/`BatchSpec`.
//!
//! `dynamic.onnx` (tests/fixtures/README.md): `y = x @ W`, `W = arange(12).reshape(4, 3)
//! / 10`, `z = relu(y)`; x `[batch, 4]`, y `[batch, 3]`, z `[N, 3]`. In `dynamic` ONNX
//! Runtime allocates `z`; `dynamic_renamed` names `N` as `batch`, so every value has
//! `batch` as axis 0 and the module gets a batcher.

use std::sync::Arc;
use std::time::Duration;

use ort_bind::{BatchOptions, BatchSizing, Error, Row};
use ort_bind_tests::fixtures::dynamic_y;

mod dynamic {
    ort_bind::include_bindings!("dynamic");
}
mod rows {
    ort_bind::include_bindings!("rows");
}
mod dynamic_renamed {
    ort_bind::include_bindings!("dynamic_renamed");
}

fn assert_close(got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g - w).abs() <= 1e-5 * w.abs().max(1.0),
            "{got:?} vs {want:?}"
        );
    }
}

/// A distinct item per (client, request), so a row scattered to the wrong caller shows.
fn item(client: usize, i: usize) -> Vec<f32> {
    let base = (client * 100 + i) as f32 / 7.0;
    vec![base, -base, 0.5 * base, 1.0 - base]
}

#[test]
fn generated_batcher_gives_each_concurrent_caller_its_own_row() -> ort_bind::Result<()> {
    let model = dynamic_renamed::Model::load()?;
    let batcher = Arc::new(model.batcher(BatchOptions {
        max_batch: 8,
        max_delay: Duration::from_millis(5),
        workers: 2,
        sizing: BatchSizing::Fixed,
    })?);
    let clients: Vec<_> = (0..8)
        .map(|client| {
            let batcher = Arc::clone(&batcher);
            std::thread::spawn(move || -> ort_bind::Result<()> {
                for i in 0..40 {
                    let x = item(client, i);
                    let reply = batcher.submit(dynamic_renamed::Item {
                        x: Row::new([4], x.clone())?,
                    })?;
                    let y = dynamic_y(&x);
                    assert_eq!((reply.y.dims(), reply.z.dims()), (&[3][..], &[3][..]));
                    assert_close(reply.y.data(), &y);
                    let z: Vec<f32> = y.iter().map(|v| v.max(0.0)).collect();
                    assert_close(reply.z.data(), &z);
                }
                Ok(())
            })
        })
        .collect();
    for c in clients {
        c.join().expect("client thread")?;
    }
    let (runs, items) = batcher.stats();
    assert_eq!(items, 8 * 40);
    assert!(
        runs < items,
        "{runs} runs for {items} items: nothing was batched"
    );
    Ok(())
}

#[test]
fn a_malformed_item_fails_alone_and_the_batcher_keeps_serving() -> ort_bind::Result<()> {
    let model = dynamic_renamed::Model::load()?;
    let batcher = model.batcher(BatchOptions::default())?;
    // x is [batch, 4]: a row of 3 is refused whatever its data, and so is a row of rank 2
    // holding the right number of elements.
    for dims in [vec![3], vec![2, 2]] {
        let n = dims.iter().product();
        match batcher.submit(dynamic_renamed::Item {
            x: Row::new(dims.clone(), vec![1.0; n])?,
        }) {
            Err(e @ (Error::Shape { .. } | Error::Dim { .. })) => {
                assert!(e.to_string().contains('x'), "{e}")
            }
            other => panic!("{dims:?}: {other:?}"),
        }
    }
    let x = item(1, 2);
    let reply = batcher.submit(dynamic_renamed::Item {
        x: Row::new([4], x.clone())?,
    })?;
    assert_close(reply.y.data(), &dynamic_y(&x));
    Ok(())
}

#[test]
fn items_batch_with_items_of_their_own_shape_and_each_reply_has_its_row_s_dims()
-> ort_bind::Result<()> {
    let model = rows::Model::load()?;
    // One worker that waits long for a full batch of 3: it runs the first 3 rows of length
    // 3 together and the 3 rows of length 5 together, whatever the order they came in.
    let batcher = model.batcher(BatchOptions {
        max_batch: 3,
        max_delay: Duration::from_secs(2),
        workers: 1,
        sizing: BatchSizing::Fixed,
    })?;
    let data = |n: usize, k: usize| -> Vec<f32> { (0..n).map(|i| (i * 10 + k) as f32).collect() };
    let pending: Vec<_> = [3, 5, 3, 5, 5, 3]
        .into_iter()
        .enumerate()
        .map(|(k, n)| {
            let x = Row::new([n], data(n, k))?;
            Ok((n, k, batcher.submit_async(rows::Item { x })))
        })
        .collect::<ort_bind::Result<_>>()?;
    for (n, k, reply) in pending {
        let reply = futures_executor::block_on(reply)?;
        let x = data(n, k);
        assert_eq!(reply.twice.dims(), [n]);
        assert_eq!(
            reply.twice.data(),
            x.iter().map(|v| 2.0 * v).collect::<Vec<_>>()
        );
        assert_eq!(
            (reply.total.dims(), reply.total.data()),
            (&[1][..], &[x.iter().sum::<f32>()][..])
        );
    }
    assert_eq!(batcher.stats(), (2, 6), "one run per row length");
    Ok(())
}

#[test]
fn generated_pool_hands_out_typed_bindings_for_each_request_s_dims() -> ort_bind::Result<()> {
    let model = dynamic::Model::load()?;
    let pool: dynamic::Pool = model.pool(2);
    pool.fill(&dynamic::Dims { batch: 6 })?;
    assert_eq!(pool.created(), 2);
    for batch in [6usize, 2, 5, 1] {
        let x: Vec<f32> = (0..batch * 4).map(|v| v as f32 / 3.0 - 2.0).collect();
        let mut a: dynamic::PooledBinding = pool.get(&dynamic::Dims { batch })?;
        // Both bindings are out at once; a third checkout finds none idle.
        let b = pool.try_get(&dynamic::Dims { batch })?;
        assert!(b.is_some());
        assert!(pool.try_get(&dynamic::Dims { batch })?.is_none());
        a.inputs().x.copy_from_slice(&x)?;
        a.run()?;
        let out = a.outputs();
        assert_close(out.y.as_slice(), &dynamic_y(&x));
        // `z` is sized as the graph computes it (`[batch, 3]`), pre-allocated.
        let z = out.z;
        assert_eq!(z.dims(), [batch, 3]);
    }
    // Async checkout, on any executor.
    let mut c = futures_executor::block_on(pool.get_async(&dynamic::Dims { batch: 3 }))?;
    c.inputs().x.fill(1.0);
    c.run()?;
    assert_close(c.outputs().y.as_slice(), &dynamic_y(&[1.0; 12]));
    Ok(())
}

mod add {
    ort_bind::include_bindings!("add");
}
/// `slow.onnx` (`ort-bind-runtime/tests/data/make_models.py`): 64 x (MatMul by
/// `W = I/2 + 1e-3`, Tanh) over float32 `[m, 256]`; a row whose elements are all `c` stays
/// constant, each layer mapping `v` to `tanh(v * (0.5 + 256e-3))`.
mod slow {
    ort_bind::bindings!("../ort-bind-runtime/tests/data/slow.onnx");
}

/// Fills row `r` of `x` (`[m, 256]`) with `(r % 7 + 1) / 8`.
fn fill_slow(x: &mut [f32]) {
    for (r, row) in x.chunks_mut(256).enumerate() {
        row.fill((r % 7 + 1) as f32 / 8.0);
    }
}

/// Whether `y` is what `slow.onnx` gives for `fill_slow`'s rows.
fn slow_is_right(y: &[f32]) -> bool {
    y.chunks(256).enumerate().all(|(r, row)| {
        let mut v = (r % 7 + 1) as f32 / 8.0;
        for _ in 0..64 {
            v = (v * (0.5 + 256e-3)).tanh();
        }
        row.iter().all(|&got| (got - v).abs() <= 1e-4)
    })
}

/// The binding `Model::bind` makes has the serving API of a pooled binding or a `Binding`:
/// `run_with_timeout`, `terminator`, `run_async`, `run_async_with_timeout`.
#[test]
fn a_generated_binding_has_the_serving_api() -> ort_bind::Result<()> {
    // Timed runs that finish in time, and a stop that is for one run only.
    let model = add::Model::load()?;
    let mut binding: add::Binding = model.bind(add::Dims { n: 3 })?;
    binding.inputs().x.copy_from_slice(&[1.0, 2.0, 3.0])?;
    binding.inputs().y.fill(10.0);
    binding.run_with_timeout(Duration::from_secs(60))?;
    assert_eq!(binding.outputs().sum.as_slice(), &[11.0, 12.0, 13.0]);
    let stop = binding.terminator();
    stop.terminate()?; // before the run it is for: that run stops at once
    assert!(matches!(binding.run(), Err(Error::Terminated)));
    stop.terminate()?; // its run is over: nothing happens
    binding.run()?;
    assert_eq!(binding.outputs().sum.as_slice(), &[11.0, 12.0, 13.0]);

    // A slow model, stopped mid-run by its terminator and by a timeout.
    let options = ort_bind::SessionOptions::new().intra_threads(2);
    let model = slow::Model::load_with(&options)?;
    let mut binding: slow::Binding = model.bind(slow::Dims { m: 2048 })?;
    fill_slow(binding.inputs().x.as_mut_slice());
    let t = std::time::Instant::now();
    binding.run()?;
    let full = t.elapsed();
    assert!(slow_is_right(binding.outputs().y.as_slice()));
    let stop = binding.terminator();
    let hook = std::thread::spawn(move || {
        std::thread::sleep(full / 10);
        stop.terminate()
    });
    let t = std::time::Instant::now();
    let result = binding.run();
    let took = t.elapsed();
    hook.join().expect("no panic")?;
    assert!(
        matches!(result, Err(Error::Terminated)),
        "{result:?} after {took:?} of {full:?}"
    );
    let err = binding.run_with_timeout(full / 10).unwrap_err();
    assert!(matches!(err, Error::TimedOut { .. }), "{err:?}");

    // Asynchronous runs (the session has 2 intra-op threads: ONNX Runtime's `RunAsync`),
    // on any executor.
    futures_executor::block_on(binding.run_async())?;
    assert!(slow_is_right(binding.outputs().y.as_slice()));
    let err = futures_executor::block_on(binding.run_async_with_timeout(full / 10)).unwrap_err();
    assert!(matches!(err, Error::TimedOut { .. }), "{err:?}");
    let stop = binding.terminator();
    let hook = std::thread::spawn(move || {
        std::thread::sleep(full / 10);
        stop.terminate()
    });
    let result = futures_executor::block_on(binding.run_async());
    hook.join().expect("no panic")?;
    assert!(matches!(result, Err(Error::Terminated)), "{result:?}");
    futures_executor::block_on(binding.run_async_with_timeout(Duration::from_secs(600)))?;
    assert!(slow_is_right(binding.outputs().y.as_slice()));
    Ok(())
}
