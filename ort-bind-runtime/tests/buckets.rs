//! Shape buckets: a binding keeps the ONNX Runtime bindings of recently used dims, so that
//! switching back to one is nearly free; every switch still gives correct results, across
//! growth (which invalidates kept bindings), allocated outputs and asynchronous runs.

mod common;

use std::time::{Duration, Instant};

use common::{AddIo, AffineIo, data};
use ort_bind_runtime::{Binding, Result, Session, SessionOptions};

fn add_session(threads: usize) -> Result<Session> {
    Session::from_file(
        data("add.onnx"),
        &SessionOptions::new().intra_threads(threads),
    )
}

fn fill_and_check(bound: &mut Binding<AddIo>, n: usize, seed: f32) -> Result<()> {
    {
        let (mut x, mut y) = bound.inputs();
        assert_eq!(x.len(), n);
        for (i, v) in x.as_mut_slice().iter_mut().enumerate() {
            *v = seed + i as f32;
        }
        y.fill(-seed);
    }
    bound.run()?;
    let out = bound.outputs();
    assert_eq!(out.dims(), &[n]);
    for (i, &v) in out.as_slice().iter().enumerate() {
        assert_eq!(v, i as f32, "n {n} seed {seed} element {i}");
    }
    Ok(())
}

/// An input view that gives an input new dims (here past its capacity: the buffer moves)
/// on an `Io` that cannot derive its dims from its inputs: every run refuses, naming
/// `set_dims`, and `set_dims` makes the binding whole again.
#[test]
fn an_input_resized_where_inputs_cannot_give_the_dims_waits_for_set_dims() -> Result<()> {
    let session = add_session(1)?;
    let mut bound = Binding::new(&session, AddIo::new(4)?)?;
    fill_and_check(&mut bound, 4, 1.0)?;
    bound.inputs().0.resize(&[1000])?;
    assert!(bound.inputs_resized());
    let err = bound.run().unwrap_err();
    assert!(
        err.to_string().contains("give them with `set_dims`"),
        "{err}"
    );
    let err = futures_executor::block_on(bound.run_async()).unwrap_err();
    assert!(err.to_string().contains("set_dims"), "{err}");
    bound.set_dims(&4)?;
    assert!(!bound.inputs_resized());
    fill_and_check(&mut bound, 4, 2.0)
}

#[test]
fn switching_between_recent_dims_gives_right_results() -> Result<()> {
    let session = add_session(2)?;
    let mut bound = Binding::new(&session, AddIo::new(64)?)?;
    // Within capacity, more sizes than buckets, growth in the middle, then shrinking back.
    let sizes = [
        8, 16, 8, 16, 3, 8, 5, 16, 64, 8, 200, 16, 8, 200, 1, 16, 8, 0, 8,
    ];
    for (round, &n) in sizes.iter().cycle().take(sizes.len() * 5).enumerate() {
        bound.set_dims(&n)?;
        fill_and_check(&mut bound, n, round as f32 * 3.0)?;
        if round % 7 == 0 {
            // The async path sees the values of the current dims too.
            bound.inputs().0.fill(2.0);
            bound.inputs().1.fill(3.0);
            futures_executor::block_on(bound.run_async())?;
            assert!(bound.outputs().as_slice().iter().all(|&v| v == 5.0));
            assert_eq!(bound.outputs().len(), n);
        }
    }
    // No buckets at all behaves the same.
    bound.keep_recent_dims(0);
    for (round, &n) in sizes.iter().enumerate() {
        bound.set_dims(&n)?;
        fill_and_check(&mut bound, n, round as f32)?;
    }
    Ok(())
}

#[test]
fn allocated_outputs_follow_switches() -> Result<()> {
    let session = Session::from_file(data("affine.onnx"), &SessionOptions::new().intra_threads(2))?;
    let mut bound = Binding::new(&session, AffineIo::new(4)?)?;
    for (round, batch) in [4, 2, 4, 2, 1, 4, 3, 2, 9, 2].into_iter().enumerate() {
        bound.set_dims(&batch)?;
        bound.inputs().fill(round as f32);
        if round % 2 == 0 {
            bound.run()?;
        } else {
            futures_executor::block_on(bound.run_async())?;
        }
        let out = bound.outputs();
        assert!(
            out.y
                .as_slice()
                .iter()
                .all(|&v| v == 2.0 * round as f32 + 1.0)
        );
        assert_eq!(out.y.dims(), &[batch, 4]);
        assert_eq!(out.shape.expect("stored").as_slice(), &[batch as i64, 4]);
    }
    Ok(())
}

fn time_runs(bound: &mut Binding<AddIo>, sizes: &[usize], runs: usize) -> Result<Duration> {
    let t = Instant::now();
    for i in 0..runs {
        bound.set_dims(&sizes[i % sizes.len()])?;
        bound.run()?;
    }
    Ok(t.elapsed())
}

/// Side by side, on one intra-op thread: a fixed binding, a binding switching between two
/// sizes with buckets, and the same without, interleaved in short chunks (the machine is
/// shared: medians of per-chunk ratios). Bounded loosely here; the benchmark command
/// measures it properly.
#[test]
fn a_switch_between_two_recent_sizes_costs_next_to_nothing() -> Result<()> {
    let session = add_session(1)?;
    let mut fixed = Binding::new(&session, AddIo::new(16)?)?;
    let mut buckets = Binding::new(&session, AddIo::new(16)?)?;
    let mut rebinding = Binding::new(&session, AddIo::new(16)?)?;
    rebinding.keep_recent_dims(0);
    const RUNS: usize = 2_000;
    const ROUNDS: usize = 25;
    let (mut b, mut r) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let f = time_runs(&mut fixed, &[16], RUNS)?.as_secs_f64();
        b.push(time_runs(&mut buckets, &[16, 8], RUNS)?.as_secs_f64() / f);
        r.push(time_runs(&mut rebinding, &[16, 8], RUNS)?.as_secs_f64() / f);
    }
    // The switch alone, without runs: ns per set_dims.
    let switch = |bound: &mut Binding<AddIo>| -> Result<f64> {
        let t = Instant::now();
        for i in 0..RUNS * 10 {
            bound.set_dims(&[16, 8][i % 2])?;
        }
        Ok(t.elapsed().as_secs_f64() * 1e9 / (RUNS * 10) as f64)
    };
    let (mut sb, mut sr) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        sb.push(switch(&mut buckets)?);
        sr.push(switch(&mut rebinding)?);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (b, r) = (median(&mut b), median(&mut r));
    let (sb, sr) = (median(&mut sb), median(&mut sr));
    eprintln!(
        "add [16] <-> [8], a switch before every run, over a fixed binding: with buckets \
         {b:.3}x, rebinding {r:.3}x (medians of {ROUNDS} x {RUNS} runs); a switch alone: \
         {sb:.0} ns with buckets, {sr:.0} ns rebinding"
    );
    assert!(
        sb < sr / 2.0,
        "a switch: {sb:.0} ns with buckets, {sr:.0} ns rebinding"
    );
    assert!(b < 1.3, "buckets {b:.3}x");
    Ok(())
}

#[test]
fn tensors_of_open_rank_switch_between_ranks_above_and_below_the_kept_limit() -> Result<()> {
    use ort_bind_runtime::{AnyRank, DimsChange, Tensor};
    let big = [1, 2, 1, 1, 1, 1, 1, 1, 2]; // rank 9: more than a tensor keeps values for
    let mut t = Tensor::<f32, AnyRank>::new("t", &big)?;
    for round in 0..4 {
        for dims in [&[2, 2][..], &big[..], &[4][..], &[2, 2][..], &big[..]] {
            let change = t.set_dims(dims)?;
            assert_ne!(
                change,
                DimsChange::Reallocated,
                "round {round}: within capacity"
            );
            assert_eq!(t.dims(), dims);
            assert_eq!(t.len(), dims.iter().product::<usize>());
            assert_eq!(t.as_slice().len(), t.len());
        }
    }
    Ok(())
}
