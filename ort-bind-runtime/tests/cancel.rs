//! Cancellation and timeouts: a `Terminator` stops a sync or async run from another thread,
//! the run returns a distinct error, and the binding runs correctly afterwards.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use common::{AddIo, SlowIo, check_slow, data, fill_slow};
use ort_bind_runtime::{Binding, Error, Pool, Result, Session, SessionOptions, Terminator};

const SLOW_M: usize = 4096;

fn slow(threads: usize) -> Result<Binding<SlowIo>> {
    let session = Session::from_file(
        data("slow.onnx"),
        &SessionOptions::new().intra_threads(threads),
    )?;
    let mut bound = Binding::new(&session, SlowIo::new(SLOW_M)?)?;
    fill_slow(bound.inputs().as_mut_slice());
    Ok(bound)
}

fn check(bound: &Binding<SlowIo>) -> Result<()> {
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
            // the stop was for that run only, so it does nothing.
            Ok(()) => late += 1,
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
    let mut bound = Binding::new(&session, AddIo::new(2)?)?;
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
    let mut add = Binding::new(&session, AddIo::new(4)?)?;
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

fn add(n: usize) -> Result<Binding<AddIo>> {
    let session = Session::from_file(data("add.onnx"), &SessionOptions::new().intra_threads(1))?;
    let mut bound = Binding::new(&session, AddIo::new(n)?)?;
    bound.inputs().0.fill(1.0);
    bound.inputs().1.fill(2.0);
    Ok(bound)
}

#[test]
fn a_stop_that_comes_after_its_run_finished_stops_nothing() -> Result<()> {
    let mut bound = add(2)?;
    let stop = bound.terminator();
    bound.run()?;
    // A late stop (a client-disconnect hook firing after the reply): the run it was taken
    // for has finished, so the handle is inert, clones included.
    stop.terminate()?;
    stop.clone().terminate()?;
    bound.run()?;
    assert_eq!(bound.outputs().as_slice(), &[3.0, 3.0]);
    // The same after a stopped run: the handle stopped its run and nothing after it.
    let stop = bound.terminator();
    stop.terminate()?;
    assert!(matches!(bound.run(), Err(Error::Terminated)));
    stop.terminate()?;
    bound.run()?;
    // And around timed runs, which number their runs with the same machinery.
    let stop = bound.terminator();
    bound.run_with_timeout(Duration::MAX)?;
    stop.terminate()?;
    bound.run_with_timeout(Duration::MAX)?;
    assert_eq!(bound.outputs().as_slice(), &[3.0, 3.0]);
    Ok(())
}

#[test]
fn a_stale_stop_never_reaches_the_next_request_on_a_pool() -> Result<()> {
    let session = Session::from_file(data("add.onnx"), &SessionOptions::new().intra_threads(1))?;
    let pool = Pool::new(1, move |n: &usize| Binding::new(&session, AddIo::new(*n)?));
    let request = |seed: f32| -> Result<ort_bind_runtime::PooledBinding<AddIo>> {
        let mut b = pool.get(&3)?;
        b.inputs().0.fill(seed);
        b.inputs().1.fill(1.0);
        Ok(b)
    };
    // Request A takes a terminator, runs, replies; its binding goes back to the pool.
    let mut a = request(1.0)?;
    let stop_a = a.terminator();
    a.run()?;
    drop(a);
    // A's client-disconnect hook fires late; request B gets the same binding.
    stop_a.terminate()?;
    let mut b = request(2.0)?;
    b.run()?;
    assert_eq!(b.outputs().as_slice(), &[3.0; 3]);
    drop(b);

    // A stop requested before A ran at all, and A returned the binding unrun: the return
    // leaves no pending stop for B.
    let a = request(1.0)?;
    let stop_a = a.terminator();
    stop_a.terminate()?;
    drop(a);
    let mut b = request(4.0)?;
    b.run()?;
    assert_eq!(b.outputs().as_slice(), &[5.0; 3]);
    stop_a.terminate()?;
    b.run()?;
    drop(b);

    // The same through async checkout and `run_async` (which needs 2 intra-op threads).
    let session = Session::from_file(data("add.onnx"), &SessionOptions::new().intra_threads(2))?;
    let pool = Pool::new(1, move |n: &usize| Binding::new(&session, AddIo::new(*n)?));
    futures_executor::block_on(async {
        let mut a = pool.get_async(&2).await?;
        let stop_a = a.terminator();
        a.inputs().0.fill(1.0);
        a.inputs().1.fill(1.0);
        a.run_async().await?;
        drop(a);
        stop_a.terminate()?;
        let mut b = pool.get_async(&2).await?;
        b.run_async().await?;
        assert_eq!(b.outputs().as_slice(), &[2.0; 2]);
        Ok(())
    })
}

#[test]
fn a_terminator_taken_before_a_run_stops_that_run() -> Result<()> {
    let mut bound = slow(1)?;
    let t = Instant::now();
    bound.run()?;
    let full = t.elapsed();
    // Taken while idle, used while the run it was taken for is in progress.
    let mut stopped = 0;
    for _ in 0..5 {
        let stop = bound.terminator();
        let killer = std::thread::spawn(move || {
            std::thread::sleep(full / 10);
            stop.terminate().expect("terminate");
        });
        let result = bound.run();
        killer.join().expect("no panic");
        match result {
            Err(Error::Terminated) => stopped += 1,
            Ok(()) => {} // the run beat the stop (load): then the stop is inert
            Err(e) => return Err(e),
        }
        bound.run()?;
        check(&bound)?;
    }
    assert!(stopped > 0, "no run was stopped");
    // Async: taken before the future is made, used mid-run.
    let mut bound = slow(2)?;
    let stop = bound.terminator();
    let killer = std::thread::spawn(move || {
        std::thread::sleep(full / 10);
        stop.terminate().expect("terminate");
    });
    let err = futures_executor::block_on(bound.run_async()).unwrap_err();
    killer.join().expect("no panic");
    assert!(matches!(err, Error::Terminated), "{err:?}");
    futures_executor::block_on(bound.run_async())?;
    check(&bound)
}

#[test]
fn a_terminate_racing_the_end_of_a_run_never_stops_the_run_after_it() -> Result<()> {
    let mut bound = add(64)?;
    let t = Instant::now();
    for _ in 0..100 {
        bound.run()?;
    }
    let one = (t.elapsed() / 100).max(Duration::from_micros(1));
    // A helper thread spins (no wake-up latency) until a round starts, then stops that
    // round's run after a delay that sweeps from before the run's start to after its end.
    let round = Arc::new(AtomicU64::new(0));
    let acked = Arc::new(AtomicU64::new(0));
    let handle: Arc<Mutex<Option<Terminator>>> = Arc::default();
    const ROUNDS: u64 = 4000;
    let helper = {
        let (round, acked, handle) = (Arc::clone(&round), Arc::clone(&acked), Arc::clone(&handle));
        std::thread::spawn(move || {
            for i in 1..=ROUNDS {
                while round.load(Ordering::Acquire) < i {
                    std::hint::spin_loop();
                }
                let delay = one * (i % 40) as u32 / 16;
                let t = Instant::now();
                while t.elapsed() < delay {
                    std::hint::spin_loop();
                }
                let stop = handle.lock().expect("lock").take().expect("a handle");
                stop.terminate().expect("terminate");
                acked.store(i, Ordering::Release);
            }
        })
    };
    let (mut stopped, mut finished_first) = (0, 0);
    for i in 1..=ROUNDS {
        *handle.lock().expect("lock") = Some(bound.terminator());
        round.store(i, Ordering::Release);
        match bound.run() {
            Ok(()) => finished_first += 1,
            Err(Error::Terminated) => stopped += 1,
            Err(e) => return Err(e),
        }
        while acked.load(Ordering::Acquire) < i {
            std::hint::spin_loop();
        }
        // The stop has been requested by now, before or after the run ended: the next run
        // is never the one it stops.
        if let Err(e) = bound.run() {
            panic!("the run after a raced stop failed in round {i}: {e:?}");
        }
        assert_eq!(bound.outputs().as_slice(), &[3.0; 64]);
    }
    helper.join().expect("no panic");
    eprintln!(
        "raced stops: {stopped} runs stopped, {finished_first} finished first (one run {one:?})"
    );
    assert!(stopped > 0, "no stop landed during a run");
    Ok(())
}
