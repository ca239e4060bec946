//! Whole generations on a [`Decoder`]: greedy decoding from a prompt to a stop token, a
//! token budget or a deadline, either driven by a callback ([`Decoder::generate`]) or
//! pulled one token at a time ([`Decoder::stream`], stopped by dropping it), and a
//! [`Terminator`] that stops a generation from another thread.
//!
//! A generation's runs share one epoch of the decoder's run control (see
//! [`crate::cancel`]): a [`Decoder::terminator`] taken before it starts, or a timeout, is
//! for all of its runs, and becomes inert when the generation ends. A stopped generation
//! returns [`Error::Terminated`] or [`Error::TimedOut`]; the decoder keeps the positions
//! it had run and serves the next request (`prefill` starts over).

use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::Duration;

use super::{CacheMode, Decoder, DecoderModel};
use crate::cancel::Terminator;
use crate::deadline;
use crate::device::Device;
use crate::error::{DecodeError, Error, Result};

/// The limits of one generation: a token budget, tokens that end a row, and a timeout.
///
/// ```
/// use std::time::Duration;
/// use ort_bind_runtime::decode::GenerateOptions;
///
/// let options = GenerateOptions::new(64)
///     .stop_at(2) // an end-of-sequence id
///     .timeout(Duration::from_secs(5));
/// assert_eq!(options.max_new_tokens, 64);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct GenerateOptions {
    /// New tokens per row at most (the prompt not counted).
    pub max_new_tokens: usize,
    /// Ids that end a row when picked (the id is reported, not run). The generation ends
    /// when every row has ended, or at the budget.
    pub stop_tokens: Vec<i64>,
    /// The whole generation's time limit, prompt included; `None`: no limit.
    pub timeout: Option<Duration>,
}

impl GenerateOptions {
    /// At most `max_new_tokens` new tokens per row, no stop token, no timeout.
    pub fn new(max_new_tokens: usize) -> Self {
        GenerateOptions {
            max_new_tokens,
            ..Default::default()
        }
    }

    /// Adds `token` to the ids that end a row.
    #[must_use]
    pub fn stop_at(mut self, token: i64) -> Self {
        self.stop_tokens.push(token);
        self
    }

    /// Limits the whole generation to `timeout`.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }
}

/// What a finished generation did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Generated {
    /// Tokens picked per row (the steps the callback saw).
    pub tokens: usize,
    /// Model runs, the prompt's included: the last token picked is never run.
    pub runs: u64,
    /// Whether every row ended on a stop token (otherwise: the budget, or the callback).
    pub stopped: bool,
}

impl<T: DecoderModel, M: CacheMode, D: Device> Decoder<T, M, D> {
    /// A handle that stops this decoder from another thread (a request whose client went
    /// away): the run in progress, or else the next one, returns [`Error::Terminated`].
    /// Taken before [`generate`](Self::generate) or [`stream`](Self::stream), it is for
    /// that whole generation; otherwise for one run (see [`Terminator`]). Once what it was
    /// for has ended, it does nothing.
    pub fn terminator(&self) -> Terminator {
        Terminator::new(Arc::clone(&self.control))
    }

    /// Starts a generation (or a [`Rows`](super::Rows) step): its runs share one epoch,
    /// timed out after `timeout`.
    pub(super) fn begin(&mut self, timeout: Option<Duration>) -> Result<()> {
        self.generating = true;
        if let Some(timeout) = timeout
            && let Err(e) = deadline::schedule(&self.control, self.control.epoch(), timeout)
        {
            self.end();
            return Err(e);
        }
        Ok(())
    }

    /// Ends the generation (or step): a stop or timeout taken for it becomes inert; returns
    /// the reason of one that fired.
    pub(super) fn end(&mut self) -> Option<Error> {
        self.generating = false;
        self.control.close().map(|r| r.error())
    }

    /// Greedy generation from `prompt` (`batch` rows one after another, equal lengths):
    /// prefills it, then picks each row's most likely token, hands the picked tokens (one
    /// per row) to `on_token`, and runs them, until every row has picked one of
    /// `options.stop_tokens`, `options.max_new_tokens` tokens are picked, or `on_token`
    /// returns [`ControlFlow::Break`]. The last tokens picked are not run (N tokens cost
    /// N - 1 runs after the prompt). A row that has ended keeps being fed its stop token,
    /// and `on_token` keeps seeing it, while other rows go on.
    ///
    /// Errors: what [`prefill`](Self::prefill) and [`step`](Self::step) refuse; a run
    /// stopped by [`terminator`](Self::terminator) ([`Error::Terminated`]) or by
    /// `options.timeout` ([`Error::TimedOut`]). The decoder then holds what it had run, and
    /// the next `generate` or `prefill` starts over.
    pub fn generate(
        &mut self,
        prompt: &[i64],
        options: &GenerateOptions,
        mut on_token: impl FnMut(&[i64]) -> ControlFlow<()>,
    ) -> Result<Generated> {
        self.begin(options.timeout)?;
        let runs = self.stats.runs;
        let result = self.generate_inner(prompt, options, &mut on_token);
        let stop = self.end();
        match (result, stop) {
            (Err(_), Some(stop)) => Err(stop),
            (Ok(mut g), _) => {
                g.runs = self.stats.runs - runs;
                Ok(g)
            }
            (Err(e), None) => Err(e),
        }
    }

    fn generate_inner(
        &mut self,
        prompt: &[i64],
        options: &GenerateOptions,
        on_token: &mut dyn FnMut(&[i64]) -> ControlFlow<()>,
    ) -> Result<Generated> {
        let mut g = Generated {
            tokens: 0,
            runs: 0,
            stopped: false,
        };
        if options.max_new_tokens == 0 {
            self.check_tokens(prompt, 0)?;
            return Ok(g);
        }
        self.prefill(prompt)?;
        // Rows that picked a stop token (made once per generation, not per token).
        let mut ended = vec![false; self.batch];
        loop {
            self.pick_greedy()?;
            g.tokens += 1;
            for (row, &token) in self.picked.iter().enumerate() {
                if options.stop_tokens.contains(&token) {
                    ended[row] = true;
                }
            }
            g.stopped = ended.iter().all(|&e| e);
            let go_on = on_token(&self.picked).is_continue();
            if !go_on || g.stopped || g.tokens == options.max_new_tokens {
                return Ok(g);
            }
            self.run_picked()?;
        }
    }

    /// Greedy generation from `prompt` (one row) as an iterator of tokens: each `next()`
    /// runs the token before it (not the first, whose logits the prompt gave) and picks
    /// the next, so tokens are produced as they are asked for. It ends after a stop token
    /// (which it yields), after `options.max_new_tokens` tokens, or at the first error
    /// ([`Error::Terminated`] from [`terminator`](Self::terminator), [`Error::TimedOut`]).
    /// Dropping it ends the generation at once: no run is made for a token nobody reads.
    ///
    /// Errors before the first token: a decoder of more than one row
    /// ([`DecodeError::StreamBatch`]), and what [`prefill`](Self::prefill) refuses.
    pub fn stream(
        &mut self,
        prompt: &[i64],
        options: GenerateOptions,
    ) -> Result<TokenStream<'_, T, M, D>> {
        if self.batch != 1 {
            return Err(DecodeError::StreamBatch { batch: self.batch }.into());
        }
        self.begin(options.timeout)?;
        let prefilled = if options.max_new_tokens == 0 {
            self.check_tokens(prompt, 0).map(drop)
        } else {
            self.prefill(prompt)
        };
        if let Err(e) = prefilled {
            return Err(self.end().unwrap_or(e));
        }
        Ok(TokenStream {
            decoder: self,
            options,
            produced: 0,
            done: false,
        })
    }
}

/// Tokens of one generation, produced as they are read: see [`Decoder::stream`].
#[derive(Debug)]
pub struct TokenStream<'d, T: DecoderModel, M: CacheMode, D: Device> {
    decoder: &'d mut Decoder<T, M, D>,
    options: GenerateOptions,
    produced: usize,
    done: bool,
}

impl<T: DecoderModel, M: CacheMode, D: Device> TokenStream<'_, T, M, D> {
    /// Tokens produced so far.
    pub fn produced(&self) -> usize {
        self.produced
    }

    fn advance(&mut self) -> Result<i64> {
        if self.produced > 0 {
            self.decoder.run_picked()?;
        }
        let token = self.decoder.pick_greedy()?[0];
        self.produced += 1;
        Ok(token)
    }
}

impl<T: DecoderModel, M: CacheMode, D: Device> Iterator for TokenStream<'_, T, M, D> {
    type Item = Result<i64>;

    fn next(&mut self) -> Option<Result<i64>> {
        if self.done || self.produced == self.options.max_new_tokens {
            return None;
        }
        match self.advance() {
            Ok(token) => {
                self.done = self.options.stop_tokens.contains(&token);
                Some(Ok(token))
            }
            Err(e) => {
                self.done = true;
                // A stop request or timeout says why the run failed.
                Some(Err(self.decoder.end().unwrap_or(e)))
            }
        }
    }
}

impl<T: DecoderModel, M: CacheMode, D: Device> Drop for TokenStream<'_, T, M, D> {
    fn drop(&mut self) {
        // Ends the generation's epoch: its terminator and timeout do nothing from now on.
        self.decoder.end();
    }
}
