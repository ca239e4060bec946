//! Steady-state runs over string tensors, sequences and maps allocate nothing in ort-bind:
//! a counting global allocator (`ort_bind_testkit::alloc`) counts, on the measuring thread, every allocation and
//! reallocation made through Rust's global allocator while a binding runs and its outputs
//! are read (strings iterated, sequence elements viewed, maps walked).
//!
//! ONNX Runtime is C++: its own allocations (the string tensors and sequences it makes for
//! outputs, the tensors `GetValue` hands out for a map's keys and values) do not go through
//! Rust's allocator and are not counted; "0" means ort-bind reuses its buffers. This file
//! is its own test binary: a binary has one global allocator.

mod common;

use common::values::{MapsIo, SeqIo, StringsIo};
use ort_bind_runtime::{
    AllocatedOutput, Binding, Cpu, Dyn, Map, MapSequence, Sequence, Session, SessionOptions,
    StringOutput, StringTensor, Tensor,
};
use ort_bind_testkit::alloc::{Counting, allocations};

#[global_allocator]
static GLOBAL: Counting = Counting;

fn session(name: &str) -> Session {
    Session::from_file(common::data(name), &SessionOptions::new().intra_threads(1)).unwrap()
}

const RUNS: usize = 200;

#[test]
fn string_runs_and_refills_allocate_nothing() {
    let s = session("strings.onnx");
    let io = StringsIo {
        a: StringTensor::from_strs("a", &[3], &["alpha", "béta", "gamma"]).unwrap(),
        b: StringTensor::from_strs("b", &[3], &["1", "22", "333"]).unwrap(),
        echo: StringOutput::new("echo"),
        joined: StringOutput::new("joined"),
        lengths: AllocatedOutput::new_in("lengths", Cpu),
    };
    let mut bound = Binding::new(&s, io).unwrap();
    for _ in 0..3 {
        bound.run().unwrap();
    }
    let mut total = 0usize;
    let n = allocations(|| {
        for i in 0..RUNS {
            // Refill in place with strings of the same lengths and of other lengths.
            let b: [&str; 3] = if i % 2 == 0 {
                ["1", "22", "333"]
            } else {
                ["x", "yy", "zzz"]
            };
            bound.modify(|io| io.b.fill(&b)).unwrap();
            bound.run().unwrap();
            let out = bound.outputs();
            total += out
                .joined
                .get()
                .unwrap()
                .iter()
                .map(str::len)
                .sum::<usize>();
            total += out.echo.get().unwrap().len();
        }
    });
    assert!(total > 0);
    println!("strings.onnx: {n} allocations in {RUNS} runs (fill + run + read)");
    assert_eq!(n, 0, "allocations in {RUNS} steady-state runs");
}

#[test]
fn sequence_runs_allocate_nothing() {
    let s = session("sequences.onnx");
    let mut x = Tensor::new("x", &[3]).unwrap();
    x.as_mut_slice().copy_from_slice(&[1.0, 2.0, 3.0]);
    let mut y = Tensor::new("y", &[2]).unwrap();
    y.as_mut_slice().copy_from_slice(&[4.0, 5.0]);
    let io = SeqIo {
        x,
        y,
        s: Sequence::from_arrays("s", [(&[2][..], &[7.0f32, 8.0][..])]).unwrap(),
        text: StringTensor::from_strs("text", &[2], &["a", "bc"]).unwrap(),
        pair: Sequence::new("pair"),
        pieces: Sequence::new("pieces"),
        second: AllocatedOutput::new_in("second", Cpu),
        count: AllocatedOutput::new_in("count", Cpu),
        first: AllocatedOutput::new_in("first", Cpu),
        echo: Sequence::new("echo"),
        words: Sequence::new("words"),
    };
    let mut bound = Binding::new(&s, io).unwrap();
    for _ in 0..3 {
        bound.run().unwrap();
    }
    let mut sum = 0f32;
    let n = allocations(|| {
        for _ in 0..RUNS {
            bound.run().unwrap();
            let out = bound.outputs();
            sum += out
                .pair
                .iter()
                .map(|t| t.as_slice().iter().sum::<f32>())
                .sum::<f32>();
            sum += out.pieces.iter().map(|t| t.as_slice()[0]).sum::<f32>();
            sum += out.words.iter().map(|w| w.len() as f32).sum::<f32>();
        }
    });
    assert!(sum > 0.0);
    println!("sequences.onnx: {n} allocations in {RUNS} runs");
    assert_eq!(n, 0, "allocations in {RUNS} steady-state runs");
}

#[test]
fn zipmap_runs_allocate_nothing() {
    let s = session("maps.onnx");
    let mut probs: Tensor<f32, (Dyn, ort_bind_runtime::Fix<3>)> =
        Tensor::new("probs", &[4, 3]).unwrap();
    probs
        .as_mut_slice()
        .copy_from_slice(&[0.1, 0.2, 0.7, 0.3, 0.3, 0.4, 0.5, 0.25, 0.25, 1.0, 0.0, 0.0]);
    let io = MapsIo {
        probs,
        m: Map::with_pairs([("a".to_owned(), 1.0f32)]).unwrap(),
        by_id: MapSequence::new("by_id"),
        by_name: MapSequence::new("by_name"),
        dense: AllocatedOutput::new_in("dense", Cpu),
        m_out: Map::new("m"),
    };
    let mut bound = Binding::new(&s, io).unwrap();
    for _ in 0..3 {
        bound.run().unwrap();
    }
    let mut best = 0i64;
    let n = allocations(|| {
        for _ in 0..RUNS {
            bound.run().unwrap();
            let out = bound.outputs();
            for row in &out.by_id {
                let (label, _) =
                    row.iter().fold(
                        (0, f32::MIN),
                        |acc, (k, v)| if v > acc.1 { (k, v) } else { acc },
                    );
                best += label;
            }
            best += out
                .by_name
                .iter()
                .filter(|m| m.get("cat").is_some())
                .count() as i64;
        }
    });
    assert_eq!(best, RUNS as i64 * (30 + 30 + 10 + 10 + 4));
    println!("maps.onnx (ZipMap, 4 rows): {n} allocations in {RUNS} runs");
    assert_eq!(n, 0, "allocations in {RUNS} steady-state runs");
}

/// `run_async` on a session with one intra-op thread (ort-bind's worker threads run it):
/// starting the run, handing it to a worker, waiting for it and collecting its outputs
/// (ONNX Runtime allocates some: strings and a tensor) allocate nothing on the calling
/// thread in steady state. (The worker's side, counted on its own thread, is the job's
/// queue slot, reused, and `RunWithBinding`.)
#[test]
fn run_async_on_the_worker_threads_allocates_nothing() {
    let s = session("strings.onnx");
    let io = StringsIo {
        a: StringTensor::from_strs("a", &[3], &["alpha", "béta", "gamma"]).unwrap(),
        b: StringTensor::from_strs("b", &[3], &["1", "22", "333"]).unwrap(),
        echo: StringOutput::new("echo"),
        joined: StringOutput::new("joined"),
        lengths: AllocatedOutput::new_in("lengths", Cpu),
    };
    let mut bound = Binding::new(&s, io).unwrap();
    for _ in 0..3 {
        futures_executor::block_on(bound.run_async()).unwrap();
    }
    let mut total = 0usize;
    let n = allocations(|| {
        for _ in 0..RUNS {
            futures_executor::block_on(bound.run_async()).unwrap();
            let out = bound.outputs();
            total += out
                .joined
                .get()
                .unwrap()
                .iter()
                .map(str::len)
                .sum::<usize>();
        }
    });
    assert!(total > 0);
    println!("strings.onnx, run_async on a worker: {n} allocations in {RUNS} runs");
    assert_eq!(n, 0, "allocations in {RUNS} steady-state run_async runs");

    let s = Session::from_file(
        common::data("add.onnx"),
        &SessionOptions::new().intra_threads(1),
    )
    .unwrap();
    let mut bound = Binding::new(&s, common::AddIo::new(16).unwrap()).unwrap();
    bound.inputs().0.fill(1.0);
    bound.inputs().1.fill(2.0);
    for _ in 0..3 {
        futures_executor::block_on(bound.run_async()).unwrap();
    }
    let n = allocations(|| {
        for _ in 0..RUNS {
            futures_executor::block_on(bound.run_async()).unwrap();
            assert_eq!(bound.outputs().as_slice()[0], 3.0);
        }
    });
    println!("add.onnx, run_async on a worker: {n} allocations in {RUNS} runs");
    assert_eq!(n, 0, "allocations in {RUNS} steady-state run_async runs");
}
