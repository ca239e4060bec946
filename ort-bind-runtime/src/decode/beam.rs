//! Beam search over a decoder whose batch rows are the beams: each step scores every
//! continuation of every beam, keeps the best `num_beams`, reorders the decoder's rows to
//! follow them ([`Decoder::reorder_rows`]) and runs their tokens in one batch.

use std::fmt;

use super::decoder::{CacheMode, Decoder, DecoderModel, Growing};
use super::logits::Logit;
use crate::device::{Cpu, Device};
use crate::error::{DecodeError, Result};

/// The score a beam other than the first starts with, so that the first step's
/// candidates all come from the first beam (every beam holds the same prompt).
const NOT_STARTED: f32 = -1e9;

/// What a [`BeamSearch::run`] searches for: the beams, the length, the length penalty, when
/// to stop, how many sequences to return, and the end and padding ids. The fields are
/// onnxruntime-genai's search options of the same names (`max_length` counts the prompt)
/// and its model's `eos_token_id` and `pad_token_id`.
///
/// ```
/// use ort_bind_runtime::decode::BeamOptions;
///
/// let options = BeamOptions::new(4, 64) // 4 beams, prompt and generated tokens <= 64
///     .length_penalty(0.8)
///     .return_sequences(2)
///     .eos(2);
/// assert_eq!(options.num_return_sequences, 2);
/// assert!(options.early_stopping);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct BeamOptions {
    /// Beams kept after each step (at most the decoder's batch).
    pub num_beams: usize,
    /// The longest sequence, prompt included: the search stops when the beams reach it.
    pub max_length: usize,
    /// A finished sequence of `len` tokens (prompt included) scores
    /// `sum of log-probabilities / len.powf(length_penalty)`: above 0 favours longer
    /// sequences, below 0 shorter ones.
    pub length_penalty: f32,
    /// `true`: stop as soon as `num_beams` sequences have ended on the eos id. `false`:
    /// go on while the best open beam could still beat the worst of them.
    pub early_stopping: bool,
    /// Sequences returned, best first (at most `num_beams`).
    pub num_return_sequences: usize,
    /// The end-of-sequence id: a beam that picks it ends (the id is not part of the
    /// sequence; its log-probability is in the score). `None`: beams end at `max_length`.
    pub eos_token_id: Option<i64>,
    /// The id run in decoder rows beyond `num_beams` (their results are never read).
    pub pad_token_id: i64,
}

impl BeamOptions {
    /// `num_beams` beams up to `max_length` tokens (prompt included), length penalty 1,
    /// early stopping, one sequence returned, no eos id, padding id 0.
    pub fn new(num_beams: usize, max_length: usize) -> Self {
        BeamOptions {
            num_beams,
            max_length,
            length_penalty: 1.0,
            early_stopping: true,
            num_return_sequences: 1,
            eos_token_id: None,
            pad_token_id: 0,
        }
    }

    /// Sets [`length_penalty`](Self::length_penalty).
    #[must_use]
    pub fn length_penalty(mut self, penalty: f32) -> Self {
        self.length_penalty = penalty;
        self
    }

    /// Sets [`early_stopping`](Self::early_stopping).
    #[must_use]
    pub fn early_stopping(mut self, early: bool) -> Self {
        self.early_stopping = early;
        self
    }

    /// Sets [`num_return_sequences`](Self::num_return_sequences).
    #[must_use]
    pub fn return_sequences(mut self, n: usize) -> Self {
        self.num_return_sequences = n;
        self
    }

    /// Sets [`eos_token_id`](Self::eos_token_id).
    #[must_use]
    pub fn eos(mut self, id: i64) -> Self {
        self.eos_token_id = Some(id);
        self
    }

    /// Sets [`pad_token_id`](Self::pad_token_id).
    #[must_use]
    pub fn pad(mut self, id: i64) -> Self {
        self.pad_token_id = id;
        self
    }
}

impl Default for BeamOptions {
    /// [`BeamOptions::new`]`(4, 128)`.
    fn default() -> Self {
        BeamOptions::new(4, 128)
    }
}

/// One sequence a beam search returns.
#[derive(Debug, Clone, PartialEq)]
pub struct Beam {
    /// The tokens after the prompt (onnxruntime-genai's `get_sequence` returns the prompt
    /// and these), without the eos id when it [`ended`](Self::ended) on it.
    pub tokens: Vec<i64>,
    /// The sum of the tokens' log-probabilities (the eos id's included) over
    /// `len.powf(length_penalty)`, `len` the prompt's and `tokens`' length.
    pub score: f32,
    /// Whether the sequence ended on the eos id (`false`: it was still open when the
    /// search stopped, at `max_length`).
    pub ended: bool,
}

/// A continuation: a beam and a token, with the beam's score after it.
#[derive(Debug, Clone, Copy)]
struct Candidate {
    score: f32,
    token: usize,
    beam: usize,
}

/// A finished sequence: the first `steps` tokens of the beam that was `beam` after them
/// (read back through the history).
#[derive(Debug, Clone, Copy)]
struct Hypothesis {
    score: f32,
    steps: usize,
    beam: usize,
    ended: bool,
}

/// Beam search (onnxruntime-genai's and Hugging Face's `BeamSearchScorer`) over a decoder
/// whose batch rows are the beams: every beam holds the prompt; each step takes the
/// log-softmax of each beam's logits plus the beam's score, keeps the best
/// `2 x num_beams` continuations over all beams and the vocabulary, sets aside those that
/// pick the eos id (among the first `num_beams`) as finished sequences scored
/// `sum / len.powf(length_penalty)`, and continues the best `num_beams` others. The
/// decoder's rows are then reordered to follow their beams
/// ([`Decoder::reorder_rows`]: row `i` takes the cache of the beam it continues, copied in
/// place) and the new tokens run in one batch. The search ends at `max_length`, or when
/// `num_beams` sequences have finished (with `early_stopping`; without it, once no open
/// beam can beat the worst of them); the best `num_return_sequences` are returned.
///
/// The sequences and scores are onnxruntime-genai 0.18's on its CPU (`tests/beam.rs`
/// checks them on a fixture, in both cache modes), as far as the logits agree: a near-tie
/// between two candidates (about 1e-6 apart in float32) may order differently.
///
/// Once warm (a first search as long), a step allocates nothing: the candidates, the
/// history of every beam's tokens and the finished sequences live in buffers reserved for
/// the search, and the reordering copies within the cache buffers.
///
/// ```no_run
/// # fn demo(decoder: ort_bind_runtime::decode::Decoder<f32, ort_bind_runtime::decode::SharedBuffer>)
/// # -> ort_bind_runtime::Result<()> {
/// use ort_bind_runtime::decode::{BeamOptions, BeamSearch};
/// // With generated modules: `model::Model::load()?.shared_decoder(4, 256)?` (4 beams).
/// let mut search = BeamSearch::new(decoder)?;
/// let options = BeamOptions::new(4, 48).eos(0).return_sequences(2);
/// for beam in search.run(&[5, 42, 79], &options)? {
///     println!("{:.4} {:?} (ended: {})", beam.score, beam.tokens, beam.ended);
/// }
/// # Ok(()) }
/// ```
pub struct BeamSearch<T: DecoderModel, M: CacheMode = Growing, D: Device = Cpu> {
    decoder: Decoder<T, M, D>,
    // The prompt once per row, for the first run.
    prompts: Vec<i64>,
    // Each beam's score (the sum of its tokens' log-probabilities).
    scores: Vec<f32>,
    // The best 2 x num_beams continuations of a step, best first.
    candidates: Vec<Candidate>,
    // The num_beams continuations kept.
    next: Vec<Candidate>,
    // Per decoder row: the row it continues, and its next token.
    src: Vec<usize>,
    tokens: Vec<i64>,
    // Per step and beam: the token it took and the beam it continued.
    history: Vec<(i64, usize)>,
    // The finished sequences, best first (at most num_beams).
    finished: Vec<Hypothesis>,
}

impl<T: DecoderModel, M: CacheMode, D: Device> fmt::Debug for BeamSearch<T, M, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BeamSearch")
            .field("decoder", &self.decoder)
            .finish()
    }
}

impl<T: DecoderModel, M: CacheMode, D: Device> BeamSearch<T, M, D> {
    /// A beam search over `decoder`, up to `decoder.batch()` beams. Reserves what a
    /// search needs ([`Decoder::reserve_reorder`]) and refuses what it refuses (a decoder
    /// holding inputs for a sequence, a cache the host cannot write).
    pub fn new(mut decoder: Decoder<T, M, D>) -> Result<Self> {
        decoder.reserve_reorder()?;
        let batch = decoder.batch();
        Ok(BeamSearch {
            decoder,
            prompts: Vec::new(),
            scores: Vec::with_capacity(batch),
            candidates: Vec::with_capacity(2 * batch),
            next: Vec::with_capacity(batch),
            src: Vec::with_capacity(batch),
            tokens: Vec::with_capacity(batch),
            history: Vec::new(),
            finished: Vec::with_capacity(batch),
        })
    }

    /// The decoder (after a search it holds the prompt and the beams' tokens, but the
    /// last).
    pub fn decoder(&self) -> &Decoder<T, M, D> {
        &self.decoder
    }

    /// The decoder back.
    pub fn into_decoder(self) -> Decoder<T, M, D> {
        self.decoder
    }

    /// Searches from `prompt` (one sequence; every beam starts from it) and returns the
    /// best `options.num_return_sequences` sequences, best first.
    ///
    /// Refused before anything runs: an empty prompt or an id outside the vocabulary
    /// ([`DecodeError::TokenCount`], [`DecodeError::TokenOutOfRange`]), no beams or more
    /// than the decoder's rows ([`DecodeError::BeamCount`]), a `max_length` not beyond the
    /// prompt, no sequence or more than `num_beams` to return, a length penalty that is
    /// not finite, an eos or padding id outside the vocabulary
    /// ([`DecodeError::BeamOptions`]), or more than the decoder's capacity: it holds up to
    /// `max_length - 1` positions ([`DecodeError::CapacityExceeded`]). A failed run is
    /// the run's error; the next search starts over.
    pub fn run(&mut self, prompt: &[i64], options: &BeamOptions) -> Result<Vec<Beam>> {
        self.check(prompt, options)?;
        let k = options.num_beams;
        let batch = self.decoder.batch();
        let steps_max = options.max_length - prompt.len();
        self.prompts.clear();
        for _ in 0..batch {
            self.prompts.extend_from_slice(prompt);
        }
        self.history.clear();
        self.history.reserve(steps_max * k);
        self.finished.clear();
        self.scores.clear();
        self.scores.push(0.0);
        self.scores.resize(k, NOT_STARTED);
        self.decoder.prefill(&self.prompts)?;
        let mut steps = 0;
        let done = loop {
            let len = prompt.len() + steps;
            self.select(k)?;
            let done = self.process(k, len, steps, options);
            for (i, c) in self.next.iter().enumerate() {
                self.history.push((c.token as i64, c.beam));
                self.scores[i] = c.score;
            }
            steps += 1;
            if done || len + 1 == options.max_length {
                break done;
            }
            self.src.clear();
            self.tokens.clear();
            for c in &self.next {
                self.src.push(c.beam);
                self.tokens.push(c.token as i64);
            }
            for row in k..batch {
                self.src.push(row);
                self.tokens.push(options.pad_token_id);
            }
            self.decoder.reorder_rows(&self.src)?;
            self.decoder.step(&self.tokens)?;
        };
        if !done {
            // The open beams compete with the finished sequences.
            let len = prompt.len() + steps;
            for beam in 0..k {
                let score = self.scores[beam];
                self.add(k, options, score, len, steps, beam, false);
            }
        }
        Ok(self.finished[..options.num_return_sequences]
            .iter()
            .map(|h| Beam {
                tokens: self.sequence(k, h.steps, h.beam),
                score: h.score,
                ended: h.ended,
            })
            .collect())
    }

    fn check(&self, prompt: &[i64], options: &BeamOptions) -> Result<()> {
        let (batch, vocab) = (self.decoder.batch(), self.decoder.vocab());
        let k = options.num_beams;
        if k == 0 || k > batch {
            return Err(DecodeError::BeamCount {
                num_beams: k,
                batch,
            }
            .into());
        }
        if prompt.is_empty() {
            return Err(DecodeError::TokenCount { count: 0, batch: 1 }.into());
        }
        self.decoder.check_ids(prompt)?;
        let outside = |t: i64| t < 0 || t as u64 >= vocab as u64;
        let reason = if options.max_length <= prompt.len() {
            Some(format!(
                "max_length {} counts the prompt ({} tokens) and must exceed it",
                options.max_length,
                prompt.len()
            ))
        } else if options.num_return_sequences == 0 || options.num_return_sequences > k {
            Some(format!(
                "{} sequences to return from {k} beams (1 to num_beams)",
                options.num_return_sequences
            ))
        } else if !options.length_penalty.is_finite() {
            Some(format!(
                "the length penalty {} is not finite",
                options.length_penalty
            ))
        } else if let Some(eos) = options.eos_token_id.filter(|&t| outside(t)) {
            Some(format!(
                "the eos id {eos} is outside the vocabulary (0..{vocab})"
            ))
        } else if outside(options.pad_token_id) {
            Some(format!(
                "the padding id {} is outside the vocabulary (0..{vocab})",
                options.pad_token_id
            ))
        } else if vocab < 2 {
            Some(format!(
                "a vocabulary of {vocab} leaves no 2 x num_beams candidates"
            ))
        } else {
            None
        };
        if let Some(reason) = reason {
            return Err(DecodeError::BeamOptions { reason }.into());
        }
        // The last token needs no run: the decoder holds at most max_length - 1.
        let capacity = self.decoder.capacity();
        if options.max_length - 1 > capacity {
            return Err(DecodeError::CapacityExceeded {
                len: prompt.len(),
                adding: options.max_length - 1 - prompt.len(),
                capacity,
            }
            .into());
        }
        Ok(())
    }

    /// The best `2 k` continuations of the first `k` rows into `self.candidates`, best
    /// first (equal scores: the lower beam, then the lower token first).
    fn select(&mut self, k: usize) -> Result<()> {
        let logits = self.decoder.logits()?;
        let top = 2 * k;
        self.candidates.clear();
        for beam in 0..k {
            let row = logits.row(beam);
            let max = row
                .iter()
                .map(|&x| x.to_f32())
                .fold(f32::NEG_INFINITY, |m, x| if x > m { x } else { m });
            // log-softmax in float32, in genai's order: x - max, then minus the log of the
            // sum of their exponentials, then plus the beam's score.
            let mut sum = 0.0f32;
            for &x in row {
                sum += (x.to_f32() - max).exp();
            }
            let log_sum = sum.ln();
            let base = self.scores[beam];
            for (token, &x) in row.iter().enumerate() {
                let score = ((x.to_f32() - max) - log_sum) + base;
                // NaN never enters; a full list takes only what beats its last.
                if score.is_nan() {
                    continue;
                }
                if self.candidates.len() == top {
                    if score <= self.candidates[top - 1].score {
                        continue;
                    }
                    self.candidates.pop();
                }
                let at = self.candidates.partition_point(|c| c.score >= score);
                self.candidates.insert(at, Candidate { score, token, beam });
            }
        }
        Ok(())
    }

    /// Sets the candidates that pick the eos id aside as finished sequences and keeps the
    /// best `k` others in `self.next`; returns whether the search is done. `len`: the
    /// sequences' length before the step's token, `steps` of them generated.
    fn process(&mut self, k: usize, len: usize, steps: usize, options: &BeamOptions) -> bool {
        self.next.clear();
        for j in 0..self.candidates.len() {
            let c = self.candidates[j];
            if options.eos_token_id == Some(c.token as i64) {
                // Only among the best k does picking the eos id finish a sequence.
                if j < k {
                    self.add(k, options, c.score, len, steps, c.beam, true);
                }
            } else {
                self.next.push(c);
            }
            if self.next.len() == k {
                break;
            }
        }
        if self.finished.len() < k {
            return false;
        }
        if !options.early_stopping {
            let best = self.candidates[0].score;
            let worst = self.finished[k - 1].score;
            if worst < best / (len as f32).powf(options.length_penalty) {
                return false;
            }
        }
        true
    }

    /// Adds a finished sequence of `len` tokens (prompt included) whose log-probabilities
    /// sum to `sum`, if it is among the best `k` so far (after those of equal score).
    #[allow(clippy::too_many_arguments)]
    fn add(
        &mut self,
        k: usize,
        options: &BeamOptions,
        sum: f32,
        len: usize,
        steps: usize,
        beam: usize,
        ended: bool,
    ) {
        let score = sum / (len as f32).powf(options.length_penalty);
        if self.finished.len() == k {
            if score.is_nan() || score <= self.finished[k - 1].score {
                return;
            }
            self.finished.pop();
        }
        let at = self.finished.partition_point(|h| h.score >= score);
        self.finished.insert(
            at,
            Hypothesis {
                score,
                steps,
                beam,
                ended,
            },
        );
    }

    /// The first `steps` tokens of the beam that was `beam` after them.
    fn sequence(&self, k: usize, steps: usize, mut beam: usize) -> Vec<i64> {
        let mut out = vec![0; steps];
        for step in (0..steps).rev() {
            let (token, from) = self.history[step * k + beam];
            out[step] = token;
            beam = from;
        }
        out
    }
}
