//! Proof that steady-state runs allocate nothing in ort-bind (or in the generated code):
//! a counting global allocator (`ort_bind_testkit::alloc`) wraps the system allocator and
//! counts, per thread, every allocation and reallocation made through Rust's global
//! allocator.
//!
//! What this counts, precisely: every heap allocation made by Rust code in this process
//! on the measuring thread: ort-bind's runtime, the generated bindings, the test itself.
//! What it cannot see: ONNX Runtime is C++ and allocates with its own allocators
//! (`malloc`/`new`, and its CPU arena, which it fills once and reuses), never through
//! Rust's global allocator; its worker threads are not the measuring thread either.
//! So "0" below means: no allocation by ort-bind per run, not "no allocation in the
//! process". Outputs that ONNX Runtime allocates (shapes it decides at run time) come from
//! its arena on the CPU; see `AllocatedOutput`'s docs for when that memory is reused.
//!
//! This file is its own test binary: a binary has one global allocator.

use ort_bind_testkit::alloc::{Counting, allocations};

/// The Silero VAD bindings `build.rs` generated (`examples/vad.rs` gets the same module
/// from `bindings!`).
mod vad_bindings {
    ort_bind::include_bindings!("silero_vad");
}
#[path = "../../examples/vad/silero.rs"]
mod silero;

mod add {
    ort_bind::include_bindings!("add");
}
mod add16 {
    ort_bind::include_bindings!("add16");
}
mod dynamic {
    ort_bind::include_bindings!("dynamic");
}
mod lying_allocated {
    ort_bind::include_bindings!("lying_allocated");
}
mod recognizer {
    ort_bind::include_bindings!("recognizer");
}
mod dynamic_renamed {
    ort_bind::include_bindings!("dynamic_renamed");
}
mod nonzero {
    ort_bind::include_bindings!("nonzero");
}
mod state {
    ort_bind::include_bindings!("state");
}
mod messy {
    ort_bind::include_bindings!("messy");
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const RUNS: usize = 1000;

type R = ort_bind::Result<()>;

mod sklearn_iris {
    ort_bind::include_bindings!("sklearn_iris");
}
mod sklearn_text {
    ort_bind::include_bindings!("sklearn_text");
}

/// The skl2onnx iris classifier in steady state: new features each run, then every label
/// and every probability read (string labels copied into the `StringOutput`'s buffer,
/// ZipMap's maps into columns kept from earlier runs). ONNX Runtime allocates the output
/// values in C++ (outside this count); what ort-bind does with them reuses capacity.
#[test]
fn sklearn_iris_steady_state_allocations() -> R {
    const ROWS: usize = 10;
    let model = sklearn_iris::Model::load()?;
    let mut b = model.bind(sklearn_iris::Dims {
        float_input_dim0: ROWS,
    })?;
    b.inputs().float_input.fill(5.0);
    b.run()?; // warm-up: first run sizes the buffers the outputs are read into
    let mut result = Ok(());
    let mut checksum = 0.0f32;
    let n = allocations(|| {
        for i in 0..RUNS {
            b.inputs().float_input.fill(4.0 + (i % 4) as f32);
            if let Err(e) = b.run() {
                result = Err(e);
                return;
            }
            let out = b.outputs();
            let (Ok(labels), Ok(maps)) = (out.output_label.get(), out.output_probability.get())
            else {
                result = Err(ort_bind::Error::NotRun {
                    output: "output_label".into(),
                });
                return;
            };
            assert_eq!(labels.len(), ROWS);
            for (label, map) in labels.iter().zip(maps) {
                checksum += map.get(label).unwrap_or(0.0) + label.len() as f32;
            }
        }
    });
    result?;
    std::hint::black_box(checksum);
    println!("sklearn_iris ({ROWS} rows, labels + ZipMap read): {n} allocations in {RUNS} runs");
    assert_eq!(n, 0);
    Ok(())
}

/// The skl2onnx text pipeline in steady state: new sentences written into the bound
/// string tensor each run (ONNX Runtime's `std::string`s are resized in C++), labels read.
#[test]
fn sklearn_text_steady_state_allocations() -> R {
    let sentences = [
        [
            "the team scored a goal in the final",
            "the bank reported higher profits",
        ],
        [
            "a new chip for the phone camera",
            "investors cheered the record season",
        ],
    ];
    let model = sklearn_text::Model::load()?;
    let mut b = model.bind(sklearn_text::Dims { text_dim0: 2 })?;
    b.inputs().text.fill(&sentences[0])?;
    b.run()?;
    b.inputs().text.fill(&sentences[1])?;
    b.run()?; // both inputs seen: the host copy of the strings has its capacity
    let mut result = Ok(());
    let mut total = 0;
    let n = allocations(|| {
        for i in 0..RUNS {
            if let Err(e) = b
                .inputs()
                .text
                .fill(&sentences[i % 2])
                .and_then(|()| b.run())
            {
                result = Err(e);
                return;
            }
            total += b
                .outputs()
                .label
                .get()
                .map_or(0, |l| l.iter().map(str::len).sum());
        }
    });
    result?;
    std::hint::black_box(total);
    println!("sklearn_text (2 sentences in, labels read): {n} allocations in {RUNS} runs");
    assert_eq!(n, 0);
    Ok(())
}

#[test]
fn the_counter_counts() {
    let n = allocations(|| {
        let v: Vec<u8> = Vec::with_capacity(10);
        std::hint::black_box(v);
    });
    assert_eq!(n, 1);
}

#[test]
fn fixed_dims_runs_allocate_nothing() -> R {
    let model = add16::Model::load()?;
    let mut b = model.bind(add16::Dims {})?;
    b.inputs().b.fill(0.5);
    b.run()?; // warm-up: ONNX Runtime's first run sets up its own state
    let mut result = Ok(());
    let n = allocations(|| {
        for i in 0..RUNS {
            b.inputs().a.fill(i as f32);
            if let Err(e) = b.run() {
                result = Err(e);
                return;
            }
            assert_eq!(b.outputs().out.as_slice()[15], i as f32 + 0.5);
        }
    });
    result?;
    println!("add16 (fixed dims): {n} allocations in {RUNS} runs");
    assert_eq!(n, 0);
    Ok(())
}

#[test]
fn unchanged_dynamic_dims_allocate_nothing() -> R {
    let model = add::Model::load()?;
    let mut b = model.bind(add::Dims { n: 256 })?;
    b.inputs().y.fill(1.0);
    b.run()?;
    let mut result = Ok(());
    let n = allocations(|| {
        for i in 0..RUNS {
            // Setting the same dims again is free: nothing is rebound or allocated.
            let r = b.set_dims(add::Dims { n: 256 }).and_then(|()| {
                b.inputs().x.fill(i as f32);
                b.run()
            });
            if let Err(e) = r {
                result = Err(e);
                return;
            }
            assert_eq!(b.outputs().sum.as_slice()[255], i as f32 + 1.0);
        }
    });
    result?;
    println!("add (dynamic n, unchanged): {n} allocations in {RUNS} runs");
    assert_eq!(n, 0);
    Ok(())
}

#[test]
fn state_ping_pong_allocates_nothing() -> R {
    let model = state::Model::load()?;
    let mut b = model.bind(state::Dims {})?;
    b.inputs().x.copy_from_slice(&[0.25, 0.25, 0.25, 0.25])?;
    b.inputs().state.fill(0.0);
    b.run()?;
    b.feed_state_n_into_state()?;
    let mut result = Ok(());
    let n = allocations(|| {
        for _ in 0..RUNS {
            if let Err(e) = b.run().and_then(|()| b.feed_state_n_into_state()) {
                result = Err(e);
                return;
            }
        }
    });
    result?;
    println!("state.onnx ping-pong: {n} allocations in {RUNS} runs");
    assert_eq!(n, 0);
    // Each run added sum(x) = 1 to every state element: 1 (warm-up) + RUNS.
    assert!(
        b.inputs()
            .state
            .as_slice()
            .iter()
            .all(|&v| v == (RUNS + 1) as f32)
    );
    Ok(())
}

#[test]
fn silero_vad_streaming_allocates_nothing() -> Result<(), silero::BoxError> {
    let model = silero::load(&silero::model_path()?)?;
    let mut vad = silero::Vad::new(&model)?;
    let chunk: Vec<f32> = (0..silero::CHUNK)
        .map(|i| (i as f32 * 0.05).sin() * 0.3)
        .collect();
    vad.process(&chunk)?;
    let mut result = Ok(());
    let mut last = 0.0;
    let n = allocations(|| {
        for _ in 0..RUNS {
            match vad.process(&chunk) {
                Ok(p) => last = p,
                Err(e) => {
                    result = Err(e);
                    return;
                }
            }
        }
    });
    result?;
    println!("silero vad (write chunk, run, read, swap state): {n} allocations in {RUNS} chunks");
    assert_eq!(n, 0);
    assert!((0.0..=1.0).contains(&last));
    Ok(())
}

#[test]
fn outputs_onnx_runtime_allocates_cost_ort_bind_nothing() -> R {
    let model = nonzero::Model::load()?;
    let mut b = model.bind(nonzero::Dims {})?;
    b.inputs()
        .x
        .copy_from_slice(&[0.0, 1.0, 0.0, 2.0, 0.0, 3.0])?;
    b.run()?;
    let mut result = Ok(());
    let n = allocations(|| {
        for i in 0..RUNS {
            // The output's shape changes with the data: [1, 3] or [1, 4].
            b.inputs().x.as_mut_slice()[0] = (i % 2) as f32;
            if let Err(e) = b.run() {
                result = Err(e);
                return;
            }
            let indices = b.outputs().indices.get().expect("produced");
            assert_eq!(indices.dims(), &[1, 3 + i % 2]);
        }
    });
    result?;
    println!("nonzero (ORT-allocated output): {n} allocations in {RUNS} runs");
    assert_eq!(n, 0);
    Ok(())
}

#[test]
fn only_growth_past_capacity_allocates() -> R {
    let model = dynamic_renamed::Model::load()?;
    let d = |batch| dynamic_renamed::Dims { batch };
    let mut b = model.bind(d(8))?;
    b.run()?;
    let mut result = Ok(());
    let mut step = |batch: usize| {
        allocations(|| {
            if let Err(e) = b.set_dims(d(batch)).and_then(|()| {
                b.inputs().x.fill(1.0);
                b.run()
            }) {
                result = Err(e);
            }
        })
    };
    // Shrinking, and growing back within capacity: metadata only.
    let shrink = step(2);
    let regrow = step(8);
    // Past capacity: x [batch, 4], y [batch, 3] and z [batch, 3] each grow once.
    let grow = step(16);
    let same = step(16);
    let shrink_again = step(1);
    result?;
    println!(
        "dims changes: shrink {shrink}, regrow within capacity {regrow}, grow past capacity {grow}, \
         unchanged {same}, shrink {shrink_again}"
    );
    assert_eq!((shrink, regrow, same, shrink_again), (0, 0, 0, 0));
    assert_eq!(grow, 3);
    let z = b.outputs().z;
    assert_eq!(z.dims(), &[1, 3]);
    Ok(())
}

/// Inputs sized by their data (`fill_resized`), alternating between two sizes: once both
/// were seen, the tensors' kept values and the binding's shape buckets serve every switch.
#[test]
fn inputs_sized_by_their_data_allocate_nothing_once_warm() -> R {
    let model = add::Model::load()?;
    let mut b = model.bind(add::Dims::default())?;
    let (three, five) = ([1.0f32; 3], [2.0f32; 5]);
    let step = |b: &mut add::Binding, data: &[f32]| -> R {
        b.inputs().x.fill_resized(data)?;
        b.inputs().y.fill_resized(data)?;
        b.run()
    };
    step(&mut b, &three)?;
    step(&mut b, &five)?;
    let mut result = Ok(());
    let n = allocations(|| {
        for i in 0..RUNS {
            let data: &[f32] = if i % 2 == 0 { &three } else { &five };
            if let Err(e) = step(&mut b, data) {
                result = Err(e);
            }
        }
    });
    result?;
    println!("add (n from the data, 3 and 5 alternating): {n} allocations in {RUNS} runs");
    assert_eq!(n, 0);
    assert_eq!(b.outputs().sum.as_slice(), &[4.0; 5]);
    Ok(())
}

/// Outputs sized by shape inference (`probs` is `[batch, floor((w + 5) / 8), 10]`): runs at
/// two widths in turn allocate nothing once both are warm.
#[test]
fn outputs_sized_from_the_graph_allocate_nothing() -> R {
    let model = recognizer::Model::load()?;
    let wide = recognizer::Dims { batch: 1, w: 100 };
    let narrow = recognizer::Dims { batch: 1, w: 37 };
    let mut b = model.bind(wide)?;
    for dims in [narrow, wide] {
        b.set_dims(dims)?;
        b.inputs().x.fill(0.5);
        b.run()?;
    }
    let mut result = Ok(());
    let n = allocations(|| {
        for i in 0..RUNS {
            let dims = if i % 2 == 0 { narrow } else { wide };
            let run = b.set_dims(dims).and_then(|()| b.run());
            if let Err(e) = run {
                result = Err(e);
                return;
            }
        }
    });
    result?;
    assert_eq!(b.outputs().probs.dims(), &[1, 13, 10]);
    println!("recognizer (w 37 and 100 alternating): {n} allocations in {RUNS} runs");
    assert_eq!(n, 0);
    Ok(())
}

#[test]
fn dims_changes_with_allocated_outputs_allocate_only_to_grow() -> R {
    // `lying_allocated.onnx`: `z = reshape(x, s)` takes its shape from `s`'s values, so
    // ONNX Runtime allocates it (declared `[m, 2]`).
    let model = lying_allocated::Model::load()?;
    let mut b = model.bind(lying_allocated::Dims { n: 8, k: 2 })?;
    b.inputs().s.copy_from_slice(&[4, 2])?;
    b.run()?;
    let mut result = Ok(());
    let mut counts = Vec::new();
    for n in [4, 8, 6, 8, 16] {
        counts.push(allocations(|| {
            let run = b
                .set_dims(lying_allocated::Dims { n, k: 2 })
                .and_then(|()| b.inputs().s.copy_from_slice(&[n as i64 / 2, 2]))
                .and_then(|()| b.run());
            if let Err(e) = run {
                result = Err(e);
            }
        }));
        std::mem::replace(&mut result, Ok(()))?;
        assert_eq!(b.outputs().z.get().expect("produced").dims(), &[n / 2, 2]);
    }
    println!("lying_allocated.onnx n 4, 8, 6, 8, 16: {counts:?} allocations");
    // Only 8 -> 16 grows x past its capacity.
    assert_eq!(counts, [0, 0, 0, 0, 1]);
    Ok(())
}

#[test]
fn messy_names_and_scalars_run_without_allocating() -> R {
    let model = messy::Model::load()?;
    let dims =
        messy::Dims::from_input_shapes(&[2, 3], &[5], &[7], &[2, 4], &[4], &[4], &[], &[2, 2])?;
    let mut b = model.bind(dims)?;
    b.run()?;
    let mut result = Ok(());
    let n = allocations(|| {
        for i in 0..RUNS {
            b.inputs().step.fill(i as i64);
            if let Err(e) = b.run() {
                result = Err(e);
                return;
            }
            assert_eq!(b.outputs().self_.as_slice(), &[i as i64]);
        }
    });
    result?;
    println!("messy.onnx: {n} allocations in {RUNS} runs");
    assert_eq!(n, 0);
    Ok(())
}

mod decoder_gqa {
    ort_bind::bindings!("tests/fixtures/decoders/gqa_f32/model.onnx");
}
mod decoder_hybrid {
    ort_bind::bindings!("tests/fixtures/decoders/hybrid_conv/model.onnx");
}

/// The decode loop in steady state: a greedy step (argmax, ids and positions written in
/// place, new shapes for the mask and, growing, the cache, rebinding what changed, run)
/// allocates nothing in ort-bind, in either cache mode and with recurrent state; neither
/// does a rewind of the shared-buffer mode.
#[test]
fn decode_steps_allocate_nothing() -> R {
    let prompt: Vec<i64> = (1..=12).collect();
    let gqa = decoder_gqa::Model::load()?;
    let mut shared = gqa.shared_decoder(1, 256)?;
    shared.prefill(&prompt)?;
    shared.step_greedy()?; // the first step gives ids, positions and logits their shapes
    let n = allocations(|| {
        for _ in 0..100 {
            shared.step_greedy().expect("step");
        }
        shared.rewind(50).expect("rewind");
        shared.step(&[7]).expect("step after the rewind");
        for _ in 0..49 {
            shared.step_greedy().expect("step");
        }
    });
    assert_eq!(
        n, 0,
        "shared-buffer decoder: allocations in 150 steps and a rewind"
    );

    let mut growing = gqa.decoder(1, 256)?;
    growing.prefill(&prompt)?;
    growing.step_greedy()?;
    let n = allocations(|| {
        for _ in 0..100 {
            growing.step_greedy().expect("step");
        }
    });
    assert_eq!(n, 0, "growing decoder: allocations in 100 steps");

    let hybrid = decoder_hybrid::Model::load()?;
    let mut decoder = hybrid.decoder(2, 256)?;
    decoder.prefill(&[prompt.clone(), prompt].concat())?;
    decoder.step_greedy()?;
    let n = allocations(|| {
        for _ in 0..100 {
            decoder
                .step_with(|_, row| ort_bind::decode::argmax(row) as i64)
                .expect("step");
        }
    });
    assert_eq!(n, 0, "hybrid decoder (batch 2): allocations in 100 steps");
    Ok(())
}

/// Beam search allocates per search, never per step: a warm search of 88 steps (rows
/// reordered in place after each, in both cache modes) allocates what one of 18 does, the
/// returned sequences.
#[test]
fn beam_search_steps_allocate_nothing() -> R {
    use ort_bind::decode::{BeamOptions, BeamSearch};
    let prompt: Vec<i64> = (0..12).map(|i| (5 + 37 * i) % 500).collect();
    let gqa = decoder_gqa::Model::load()?;
    let (long, short) = (
        BeamOptions::new(4, 100).return_sequences(2),
        BeamOptions::new(4, 30).return_sequences(2),
    );
    let mut shared = BeamSearch::new(gqa.shared_decoder(4, 128)?)?;
    let mut growing = BeamSearch::new(gqa.decoder(4, 128)?)?;
    let mut run_shared = |o: &BeamOptions| shared.run(&prompt, o).expect("search");
    run_shared(&long); // warm: the history and the plan reach their sizes
    let n_long = allocations(|| drop(run_shared(&long)));
    let n_short = allocations(|| drop(run_shared(&short)));
    assert_eq!(n_long, n_short, "shared buffer: 88 steps vs 18");
    assert!(
        n_long <= 3,
        "shared buffer: {n_long} allocations: the result only"
    );
    let mut run_growing = |o: &BeamOptions| growing.run(&prompt, o).expect("search");
    run_growing(&long);
    let n_long = allocations(|| drop(run_growing(&long)));
    let n_short = allocations(|| drop(run_growing(&short)));
    assert_eq!(n_long, n_short, "growing: 88 steps vs 18");
    assert!(
        n_long <= 3,
        "growing: {n_long} allocations: the result only"
    );
    // A paged pool: rows trade block lists and copy the shared blocks they write into.
    let mut paged = BeamSearch::new(decoder_paged::Model::load()?.paged_decoder(4, 128, 40)?)?;
    let mut run_paged = |o: &BeamOptions| paged.run(&prompt, o).expect("search");
    run_paged(&long);
    let n_long = allocations(|| drop(run_paged(&long)));
    let n_short = allocations(|| drop(run_paged(&short)));
    assert_eq!(n_long, n_short, "paged: 88 steps vs 18");
    assert!(n_long <= 3, "paged: {n_long} allocations: the result only");
    Ok(())
}

/// Whole generations allocate per generation, never per token: a stream's tokens and a
/// rewind of recurrent state within the last run (growing caches moved down in place, the
/// tokens run again from a reused buffer) allocate nothing once warm; `generate` makes one vector per generation (the
/// rows that ended).
#[test]
fn generations_allocate_nothing_per_token() -> R {
    use ort_bind::decode::GenerateOptions;
    use std::ops::ControlFlow;
    let prompt: Vec<i64> = (1..=12).collect();
    let gqa = decoder_gqa::Model::load()?;
    let mut decoder = gqa.shared_decoder(1, 512)?;
    let count = |decoder: &mut ort_bind::decode::Decoder<decoder_gqa::Model, _>, n: usize| {
        allocations(|| {
            let stream = decoder
                .stream(&prompt, GenerateOptions::new(n))
                .expect("stream");
            for token in stream {
                token.expect("token");
            }
        })
    };
    count(&mut decoder, 200); // warm: the first prefill gives the buffers their room
    let (short, long) = (count(&mut decoder, 10), count(&mut decoder, 200));
    assert_eq!((short, long), (0, 0), "a stream of 10 and of 200 tokens");
    let options = GenerateOptions::new(200);
    let n = allocations(|| {
        decoder
            .generate(&prompt, &options, |_| ControlFlow::Continue(()))
            .expect("generate");
    });
    assert_eq!(n, 1, "generate: one vector per generation");

    // The same stream made asynchronously (each run on ort-bind's worker thread, woken
    // through the executor's waker): nothing per token either.
    let count_async = |decoder: &mut ort_bind::decode::Decoder<decoder_gqa::Model, _>, n| {
        allocations(|| {
            futures_executor::block_on(async {
                let mut stream = decoder
                    .stream_async(&prompt, GenerateOptions::new(n))
                    .expect("stream");
                let mut stream = std::pin::Pin::new(&mut stream);
                while let Some(token) =
                    std::future::poll_fn(|cx| futures_core::Stream::poll_next(stream.as_mut(), cx))
                        .await
                {
                    token.expect("token");
                }
            })
        })
    };
    count_async(&mut decoder, 200); // warm: the worker thread is started
    let (short, long) = (
        count_async(&mut decoder, 10),
        count_async(&mut decoder, 200),
    );
    assert_eq!(short, long, "async streams of 10 and of 200 tokens");
    assert_eq!(long, 0, "an async stream of 200 tokens");

    let hybrid = decoder_hybrid::Model::load()?;
    let mut decoder = hybrid.decoder(1, 256)?;
    decoder.prefill(&prompt)?;
    decoder.append(&[5, 6, 7, 8])?;
    decoder.rewind(2)?; // warm: the tokens to run again get their buffer
    let n = allocations(|| {
        for _ in 0..20 {
            decoder.append(&[5, 6, 7, 8]).expect("append");
            decoder.rewind(2).expect("rewind");
        }
    });
    assert_eq!(n, 0, "recurrent state: 20 rewinds within the last run");

    // Continuous batching: a step of four busy rows without a join allocates nothing;
    // joining copies the request's prompt once, and its prefill (the step after) makes
    // values over the row's part of the cache (and grows the prefill's logits for a
    // longer prompt than before).
    let rows = ort_bind::decode::Rows::new(gqa.shared_decoder(4, 256)?)?;
    assert_eq!(
        warm_rows_steps(rows)?,
        0,
        "continuous batching: 50 steps of 4 rows"
    );
    // Joining token by token: steps of rows still taking their prompt allocate nothing.
    let mut rows = ort_bind::decode::Rows::new(gqa.shared_decoder(4, 256)?)?;
    rows.set_joining(ort_bind::decode::Joining::TokenByToken)?;
    for (i, len) in [3, 12, 1, 30].into_iter().enumerate() {
        rows.join(&vec![1 + i as i64; len], 100, None)?;
    }
    rows.step()?;
    let n = allocations(|| {
        for _ in 0..50 {
            rows.step().expect("step");
        }
    });
    assert_eq!(
        n, 0,
        "continuous batching token by token: 50 steps of 4 rows"
    );
    Ok(())
}

mod decoder_paged {
    ort_bind::include_bindings!("decoder_gqa_paged");
}

/// The paged mode in steady state: a step writes the block table and slots in place and
/// rebinds the table only when it widens; taking a block, giving blocks back on a rewind,
/// and rows of continuous batching ending, joining and prefilling into their blocks
/// allocate nothing beyond the joined prompt's copy.
#[test]
fn paged_steps_allocate_nothing() -> R {
    let model = decoder_paged::Model::load()?;
    let mut decoder = model.paged_decoder(2, 256, 24)?;
    let prompt: Vec<i64> = (1..=24).collect();
    decoder.prefill(&prompt)?;
    decoder.step_greedy()?;
    let n = allocations(|| {
        // 12 + 100 positions per row: 6 new blocks each.
        for _ in 0..100 {
            decoder.step_greedy().expect("step");
        }
        decoder.rewind(60).expect("rewind");
        decoder.step(&[7, 7]).expect("step after the rewind");
        for _ in 0..59 {
            decoder.step_greedy().expect("step");
        }
    });
    assert_eq!(
        n, 0,
        "paged decoder: 160 steps and a rewind that frees blocks"
    );

    let rows = ort_bind::decode::Rows::new(model.paged_decoder(4, 256, 40)?)?;
    assert_eq!(
        warm_rows_steps(rows)?,
        0,
        "continuous batching over a pool: 50 steps of 4 rows"
    );
    Ok(())
}

/// Allocations in 50 steps of `rows` serving four requests (prompts of 3, 12, 1 and 30
/// ids), after the step of their prefills and one more.
fn warm_rows_steps<T: ort_bind::decode::DecoderModel, M: ort_bind::decode::RowsCache>(
    mut rows: ort_bind::decode::Rows<T, ort_bind::Cpu, M>,
) -> ort_bind::Result<u64> {
    for (i, len) in [3, 12, 1, 30].into_iter().enumerate() {
        rows.join(&vec![1 + i as i64; len], 100, None)?;
    }
    rows.step()?; // the prefills
    rows.step()?;
    Ok(allocations(|| {
        for _ in 0..50 {
            rows.step().expect("step");
        }
    }))
}

mod speech {
    ort_bind::pipeline!(
        encoder = "tests/fixtures/pipelines/speech/encoder.onnx",
        decoder = "tests/fixtures/pipelines/speech/decoder.onnx",
    );
}
mod merged {
    ort_bind::pipeline!(
        encoder = "tests/fixtures/pipelines/merged/encoder_model.onnx",
        decoder = "tests/fixtures/pipelines/merged/decoder_model_merged.onnx",
    );
}
mod marian {
    ort_bind::pipeline!(
        encoder = "tests/fixtures/pipelines/marian/encoder.onnx",
        decoder = "tests/fixtures/pipelines/marian/decoder.onnx",
    );
}

mod vision_text {
    ort_bind::pipeline!(
        vision = "tests/fixtures/pipelines/vision_text/vision.onnx",
        embedding = "tests/fixtures/pipelines/vision_text/embedding.onnx",
        text = "tests/fixtures/pipelines/vision_text/text.onnx",
    );
}

/// Decoders in parts in steady state: each step runs the embedding model on the new ids
/// into the buffer the text model reads, then the text model (3-axis positions); a split
/// decoder also runs its head on the hidden states in place: nothing allocated in ort-bind.
#[test]
fn embedding_fed_steps_allocate_nothing() -> R {
    let pipeline = vision_text::Pipeline::load()?;
    let mut generator = pipeline.generator(vision_text::vision::Dims { batch_size: 1 }, 1, 256)?;
    generator.encoder_inputs().pixel_values.fill(0.25);
    generator.encode()?;
    let prompt: Vec<i64> = [3]
        .into_iter()
        .chain([511; 16])
        .chain([40, 41, 42])
        .collect();
    generator.prefill(&prompt)?;
    generator.step_greedy()?;
    let n = allocations(|| {
        for _ in 0..100 {
            generator.step_greedy().expect("step");
        }
    });
    assert_eq!(n, 0, "vision_text: allocations in 100 steps");

    let pipeline = split::Pipeline::load()?;
    let mut decoder = pipeline.decoder(2, 256)?;
    decoder.prefill(&[5, 42, 79, 7, 60, 113])?;
    decoder.step_greedy()?;
    let n = allocations(|| {
        for _ in 0..100 {
            decoder.step_greedy().expect("step");
        }
    });
    assert_eq!(n, 0, "split decoder (batch 2): allocations in 100 steps");
    Ok(())
}

mod split {
    ort_bind::pipeline!(
        embed = "tests/fixtures/pipelines/split/embed.onnx",
        body = "tests/fixtures/pipelines/split/body.onnx",
        lm_head = "tests/fixtures/pipelines/split/lm_head.onnx",
    );
}

/// Encoder-decoder generation in steady state: a step of the speech pair (self caches
/// growing, cross caches the encoder's buffers), of a merged decoder (its cross caches in
/// its own buffers, `use_cache_branch` written in place) and of Marian (recurrent state,
/// the past length scalar) allocates nothing in ort-bind; a new source of the same size
/// allocates only the few handles it binds.
#[test]
fn encoder_decoder_steps_allocate_nothing() -> R {
    let pipeline = speech::Pipeline::load()?;
    let dims = speech::encoder::Dims {
        batch_size: 2,
        num_frames: 30,
    };
    let mut generator = pipeline.generator(dims, 2, 256)?;
    generator.encoder_inputs().audio_features.fill(0.5);
    generator.encode()?;
    generator.prefill(&[3, 17, 42, 5, 23, 61])?;
    generator.step_greedy()?;
    let n = allocations(|| {
        for _ in 0..100 {
            generator.step_greedy().expect("step");
        }
    });
    assert_eq!(n, 0, "speech (batch 2): allocations in 100 steps");

    let pipeline = merged::Pipeline::load()?;
    let dims = merged::encoder::Dims {
        batch_size: 1,
        encoder_sequence_length: 10,
    };
    let mut generator = pipeline.generator(dims, 1, 256)?;
    {
        let mut inputs = generator.encoder_inputs();
        inputs.input_ids.fill(7);
        inputs.attention_mask.fill(1);
    }
    generator.encode()?;
    generator.prefill(&[2])?;
    generator.step_greedy()?;
    generator.encode()?; // a second source: its buffers exist now
    generator.prefill(&[2])?;
    generator.step_greedy()?;
    let n = allocations(|| {
        for _ in 0..100 {
            generator.step_greedy().expect("step");
        }
    });
    assert_eq!(n, 0, "merged: allocations in 100 steps");
    // A new source costs a few small allocations (the handles of the encoder's buffers
    // bound into the decoder), once per source, not per token.
    let n = allocations(|| {
        generator.encode().expect("encode");
        generator.prefill(&[2]).expect("prefill");
        for _ in 0..20 {
            generator.step_greedy().expect("step");
        }
    });
    assert!(
        n <= 16,
        "merged: {n} allocations for a new source and 20 steps"
    );

    let pipeline = marian::Pipeline::load()?;
    let mut generator = pipeline.generator(marian::encoder::Dims::default(), 1, 256)?;
    generator.encoder_inputs().attention_mask.fill(1);
    generator.encode()?;
    generator.prefill(&[2])?;
    generator.step_greedy()?;
    let n = allocations(|| {
        for _ in 0..100 {
            generator.step_greedy().expect("step");
        }
    });
    assert_eq!(n, 0, "marian: allocations in 100 steps");
    Ok(())
}

mod ocr_chain {
    ort_bind::pipeline!(
        detector = "tests/fixtures/pipelines/ocr/detector.onnx",
        recognizer = "tests/fixtures/pipelines/ocr/recognizer.onnx",
        detector.heatmap -> recognizer.crops as view,
    );
}

/// A chain run (the detector, then the recognizer reading the detector's heatmap in place
/// through `run_fed`) allocates nothing once the view is made; a new buffer in the
/// detector (new dims) costs one new view.
#[test]
fn a_chain_run_allocates_nothing() -> R {
    let pipeline = ocr_chain::Pipeline::load()?;
    let mut chain = pipeline.bind(ocr_chain::Dims {
        height: 64,
        width: 64,
        num_crops: 4,
        crop_width: 64,
    })?;
    chain.run()?; // warm-up, and the view is made
    let mut result = Ok(());
    let n = allocations(|| {
        for i in 0..RUNS {
            chain.detector.inputs().image.fill(i as f32 / RUNS as f32);
            if let Err(e) = chain.run() {
                result = Err(e);
                return;
            }
        }
    });
    result?;
    println!("ocr chain: {n} allocations in {RUNS} runs");
    assert_eq!(n, 0);
    Ok(())
}
