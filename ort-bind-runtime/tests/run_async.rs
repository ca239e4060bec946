//! `Bound::run_async`: ONNX Runtime's `RunAsync` over the bound buffers, on two executors,
//! woken by the callback, and sound when its future is dropped or leaked mid-run.

mod common;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use common::{AddIo, AffineIo, SlowIo, check_slow, data, fill_slow};
use ort_bind_runtime::{Bound, Error, Result, Session, SessionOptions};

fn session(model: &str, threads: usize) -> Result<Session> {
    Session::from_file(data(model), &SessionOptions::new().intra_threads(threads))
}

#[test]
fn run_async_under_futures_block_on() -> Result<()> {
    let session = session("add.onnx", 2)?;
    let mut bound = Bound::new(&session, AddIo::new(3)?)?;
    let out_ptr = bound.outputs().as_slice().as_ptr();
    for round in 0..100 {
        let r = round as f32;
        bound.inputs().0.copy_from_slice(&[1.0, 2.0, r])?;
        bound.inputs().1.fill(r);
        futures_executor::block_on(bound.run_async())?;
        assert_eq!(bound.outputs().as_slice(), &[1.0 + r, 2.0 + r, 2.0 * r]);
    }
    assert_eq!(
        bound.outputs().as_slice().as_ptr(),
        out_ptr,
        "written in place"
    );
    // Sync and async runs mix on one binding, across dims changes.
    bound.set_dims(&5)?;
    bound.inputs().0.fill(1.0);
    bound.inputs().1.fill(2.0);
    bound.run()?;
    assert_eq!(bound.outputs().as_slice(), &[3.0; 5]);
    bound.inputs().1.fill(4.0);
    futures_executor::block_on(bound.run_async())?;
    assert_eq!(bound.outputs().as_slice(), &[5.0; 5]);
    Ok(())
}

#[test]
fn run_async_on_tokio_tasks_sharing_one_session() -> Result<()> {
    let session = session("add.onnx", 2)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .expect("tokio runtime");
    rt.block_on(async {
        let tasks: Vec<_> = (0..8)
            .map(|task| {
                let session = session.clone();
                tokio::spawn(async move {
                    let mut bound = Bound::new(&session, AddIo::new(1 + task)?)?;
                    for run in 0..200 {
                        if run % 50 == 49 {
                            bound.set_dims(&(1 + (task + run) % 17))?;
                        }
                        let base = (task * 1000 + run) as f32;
                        bound.inputs().0.fill(base);
                        bound.inputs().1.fill(1.0);
                        bound.run_async().await?;
                        assert!(
                            bound.outputs().as_slice().iter().all(|&v| v == base + 1.0),
                            "task {task} run {run}"
                        );
                    }
                    Ok::<_, Error>(())
                })
            })
            .collect();
        for t in tasks {
            t.await.expect("task panicked")?;
        }
        Ok(())
    })
}

#[test]
fn outputs_allocated_by_onnx_runtime_arrive_typed() -> Result<()> {
    let session = session("affine.onnx", 2)?;
    let mut bound = Bound::new(&session, AffineIo::new(2)?)?;
    assert!(
        bound.outputs().shape.is_none(),
        "nothing before the first run"
    );
    for batch in [2, 5, 1, 5] {
        bound.set_dims(&batch)?;
        bound.inputs().fill(batch as f32);
        futures_executor::block_on(bound.run_async())?;
        let out = bound.outputs();
        assert!(
            out.y
                .as_slice()
                .iter()
                .all(|&v| v == 2.0 * batch as f32 + 1.0)
        );
        assert_eq!(out.shape.expect("stored").as_slice(), &[batch as i64, 4]);
        // The sync path after an async one keeps working.
        bound.run()?;
        assert_eq!(
            bound.outputs().shape.expect("stored").as_slice(),
            &[batch as i64, 4]
        );
    }
    Ok(())
}

#[test]
fn a_session_with_one_intra_op_thread_is_refused() -> Result<()> {
    let session = session("add.onnx", 1)?;
    let mut bound = Bound::new(&session, AddIo::new(2)?)?;
    let err = futures_executor::block_on(bound.run_async()).unwrap_err();
    assert!(matches!(err, Error::AsyncRun { .. }), "{err:?}");
    assert!(err.to_string().contains("intra_threads(2)"), "{err}");
    // The binding is untouched and runs synchronously.
    bound.inputs().0.fill(1.0);
    bound.inputs().1.fill(1.0);
    bound.run()?;
    assert_eq!(bound.outputs().as_slice(), &[2.0, 2.0]);
    Ok(())
}

/// Counts wakes and lets the test wait for one.
#[derive(Default)]
struct Signal {
    wakes: AtomicUsize,
    woken: Mutex<bool>,
    cv: Condvar,
}
impl Wake for Signal {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.wakes.fetch_add(1, Ordering::SeqCst);
        *self.woken.lock().unwrap() = true;
        self.cv.notify_all();
    }
}
impl Signal {
    fn wait(&self) {
        let mut woken = self.woken.lock().unwrap();
        while !*woken {
            woken = self.cv.wait(woken).unwrap();
        }
        *woken = false;
    }
}

fn poll_once<F: Future + Unpin>(f: &mut F, waker: &Waker) -> Poll<F::Output> {
    Pin::new(f).poll(&mut Context::from_waker(waker))
}

const SLOW_M: usize = 4096;

#[test]
fn the_callback_wakes_the_task_once_and_no_poll_loop_runs() -> Result<()> {
    let session = session("slow.onnx", 2)?;
    let mut bound = Bound::new(&session, SlowIo::new(SLOW_M)?)?;
    fill_slow(bound.inputs().as_mut_slice());
    let signal = Arc::new(Signal::default());
    let waker = Waker::from(Arc::clone(&signal));
    let mut polls = 0;
    let result = {
        let mut fut = bound.run_async();
        loop {
            polls += 1;
            if let Poll::Ready(r) = poll_once(&mut fut, &waker) {
                break r;
            }
            signal.wait();
        }
    };
    result?;
    assert_eq!(polls, 2, "one poll to start, one after the wake");
    assert_eq!(signal.wakes.load(Ordering::SeqCst), 1);
    check_slow(bound.outputs().as_slice()).map_err(|reason| Error::AsyncRun { reason })?;
    Ok(())
}

#[test]
fn dropping_the_future_mid_run_stops_it_returns_at_once_and_frees_the_binding() -> Result<()> {
    let session = session("slow.onnx", 2)?;
    let mut bound = Bound::new(&session, SlowIo::new(SLOW_M)?)?;
    fill_slow(bound.inputs().as_mut_slice());
    let t = Instant::now();
    futures_executor::block_on(bound.run_async())?;
    let full = t.elapsed();

    let signal = Arc::new(Signal::default());
    let waker = Waker::from(Arc::clone(&signal));
    let mut fut = bound.run_async();
    assert!(poll_once(&mut fut, &waker).is_pending(), "the run started");
    std::thread::sleep(full / 10);
    let t = Instant::now();
    drop(fut);
    let drop_took = t.elapsed();
    eprintln!("full async run {full:?}; drop 10% in returned after {drop_took:?}");
    assert!(
        drop_took < full / 2,
        "stopped early: {drop_took:?} of {full:?}"
    );
    // Drop returns without waiting for ONNX Runtime to stop the run (which takes up to a
    // kernel, ~1/128 of the run here): it only asks. The next use waits instead.
    let mut drops = vec![drop_took];
    for _ in 0..8 {
        let mut fut = bound.run_async();
        assert!(poll_once(&mut fut, &waker).is_pending(), "the run started");
        std::thread::sleep(full / 20);
        let t = Instant::now();
        drop(fut);
        drops.push(t.elapsed());
    }
    drops.sort();
    assert!(
        drops[drops.len() / 2] < Duration::from_micros(100).min(full / 256),
        "drop waited: {drops:?} (a kernel takes about {:?})",
        full / 128
    );
    // The buffers are free: overwrite the input, run again, results are right.
    bound.inputs().fill(0.0);
    fill_slow(bound.inputs().as_mut_slice());
    futures_executor::block_on(bound.run_async())?;
    check_slow(bound.outputs().as_slice()).map_err(|reason| Error::AsyncRun { reason })?;
    // A future dropped before its first poll never started anything.
    drop(bound.run_async());
    bound.run()?;
    check_slow(bound.outputs().as_slice()).map_err(|reason| Error::AsyncRun { reason })?;
    Ok(())
}

#[test]
fn a_leaked_future_makes_the_binding_wait_before_its_next_use() -> Result<()> {
    let session = session("slow.onnx", 2)?;
    let mut bound = Bound::new(&session, SlowIo::new(SLOW_M)?)?;
    fill_slow(bound.inputs().as_mut_slice());
    let waker = Waker::from(Arc::new(Signal::default()));
    let mut fut = bound.run_async();
    assert!(poll_once(&mut fut, &waker).is_pending());
    std::mem::forget(fut);
    // Reading waits for the leaked run; writing stops it first; both are then safe.
    let _ = bound.outputs().as_slice()[0];
    bound.inputs().fill(0.0);
    fill_slow(bound.inputs().as_mut_slice());
    bound.run()?;
    check_slow(bound.outputs().as_slice()).map_err(|reason| Error::AsyncRun { reason })?;
    // Leaked again, then the binding is dropped: the drop waits for ONNX Runtime.
    let mut fut = bound.run_async();
    assert!(poll_once(&mut fut, &waker).is_pending());
    std::mem::forget(fut);
    drop(bound);
    Ok(())
}

#[test]
fn an_async_timeout_resolves_to_timed_out_and_the_binding_runs_on() -> Result<()> {
    let session = session("slow.onnx", 2)?;
    let mut bound = Bound::new(&session, SlowIo::new(SLOW_M)?)?;
    fill_slow(bound.inputs().as_mut_slice());
    let t = Instant::now();
    let err = futures_executor::block_on(bound.run_async_with_timeout(Duration::from_millis(5)))
        .unwrap_err();
    let took = t.elapsed();
    assert!(
        matches!(err, Error::TimedOut { timeout } if timeout == Duration::from_millis(5)),
        "{err:?}"
    );
    eprintln!("async run with a 5 ms timeout returned after {took:?}");
    // A timeout that does not pass changes nothing.
    futures_executor::block_on(bound.run_async_with_timeout(Duration::from_secs(600)))?;
    check_slow(bound.outputs().as_slice()).map_err(|reason| Error::AsyncRun { reason })?;
    futures_executor::block_on(bound.run_async())?;
    check_slow(bound.outputs().as_slice()).map_err(|reason| Error::AsyncRun { reason })?;
    Ok(())
}

/// Drop latency of in-flight `run_async` futures: `in_flight` bindings of `slow.onnx`
/// (one session, 2 intra-op threads) each start a run; after a tenth of a run's time each
/// future is dropped and the drop timed. Returns every drop's duration.
fn drop_latencies(in_flight: usize, trials: usize) -> Result<Vec<Duration>> {
    let session = session("slow.onnx", 2)?;
    let mut bounds = (0..in_flight)
        .map(|_| {
            let mut b = Bound::new(&session, SlowIo::new(512)?)?;
            fill_slow(b.inputs().as_mut_slice());
            Ok(b)
        })
        .collect::<Result<Vec<_>>>()?;
    let t = Instant::now();
    futures_executor::block_on(bounds[0].run_async())?;
    let full = t.elapsed();
    let waker = Waker::from(Arc::new(Signal::default()));
    let mut drops = Vec::with_capacity(trials * in_flight);
    for _ in 0..trials {
        let mut futures: Vec<_> = bounds.iter_mut().map(|b| b.run_async()).collect();
        for f in &mut futures {
            assert!(poll_once(f, &waker).is_pending(), "the run started");
        }
        std::thread::sleep(full / 10);
        for f in futures {
            let t = Instant::now();
            drop(f);
            drops.push(t.elapsed());
        }
    }
    // Every binding still runs right afterwards.
    for b in &mut bounds {
        b.run()?;
        check_slow(b.outputs().as_slice()).map_err(|reason| Error::AsyncRun { reason })?;
    }
    Ok(drops)
}

/// Prints p50/p99 of dropping an in-flight future with 1 and 4 runs in flight
/// (`cargo test --release -p ort-bind-runtime --test run_async -- --ignored --nocapture`).
#[test]
#[ignore = "a measurement: prints drop latencies"]
fn drop_latency_with_1_and_4_runs_in_flight() -> Result<()> {
    for in_flight in [1, 4] {
        let mut d = drop_latencies(in_flight, 200 / in_flight)?;
        d.sort();
        let pct = |p: usize| d[(d.len() * p / 100).min(d.len() - 1)];
        eprintln!(
            "DROP {in_flight} in flight: {} drops, p50 {:?}, p99 {:?}, max {:?}",
            d.len(),
            pct(50),
            pct(99),
            d[d.len() - 1]
        );
    }
    Ok(())
}
