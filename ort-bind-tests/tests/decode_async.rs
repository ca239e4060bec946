//! Asynchronous decoding (`Decoder::prefill_async`, `step_async`, `step_greedy_async`,
//! `stream_async`): the same tokens as the blocking loop (Python onnxruntime's,
//! `greedy.json`) through every route and a decoder split in three models; a dropped or
//! leaked future stops its run and the decoder goes on; a terminator or a timeout ends a
//! stream; decoders on a multi-threaded executor.

use std::future::{Future, poll_fn};
use std::pin::{Pin, pin};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use futures_core::Stream;
use futures_executor::block_on;
use ort_bind::decode::{CacheMode, DecodeError, Decoder, DecoderModel, GenerateOptions};
use ort_bind::{Error, Result};
use ort_bind_tests::decoders::{Expected, expected, read};

mod gqa_f32 {
    ort_bind::bindings!("tests/fixtures/decoders/gqa_f32/model.onnx");
}

/// The build.rs route (`ort-bind-tests/build.rs`), float16.
mod gqa_f16 {
    ort_bind::include_bindings!("decoder_gqa_f16");
}

/// The derive route.
#[derive(ort_bind::OnnxBinding)]
#[onnx(model = "tests/fixtures/decoders/gpt2_stacked/model.onnx", decoder)]
struct Gpt2Stacked;

/// Embeddings -> transformer -> head: each asynchronous step is three runs on the worker.
mod split {
    ort_bind::pipeline!(
        embed = "tests/fixtures/pipelines/split/embed.onnx",
        body = "tests/fixtures/pipelines/split/body.onnx",
        lm_head = "tests/fixtures/pipelines/split/lm_head.onnx",
    );
}

const CAPACITY: usize = 1024;

/// The next item of `stream`.
async fn next<S: Stream + Unpin>(stream: &mut S) -> Option<S::Item> {
    poll_fn(|cx| Pin::new(&mut *stream).poll_next(cx)).await
}

/// Every item of `stream`.
async fn collect<S: Stream<Item = Result<i64>> + Unpin>(mut stream: S) -> Result<Vec<i64>> {
    let mut out = Vec::new();
    while let Some(token) = next(&mut stream).await {
        out.push(token?);
    }
    Ok(out)
}

/// Prefills `want`'s prompts and steps as many tokens as it holds, asynchronously.
async fn greedy_async<T: DecoderModel, M: CacheMode>(
    decoder: &mut Decoder<T, M>,
    want: &Expected,
) -> Result<Vec<Vec<i64>>> {
    let prompt = want.prompts.concat();
    decoder.prefill_async(&prompt).await?;
    let mut rows = vec![Vec::new(); want.prompts.len()];
    for _ in 0..want.tokens[0].len() {
        let picked = decoder.step_greedy_async().await?;
        for (row, &t) in rows.iter_mut().zip(picked) {
            row.push(t);
        }
    }
    Ok(rows)
}

#[test]
fn async_steps_give_the_greedy_tokens_through_every_route() -> Result<()> {
    block_on(async {
        let m = gqa_f32::Model::load()?;
        for file in ["greedy.json", "greedy_batch2.json"] {
            let want = expected("gqa_f32", file);
            let batch = want.prompts.len();
            let mut growing = m.decoder(batch, CAPACITY)?;
            assert_eq!(
                greedy_async(&mut growing, &want).await?,
                want.tokens,
                "{file}"
            );
            let mut shared = m.shared_decoder(batch, CAPACITY)?;
            assert_eq!(
                greedy_async(&mut shared, &want).await?,
                want.tokens,
                "{file}"
            );
            // One run per step and the prompt's, as the blocking loop.
            assert_eq!(shared.stats().runs, want.tokens[0].len() as u64 + 1);
        }

        let f16 = expected("gqa_f16", "greedy.json");
        let mut decoder = gqa_f16::Model::load()?.shared_decoder(1, CAPACITY)?;
        assert_eq!(
            greedy_async(&mut decoder, &f16).await?,
            f16.tokens,
            "float16"
        );

        let gpt2 = expected("gpt2_stacked", "greedy.json");
        let session = ort_bind::Session::from_file(
            Gpt2Stacked::MODEL_FILE.find()?,
            &ort_bind::SessionOptions::new().intra_threads(1),
        )?;
        let mut decoder = Gpt2Stacked::decoder(&session, 1, CAPACITY)?;
        assert_eq!(
            greedy_async(&mut decoder, &gpt2).await?,
            gpt2.tokens,
            "derive"
        );

        let pipeline = split::Pipeline::load()?;
        let path = ort_bind_tests::paths::fixture("pipelines").join("split/greedy.json");
        let (want, _) = read(&path);
        let mut decoder = pipeline.decoder(1, 256)?;
        assert_eq!(
            greedy_async(&mut decoder, &want).await?,
            want.tokens,
            "split"
        );

        // `step_async` with tokens of one's own, and its checks.
        let one = expected("gqa_f32", "greedy.json");
        let mut decoder = m.decoder(1, CAPACITY)?;
        decoder.prefill_async(&one.prompts[0]).await?;
        decoder.step_async(&one.tokens[0][..1]).await?;
        assert_eq!(decoder.logits()?.argmax(0) as i64, one.tokens[0][1]);
        let err = decoder.step_async(&[1, 2]).await.unwrap_err();
        assert!(
            matches!(err, Error::Decode(DecodeError::StepTokens { count: 2, .. })),
            "{err}"
        );
        let err = decoder.append_async(&[100_000]).await.unwrap_err();
        assert!(
            matches!(err, Error::Decode(DecodeError::TokenOutOfRange { .. })),
            "{err}"
        );
        // Refused before anything ran: the sequence is as it was.
        assert_eq!(decoder.len(), one.prompts[0].len() + 1);
        Ok(())
    })
}

#[test]
fn an_async_stream_yields_the_greedy_tokens_and_stops_when_dropped() -> Result<()> {
    block_on(async {
        let one = expected("gqa_f32", "greedy.json");
        let m = gqa_f32::Model::load()?;
        let mut decoder = m.shared_decoder(1, CAPACITY)?;
        let all = collect(decoder.stream_async(&one.prompts[0], GenerateOptions::new(40))?).await?;
        assert_eq!(all, one.tokens[0][..40]);

        // Five read, then dropped: the prompt's run and four more, nothing after.
        let runs = decoder.stats().runs;
        {
            let mut stream = decoder.stream_async(&one.prompts[0], GenerateOptions::new(40))?;
            for want in &one.tokens[0][..5] {
                assert_eq!(next(&mut stream).await.transpose()?, Some(*want));
            }
            assert_eq!(stream.produced(), 5);
        }
        assert_eq!(decoder.stats().runs - runs, 5);
        assert_eq!(decoder.len(), one.prompts[0].len() + 4);

        // A stop token ends it (and is yielded).
        let stop = one.tokens[0][7];
        let first = one.tokens[0].iter().position(|&t| t == stop).unwrap();
        let options = GenerateOptions::new(40).stop_at(stop);
        let stopped = collect(decoder.stream_async(&one.prompts[0], options)?).await?;
        assert_eq!(stopped, one.tokens[0][..=first]);

        let mut two = m.decoder(2, CAPACITY)?;
        let err = two
            .stream_async(&[1, 2], GenerateOptions::new(4))
            .unwrap_err();
        assert!(
            matches!(err, Error::Decode(DecodeError::StreamBatch { batch: 2 })),
            "{err}"
        );
        Ok(())
    })
}

/// Polls `future` once with a waker that does nothing (its run starts).
fn poll_once<F: Future>(future: Pin<&mut F>) -> Poll<F::Output> {
    future.poll(&mut Context::from_waker(Waker::noop()))
}

#[test]
fn a_dropped_or_leaked_future_stops_its_run_and_the_decoder_goes_on() -> Result<()> {
    let one = expected("gqa_f32", "greedy.json");
    let m = gqa_f32::Model::load()?;
    for shared in [false, true] {
        let mut growing;
        let mut sharing;
        macro_rules! check {
            ($decoder:expr) => {{
                let decoder = $decoder;
                decoder.prefill(&one.prompts[0])?;
                let len = decoder.len();
                // Started, then dropped (a client gone, an executor's timeout). 400
                // positions take milliseconds: the first poll finds the run in flight.
                let long: Vec<i64> = (0..400).map(|i| i % 500 + 1).collect();
                let polled = {
                    let mut append = pin!(decoder.append_async(&long));
                    poll_once(append.as_mut()).is_ready()
                };
                if polled {
                    // Finished within the first poll after all: it happened.
                    assert_eq!(decoder.len(), len + long.len());
                } else {
                    // The run did not happen: no positions added, no logits until the next.
                    assert_eq!(decoder.len(), len);
                    assert!(matches!(
                        decoder.logits().unwrap_err(),
                        Error::Decode(DecodeError::NoLogits)
                    ));
                }
                // Started and leaked: the decoder's next use waits for it.
                let mut step = Box::pin(decoder.step_async(&one.tokens[0][..1]));
                let _ = poll_once(step.as_mut());
                std::mem::forget(step);
                // The next generation gives its tokens.
                let tokens: Vec<i64> = decoder
                    .stream(&one.prompts[0], GenerateOptions::new(24))?
                    .collect::<Result<_>>()?;
                assert_eq!(tokens, one.tokens[0][..24], "shared: {shared}");
            }};
        }
        if shared {
            sharing = m.shared_decoder(1, CAPACITY)?;
            check!(&mut sharing);
        } else {
            growing = m.decoder(1, CAPACITY)?;
            check!(&mut growing);
        }
    }
    // A decoder dropped with a leaked run in flight waits for it (no use after free).
    let mut decoder = m.decoder(1, CAPACITY)?;
    let mut prefill = Box::pin(decoder.prefill_async(&one.prompts[0]));
    let _ = poll_once(prefill.as_mut());
    std::mem::forget(prefill);
    drop(decoder);
    Ok(())
}

#[test]
fn a_terminator_or_a_timeout_ends_an_async_stream_and_the_next_one_runs() -> Result<()> {
    block_on(async {
        let one = expected("gqa_f32", "greedy.json");
        let m = gqa_f32::Model::load()?;
        let mut decoder = m.decoder(1, CAPACITY)?;

        let stop = decoder.terminator();
        let mut stream = decoder.stream_async(&one.prompts[0], GenerateOptions::new(100))?;
        let mut seen = 0;
        let err = loop {
            match next(&mut stream).await {
                Some(Ok(_)) => {
                    seen += 1;
                    if seen == 3 {
                        stop.terminate()?;
                    }
                }
                Some(Err(e)) => break e,
                None => panic!("the stream ended without its stop"),
            }
        };
        assert!(matches!(err, Error::Terminated), "{err}");
        assert_eq!(seen, 3);
        assert!(next(&mut stream).await.is_none(), "nothing after the error");
        drop(stream);
        stop.terminate()?; // late: inert

        let options = GenerateOptions::new(4000).timeout(Duration::from_millis(1));
        let mut stream = decoder.stream_async(&one.prompts[0], options)?;
        let mut items = 0;
        let last = loop {
            match next(&mut stream).await {
                Some(Ok(_)) => {
                    items += 1;
                    std::thread::sleep(Duration::from_micros(100));
                }
                other => break other,
            }
        };
        assert!(
            matches!(last, Some(Err(Error::TimedOut { .. }))),
            "{items} items, then {last:?}"
        );
        drop(stream);

        let tokens =
            collect(decoder.stream_async(&one.prompts[0], GenerateOptions::new(30))?).await?;
        assert_eq!(tokens, one.tokens[0][..30]);
        Ok(())
    })
}

#[test]
fn decoders_stream_concurrently_on_a_multi_threaded_executor() -> Result<()> {
    let one = expected("gqa_f32", "greedy.json");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .expect("runtime");
    let m = gqa_f32::Model::load()?;
    let tasks: Vec<_> = (0..4)
        .map(|i| {
            let mut decoder = m.shared_decoder(1, CAPACITY)?;
            let prompt = one.prompts[0].clone();
            let steps = 16 + 8 * i;
            Ok(runtime.spawn(async move {
                let stream = decoder.stream_async(&prompt, GenerateOptions::new(steps))?;
                collect(stream).await
            }))
        })
        .collect::<Result<_>>()?;
    for (i, task) in tasks.into_iter().enumerate() {
        let tokens = runtime.block_on(task).expect("task")?;
        assert_eq!(tokens, one.tokens[0][..16 + 8 * i]);
    }
    Ok(())
}

#[test]
fn a_decoder_pool_lends_decoders_to_concurrent_requests() -> Result<()> {
    use ort_bind::decode::DecoderPool;
    let one = expected("gqa_f32", "greedy.json");
    let model = gqa_f32::Model::load()?;
    let pool = DecoderPool::of_decoders(2, move || model.shared_decoder(1, CAPACITY));

    // Six client threads, two decoders: each request gets its tokens; no third decoder.
    // Holders meet in pairs before decoding, so two decoders are out at once however the
    // threads are scheduled (without it, on a loaded machine one thread could finish
    // before the next checks out, and one decoder would serve all six).
    let pair = std::sync::Barrier::new(2);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..6)
            .map(|i| {
                let (pool, one, pair) = (&pool, &one, &pair);
                scope.spawn(move || -> Result<()> {
                    let mut decoder = pool.checkout()?;
                    pair.wait();
                    let n = 10 + 5 * i;
                    let tokens: Vec<i64> = decoder
                        .stream(&one.prompts[0], GenerateOptions::new(n))?
                        .collect::<Result<_>>()?;
                    assert_eq!(tokens, one.tokens[0][..n], "request {i}");
                    Ok(())
                })
            })
            .collect();
        handles
            .into_iter()
            .try_for_each(|h| h.join().expect("client thread"))
    })?;
    assert_eq!((pool.created(), pool.idle()), (2, 2));

    // Async handlers: checkout and stream without blocking an executor thread.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .expect("runtime");
    let tasks: Vec<_> = (0..4)
        .map(|i| {
            let (pool, prompt) = (pool.clone(), one.prompts[0].clone());
            runtime.spawn(async move {
                let mut decoder = pool.checkout_async().await?;
                collect(decoder.stream_async(&prompt, GenerateOptions::new(12 + i))?).await
            })
        })
        .collect();
    for (i, task) in tasks.into_iter().enumerate() {
        assert_eq!(
            runtime.block_on(task).expect("task")?,
            one.tokens[0][..12 + i]
        );
    }

    // A stop taken during one checkout does not reach the next: the decoder that comes
    // back ends it.
    let mut decoder = pool.checkout()?;
    let stop = decoder.terminator();
    let mut stream = decoder.stream(&one.prompts[0], GenerateOptions::new(50))?;
    stream.next().transpose()?;
    std::mem::forget(stream); // a handler that leaked its stream
    drop(decoder);
    stop.terminate()?;
    let mut decoder = pool.checkout()?;
    let tokens: Vec<i64> = decoder
        .stream(&one.prompts[0], GenerateOptions::new(20))?
        .collect::<Result<_>>()?;
    assert_eq!(tokens, one.tokens[0][..20]);
    Ok(())
}

#[test]
fn a_schedulers_tokens_stream_to_async_handlers() -> Result<()> {
    use ort_bind::decode::{Rows, Scheduler};
    let one = expected("gqa_f32", "greedy.json");
    let m = gqa_f32::Model::load()?;
    let scheduler = std::sync::Arc::new(Scheduler::new(Rows::new(m.shared_decoder(3, CAPACITY)?)?));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .expect("runtime");
    // Six tasks over three rows: each awaits its tokens (no thread blocks on a run).
    let tasks: Vec<_> = (0..6)
        .map(|i| {
            let (scheduler, prompt) = (std::sync::Arc::clone(&scheduler), one.prompts[0].clone());
            runtime.spawn(async move { collect(scheduler.submit(&prompt, 10 + 3 * i, None)).await })
        })
        .collect();
    for (i, task) in tasks.into_iter().enumerate() {
        assert_eq!(
            runtime.block_on(task).expect("task")?,
            one.tokens[0][..10 + 3 * i]
        );
    }
    // A handler that reads two tokens and goes: its row is freed, the others go on.
    runtime.block_on(async {
        let mut left = scheduler.submit(&one.prompts[0], 500, None);
        assert_eq!(next(&mut left).await.transpose()?, Some(one.tokens[0][0]));
        assert_eq!(next(&mut left).await.transpose()?, Some(one.tokens[0][1]));
        drop(left);
        let rest = collect(scheduler.submit(&one.prompts[0], 30, None)).await?;
        assert_eq!(rest, one.tokens[0][..30]);
        // A bad request's only item is its error, awaited like a token.
        let bad = collect(scheduler.submit(&[100_000], 4, None))
            .await
            .unwrap_err();
        assert!(matches!(bad, Error::Decode(_)), "{bad}");
        Ok(())
    })
}
