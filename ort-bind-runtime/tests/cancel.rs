//! Cancellation and timeouts: a `Terminator` stops a sync or async run from another thread,
//! the run returns a distinct error, and the binding runs correctly afterwards.

mod common;

use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{AddIo, SlowIo, check_slow, data, fill_slow};
use ort_bind_runtime::{Bound, Error, Result, Session, SessionOptions};

const SLOW_M: usize = 4096;

fn slow(threads: usize) -> Result<Bound<SlowIo>> {
    let session = Session::from_file(
        data("slow.onnx"),
        &SessionOptions::new().intra_threads(threads),
    )?;
    let mut bound = Bound::new(&session, SlowIo::new(SLOW_M)?)?;
    fill_slow(bound.inputs().as_mut_slice());
    Ok(bound)
}

fn check(bound: &Bound<SlowIo>) -> Result<()> {
    check_slow(bound.outputs().as_slice()).map_err(|reason| Error::AsyncRun { reason })
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[test]
fn terminate_stops_a_sync_run_from_another_thread() -> Result<()> {
    let mut bound = slow(1)?;
    let t = Instant::now();
    bound.run()?;
    let full = t.elapsed();
    check(&bound)?;

    let mut latencies = Vec::new();
    let mut late = 0;
    while latencies.len() < 5 {
        assert!(
            late < 10,
            "the run kept finishing before terminate() (load?)"
        );
        let stop = bound.terminator();
        let (tx, rx) = mpsc::channel();
        let killer = std::thread::spawn(move || {
            std::thread::sleep(full / 10);
            let at = Instant::now();
            stop.terminate().expect("terminate");
            tx.send(at).expect("send");
        });
        let result = bound.run();
        let returned = Instant::now();
        killer.join().expect("no panic");
        let at = rx.recv().expect("terminated");
        match result {
            Err(Error::Terminated) => latencies.push(returned.saturating_duration_since(at)),
            // The run beat the terminate (a loaded machine ran it faster than the first):
            // the request then stops the next run, which must say so.
            Ok(()) => {
                late += 1;
                assert!(matches!(bound.run(), Err(Error::Terminated)));
            }
            Err(e) => return Err(e),
        }
        // The binding stays usable: the next run is complete and right.
        bound.inputs().fill(0.0);
        fill_slow(bound.inputs().as_mut_slice());
        bound.run()?;
        check(&bound)?;
    }
    let med = median(latencies.clone());
    eprintln!(
        "slow.onnx m={SLOW_M} (128 kernels, one intra-op thread): full run {full:?}; \
         terminate() -> run() returned: median {med:?}, all {latencies:?}"
    );
    assert!(med < full / 10, "{med:?} of {full:?}");
    Ok(())
}

#[test]
fn terminate_while_idle_stops_the_next_run_only() -> Result<()> {
    let session = Session::from_file(data("add.onnx"), &SessionOptions::new().intra_threads(1))?;
    let mut bound = Bound::new(&session, AddIo::new(2)?)?;
    bound.inputs().0.fill(1.0);
    bound.inputs().1.fill(2.0);
    let stop = bound.terminator();
    stop.terminate()?;
    stop.terminate()?; // twice is once
    assert!(matches!(bound.run(), Err(Error::Terminated)));
    bound.run()?;
    assert_eq!(bound.outputs().as_slice(), &[3.0, 3.0]);
    // The handle outlives the binding harmlessly.
    drop(bound);
    stop.terminate()?;
    Ok(())
}

#[test]
fn terminate_stops_an_async_run() -> Result<()> {
    let mut bound = slow(2)?;
    let stop = bound.terminator();
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(20));
        stop.terminate().expect("terminate");
    });
    let err = futures_executor::block_on(bound.run_async()).unwrap_err();
    killer.join().expect("no panic");
    assert!(matches!(err, Error::Terminated), "{err:?}");
    futures_executor::block_on(bound.run_async())?;
    check(&bound)
}

#[test]
fn run_with_timeout_stops_a_slow_run_and_leaves_fast_runs_alone() -> Result<()> {
    let mut bound = slow(1)?;
    let mut overshoot = Vec::new();
    for timeout_ms in [5, 20, 50] {
        let timeout = Duration::from_millis(timeout_ms);
        let t = Instant::now();
        let err = bound.run_with_timeout(timeout).unwrap_err();
        let took = t.elapsed();
        assert!(
            matches!(err, Error::TimedOut { timeout: t } if t == timeout),
            "{err:?}"
        );
        assert!(took >= timeout, "not before the deadline: {took:?}");
        overshoot.push(took - timeout);
    }
    eprintln!("run_with_timeout: returned this long after the deadline: {overshoot:?}");
    bound.run_with_timeout(Duration::from_secs(600))?;
    check(&bound)?;

    // Many fast runs under a short timeout; their timer entries expire after they returned
    // and must not stop a later run.
    let session = Session::from_file(data("add.onnx"), &SessionOptions::new().intra_threads(1))?;
    let mut add = Bound::new(&session, AddIo::new(4)?)?;
    add.inputs().0.fill(1.0);
    add.inputs().1.fill(1.0);
    for _ in 0..10_000 {
        add.run_with_timeout(Duration::from_millis(30))?;
    }
    std::thread::sleep(Duration::from_millis(60));
    for _ in 0..100 {
        add.run()?;
    }
    assert_eq!(add.outputs().as_slice(), &[2.0; 4]);
    Ok(())
}
