//! The paged cache mode (`decode::Paged`) on `gqa_paged`, gqa_f32 with a block pool
//! (`make_paged.py`): greedy tokens equal Python onnxruntime's (gqa_f32's `greedy.json`,
//! which `make_paged.py` checks the paged model against) through `bindings!`, build.rs and
//! the derive; rows take blocks as they grow and give them back when rewound, reset or
//! freed; a run short of blocks fails and changes nothing; continuous batching over a pool
//! smaller than `rows x capacity` gives every request its own tokens, and a scheduler
//! holds requests back until blocks are free; a paged target of speculative decoding
//! rewinds correctly; a model of the other kind is refused in each mode. (Beam search over
//! a pool: `tests/beam.rs`.)

use std::ops::ControlFlow;

use ort_bind::decode::{
    DecodeError, Decoder, GenerateOptions, Growing, Joining, Paged, Rows, Scheduler,
};
use ort_bind::{Error, Result};
use ort_bind_tests::decoders::{Lcg, Served, expected, random_request};

mod gqa_paged {
    ort_bind::bindings!("tests/fixtures/decoders/gqa_paged/model.onnx");
}

mod gqa_f32 {
    ort_bind::bindings!("tests/fixtures/decoders/gqa_f32/model.onnx");
}

/// The build.rs route.
mod built {
    ort_bind::include_bindings!("decoder_gqa_paged");
}

/// The derive route.
#[derive(ort_bind::OnnxBinding)]
#[onnx(model = "tests/fixtures/decoders/gqa_paged/model.onnx", decoder)]
struct PagedGqa;

const CAPACITY: usize = 256;
const BLOCK: usize = 16;

fn refusal<T: std::fmt::Debug>(r: Result<T>) -> DecodeError {
    match r {
        Err(Error::Decode(e)) => e,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// Greedy tokens of `prompt` from `decoder`, `n` of them.
fn greedy<T: ort_bind::decode::DecoderModel>(
    decoder: &mut Decoder<T, Paged>,
    prompt: &[i64],
    n: usize,
) -> Result<Vec<i64>> {
    let mut out = Vec::new();
    decoder.generate(prompt, &GenerateOptions::new(n), |t| {
        out.extend_from_slice(t);
        ControlFlow::Continue(())
    })?;
    Ok(out)
}

#[test]
fn greedy_tokens_equal_python_through_every_route() -> Result<()> {
    let want = expected("gqa_f32", "greedy.json");
    let (prompt, tokens) = (&want.prompts[0], &want.tokens[0]);
    // A pool of 11 blocks: the 172 positions need exactly that many.
    let blocks = (prompt.len() + tokens.len()).div_ceil(BLOCK);
    let model = gqa_paged::Model::load()?;
    let mut decoder = model.paged_decoder(1, CAPACITY, blocks)?;
    assert_eq!(decoder.block_size(), BLOCK);
    assert_eq!(
        greedy(&mut decoder, prompt, tokens.len())?,
        *tokens,
        "bindings!"
    );
    // The run that picked the last token did not run it: 171 positions held, in 11 blocks.
    assert_eq!(decoder.free_blocks(), 0);

    let mut decoder = built::Model::load()?.paged_decoder(1, CAPACITY, blocks)?;
    assert_eq!(
        greedy(&mut decoder, prompt, tokens.len())?,
        *tokens,
        "build.rs"
    );

    let session = ort_bind::Session::from_file(
        PagedGqa::MODEL_FILE.find()?,
        &ort_bind::SessionOptions::new().intra_threads(1),
    )?;
    let mut decoder = PagedGqa::paged_decoder(&session, 1, CAPACITY, blocks)?;
    assert_eq!(
        greedy(&mut decoder, prompt, tokens.len())?,
        *tokens,
        "derive"
    );

    // A token stream, and the pool a plain constructor makes (every row at full capacity).
    let mut decoder =
        Decoder::<gqa_paged::Model, Paged>::new(model.session(), &gqa_paged::DECODER, 1, CAPACITY)?;
    assert_eq!(decoder.pool_blocks(), CAPACITY / BLOCK);
    let streamed: Vec<i64> = decoder
        .stream(prompt, GenerateOptions::new(tokens.len()))?
        .collect::<Result<_>>()?;
    assert_eq!(streamed, *tokens, "stream");

    // An async stream (runs on ort-bind's worker threads).
    let mut stream =
        std::pin::pin!(decoder.stream_async(prompt, GenerateOptions::new(tokens.len()))?);
    let mut streamed = Vec::new();
    while let Some(t) = futures_executor::block_on(std::future::poll_fn(|cx| {
        futures_core::Stream::poll_next(stream.as_mut(), cx)
    })) {
        streamed.push(t?);
    }
    assert_eq!(streamed, *tokens, "stream_async");
    Ok(())
}

#[test]
fn two_rows_share_one_pool() -> Result<()> {
    let want = expected("gqa_f32", "greedy_batch2.json");
    let model = gqa_paged::Model::load()?;
    let mut decoder = model.paged_decoder(2, CAPACITY, 32)?;
    let prompt: Vec<i64> = want.prompts.concat();
    let n = want.tokens[0].len();
    let mut rows = vec![Vec::new(), Vec::new()];
    decoder.generate(&prompt, &GenerateOptions::new(n), |t| {
        rows[0].push(t[0]);
        rows[1].push(t[1]);
        ControlFlow::Continue(())
    })?;
    assert_eq!(rows, want.tokens);
    Ok(())
}

#[test]
fn blocks_follow_the_positions_held() -> Result<()> {
    let model = gqa_paged::Model::load()?;
    let mut decoder = model.paged_decoder(1, CAPACITY, 8)?;
    assert_eq!((decoder.pool_blocks(), decoder.free_blocks()), (8, 8));
    let prompt: Vec<i64> = (0..40).map(|i| 1 + (i * 37) % 500).collect();
    decoder.prefill(&prompt)?;
    assert_eq!(decoder.free_blocks(), 5, "40 positions: 3 blocks");
    let first = decoder.pick_greedy()?[0];
    decoder.rewind(30)?;
    assert_eq!(decoder.free_blocks(), 7, "10 positions: 1 block");
    // The positions kept are intact: running the rest again picks the same token.
    decoder.append(&prompt[10..])?;
    assert_eq!(decoder.pick_greedy()?[0], first);
    decoder.reset()?;
    assert_eq!(decoder.free_blocks(), 8);
    Ok(())
}

#[test]
fn a_run_short_of_blocks_fails_and_changes_nothing() -> Result<()> {
    let want = expected("gqa_f32", "greedy.json");
    let (prompt, tokens) = (&want.prompts[0], &want.tokens[0]);
    let model = gqa_paged::Model::load()?;
    // Two blocks: 32 positions.
    let mut decoder = model.paged_decoder(1, CAPACITY, 2)?;
    decoder.prefill(prompt)?;
    let filler = vec![1; 32 - prompt.len() + 1];
    assert_eq!(
        refusal(decoder.append(&filler)),
        DecodeError::OutOfBlocks {
            needed: 2,
            free: 1,
            pool: 2
        }
    );
    let message = refusal(decoder.append(&filler)).to_string();
    assert!(
        message.contains("needs 2 blocks and only 1 of its 2"),
        "{message}"
    );
    assert_eq!(decoder.len(), prompt.len());
    // The decoder goes on as if nothing happened: the reference tokens up to the pool.
    let mut got = Vec::new();
    while decoder.len() < 32 {
        got.push(decoder.step_greedy()?[0]);
    }
    assert_eq!(got, tokens[..got.len()]);
    Ok(())
}

#[test]
fn the_other_kind_of_model_is_refused_in_each_mode() -> Result<()> {
    let paged = gqa_paged::Model::load()?;
    let e = refusal(Decoder::<gqa_paged::Model, Growing>::new(
        paged.session(),
        &gqa_paged::DECODER,
        1,
        64,
    ));
    assert_eq!(e, DecodeError::PagedMismatch { paged: true });
    assert!(e.to_string().contains("runs only in the paged mode"), "{e}");
    let per_row = gqa_f32::Model::load()?;
    let e = refusal(Decoder::<gqa_f32::Model, Paged>::new(
        per_row.session(),
        &gqa_f32::DECODER,
        1,
        64,
    ));
    assert_eq!(e, DecodeError::PagedMismatch { paged: false });
    assert_eq!(
        refusal(paged.paged_decoder(1, 64, 0)),
        DecodeError::PoolSize { blocks: 0 }
    );
    assert_eq!(
        refusal(paged.paged_decoder(1, 64, 1 << 40)),
        DecodeError::PoolSize { blocks: 1 << 40 }
    );
    Ok(())
}

mod mha_concat {
    ort_bind::bindings!("tests/fixtures/decoders/mha_concat/model.onnx");
}

/// Speculative decoding with a paged target rewinds it after every rejected draft token
/// (blocks given back, positions written again): the target's greedy tokens for every k.
/// The draft (`mha_concat`: other weights, the same vocabulary) agrees rarely, so most
/// rounds rewind.
#[test]
fn a_paged_target_rewinds_under_speculative_decoding() -> Result<()> {
    let want = expected("gqa_f32", "greedy.json");
    let (prompt, tokens) = (&want.prompts[0], &want.tokens[0]);
    let target = gqa_paged::Model::load()?;
    let draft = mha_concat::Model::load()?;
    for k in [1, 3, 6] {
        let mut g = ort_bind::decode::Speculative::new(
            target.paged_decoder(1, CAPACITY, 12)?,
            draft.decoder(1, CAPACITY)?,
            k,
        )?;
        assert_eq!(g.generate(prompt, tokens.len())?, *tokens, "k = {k}");
        assert!(
            g.stats().acceptance_rate() < 0.5,
            "k = {k}: {:?}",
            g.stats()
        );
        // The blocks of the 171 positions held, every rewound block back in the pool.
        assert_eq!(g.target().free_blocks(), 1, "k = {k}");
    }
    Ok(())
}

/// Greedy tokens of `prompt` decoded alone.
fn alone(model: &gqa_paged::Model, prompt: &[i64], max_new: usize) -> Result<Vec<i64>> {
    let mut decoder = model.paged_decoder(1, CAPACITY, CAPACITY / BLOCK)?;
    greedy(&mut decoder, prompt, max_new)
}

#[test]
fn rows_over_a_small_pool_get_their_own_tokens() -> Result<()> {
    let model = gqa_paged::Model::load()?;
    small_pool(&model, Joining::Prefill)?;
    small_pool(&model, Joining::TokenByToken)
}

/// 30 requests joining (by `joining`) and leaving at random 6 rows of capacity 256 over
/// 12 blocks (192 positions, where the shared-buffer mode would reserve 6 x 256).
fn small_pool(model: &gqa_paged::Model, joining: Joining) -> Result<()> {
    let mut rows = Rows::new(model.paged_decoder(6, CAPACITY, 12)?)?;
    rows.set_joining(joining)?;
    let mut rng = Lcg(20261204);
    let requests: Vec<(Vec<i64>, usize)> = (0..30).map(|i| random_request(i, &mut rng)).collect();
    let (mut next, mut waited, mut steps) = (0, 0, 0);
    let mut served = Served::new(requests.len());
    while next < requests.len() || rows.busy() > 0 {
        while next < requests.len() && rows.busy() < rows.rows() {
            let (prompt, max_new) = &requests[next];
            match rows.join(prompt, *max_new, None) {
                Ok(row) => {
                    served.joined(row, next);
                    next += 1;
                }
                // Not enough blocks until a request ends: it waits.
                Err(Error::Decode(DecodeError::OutOfBlocks {
                    needed, pool: 12, ..
                })) => {
                    assert!(needed <= 4);
                    waited += 1;
                    break;
                }
                Err(e) => return Err(e),
            }
        }
        served.maybe_leave(&mut rows, &mut rng, 30);
        steps += 1;
        served.record(rows.step()?);
    }
    assert!(waited > 0, "the pool held requests back");
    assert_eq!(rows.free_blocks(), 12, "every block back in the pool");
    served.check(
        &requests,
        |prompt, max_new| alone(model, prompt, max_new),
        &format!(", {joining:?}"),
    )?;
    let one_by_one: usize = requests.iter().map(|(p, n)| p.len() + n - 1).sum();
    assert!(
        steps < one_by_one,
        "{steps} steps, {one_by_one} one after another"
    );
    Ok(())
}

#[test]
fn a_scheduler_waits_for_blocks_and_refuses_what_never_fits() -> Result<()> {
    let model = gqa_paged::Model::load()?;
    let scheduler = Scheduler::new(Rows::new(model.paged_decoder(4, CAPACITY, 6)?)?);
    let mut rng = Lcg(7);
    let requests: Vec<(Vec<i64>, usize)> = (0..10).map(|i| random_request(i, &mut rng)).collect();
    let streams: Vec<_> = requests
        .iter()
        .map(|(p, n)| scheduler.submit(p, *n, None))
        .collect();
    // 200 positions: 13 blocks, more than the whole pool.
    let too_long = scheduler.submit(&[5; 100], 100, None).collect::<Vec<_>>();
    assert!(
        matches!(
            too_long.as_slice(),
            [Err(Error::Decode(DecodeError::OutOfBlocks {
                needed: 13,
                pool: 6,
                ..
            }))]
        ),
        "{too_long:?}"
    );
    for ((prompt, max_new), stream) in requests.iter().zip(streams) {
        let got: Vec<i64> = stream.collect::<Result<_>>()?;
        assert_eq!(got, alone(&model, prompt, *max_new)?);
    }
    scheduler.finish();
    Ok(())
}
