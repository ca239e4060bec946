//! Speculative greedy decoding: a draft decoder proposes, the target verifies a round in
//! one run, and the tokens are the target's greedy tokens.

use std::fmt;
use std::marker::PhantomData;

use super::decoder::{CacheMode, Decoder, DecoderModel, Growing};
use crate::device::{Cpu, Device};
use crate::element::{Element, onnx_type_name};
use crate::error::{DecodeError, Result};

/// The vocabulary of a generated decoder model, as a type: `SIZE` token ids of element
/// type `Id` (the logits' last axis and the `input_ids` element type). Codegen names it in
/// each model's [`DecoderModel`] impl (`type Vocab = Vocab<512, i64>`), so that a
/// speculative pair of mismatched models does not compile.
pub struct Vocab<const SIZE: usize, Id>(PhantomData<fn() -> Id>);

/// The vocabulary of an untyped decoder (`Decoder<f32>`, any spec): known at run time
/// only, so a speculative pair with one is checked when it is made.
#[derive(Debug, Clone, Copy, Default)]
pub struct AnyVocab;

impl<const SIZE: usize, Id> fmt::Debug for Vocab<SIZE, Id> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Vocab<{SIZE}, {}>", std::any::type_name::<Id>())
    }
}

mod private {
    pub trait Sealed {}
    impl<const SIZE: usize, Id> Sealed for super::Vocab<SIZE, Id> {}
    impl Sealed for super::AnyVocab {}
}

/// A vocabulary type: [`Vocab`] or [`AnyVocab`] (sealed).
pub trait Vocabulary: private::Sealed + 'static {
    /// The vocabulary size, where the type fixes it.
    const SIZE: Option<usize>;
    /// The token ids' element type as ONNX names it (`"int64"`), where the type fixes it.
    const IDS: Option<&'static str>;
}

impl<const SIZE: usize, Id: Element> Vocabulary for Vocab<SIZE, Id> {
    const SIZE: Option<usize> = Some(SIZE);
    const IDS: Option<&'static str> = Some(Id::NAME);
}

impl Vocabulary for AnyVocab {
    const SIZE: Option<usize> = None;
    const IDS: Option<&'static str> = None;
}

/// `Self`, a draft's vocabulary, can stand with target vocabulary `V`: the same
/// [`Vocab`], or either one [`AnyVocab`] (checked at run time instead). The bound of
/// [`Speculative::new`] that makes a mismatched pair of generated models a compile error.
#[diagnostic::on_unimplemented(
    message = "the draft's vocabulary `{Self}` is not the target's `{V}`",
    label = "a draft of another vocabulary",
    note = "a speculative pair needs one vocabulary (size and token id type): the draft proposes ids that the target verifies",
    note = "`Vocab<SIZE, Id>` is the generated `DecoderModel::Vocab` of each model"
)]
pub trait SameVocab<V: Vocabulary>: Vocabulary {}

impl<const SIZE: usize, Id: Element> SameVocab<Vocab<SIZE, Id>> for Vocab<SIZE, Id> {}
impl<V: Vocabulary> SameVocab<V> for AnyVocab {}
impl<const SIZE: usize, Id: Element> SameVocab<AnyVocab> for Vocab<SIZE, Id> {}

/// What a [`Speculative`] generator has done, added up over its generations (until
/// [`Speculative::reset_stats`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SpeculativeStats {
    /// Tokens generated (given to the caller).
    pub tokens: u64,
    /// Verification rounds (one target run each).
    pub rounds: u64,
    /// Target model runs: the prompt's, then one per round.
    pub target_runs: u64,
    /// Draft model runs: the prompt's, then up to `k` per round.
    pub draft_runs: u64,
    /// Draft tokens proposed.
    pub proposed: u64,
    /// Draft tokens the target accepted (it would have picked them itself).
    pub accepted: u64,
}

impl SpeculativeStats {
    /// Accepted draft tokens per proposed one (0 when none was proposed).
    pub fn acceptance_rate(&self) -> f64 {
        ratio(self.accepted, self.proposed)
    }

    /// Accepted draft tokens per target run (the prompt's run included).
    pub fn accepted_per_target_run(&self) -> f64 {
        ratio(self.accepted, self.target_runs)
    }

    /// Tokens generated per target run: 1 for plain greedy decoding, up to `k + 1` when
    /// every proposal is accepted.
    pub fn tokens_per_target_run(&self) -> f64 {
        ratio(self.tokens, self.target_runs)
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

/// How many of `proposed` the target accepts, and its token after them: `picks(j)` is the
/// target's greedy pick at verified position `j` (after the round's first token and the
/// first `j` proposals). Proposal `j` is accepted while it equals `picks(j)`; the target's
/// pick after the last accepted one is the next token (a correction, or a bonus when all
/// are accepted). `picks` is called for positions `0..=accepted` only.
pub(crate) fn verify(proposed: &[i64], mut picks: impl FnMut(usize) -> i64) -> (usize, i64) {
    for (j, &p) in proposed.iter().enumerate() {
        let pick = picks(j);
        if pick != p {
            return (j, pick);
        }
    }
    (proposed.len(), picks(proposed.len()))
}

/// Speculative greedy decoding: a `draft` decoder proposes `k` tokens a round, greedily,
/// and the `target` runs them all in one [`Decoder::append`], reading its own greedy pick
/// at every position ([`Logits::at`](super::Logits::at)). Proposals are kept while they
/// equal the target's picks; the first that does not is replaced by the target's pick
/// (and when all `k` are kept, the target's pick after them is one more token). The
/// positions of rejected proposals are rewound in both decoders
/// ([`Decoder::rewind`]). The tokens are the target's greedy tokens, token for token:
/// every token is the target's argmax after the tokens before it. What the draft changes
/// is the number of target runs: `1` to `k + 1` tokens per run instead of one.
///
/// A round costs up to `k` draft runs (the first also feeds what the draft has not seen
/// yet) and one target run of `k + 1` positions. Batch 1 only (both decoders); the target
/// must take several new positions per run (no fixed step), and the draft may not carry
/// recurrent state (a target with it rewinds within its verifying run by running the
/// accepted tokens again: one more target run in a round with a rejection). Both decoders
/// must hold
/// `prompt + max_new - 1` positions.
///
/// The draft and the target must agree on the vocabulary: for generated models
/// ([`DecoderModel::Vocab`]) a mismatched pair does not compile; untyped decoders
/// (`Decoder<f32>`) are checked when the pair is made.
///
/// Exactness holds as far as the target's logits do not depend on how many positions a
/// run has: ONNX Runtime may sum in another order for a run of `k + 1` positions than for
/// one, so a near-tie between the top two logits (a difference of about 1e-6 in float32)
/// could pick differently.
///
/// ```no_run
/// # fn demo(
/// #     target: ort_bind_runtime::decode::Decoder<f32>,
/// #     draft: ort_bind_runtime::decode::Decoder<f32>,
/// # ) -> ort_bind_runtime::Result<()> {
/// use ort_bind_runtime::decode::Speculative;
/// // With generated modules: `target::Model::load()?.decoder(1, 512)?` and the draft's.
/// let mut generator = Speculative::new(target, draft, 4)?;
/// let tokens = generator.generate(&[1, 15, 27], 64)?;   // the target's 64 greedy tokens
/// let stats = generator.stats();
/// println!(
///     "{} tokens in {} target runs ({:.2} per run), {:.0} % of proposals accepted",
///     stats.tokens,
///     stats.target_runs,
///     stats.tokens_per_target_run(),
///     100.0 * stats.acceptance_rate()
/// );
/// # let _ = tokens; Ok(()) }
/// ```
pub struct Speculative<
    T: DecoderModel,
    R: DecoderModel,
    MT: CacheMode = Growing,
    MR: CacheMode = Growing,
    D: Device = Cpu,
> {
    target: Decoder<T, MT, D>,
    draft: Decoder<R, MR, D>,
    k: usize,
    stats: SpeculativeStats,
    // The sequence: the prompt and the tokens generated so far. The target holds all but
    // the last; the draft holds a prefix.
    seq: Vec<i64>,
    // A round's tokens: the last of `seq`, then the proposals.
    round: Vec<i64>,
}

impl<T: DecoderModel, R: DecoderModel, MT: CacheMode, MR: CacheMode, D: Device> fmt::Debug
    for Speculative<T, R, MT, MR, D>
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Speculative")
            .field("target", &self.target)
            .field("draft", &self.draft)
            .field("k", &self.k)
            .field("stats", &self.stats)
            .finish()
    }
}

impl<T: DecoderModel, R: DecoderModel, MT: CacheMode, MR: CacheMode, D: Device>
    Speculative<T, R, MT, MR, D>
{
    /// A generator over `target` and `draft` that proposes `k` draft tokens a round.
    ///
    /// The draft's vocabulary must be the target's (`R::Vocab: SameVocab<T::Vocab>`): two
    /// generated models of different vocabulary sizes or token id types do not compile.
    /// Refused at run time: `k == 0` ([`DecodeError::NoDraftTokens`]), a batch other than
    /// 1 ([`DecodeError::SpeculativeBatch`]), untyped decoders of different vocabularies
    /// or id types ([`DecodeError::VocabMismatch`], [`DecodeError::IdsMismatch`]), a model
    /// that fixes its positions per run ([`DecodeError::NotVerifiable`]), or a draft with
    /// recurrent state ([`DecodeError::RecurrentState`]; a target with it rewinds by running
    /// the accepted tokens again, one more target run in a round with a rejection).
    pub fn new(target: Decoder<T, MT, D>, draft: Decoder<R, MR, D>, k: usize) -> Result<Self>
    where
        R::Vocab: SameVocab<T::Vocab>,
    {
        if k == 0 {
            return Err(DecodeError::NoDraftTokens.into());
        }
        for batch in [target.batch(), draft.batch()] {
            if batch != 1 {
                return Err(DecodeError::SpeculativeBatch { batch }.into());
            }
        }
        if target.vocab() != draft.vocab() {
            return Err(DecodeError::VocabMismatch {
                target: target.vocab(),
                draft: draft.vocab(),
            }
            .into());
        }
        let (t_ids, r_ids) = (target.spec().input_ids.elem, draft.spec().input_ids.elem);
        if t_ids != r_ids {
            return Err(DecodeError::IdsMismatch {
                target: onnx_type_name(t_ids),
                draft: onnx_type_name(r_ids),
            }
            .into());
        }
        // The target verifies a round in one run; the draft takes one position per run,
        // or the round's first few at once.
        let target_step = target.spec().fixed_new;
        let draft_step = draft.spec().fixed_new.filter(|&step| step != 1);
        if let Some(step) = target_step.or(draft_step) {
            return Err(DecodeError::NotVerifiable { step }.into());
        }
        // A target with recurrent state rewinds within its verifying run (its state goes
        // back and the accepted tokens run again); a draft rewinds across its proposals'
        // runs, which such state cannot.
        if let Some(state) = draft.spec().caches.iter().find(|c| !c.grows()) {
            return Err(DecodeError::RecurrentState { state: state.past }.into());
        }
        Ok(Speculative {
            target,
            draft,
            k,
            stats: SpeculativeStats::default(),
            seq: Vec::new(),
            round: Vec::with_capacity(k + 1),
        })
    }

    /// Draft tokens proposed per round.
    pub fn k(&self) -> usize {
        self.k
    }

    /// Proposes `k` draft tokens per round from the next round on (refuses 0).
    pub fn set_k(&mut self, k: usize) -> Result<()> {
        if k == 0 {
            return Err(DecodeError::NoDraftTokens.into());
        }
        self.k = k;
        Ok(())
    }

    /// What the generator has done, added up over its generations.
    pub fn stats(&self) -> SpeculativeStats {
        self.stats
    }

    /// Zeroes [`stats`](Self::stats).
    pub fn reset_stats(&mut self) {
        self.stats = SpeculativeStats::default();
    }

    /// The target decoder (after a generation it holds the prompt and every generated
    /// token but the last).
    pub fn target(&self) -> &Decoder<T, MT, D> {
        &self.target
    }

    /// The draft decoder.
    pub fn draft(&self) -> &Decoder<R, MR, D> {
        &self.draft
    }

    /// The two decoders, target first.
    pub fn into_parts(self) -> (Decoder<T, MT, D>, Decoder<R, MR, D>) {
        (self.target, self.draft)
    }

    /// The target's first `max_new` greedy tokens after `prompt`.
    pub fn generate(&mut self, prompt: &[i64], max_new: usize) -> Result<Vec<i64>> {
        let mut out = Vec::with_capacity(max_new);
        self.generate_with(prompt, max_new, |t| {
            out.push(t);
            true
        })?;
        Ok(out)
    }

    /// Generates up to `max_new` of the target's greedy tokens after `prompt`, giving each
    /// to `on_token` as soon as it is known (a round gives one to `k + 1`); `on_token`
    /// returns whether to go on (`false`: stop after this token, for an end-of-sequence
    /// id). Returns the number of tokens given.
    ///
    /// Both decoders start over with the prompt. On an error the decoders are left
    /// mid-round; the next generation starts over anyway.
    pub fn generate_with(
        &mut self,
        prompt: &[i64],
        max_new: usize,
        mut on_token: impl FnMut(i64) -> bool,
    ) -> Result<usize> {
        if max_new == 0 {
            return Ok(0);
        }
        // The last token needs no run: the target holds at most prompt + max_new - 1.
        let adding = max_new - 1;
        for capacity in [self.target.capacity(), self.draft.capacity()] {
            if prompt.len() > capacity || adding > capacity - prompt.len() {
                return Err(DecodeError::CapacityExceeded {
                    len: prompt.len(),
                    adding,
                    capacity,
                }
                .into());
            }
        }
        let (target_runs, draft_runs) = (self.target.stats().runs, self.draft.stats().runs);
        let result = self.run(prompt, max_new, &mut on_token);
        self.stats.target_runs += self.target.stats().runs - target_runs;
        self.stats.draft_runs += self.draft.stats().runs - draft_runs;
        result
    }

    fn run(
        &mut self,
        prompt: &[i64],
        max_new: usize,
        on_token: &mut impl FnMut(i64) -> bool,
    ) -> Result<usize> {
        self.target.prefill(prompt)?;
        self.draft.prefill(prompt)?;
        let first = self.target.pick_greedy()?[0];
        self.seq.clear();
        self.seq.extend_from_slice(prompt);
        self.seq.push(first);
        self.stats.tokens += 1;
        let mut given = 1;
        if !on_token(first) {
            return Ok(given);
        }
        while given < max_new {
            // At most the tokens still wanted: the round's last token is the target's.
            let k = self.k.min(max_new - given - 1);
            self.round.clear();
            self.round.push(*self.seq.last().expect("holds the prompt"));
            if k > 0 {
                // What the draft has not seen (the last token, and the last proposal
                // when the round before accepted all), then k - 1 greedy steps.
                let seen = self.draft.len();
                self.draft.append(&self.seq[seen..])?;
                for _ in 1..k {
                    let proposal = self.draft.step_greedy()?[0];
                    self.round.push(proposal);
                }
                let proposal = self.draft.pick_greedy()?[0];
                self.round.push(proposal);
            }
            self.target.append(&self.round)?;
            let logits = self.target.logits()?;
            let (accepted, next) = verify(&self.round[1..], |j| logits.argmax_at(0, j) as i64);
            self.target.rewind(k - accepted)?;
            if k > 0 {
                // The draft ran the round's first token and proposals 1..k-1.
                self.draft.rewind(k - 1 - accepted.min(k - 1))?;
            }
            self.stats.rounds += 1;
            self.stats.proposed += k as u64;
            self.stats.accepted += accepted as u64;
            self.seq.extend_from_slice(&self.round[1..=accepted]);
            self.seq.push(next);
            for &token in &self.seq[self.seq.len() - accepted - 1..] {
                self.stats.tokens += 1;
                given += 1;
                if !on_token(token) {
                    return Ok(given);
                }
            }
        }
        Ok(given)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verify_keeps_the_agreeing_prefix_and_the_targets_next_pick() {
        // The target's picks at positions 0..: 7, 8, 9, 10.
        let target = [7i64, 8, 9, 10];
        let picks = |j: usize| target[j];
        // All accepted: the bonus token is the pick after the last proposal.
        assert_eq!(verify(&[7, 8, 9], picks), (3, 10));
        // The first disagreement is replaced by the target's pick; nothing after it read.
        let mut asked = Vec::new();
        let counted = verify(&[7, 5, 9], |j| {
            asked.push(j);
            target[j]
        });
        assert_eq!(counted, (1, 8));
        assert_eq!(asked, [0, 1]);
        assert_eq!(verify(&[1, 8, 9], picks), (0, 7));
        // No proposal: a plain greedy step.
        assert_eq!(verify(&[], picks), (0, 7));
    }

    /// A generation against a model of the next token: the plain greedy sequence and the
    /// speculative scheme (draft proposals checked by `verify`) give the same tokens for
    /// every k, whatever the draft proposes.
    #[test]
    fn the_scheme_reproduces_greedy_for_any_draft() {
        let target = |seq: &[i64]| (seq.iter().sum::<i64>() * 31 + 7) % 97;
        let draft = |seq: &[i64]| {
            let t = target(seq);
            // Wrong on every third length.
            if seq.len().is_multiple_of(3) {
                (t + 1) % 97
            } else {
                t
            }
        };
        let prompt = [3i64, 1, 4];
        let mut greedy = prompt.to_vec();
        for _ in 0..40 {
            greedy.push(target(&greedy));
        }
        for k in 1..7 {
            let mut seq = prompt.to_vec();
            seq.push(target(&seq));
            while seq.len() < greedy.len() {
                let mut ctx = seq.clone();
                let mut proposed = Vec::new();
                for _ in 0..k {
                    let p = draft(&ctx);
                    proposed.push(p);
                    ctx.push(p);
                }
                let (accepted, next) = verify(&proposed, |j| {
                    let mut s = seq.clone();
                    s.extend_from_slice(&proposed[..j]);
                    target(&s)
                });
                seq.extend_from_slice(&proposed[..accepted]);
                seq.push(next);
            }
            seq.truncate(greedy.len());
            assert_eq!(seq, greedy, "k = {k}");
        }
    }

    #[test]
    fn stats_ratios() {
        let stats = SpeculativeStats {
            tokens: 30,
            rounds: 9,
            target_runs: 10,
            draft_runs: 37,
            proposed: 36,
            accepted: 20,
        };
        assert_eq!(stats.tokens_per_target_run(), 3.0);
        assert_eq!(stats.accepted_per_target_run(), 2.0);
        assert!((stats.acceptance_rate() - 20.0 / 36.0).abs() < 1e-12);
        assert_eq!(SpeculativeStats::default().acceptance_rate(), 0.0);
    }
}
