//! Threads, stated in types and checked under load: sessions are `Send + Sync` and cheap to
//! clone, bindings are `Send`, and many threads with their own bindings on one session
//! get correct results on every run, with dims changing under them.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use common::{AddIo, AffineIo, data};
use ort_bind_runtime::{
    Binding, GetFuture, Pool, PooledBinding, RunFuture, Session, SessionOptions, Terminator,
};

const fn send<T: Send>() {}
const fn sync<T: Sync>() {}
const fn clone<T: Clone>() {}

// Compile-time facts: a failing one is a build error of this test.
const _: () = {
    send::<Session>();
    sync::<Session>();
    clone::<Session>();
    send::<Binding<AddIo>>();
    send::<Binding<AffineIo>>();
    send::<Terminator>();
    sync::<Terminator>();
    clone::<Terminator>();
    send::<RunFuture<'static, AddIo>>();
    send::<Pool<AddIo>>();
    sync::<Pool<AddIo>>();
    clone::<Pool<AddIo>>();
    send::<PooledBinding<AddIo>>();
    send::<GetFuture<AddIo>>();
    send::<ort_bind_runtime::Error>();
    sync::<ort_bind_runtime::Error>();
};

/// A small deterministic generator (no dependency).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

#[test]
fn cloning_a_session_shares_it() -> ort_bind_runtime::Result<()> {
    let session = Session::from_file(data("add.onnx"), &SessionOptions::new().intra_threads(1))?;
    let copy = session.clone();
    assert!(
        session.as_raw() == copy.as_raw(),
        "one ONNX Runtime session"
    );
    assert_eq!(copy.intra_threads(), Some(1));
    // The raw session serves C API calls ort-bind does not wrap, through the same table.
    let api = ort_bind_runtime::library::init()?.api();
    let mut inputs = 0usize;
    // SAFETY: a live session (`copy` keeps it) and a valid out-pointer.
    let status = unsafe { (api.SessionGetInputCount)(copy.as_raw().as_ptr(), &mut inputs) };
    assert!(status.0.is_null());
    assert_eq!(inputs, 2);
    // A binding made from a clone outlives the original.
    drop(session);
    let mut bound = Binding::new(&copy, AddIo::new(2)?)?;
    bound.inputs().0.copy_from_slice(&[1.0, 2.0])?;
    bound.inputs().1.copy_from_slice(&[10.0, 20.0])?;
    bound.run()?;
    assert_eq!(bound.outputs().as_slice(), &[11.0, 22.0]);
    Ok(())
}

/// T threads x B bindings on one shared session; every thread changes dims at random
/// (within and beyond capacity), fills inputs with values unique to the run, and checks
/// every output element of every run. Also runs a model with an output ONNX Runtime
/// allocates, and bindings that move between threads.
#[test]
fn threads_with_their_own_bindings_share_one_session() -> ort_bind_runtime::Result<()> {
    const THREADS: usize = 4;
    const BINDINGS: usize = 2;
    const RUNS: usize = 20_000;
    let add = Session::from_file(data("add.onnx"), &SessionOptions::new().intra_threads(1))?;
    let affine = Session::from_file(data("affine.onnx"), &SessionOptions::new().intra_threads(1))?;
    let checked = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let (add, affine, checked) = (add.clone(), affine.clone(), Arc::clone(&checked));
            std::thread::spawn(move || -> ort_bind_runtime::Result<()> {
                let mut rng = Lcg(t as u64 + 1);
                let mut adds = (0..BINDINGS)
                    .map(|_| Binding::new(&add, AddIo::new(1)?))
                    .collect::<ort_bind_runtime::Result<Vec<_>>>()?;
                let mut aff = Binding::new(&affine, AffineIo::new(1)?)?;
                for run in 0..RUNS {
                    let b = &mut adds[run % BINDINGS];
                    if rng.next().is_multiple_of(4) {
                        b.set_dims(&(1 + rng.next() as usize % 64))?;
                    }
                    let base = (t * RUNS + run) as f32;
                    {
                        let (mut x, mut y) = b.inputs();
                        for (i, v) in x.as_mut_slice().iter_mut().enumerate() {
                            *v = base + i as f32;
                        }
                        y.fill(0.5);
                    }
                    b.run()?;
                    for (i, &s) in b.outputs().as_slice().iter().enumerate() {
                        assert_eq!(s, base + i as f32 + 0.5, "thread {t} run {run} element {i}");
                        checked.fetch_add(1, Ordering::Relaxed);
                    }
                    if run % 8 == 0 {
                        let batch = 1 + rng.next() as usize % 5;
                        aff.set_dims(&batch)?;
                        aff.inputs().fill(base);
                        aff.run()?;
                        let out = aff.outputs();
                        assert!(out.y.as_slice().iter().all(|&v| v == 2.0 * base + 1.0));
                        let shape = out.shape.expect("allocated after a run");
                        assert_eq!(shape.as_slice(), &[batch as i64, 4]);
                        checked.fetch_add(out.y.len() + 2, Ordering::Relaxed);
                    }
                }
                Ok(())
            })
        })
        .collect();
    for w in workers {
        w.join().expect("worker panicked")?;
    }
    let elapsed = start.elapsed();
    let checked = checked.load(Ordering::Relaxed);
    assert!(checked > THREADS * RUNS, "{checked} values checked");
    eprintln!(
        "{THREADS} threads x {BINDINGS} bindings: {} runs, {checked} values checked in {elapsed:?}",
        THREADS * RUNS * 9 / 8
    );

    // A binding made on one thread runs on another.
    let mut bound = Binding::new(&add, AddIo::new(3)?)?;
    bound.inputs().0.fill(1.0);
    bound.inputs().1.fill(2.0);
    let bound = std::thread::spawn(move || -> ort_bind_runtime::Result<_> {
        bound.run()?;
        Ok(bound)
    })
    .join()
    .expect("no panic")?;
    assert_eq!(bound.outputs().as_slice(), &[3.0; 3]);
    Ok(())
}
