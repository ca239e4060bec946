//! The dynamic route on the binding core: `DynamicBinding` is a `Binding<DynamicIo>`, so it
//! runs asynchronously, stops on a `Terminator` or a timeout, and keeps the bindings of
//! recently used input shapes (shape buckets), like typed bindings.

mod common;

use std::time::{Duration, Instant};

use common::{SLOW_WIDTH, check_slow, data, fill_slow};
use ort_bind_runtime::{DynamicBinding, Error, HostArrayRef, Result, Session, SessionOptions};

const SLOW_M: usize = 2048;

fn slow(threads: usize) -> Result<DynamicBinding> {
    let session = Session::from_file(
        data("slow.onnx"),
        &SessionOptions::new().intra_threads(threads),
    )?;
    let mut b = DynamicBinding::new(&session)?;
    let mut x = vec![0.0f32; SLOW_M * SLOW_WIDTH];
    fill_slow(&mut x);
    b.set_input(0, HostArrayRef::of(&[SLOW_M, SLOW_WIDTH], &x)?)?;
    Ok(b)
}

fn check(b: &DynamicBinding) -> Result<()> {
    let y = b.output(0)?;
    assert_eq!(y.dims(), &[SLOW_M, SLOW_WIDTH]);
    check_slow(y.as_slice::<f32>().expect("float32")).map_err(|reason| Error::AsyncRun { reason })
}

fn add(b: &mut DynamicBinding, n: usize, seed: f32) -> Result<()> {
    let x: Vec<f32> = (0..n).map(|i| seed + i as f32).collect();
    let y = vec![-seed; n];
    b.set_input(0, HostArrayRef::of(&[n], &x)?)?;
    b.set_input(1, HostArrayRef::of(&[n], &y)?)?;
    Ok(())
}

fn check_add(b: &DynamicBinding, n: usize) -> Result<()> {
    let out = b.output(0)?;
    assert_eq!(out.dims(), &[n]);
    let want: Vec<f32> = (0..n).map(|i| i as f32).collect();
    assert_eq!(out.as_slice::<f32>(), Some(&want[..]));
    Ok(())
}

#[test]
fn run_async_runs_the_dynamic_binding() -> Result<()> {
    for threads in [1, 2] {
        let session = Session::from_file(
            data("add.onnx"),
            &SessionOptions::new().intra_threads(threads),
        )?;
        let mut b = DynamicBinding::new(&session)?;
        for (round, n) in [3, 7, 3, 1].into_iter().enumerate() {
            add(&mut b, n, round as f32)?;
            futures_executor::block_on(b.run_async())?;
            check_add(&b, n)?;
        }
        // A sync run after async ones, and async with a generous timeout.
        add(&mut b, 4, 9.0)?;
        b.run()?;
        check_add(&b, 4)?;
        futures_executor::block_on(b.run_async_with_timeout(Duration::from_secs(60)))?;
        check_add(&b, 4)?;
    }
    Ok(())
}

#[test]
fn a_terminator_stops_a_dynamic_run() -> Result<()> {
    let mut b = slow(1)?;
    let t = Instant::now();
    b.run()?;
    let full = t.elapsed();
    check(&b)?;
    let mut stopped = 0;
    for _ in 0..10 {
        let stop = b.terminator();
        let killer = std::thread::spawn(move || {
            std::thread::sleep(full / 10);
            stop.terminate().expect("terminate");
        });
        let result = b.run();
        killer.join().expect("no panic");
        match result {
            Err(Error::Terminated) => {
                stopped += 1;
                // No output of an earlier run is passed off as this one's.
                assert!(matches!(b.output(0), Err(Error::NotRun { .. })));
            }
            // The run beat the stop (a loaded machine): the stop was for that run only.
            Ok(()) => {}
            Err(e) => return Err(e),
        }
        b.run()?;
        check(&b)?;
        if stopped >= 2 {
            break;
        }
    }
    assert!(stopped >= 1, "no run was stopped (load?)");
    Ok(())
}

#[test]
fn run_with_timeout_stops_a_dynamic_run() -> Result<()> {
    let mut b = slow(1)?;
    let err = b.run_with_timeout(Duration::from_millis(1)).unwrap_err();
    assert!(
        matches!(err, Error::TimedOut { timeout } if timeout == Duration::from_millis(1)),
        "{err}"
    );
    assert!(matches!(b.output(0), Err(Error::NotRun { .. })));
    // The binding stays usable, and a timeout long enough lets the run finish.
    b.run_with_timeout(Duration::from_secs(60))?;
    check(&b)?;
    let err =
        futures_executor::block_on(b.run_async_with_timeout(Duration::from_millis(1))).unwrap_err();
    assert!(matches!(err, Error::TimedOut { .. }), "{err}");
    b.run()?;
    check(&b)
}

#[test]
fn switching_input_shapes_back_and_forth_reuses_bindings() -> Result<()> {
    let session = Session::from_file(data("add.onnx"), &SessionOptions::new().intra_threads(1))?;
    let mut b = DynamicBinding::new(&session)?;
    // Setting x then y passes through mixed shapes ([5], [3]) too: room for all of them.
    b.keep_recent_dims(8);
    let sizes = [5, 3, 8, 3];
    let mut binds = Vec::new();
    for cycle in 0..4 {
        for (i, &n) in sizes.iter().enumerate() {
            add(&mut b, n, (cycle * 10 + i) as f32)?;
            if i % 2 == 0 {
                b.run()?;
            } else {
                futures_executor::block_on(b.run_async())?;
            }
            check_add(&b, n)?;
        }
        binds.push(b.binds());
    }
    eprintln!("dynamic add.onnx, shapes {sizes:?}: full binds after each cycle {binds:?}");
    // The first cycles bind each new combination of shapes (and again once buffers have
    // grown to their largest); after that every switch reuses a kept binding.
    assert_eq!(binds[2], binds[3], "full binds after each cycle: {binds:?}");
    assert!(binds[0] > 0, "{binds:?}");

    // Without buckets, every change of shape binds again.
    b.keep_recent_dims(0);
    let before = b.binds();
    for (i, &n) in sizes.iter().enumerate() {
        add(&mut b, n, i as f32)?;
        b.run()?;
        check_add(&b, n)?;
    }
    assert!(
        b.binds() >= before + sizes.len() as u64,
        "{before} {}",
        b.binds()
    );
    Ok(())
}

/// A dynamic binding moves to the thread or task that runs it, as typed bindings do.
#[test]
fn a_dynamic_binding_is_send() {
    fn send<T: Send>() {}
    send::<DynamicBinding>();
}
