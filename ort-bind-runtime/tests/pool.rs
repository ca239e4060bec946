//! `Pool`: blocking, non-blocking and async checkout of bindings of one model, handed back
//! by RAII guards, with capacity reused across request sizes.

mod common;

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::{AddIo, data};
use ort_bind_runtime::{Binding, Error, Pool, Result, Session, SessionOptions};

fn add_pool(capacity: usize, threads: usize) -> Result<(Pool<AddIo>, Arc<AtomicUsize>)> {
    let session = Session::from_file(
        data("add.onnx"),
        &SessionOptions::new().intra_threads(threads),
    )?;
    let made = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&made);
    let pool = Pool::new(capacity, move |n: &usize| {
        counter.fetch_add(1, Ordering::SeqCst);
        Binding::new(&session, AddIo::new(*n)?)
    });
    Ok((pool, made))
}

fn serve(bound: &mut Binding<AddIo>, n: usize, seed: f32) -> Result<()> {
    assert_eq!(bound.inputs().0.len(), n, "set to the request's dims");
    bound.inputs().0.fill(seed);
    bound.inputs().1.fill(1.0);
    bound.run()?;
    assert!(bound.outputs().as_slice().iter().all(|&v| v == seed + 1.0));
    Ok(())
}

#[test]
fn blocking_checkout_from_many_threads_never_exceeds_capacity() -> Result<()> {
    let (pool, made) = add_pool(2, 1)?;
    let workers: Vec<_> = (0..6)
        .map(|t| {
            let pool = pool.clone();
            std::thread::spawn(move || -> Result<()> {
                for i in 0..300 {
                    let n = 1 + (t * 7 + i) % 32;
                    let mut b = pool.get(&n)?;
                    serve(&mut b, n, (t * 1000 + i) as f32)?;
                }
                Ok(())
            })
        })
        .collect();
    for w in workers {
        w.join().expect("no panic")?;
    }
    // Two when the threads overlapped (they normally do; a loaded machine may serialise them).
    let made_now = made.load(Ordering::SeqCst);
    assert!((1..=2).contains(&made_now), "{made_now} made");
    assert_eq!(
        (pool.created(), pool.idle()),
        (made_now, made_now),
        "all came back"
    );
    // Two held at once: the second is made, a third would wait.
    let (a, b) = (pool.get(&3)?, pool.get(&3)?);
    assert!(pool.try_get(&3)?.is_none());
    drop((a, b));
    assert_eq!(made.load(Ordering::SeqCst), 2);
    Ok(())
}

#[test]
fn try_get_does_not_wait_and_detach_frees_room() -> Result<()> {
    let (pool, made) = add_pool(1, 1)?;
    let first = pool.try_get(&4)?.expect("room for one");
    assert!(pool.try_get(&4)?.is_none(), "all checked out");
    let detached = first.detach().expect("a binding");
    assert_eq!(pool.created(), 0);
    let mut second = pool.try_get(&4)?.expect("room again");
    serve(&mut second, 4, 2.0)?;
    drop(second);
    assert_eq!(made.load(Ordering::SeqCst), 2);
    drop(detached);
    Ok(())
}

#[test]
fn the_pool_prefers_a_binding_already_set_to_the_request_dims() -> Result<()> {
    let (pool, _) = add_pool(3, 1)?;
    let a = pool.get(&8)?;
    let b = pool.get(&16)?;
    let c = pool.get(&24)?;
    let ptr = |p: &Binding<AddIo>| p.outputs().as_slice().as_ptr() as usize;
    let (pa, pb, pc) = (ptr(&a), ptr(&b), ptr(&c));
    drop((a, b, c));
    for (n, expected) in [(16, pb), (8, pa), (24, pc), (16, pb)] {
        let got = pool.get(&n)?;
        assert_eq!(ptr(&got), expected, "n = {n}");
    }
    Ok(())
}

#[test]
fn after_fill_smaller_requests_reuse_capacity() -> Result<()> {
    let (pool, made) = add_pool(2, 1)?;
    pool.fill(&64)?;
    assert_eq!((made.load(Ordering::SeqCst), pool.idle()), (2, 2));
    let buffers = |pool: &Pool<AddIo>, n: usize| -> Result<Vec<(usize, usize)>> {
        let a = pool.get(&n)?;
        let b = pool.get(&n)?;
        Ok([&a, &b]
            .iter()
            .map(|p| (p.io().x.as_slice().as_ptr() as usize, p.io().x.capacity()))
            .collect())
    };
    let mut at_64 = buffers(&pool, 64)?;
    at_64.sort();
    for n in [1, 63, 8, 64, 30] {
        let mut now = buffers(&pool, n)?;
        now.sort();
        assert_eq!(now, at_64, "n = {n}: the same buffers, no reallocation");
    }
    Ok(())
}

#[test]
fn a_failing_make_gives_its_room_back() -> Result<()> {
    let session = Session::from_file(data("add.onnx"), &SessionOptions::new().intra_threads(1))?;
    let pool = Pool::new(1, move |n: &usize| {
        if *n == 0 {
            return Err(Error::Dim {
                dim: "n".into(),
                reason: "refused by the test".into(),
            });
        }
        Binding::new(&session, AddIo::new(*n)?)
    });
    assert!(pool.get(&0).is_err());
    assert_eq!(pool.created(), 0);
    let mut b = pool.get(&3)?;
    serve(&mut b, 3, 1.0)
}

#[test]
fn async_checkout_serves_sixteen_tasks_through_two_bindings() -> Result<()> {
    let (pool, made) = add_pool(2, 2)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .expect("tokio");
    rt.block_on(async {
        let tasks: Vec<_> = (0..16)
            .map(|task| {
                let pool = pool.clone();
                tokio::spawn(async move {
                    for i in 0..50 {
                        let n = 1 + (task + i) % 9;
                        let mut b = pool.get_async(&n).await?;
                        assert_eq!(b.inputs().0.len(), n);
                        let seed = (task * 100 + i) as f32;
                        b.inputs().0.fill(seed);
                        b.inputs().1.fill(1.0);
                        b.run_async().await?;
                        assert!(b.outputs().as_slice().iter().all(|&v| v == seed + 1.0));
                    }
                    Ok::<_, Error>(())
                })
            })
            .collect();
        for t in tasks {
            t.await.expect("task panicked")?;
        }
        // A checkout that gives up (timeout) leaves the pool whole.
        let held = (pool.get_async(&4).await?, pool.get_async(&4).await?);
        let gave_up = tokio::time::timeout(Duration::from_millis(20), pool.get_async(&4)).await;
        assert!(gave_up.is_err(), "nothing was free");
        drop(held);
        let again = pool.get_async(&4).await?;
        drop(again);
        Ok::<_, Error>(())
    })?;
    assert_eq!(made.load(Ordering::SeqCst), 2);
    assert_eq!((pool.created(), pool.idle()), (2, 2));
    Ok(())
}

#[test]
fn async_checkout_works_under_futures_block_on() -> Result<()> {
    let (pool, _) = add_pool(1, 2)?;
    let held = pool.get(&2)?;
    let waiter = {
        let pool = pool.clone();
        std::thread::spawn(move || -> Result<f32> {
            let mut b = futures_executor::block_on(pool.get_async(&5))?;
            serve(&mut b, 5, 3.0)?;
            Ok(b.outputs().as_slice()[4])
        })
    };
    std::thread::sleep(Duration::from_millis(20));
    drop(held); // handed to the waiting future, which is woken
    assert_eq!(waiter.join().expect("no panic")?, 4.0);
    Ok(())
}

/// A handler whose `run_async` future is dropped mid-run (its client went away) returns its
/// binding at once; the pool hands out an idle binding that is not still stopping that run,
/// and the stopped one serves correctly once ONNX Runtime has let go of it.
#[test]
fn a_dropped_async_run_returns_its_binding_at_once() -> Result<()> {
    use common::{SlowIo, check_slow, fill_slow};
    let session = Session::from_file(data("slow.onnx"), &SessionOptions::new().intra_threads(2))?;
    let pool = Pool::new(2, move |m: &usize| Binding::new(&session, SlowIo::new(*m)?));
    pool.fill(&4096)?;
    let mut a = pool.get(&4096)?;
    fill_slow(a.inputs().as_mut_slice());
    let t = Instant::now();
    a.run()?;
    let full = t.elapsed();
    let a_input = a.inputs().as_mut_slice().as_ptr();
    let waker = noop_waker();
    let mut fut = a.run_async();
    let started = std::pin::Pin::new(&mut fut).poll(&mut std::task::Context::from_waker(&waker));
    assert!(started.is_pending());
    std::thread::sleep(full / 10);
    let t = Instant::now();
    drop(fut);
    drop(a);
    let returned = t.elapsed();
    assert!(
        returned < full / 20,
        "dropping the future and the guard took {returned:?}"
    );
    // Two idle, one still stopping: a checkout gets the other, and runs it right.
    let mut b = pool.get(&4096)?;
    assert_ne!(
        b.inputs().as_mut_slice().as_ptr(),
        a_input,
        "the pool handed out the binding still stopping its run"
    );
    fill_slow(b.inputs().as_mut_slice());
    b.run()?;
    check_slow(b.outputs().as_slice()).map_err(|reason| Error::AsyncRun { reason })?;
    // The stopped one, checked out while the other is out, waits for its run and serves.
    let mut c = pool.get(&4096)?;
    assert_eq!(c.inputs().as_mut_slice().as_ptr(), a_input);
    fill_slow(c.inputs().as_mut_slice());
    c.run()?;
    check_slow(c.outputs().as_slice()).map_err(|reason| Error::AsyncRun { reason })?;
    Ok(())
}

fn noop_waker() -> std::task::Waker {
    struct Noop;
    impl std::task::Wake for Noop {
        fn wake(self: Arc<Self>) {}
    }
    std::task::Waker::from(Arc::new(Noop))
}
