//! Asynchronous decoding: [`Decoder::append_async`], [`Decoder::step_async`],
//! [`Decoder::step_greedy_async`], [`Decoder::prefill_async`] and
//! [`Decoder::stream_async`], a [`Stream`] of a generation's tokens, for async request
//! handlers.
//!
//! A run is prepared on the caller's thread (ids, positions and mask written, what
//! changed bound: the same work as a blocking run) and made on ort-bind's worker threads
//! (the ones [`Binding::run_async`](crate::Binding::run_async) uses where ONNX Runtime's
//! `RunAsync` cannot serve; a decoder runs through an I/O binding, which `RunAsync` has
//! no form for). The worker makes the embedding model's, the decoder's and the head's
//! runs in order and wakes the future, so no executor thread blocks on a run, and no
//! allocation is made per run.
//!
//! The rules are [`Binding::run_async`](crate::Binding::run_async)'s:
//! - the future borrows the decoder mutably until the run has finished;
//! - dropping it while the run is in flight stops the run (ONNX Runtime stops after the
//!   kernel it is in) and returns at once; the decoder's next use (or its drop) waits for
//!   that run first. A run given up this way did not happen: the decoder keeps the
//!   positions it had (the run wrote only where the next run writes again: a growing
//!   cache's other buffer, positions past the sequence's end in a shared buffer, the other
//!   buffer of recurrent state) and has no logits until the next run;
//! - a [`Decoder::terminator`] stops the run in flight, or, taken before
//!   [`Decoder::stream_async`], the whole generation; a timeout is
//!   [`GenerateOptions::timeout`] for a stream, or the executor's own (a dropped future
//!   stops its run).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use futures_core::Stream;

use super::{CacheMode, Decoder, DecoderModel, GenerateOptions};
use crate::device::Device;
use crate::error::{DecodeError, Error, Result};
use crate::workers::{self, Job};

/// An asynchronous run in flight on a worker thread.
#[derive(Debug)]
pub(super) struct InFlight {
    // The run control's epoch the run started in (a stop taken since is for it).
    epoch: u64,
    // Positions per row after the run, and the run's new positions.
    total: usize,
    new: usize,
}

/// Where the tokens of an asynchronous append come from.
#[derive(Debug, Clone, Copy)]
enum Source<'a> {
    Given(&'a [i64]),
    // The decoder's last picks (one per row), taken out for each run and put back.
    Picked,
}

/// The progress of an asynchronous append: runs of `step` positions per row, from
/// position `from` of `new`.
#[derive(Debug)]
struct Appending {
    from: usize,
    new: usize,
    step: usize,
    running: bool,
}

impl Appending {
    fn new(new: usize, fixed: Option<usize>) -> Appending {
        Appending {
            from: 0,
            new,
            step: fixed.unwrap_or(new),
            running: false,
        }
    }
}

impl<T: DecoderModel, M: CacheMode, D: Device> Decoder<T, M, D> {
    /// [`append`](Self::append) as a future: runs the model on `tokens` on ort-bind's
    /// worker threads; afterwards [`logits`](Self::logits) holds each row's last position.
    /// Checked as `append` checks (on the first poll; nothing runs on an error). See
    /// [`AppendFuture`] for where the run is made and what dropping it early does.
    ///
    /// ```no_run
    /// # async fn demo(decoder: &mut ort_bind_runtime::decode::Decoder<f32>) -> ort_bind_runtime::Result<()> {
    /// decoder.prefill_async(&[1, 15, 27]).await?;
    /// let first = decoder.step_greedy_async().await?[0]; // picked, then run
    /// # let _ = first; Ok(()) }
    /// ```
    pub fn append_async<'a>(&'a mut self, tokens: &'a [i64]) -> AppendFuture<'a, T, M, D> {
        let checked = self.check_tokens(tokens, self.len);
        self.append_future(Source::Given(tokens), checked)
    }

    /// [`prefill`](Self::prefill) as a future: forgets the sequence, then
    /// [`append_async`](Self::append_async).
    pub fn prefill_async<'a>(&'a mut self, tokens: &'a [i64]) -> AppendFuture<'a, T, M, D> {
        let checked = self
            .check_tokens(tokens, 0)
            .and_then(|new| self.reset().map(|()| new));
        self.append_future(Source::Given(tokens), checked)
    }

    /// [`step`](Self::step) as a future: one token per batch row.
    pub fn step_async<'a>(&'a mut self, tokens: &'a [i64]) -> AppendFuture<'a, T, M, D> {
        let checked = if tokens.len() == self.batch {
            self.check_tokens(tokens, self.len)
        } else {
            Err(DecodeError::StepTokens {
                count: tokens.len(),
                batch: self.batch,
            }
            .into())
        };
        self.append_future(Source::Given(tokens), checked)
    }

    /// [`step_greedy`](Self::step_greedy) as a future: picks each row's most likely token,
    /// runs it, and resolves to the tokens picked (one per row).
    pub fn step_greedy_async(&mut self) -> StepGreedyFuture<'_, T, M, D> {
        let checked = self
            .pick_greedy()
            .map(drop)
            .and_then(|()| self.check_tokens(&self.picked, self.len));
        StepGreedyFuture {
            inner: self.append_future(Source::Picked, checked),
        }
    }

    fn append_future<'a>(
        &'a mut self,
        source: Source<'a>,
        checked: Result<usize>,
    ) -> AppendFuture<'a, T, M, D> {
        let (appending, early) = match checked {
            Ok(new) => (Appending::new(new, self.spec.fixed_new), None),
            Err(e) => (Appending::new(0, None), Some(e)),
        };
        AppendFuture {
            decoder: Some(self),
            source,
            appending,
            early,
        }
    }

    /// Greedy generation from `prompt` (one row) as a [`Stream`] of tokens: what
    /// [`stream`](Self::stream) yields, with each run made on ort-bind's worker threads
    /// (the prompt's too, on the first poll). It ends after a stop token (which it yields),
    /// after `options.max_new_tokens` tokens, or at the first error
    /// ([`Error::Terminated`] from [`terminator`](Self::terminator), [`Error::TimedOut`]
    /// after `options.timeout`, counted from this call). Dropping it stops the run in
    /// flight, and no run is made for a token nobody reads.
    ///
    /// ```no_run
    /// # async fn demo(decoder: &mut ort_bind_runtime::decode::Decoder<f32>) -> ort_bind_runtime::Result<()> {
    /// use std::future::poll_fn;
    /// use std::pin::Pin;
    /// use futures_core::Stream;
    /// use ort_bind_runtime::decode::GenerateOptions;
    ///
    /// let mut tokens = decoder.stream_async(&[1, 15, 27], GenerateOptions::new(32).stop_at(2))?;
    /// // (with the `futures` crate: `while let Some(token) = tokens.next().await`)
    /// while let Some(token) = poll_fn(|cx| Pin::new(&mut tokens).poll_next(cx)).await {
    ///     print!("{} ", token?);
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// Errors at once: a decoder of more than one row ([`DecodeError::StreamBatch`]), and
    /// what [`prefill`](Self::prefill) checks before running.
    pub fn stream_async<'a>(
        &'a mut self,
        prompt: &'a [i64],
        options: GenerateOptions,
    ) -> Result<AsyncTokenStream<'a, T, M, D>> {
        if self.batch != 1 {
            return Err(DecodeError::StreamBatch { batch: self.batch }.into());
        }
        let new = self.check_tokens(prompt, 0)?;
        self.reset()?;
        self.begin(options.timeout)?;
        let appending = Appending::new(new, self.spec.fixed_new);
        Ok(AsyncTokenStream {
            decoder: self,
            prompt,
            options,
            appending,
            prefilled: false,
            produced: 0,
            done: false,
        })
    }

    /// Advances `appending` (the runs of `source`): starts its next run or collects the one
    /// in flight, until every run is made, one fails, or the one in flight has not finished.
    fn poll_append(
        &mut self,
        source: Source<'_>,
        appending: &mut Appending,
        waker: &Waker,
    ) -> Poll<Result<()>> {
        loop {
            if appending.running {
                let Some(result) = self.completion.poll(waker) else {
                    return Poll::Pending;
                };
                appending.running = false;
                let Some(run) = self.in_flight.take() else {
                    return Poll::Ready(Err(lost_run()));
                };
                let result = result.map_err(|e| self.session.run_error(e));
                if let Err(e) = self.finish_run(result, run.total, run.new) {
                    return Poll::Ready(Err(e));
                }
                appending.from += appending.step;
            }
            if appending.from >= appending.new {
                return Poll::Ready(Ok(()));
            }
            let (row_len, from, new) = (appending.new, appending.from, appending.step);
            let started = match source {
                Source::Given(tokens) => self.start_run(tokens, row_len, from, new, waker),
                Source::Picked => {
                    let picked = std::mem::take(&mut self.picked);
                    let started = self.start_run(&picked, row_len, from, new, waker);
                    self.picked = picked;
                    started
                }
            };
            if let Err(e) = started {
                return Poll::Ready(Err(e));
            }
            appending.running = true;
        }
    }

    /// Prepares a run as [`run`](Self::run) does and hands it to a worker thread, which
    /// wakes `waker` when it has finished.
    fn start_run(
        &mut self,
        tokens: &[i64],
        row_len: usize,
        from: usize,
        new: usize,
        waker: &Waker,
    ) -> Result<()> {
        let total = self.prepare_run(tokens, row_len, from, new)?;
        let epoch = self.control.epoch();
        let options = self.control.options(false);
        self.completion.begin(Some(waker));
        // SAFETY: until the completion fires, the bindings (`self.io`, the embedding
        // model's and the head's: ONNX Runtime objects that stay where they are when
        // `self` moves), the sessions, the run options (`self.control`) and every bound
        // value and the memory under it (the decoder's buffers and held context) are owned
        // by `self` and not touched: every method of `self` that could touch them (`run`
        // through `prepare_run`, `rewind`, `reset`, `set_context`, `clear_context`), and
        // `Drop`, first waits for the completion (`settle`) because `in_flight` is set
        // below; the worker calls `complete` only after the last run has returned. The
        // future that started the run borrows `self` mutably meanwhile.
        let runs = unsafe {
            let embedder = match &mut self.embedder {
                Some(e) => Some(e.io.detach_run(options)),
                None => None,
            };
            let decoder = self.io.detach_run(options);
            let head = match &mut self.head {
                Some(h) => Some(h.io.detach_run(options)),
                None => None,
            };
            (embedder.transpose(), decoder, head.transpose())
        };
        let runs = match runs {
            (Ok(embedder), Ok(decoder), Ok(head)) => [embedder, Some(decoder), head],
            (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => {
                self.completion.abandon();
                return Err(e);
            }
        };
        let job = Job {
            runs,
            completion: Arc::clone(&self.completion),
        };
        if let Err(e) = workers::submit(job) {
            self.completion.abandon();
            return Err(e);
        }
        self.stats.runs += 1;
        self.in_flight = Some(InFlight { epoch, total, new });
        Ok(())
    }

    /// Gives up the asynchronous run in flight (its future was dropped): stops it and
    /// returns at once; the decoder's next use waits for it ([`settle`](Self::settle)).
    fn abandon_run(&mut self) {
        if let Some(run) = &self.in_flight {
            self.control.abandon(run.epoch);
            self.completion.forget_waker();
        }
    }

    /// Waits for an asynchronous run still in flight (of a dropped or leaked future),
    /// stopping it first; the run is not taken into the sequence.
    pub(super) fn settle(&mut self) {
        if let Some(run) = self.in_flight.take() {
            self.control.abandon(run.epoch);
            let _ = self.completion.wait();
            self.control.settled();
            self.new = 0;
        }
    }
}

impl<T: DecoderModel, M: CacheMode, D: Device> Drop for Decoder<T, M, D> {
    fn drop(&mut self) {
        // ONNX Runtime must be done with the buffers before they are freed.
        self.settle();
    }
}

fn lost_run() -> Error {
    Error::AsyncRun {
        reason: "the decoder's run in flight was collected elsewhere".into(),
    }
}

/// The future of [`Decoder::append_async`], [`Decoder::prefill_async`] and
/// [`Decoder::step_async`]: resolves when every run has finished. Does nothing until
/// first polled.
///
/// A run is prepared on the polling thread (ids, positions and mask written, what changed
/// bound: the work of a blocking run) and made on ort-bind's worker threads, which make the
/// embedding model's, the decoder's and the head's runs in order and wake the future: no
/// executor thread blocks on a run, and nothing is allocated per run.
///
/// - The future borrows the decoder mutably until its runs have finished.
/// - Dropping it while a run is in flight stops that run (ONNX Runtime stops after the
///   kernel it is in) and returns at once; the decoder's next use, or its drop, waits for
///   the run first. A run given up this way did not happen: the decoder keeps the
///   positions it had and has no logits until its next run.
/// - A [`Decoder::terminator`] stops the run in flight ([`Error::Terminated`]). For a time
///   limit, drop the future (an executor's timeout does).
#[must_use = "a run starts only when its future is polled (`.await`)"]
#[derive(Debug)]
pub struct AppendFuture<'a, T: DecoderModel, M: CacheMode, D: Device> {
    // `None` once resolved.
    decoder: Option<&'a mut Decoder<T, M, D>>,
    source: Source<'a>,
    appending: Appending,
    // A check that failed before any run: the first poll resolves to it.
    early: Option<Error>,
}

impl<'a, T: DecoderModel, M: CacheMode, D: Device> AppendFuture<'a, T, M, D> {
    /// Polls the runs; on completion hands the decoder back for the output.
    fn poll_runs(&mut self, cx: &mut Context<'_>) -> Poll<Result<&'a mut Decoder<T, M, D>>> {
        if let Some(e) = self.early.take() {
            self.decoder = None;
            return Poll::Ready(Err(e));
        }
        let Some(decoder) = self.decoder.as_deref_mut() else {
            return Poll::Ready(Err(Error::AsyncRun {
                reason: "the decoder's future was polled again after it completed".into(),
            }));
        };
        match decoder.poll_append(self.source, &mut self.appending, cx.waker()) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(result) => {
                let decoder = self.decoder.take().ok_or_else(lost_run)?;
                Poll::Ready(result.map(|()| decoder))
            }
        }
    }
}

impl<T: DecoderModel, M: CacheMode, D: Device> Future for AppendFuture<'_, T, M, D> {
    type Output = Result<()>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
        self.get_mut().poll_runs(cx).map_ok(drop)
    }
}

impl<T: DecoderModel, M: CacheMode, D: Device> Drop for AppendFuture<'_, T, M, D> {
    fn drop(&mut self) {
        if let Some(decoder) = self.decoder.as_deref_mut()
            && self.appending.running
        {
            decoder.abandon_run();
        }
    }
}

/// The future of [`Decoder::step_greedy_async`]: resolves to the tokens picked (one per
/// row) once they have run.
#[must_use = "a run starts only when its future is polled (`.await`)"]
#[derive(Debug)]
pub struct StepGreedyFuture<'a, T: DecoderModel, M: CacheMode, D: Device> {
    inner: AppendFuture<'a, T, M, D>,
}

impl<'a, T: DecoderModel, M: CacheMode, D: Device> Future for StepGreedyFuture<'a, T, M, D> {
    type Output = Result<&'a [i64]>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<&'a [i64]>> {
        self.get_mut()
            .inner
            .poll_runs(cx)
            .map_ok(|decoder| &decoder.picked[..])
    }
}

/// The tokens of one generation as a [`Stream`], each run made on ort-bind's worker
/// threads: see [`Decoder::stream_async`]. Dropping it stops the run in flight and ends the
/// generation.
#[must_use = "streams do nothing unless polled"]
#[derive(Debug)]
pub struct AsyncTokenStream<'a, T: DecoderModel, M: CacheMode, D: Device> {
    decoder: &'a mut Decoder<T, M, D>,
    prompt: &'a [i64],
    options: GenerateOptions,
    // The prompt's runs, then each picked token's.
    appending: Appending,
    prefilled: bool,
    produced: usize,
    done: bool,
}

impl<T: DecoderModel, M: CacheMode, D: Device> AsyncTokenStream<'_, T, M, D> {
    /// Tokens produced so far.
    pub fn produced(&self) -> usize {
        self.produced
    }

    fn poll_token(&mut self, waker: &Waker) -> Poll<Result<i64>> {
        if self.prefilled {
            if self.produced > 0 {
                let source = Source::Picked;
                if !self.appending.running && self.appending.from >= self.appending.new {
                    self.appending = Appending::new(1, self.decoder.spec.fixed_new);
                }
                match self.decoder.poll_append(source, &mut self.appending, waker) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                    Poll::Ready(Ok(())) => {}
                }
            }
        } else {
            let source = Source::Given(self.prompt);
            match self.decoder.poll_append(source, &mut self.appending, waker) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Ready(Ok(())) => self.prefilled = true,
            }
        }
        let token = match self.decoder.pick_greedy() {
            Ok(picked) => picked[0],
            Err(e) => return Poll::Ready(Err(e)),
        };
        self.produced += 1;
        Poll::Ready(Ok(token))
    }
}

impl<T: DecoderModel, M: CacheMode, D: Device> Stream for AsyncTokenStream<'_, T, M, D> {
    type Item = Result<i64>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<i64>>> {
        let this = self.get_mut();
        if this.done || this.produced == this.options.max_new_tokens {
            return Poll::Ready(None);
        }
        match this.poll_token(cx.waker()) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Ok(token)) => {
                this.done = this.options.stop_tokens.contains(&token);
                Poll::Ready(Some(Ok(token)))
            }
            Poll::Ready(Err(e)) => {
                this.done = true;
                // A stop request or timeout says why the run failed.
                Poll::Ready(Some(Err(this.decoder.end().unwrap_or(e))))
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = if self.done {
            0
        } else {
            self.options.max_new_tokens - self.produced
        };
        (0, Some(left))
    }
}

impl<T: DecoderModel, M: CacheMode, D: Device> Drop for AsyncTokenStream<'_, T, M, D> {
    fn drop(&mut self) {
        if self.appending.running {
            self.decoder.abandon_run();
        }
        // Ends the generation's epoch: its terminator and timeout do nothing from now on.
        self.decoder.end();
    }
}

impl<T: DecoderModel, M: CacheMode, D: Device> Decoder<T, M, D> {
    /// Whether a run of a dropped asynchronous future is still stopping (the decoder's
    /// next use would wait for it).
    pub(crate) fn busy(&self) -> bool {
        self.in_flight.is_some() && self.completion.running()
    }

    /// Ends every stop taken for the decoder's runs (it goes back to its pool): a
    /// generation left open (a leaked stream) ends, and a late `terminate()` stops nothing.
    pub(crate) fn end_stops(&mut self) {
        // A leaked future's run: stopped (the next use waits for it), its epoch ended.
        if self
            .in_flight
            .as_ref()
            .is_some_and(|run| self.control.abandon(run.epoch))
        {
            return;
        }
        self.end();
    }
}
