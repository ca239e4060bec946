//! `Binding::run_async` over the bound buffers, on two executors, woken by the run's end, and
//! sound when its future is dropped or leaked mid-run; on both paths: ONNX Runtime's
//! `RunAsync` (sessions with 2 intra-op threads) and ort-bind's worker threads (sessions with
//! one).

mod common;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use common::{AddIo, AffineIo, SlowIo, check_slow, data, fill_slow};
use ort_bind_runtime::{Binding, Error, Pool, Result, Session, SessionOptions};

/// Intra-op threads of the sessions the tests run on: 2 runs on ONNX Runtime's `RunAsync`,
/// 1 on ort-bind's worker threads.
const PATHS: [usize; 2] = [2, 1];

fn session(model: &str, threads: usize) -> Result<Session> {
    Session::from_file(data(model), &SessionOptions::new().intra_threads(threads))
}

#[test]
fn run_async_under_futures_block_on() -> Result<()> {
    let session = session("add.onnx", 2)?;
    let mut bound = Binding::new(&session, AddIo::new(3)?)?;
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
                    let mut bound = Binding::new(&session, AddIo::new(1 + task)?)?;
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
    let mut bound = Binding::new(&session, AffineIo::new(2)?)?;
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

/// With one intra-op thread (`RunAsync` has no pool to run on) the run goes to ort-bind's
/// worker threads: the same outputs as `run`, under `block_on` and on tokio tasks, written
/// in place, with outputs ONNX Runtime allocates arriving typed.
#[test]
fn one_intra_op_thread_runs_on_the_worker_threads_with_the_same_outputs_as_run() -> Result<()> {
    let session = session("add.onnx", 1)?;
    let mut bound = Binding::new(&session, AddIo::new(3)?)?;
    let out_ptr = bound.outputs().as_slice().as_ptr();
    for round in 0..200 {
        let r = round as f32;
        bound.inputs().0.copy_from_slice(&[1.0, 2.0, r])?;
        bound.inputs().1.fill(r);
        futures_executor::block_on(bound.run_async())?;
        let got = bound.outputs().as_slice().to_vec();
        bound.run()?;
        assert_eq!(got, bound.outputs().as_slice(), "round {round}");
        assert_eq!(got, [1.0 + r, 2.0 + r, 2.0 * r]);
    }
    assert_eq!(bound.outputs().as_slice().as_ptr(), out_ptr, "in place");
    bound.set_dims(&5)?;
    bound.inputs().0.fill(1.0);
    bound.inputs().1.fill(4.0);
    futures_executor::block_on(bound.run_async_with_timeout(Duration::from_secs(600)))?;
    assert_eq!(bound.outputs().as_slice(), &[5.0; 5]);

    // Outputs ONNX Runtime allocates, across dims changes and mixed with `run`.
    let affine = self::session("affine.onnx", 1)?;
    let mut bound = Binding::new(&affine, AffineIo::new(2)?)?;
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
        bound.run()?;
        futures_executor::block_on(bound.run_async())?;
        assert_eq!(
            bound.outputs().shape.expect("stored").as_slice(),
            &[batch as i64, 4]
        );
    }

    // Tokio tasks sharing the session, each with its own binding.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .expect("tokio runtime");
    rt.block_on(async {
        let tasks: Vec<_> = (0..8)
            .map(|task| {
                let session = session.clone();
                tokio::spawn(async move {
                    let mut bound = Binding::new(&session, AddIo::new(1 + task)?)?;
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

/// A terminator stops a run on the worker threads (taken before the run, fired during
/// it), and only that run.
#[test]
fn a_terminator_stops_a_run_on_the_worker_threads() -> Result<()> {
    let session = session("slow.onnx", 1)?;
    let mut bound = Binding::new(&session, SlowIo::new(SLOW_M)?)?;
    fill_slow(bound.inputs().as_mut_slice());
    let t = Instant::now();
    futures_executor::block_on(bound.run_async())?;
    let full = t.elapsed();
    let stop = bound.terminator();
    let hook = stop.clone();
    let fire = std::thread::spawn(move || {
        std::thread::sleep(full / 10);
        hook.terminate()
    });
    let t = Instant::now();
    let err = futures_executor::block_on(bound.run_async()).unwrap_err();
    let took = t.elapsed();
    fire.join().expect("no panic")?;
    assert!(matches!(err, Error::Terminated), "{err:?}");
    assert!(took < full / 2, "stopped after {took:?} of {full:?}");
    // Too late for any later run.
    stop.terminate()?;
    futures_executor::block_on(bound.run_async())?;
    check_slow(bound.outputs().as_slice()).map_err(|reason| Error::AsyncRun { reason })?;
    // Terminated before it starts: stops at once.
    bound.terminator().terminate()?;
    let err = futures_executor::block_on(bound.run_async()).unwrap_err();
    assert!(matches!(err, Error::Terminated), "{err:?}");
    futures_executor::block_on(bound.run_async())?;
    check_slow(bound.outputs().as_slice()).map_err(|reason| Error::AsyncRun { reason })?;
    Ok(())
}

/// Many futures at once on a pool of bindings over one session with one intra-op thread
/// (more runs than worker threads: some wait in the queue), on tokio: every reply right.
#[test]
fn many_concurrent_futures_on_a_pool_over_one_single_threaded_session() -> Result<()> {
    let session = session("add.onnx", 1)?;
    let pool = Pool::new(4, move |n: &usize| Binding::new(&session, AddIo::new(*n)?));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .expect("tokio runtime");
    rt.block_on(async {
        let tasks: Vec<_> = (0..32)
            .map(|task| {
                let pool = pool.clone();
                tokio::spawn(async move {
                    for run in 0..100 {
                        let n = 1 + (task + run) % 3;
                        let mut b = pool.get_async(&n).await?;
                        let base = (task * 1000 + run) as f32;
                        b.inputs().0.fill(base);
                        b.inputs().1.fill(0.5);
                        if run % 7 == 3 {
                            // A client gone mid-run: its future is dropped, the binding
                            // goes back to the pool.
                            let fut = b.run_async();
                            let _ = tokio::time::timeout(Duration::from_micros(1), fut).await;
                            continue;
                        }
                        b.run_async().await?;
                        assert_eq!(
                            b.outputs().as_slice(),
                            vec![base + 0.5; n].as_slice(),
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
    for threads in PATHS {
        the_callback_wakes_the_task_once_and_no_poll_loop_runs_on(threads)?;
    }
    Ok(())
}

fn the_callback_wakes_the_task_once_and_no_poll_loop_runs_on(threads: usize) -> Result<()> {
    let session = session("slow.onnx", threads)?;
    let mut bound = Binding::new(&session, SlowIo::new(SLOW_M)?)?;
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
    for threads in PATHS {
        dropping_the_future_mid_run_stops_it_returns_at_once_and_frees_the_binding_on(threads)?;
    }
    Ok(())
}

fn dropping_the_future_mid_run_stops_it_returns_at_once_and_frees_the_binding_on(
    threads: usize,
) -> Result<()> {
    let session = session("slow.onnx", threads)?;
    let mut bound = Binding::new(&session, SlowIo::new(SLOW_M)?)?;
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
    for threads in PATHS {
        a_leaked_future_makes_the_binding_wait_before_its_next_use_on(threads)?;
    }
    Ok(())
}

fn a_leaked_future_makes_the_binding_wait_before_its_next_use_on(threads: usize) -> Result<()> {
    let session = session("slow.onnx", threads)?;
    let mut bound = Binding::new(&session, SlowIo::new(SLOW_M)?)?;
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
    for threads in PATHS {
        an_async_timeout_resolves_to_timed_out_and_the_binding_runs_on_on(threads)?;
    }
    Ok(())
}

fn an_async_timeout_resolves_to_timed_out_and_the_binding_runs_on_on(threads: usize) -> Result<()> {
    let session = session("slow.onnx", threads)?;
    let mut bound = Binding::new(&session, SlowIo::new(SLOW_M)?)?;
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
/// (one session, `threads` intra-op threads) each start a run; after a tenth of a run's
/// time each future is dropped and the drop timed. Returns every drop's duration.
fn drop_latencies(threads: usize, in_flight: usize, trials: usize) -> Result<Vec<Duration>> {
    let session = session("slow.onnx", threads)?;
    let mut bounds = (0..in_flight)
        .map(|_| {
            let mut b = Binding::new(&session, SlowIo::new(512)?)?;
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
    for (threads, in_flight) in [(2, 1), (2, 4), (1, 1), (1, 4)] {
        let mut d = drop_latencies(threads, in_flight, 200 / in_flight)?;
        d.sort();
        let pct = |p: usize| d[(d.len() * p / 100).min(d.len() - 1)];
        eprintln!(
            "DROP {threads} intra-op thread(s), {in_flight} in flight: {} drops, p50 {:?}, \
             p99 {:?}, max {:?}",
            d.len(),
            pct(50),
            pct(99),
            d[d.len() - 1]
        );
    }
    Ok(())
}

/// One round of the serving measurement: `clients` tokio tasks, each making `requests`
/// requests through `pool` (checkout, fill, run, check the reply), the run made with
/// `run_async` (`via_async`) or with `spawn_blocking(move || run())`. Returns requests/s.
async fn serve_round<Io>(
    pool: &Pool<Io>,
    m: usize,
    clients: usize,
    requests: usize,
    via_async: bool,
) -> Result<f64>
where
    Io: ServeIo,
{
    let t = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|_| {
            let pool = pool.clone();
            tokio::spawn(async move {
                for _ in 0..requests {
                    let mut b = pool.get_async(&m).await?;
                    Io::fill(&mut b);
                    if via_async {
                        b.run_async().await?;
                    } else {
                        let (back, ran) = tokio::task::spawn_blocking(move || {
                            let ran = b.run();
                            (b, ran)
                        })
                        .await
                        .expect("no panic");
                        ran?;
                        b = back;
                    }
                    Io::check(&b)?;
                }
                Ok::<_, Error>(())
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("no panic")?;
    }
    Ok((clients * requests) as f64 / t.elapsed().as_secs_f64())
}

/// What the serving measurement needs of a model's binding.
trait ServeIo: ort_bind_runtime::BindingIo<Dims = usize> + Send + Sized + 'static {
    const NAME: &'static str;
    fn make(n: usize) -> Result<Self>;
    fn fill(b: &mut Binding<Self>);
    fn check(b: &Binding<Self>) -> Result<()>;
}

impl ServeIo for SlowIo {
    const NAME: &'static str = "slow.onnx";
    fn make(n: usize) -> Result<Self> {
        SlowIo::new(n)
    }
    fn fill(b: &mut Binding<Self>) {
        fill_slow(b.inputs().as_mut_slice());
    }
    fn check(b: &Binding<Self>) -> Result<()> {
        check_slow(b.outputs().as_slice()).map_err(|reason| Error::AsyncRun { reason })
    }
}

impl ServeIo for AddIo {
    const NAME: &'static str = "add.onnx";
    fn make(n: usize) -> Result<Self> {
        AddIo::new(n)
    }
    fn fill(b: &mut Binding<Self>) {
        b.inputs().0.fill(1.0);
        b.inputs().1.fill(2.0);
    }
    fn check(b: &Binding<Self>) -> Result<()> {
        match b.outputs().as_slice().iter().all(|&v| v == 3.0) {
            true => Ok(()),
            false => Err(Error::AsyncRun {
                reason: "wrong sum".into(),
            }),
        }
    }
}

/// Serving throughput at 16 concurrent clients (tokio tasks, one tokio worker per core) on
/// a pool of one binding per core over one session with one intra-op thread: `run_async`
/// (ort-bind's worker threads) over `spawn_blocking` + `run()`, paired rounds in alternating
/// order, on `add.onnx` with 16 elements (a run of a few µs: the path's own cost) and
/// `slow.onnx` with 1, 8 and 64 rows (runs of about 0.2, 0.6 and 6 ms here)
/// (`cargo test --release -p ort-bind-runtime --test run_async -- --ignored --nocapture
/// serving_throughput`).
#[test]
#[ignore = "a measurement: prints throughputs"]
fn serving_throughput_run_async_vs_spawn_blocking() -> Result<()> {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cores)
        .enable_time()
        .build()
        .expect("tokio runtime");
    serve_compare::<AddIo>(&rt, 16)?;
    for m in [1, 8, 64] {
        serve_compare::<SlowIo>(&rt, m)?;
    }
    Ok(())
}

/// One row of [`serving_throughput_run_async_vs_spawn_blocking`]: `Io`'s model at size `m`.
fn serve_compare<Io: ServeIo>(rt: &tokio::runtime::Runtime, m: usize) -> Result<()> {
    const CLIENTS: usize = 16;
    const ROUNDS: usize = 9;
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let session = session(Io::NAME, 1)?;
    let pool = Pool::new(cores, move |m: &usize| {
        Binding::new(&session, Io::make(*m)?)
    });
    pool.fill(&m)?;
    // Size the rounds to about 0.6 s each: time one run first.
    let mut probe = pool.get(&m)?;
    Io::fill(&mut probe);
    probe.run()?;
    let t = Instant::now();
    for _ in 0..10 {
        probe.run()?;
    }
    let one = t.elapsed() / 10;
    drop(probe);
    let requests = ((0.6 * cores as f64 / one.as_secs_f64()) as usize / CLIENTS).clamp(4, 2000);
    let (mut ratios, mut asyncs, mut blockings) = (Vec::new(), Vec::new(), Vec::new());
    rt.block_on(async {
        // Warm-up: the worker threads and tokio's blocking threads start.
        serve_round(&pool, m, CLIENTS, 4, true).await?;
        serve_round(&pool, m, CLIENTS, 4, false).await?;
        for round in 0..ROUNDS {
            let (a, b) = if round % 2 == 0 {
                let a = serve_round(&pool, m, CLIENTS, requests, true).await?;
                (a, serve_round(&pool, m, CLIENTS, requests, false).await?)
            } else {
                let b = serve_round(&pool, m, CLIENTS, requests, false).await?;
                (serve_round(&pool, m, CLIENTS, requests, true).await?, b)
            };
            ratios.push(a / b);
            asyncs.push(a);
            blockings.push(b);
        }
        Ok::<_, Error>(())
    })?;
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (lo, hi) = {
        let mut r = ratios.clone();
        r.sort_by(f64::total_cmp);
        (r[0], r[r.len() - 1])
    };
    eprintln!(
        "SERVE {} n={m} (run alone {one:?}), {CLIENTS} clients, pool of {cores}, \
         1 intra-op thread, {requests} requests/client/round, {ROUNDS} paired rounds: \
         run_async {:.0}/s, spawn_blocking+run {:.0}/s, ratio median {:.3} \
         (range {lo:.3}-{hi:.3})",
        Io::NAME,
        median(&mut asyncs),
        median(&mut blockings),
        median(&mut ratios),
    );
    Ok(())
}
