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

use ort_bind::{BatchOptions, Error};

mod dynamic {
    ort_bind::include_bindings!("dynamic");
}
mod dynamic_renamed {
    ort_bind::include_bindings!("dynamic_renamed");
}

/// `x @ W` for rows of 4.
fn expected_y(x: &[f32]) -> Vec<f32> {
    let rows = x.len() / 4;
    let mut y = vec![0.0; rows * 3];
    for r in 0..rows {
        for c in 0..3 {
            y[r * 3 + c] = (0..4)
                .map(|k| x[r * 4 + k] * (k * 3 + c) as f32 / 10.0)
                .sum();
        }
    }
    y
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
    let batcher = Arc::new(model.batcher(
        dynamic_renamed::Dims { batch: 0 },
        BatchOptions {
            max_batch: 8,
            max_delay: Duration::from_millis(5),
            workers: 2,
        },
    )?);
    let clients: Vec<_> = (0..8)
        .map(|client| {
            let batcher = Arc::clone(&batcher);
            std::thread::spawn(move || -> ort_bind::Result<()> {
                for i in 0..40 {
                    let x = item(client, i);
                    let reply = batcher.submit(dynamic_renamed::Item { x: x.clone() })?;
                    let y = expected_y(&x);
                    assert_close(&reply.y, &y);
                    assert_close(&reply.z, &y.iter().map(|v| v.max(0.0)).collect::<Vec<_>>());
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
    let batcher = model.batcher(dynamic_renamed::Dims { batch: 0 }, BatchOptions::default())?;
    match batcher.submit(dynamic_renamed::Item { x: vec![1.0; 3] }) {
        Err(Error::Length {
            tensor,
            expected: 4,
            found: 3,
            ..
        }) => assert_eq!(tensor, "x"),
        other => panic!("{other:?}"),
    }
    let x = item(1, 2);
    let reply = batcher.submit(dynamic_renamed::Item { x: x.clone() })?;
    assert_close(&reply.y, &expected_y(&x));
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
        let mut a: dynamic::Pooled = pool.get(&dynamic::Dims { batch })?;
        // Both bindings are out at once; a third checkout finds none idle.
        let b = pool.try_get(&dynamic::Dims { batch })?;
        assert!(b.is_some());
        assert!(pool.try_get(&dynamic::Dims { batch })?.is_none());
        a.inputs().x.copy_from_slice(&x)?;
        a.run()?;
        let out = a.outputs();
        assert_close(out.y.as_slice(), &expected_y(&x));
        // `z` is allocated by ONNX Runtime: typed, and `None` only before a run.
        let z = out.z.expect("produced by the run");
        assert_eq!(z.dims(), [batch, 3]);
    }
    // Async checkout, on any executor.
    let mut c = futures_executor::block_on(pool.get_async(&dynamic::Dims { batch: 3 }))?;
    c.inputs().x.fill(1.0);
    c.run()?;
    assert_close(c.outputs().y.as_slice(), &expected_y(&[1.0; 12]));
    Ok(())
}
