//! A continuous-batching server core: [`Scheduler`] owns a [`Rows`] on a thread of its own,
//! takes requests from any thread ([`Scheduler::submit`], [`Scheduler::submit_with`]) and
//! hands each its tokens as they come ([`Tokens`], an iterator for a thread and a
//! `Stream` for an async task). Requests wait while every
//! row is busy and join as rows free up; a bad request fails alone (its first item is the
//! error); a dropped [`Tokens`] frees its row at the next run; a request past its timeout
//! ends with [`Error::TimedOut`] at the next step while the others go on. Dropping the
//! scheduler stops the step in flight and ends every request not finished with
//! [`Error::Terminated`]; [`Scheduler::finish`] lets them finish first.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::tokens::{self, TokenSender, Tokens};
use super::{DecodeError, DecoderModel, RowEvent, Rows, RowsCache};
use crate::cancel::{RunControl, Terminator};
use crate::device::Device;
use crate::error::Error;

/// The limits of one request to a [`Scheduler`]: a token budget, a stop token, a timeout.
///
/// ```
/// use std::time::Duration;
/// use ort_bind_runtime::decode::SubmitOptions;
///
/// let options = SubmitOptions::new(64)
///     .stop_at(2) // an end-of-sequence id
///     .timeout(Duration::from_secs(5));
/// assert_eq!(options.max_new_tokens, 64);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SubmitOptions {
    /// New tokens at most (the prompt not counted).
    pub max_new_tokens: usize,
    /// The id that ends the request when picked (reported as its last token).
    pub stop: Option<i64>,
    /// The request's time limit from [`Scheduler::submit_with`] on, waiting for a row
    /// included; `None`: no limit. Checked between the scheduler's steps: the request ends
    /// with [`Error::TimedOut`] at the first step boundary past it, and the other rows go
    /// on.
    pub timeout: Option<Duration>,
}

impl SubmitOptions {
    /// At most `max_new_tokens` new tokens, no stop token, no timeout.
    pub fn new(max_new_tokens: usize) -> Self {
        SubmitOptions {
            max_new_tokens,
            ..Default::default()
        }
    }

    /// Ends the request after `token`.
    #[must_use]
    pub fn stop_at(mut self, token: i64) -> Self {
        self.stop = Some(token);
        self
    }

    /// Limits the request to `timeout` from its submission.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }
}

/// One request: its prompt, limits, and where its tokens go.
#[derive(Debug)]
struct Job {
    prompt: Vec<i64>,
    max_new: usize,
    stop: Option<i64>,
    // When it times out, and its timeout (for the error).
    deadline: Option<(Instant, Duration)>,
    out: TokenSender,
}

/// Continuous batching for a server: a thread that owns a [`Rows`], joins submitted
/// requests into free rows, runs while any row is busy, and sends each token to its
/// request's [`Tokens`].
///
/// Dropping the scheduler is prompt: the step in flight is stopped (its
/// [`Rows::terminator`]), every request not finished (in a row or waiting) ends with
/// [`Error::Terminated`], and the thread is joined. [`finish`](Self::finish) instead lets
/// every submitted request finish, then ends the thread.
///
/// ```no_run
/// # fn demo(rows: ort_bind_runtime::decode::Rows<f32>) -> ort_bind_runtime::Result<()> {
/// use std::time::Duration;
/// use ort_bind_runtime::decode::{Scheduler, SubmitOptions};
///
/// let scheduler = Scheduler::new(rows);
/// let tokens = scheduler.submit(&[5, 42, 79], 32, None); // from any thread
/// for token in tokens {
///     print!("{} ", token?);
/// }
/// let options = SubmitOptions::new(32).timeout(Duration::from_secs(2));
/// let tokens = scheduler.submit_with(&[5, 42, 79], &options);
/// # let _ = tokens; Ok(()) }
/// ```
#[derive(Debug)]
pub struct Scheduler {
    jobs: Option<Sender<Job>>,
    thread: Option<JoinHandle<()>>,
    // Set when the scheduler is dropped: the thread ends every request and returns.
    stop: Arc<AtomicBool>,
    control: Arc<RunControl>,
}

impl Scheduler {
    /// Starts the scheduler's thread over `rows` (as many requests at a time as it has
    /// rows).
    pub fn new<T, D, M>(rows: Rows<T, D, M>) -> Scheduler
    where
        T: DecoderModel,
        D: Device,
        M: RowsCache,
        Rows<T, D, M>: Send,
    {
        let (jobs, rx) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let control = rows.control();
        let stopped = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("ort-bind-scheduler".into())
            .spawn(move || serve(rows, &rx, &stopped))
            .ok();
        Scheduler {
            jobs: thread.is_some().then_some(jobs),
            thread,
            stop,
            control,
        }
    }

    /// Queues a request: greedy decoding after `prompt`, at most `max_new` tokens, ending
    /// early after `stop`. Its tokens come through the returned [`Tokens`].
    pub fn submit(&self, prompt: &[i64], max_new: usize, stop: Option<i64>) -> Tokens {
        self.submit_with(
            prompt,
            &SubmitOptions {
                max_new_tokens: max_new,
                stop,
                timeout: None,
            },
        )
    }

    /// Queues a request with `options` (a budget, a stop token, a timeout). Its tokens
    /// come through the returned [`Tokens`]; past its timeout its last item is
    /// [`Error::TimedOut`].
    pub fn submit_with(&self, prompt: &[i64], options: &SubmitOptions) -> Tokens {
        // Room for every token and a last error: the scheduler never waits for a slow
        // reader.
        let (out, tokens) = tokens::channel(options.max_new_tokens.saturating_add(1));
        let job = Job {
            prompt: prompt.to_vec(),
            max_new: options.max_new_tokens,
            stop: options.stop,
            deadline: options
                .timeout
                .and_then(|t| Some((Instant::now().checked_add(t)?, t))),
            out,
        };
        if let Some(Err(mpsc::SendError(job))) = self.jobs.as_ref().map(|j| j.send(job)) {
            let _ = job.out.send(Err(Error::AsyncRun {
                reason: "the scheduler's thread could not start, or has stopped".into(),
            }));
        }
        tokens
    }

    /// Lets every request submitted so far finish, then ends the scheduler's thread (what
    /// dropping it does instead: stop now).
    pub fn finish(mut self) {
        self.jobs = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Scheduler {
    fn drop(&mut self) {
        let Some(thread) = self.thread.take() else {
            return;
        };
        // The flag first, then the stop: a step that began before the thread could see
        // the flag is for the terminator's epoch (the step in flight, or the next one).
        self.stop.store(true, Ordering::SeqCst);
        // Fails only when ONNX Runtime cannot allocate a status: the step then finishes,
        // and the thread sees the flag after it.
        let _ = Terminator::new(Arc::clone(&self.control)).terminate();
        self.jobs = None;
        let _ = thread.join();
    }
}

/// The scheduler thread's requests: those waiting for a row, and where each row's tokens
/// go.
struct Serving {
    waiting: VecDeque<Job>,
    out: Vec<Option<TokenSender>>,
    deadlines: Vec<Option<(Instant, Duration)>>,
}

impl Serving {
    /// Ends the request in `row` with `error` and frees the row.
    fn fail_row<T: DecoderModel, D: Device, M: RowsCache>(
        &mut self,
        rows: &mut Rows<T, D, M>,
        row: usize,
        error: Error,
    ) {
        if let Some(sender) = self.out[row].take() {
            let _ = sender.send(Err(error));
        }
        self.deadlines[row] = None;
        rows.leave(row);
    }

    /// Ends every request, in a row, waiting, or still in the channel, with
    /// [`Error::Terminated`].
    fn terminate_all<T: DecoderModel, D: Device, M: RowsCache>(
        &mut self,
        rows: &mut Rows<T, D, M>,
        jobs: &Receiver<Job>,
    ) {
        for row in 0..self.out.len() {
            self.fail_row(rows, row, Error::Terminated);
        }
        for job in self.waiting.drain(..).chain(jobs.try_iter()) {
            let _ = job.out.send(Err(Error::Terminated));
        }
    }

    /// Ends the requests past their deadline with [`Error::TimedOut`]: in rows (freed) and
    /// waiting.
    fn expire<T: DecoderModel, D: Device, M: RowsCache>(&mut self, rows: &mut Rows<T, D, M>) {
        let now = Instant::now();
        for row in 0..self.deadlines.len() {
            if let Some((at, timeout)) = self.deadlines[row]
                && at <= now
            {
                self.fail_row(rows, row, Error::TimedOut { timeout });
            }
        }
        self.waiting.retain(|job| match job.deadline {
            Some((at, timeout)) if at <= now => {
                let _ = job.out.send(Err(Error::TimedOut { timeout }));
                false
            }
            _ => true,
        });
    }
}

/// Whether `Rows::join` refused a request only for room that the requests in rows hold: a
/// paged pool short of blocks (not the whole pool too small), or a growing cache whose
/// positions the busy rows still need (their left padding dropped already).
fn waits_for_rows(e: &Error) -> bool {
    matches!(
        e,
        Error::Decode(DecodeError::OutOfBlocks { needed, pool, .. }) if needed <= pool
    ) || matches!(
        e,
        Error::Decode(DecodeError::CapacityExceeded { len, .. }) if *len > 0
    )
}

/// The scheduler's thread: joins waiting requests into free rows, runs while any is busy.
fn serve<T: DecoderModel, D: Device, M: RowsCache>(
    mut rows: Rows<T, D, M>,
    jobs: &Receiver<Job>,
    stop: &AtomicBool,
) {
    let n = rows.rows();
    let mut s = Serving {
        waiting: VecDeque::new(),
        out: (0..n).map(|_| None).collect(),
        deadlines: vec![None; n],
    };
    let mut open = true;
    loop {
        if stop.load(Ordering::SeqCst) {
            s.terminate_all(&mut rows, jobs);
            return;
        }
        // Idle: wait for work; busy: take what has arrived.
        if rows.busy() == 0 && s.waiting.is_empty() {
            if !open {
                return;
            }
            match jobs.recv_timeout(Duration::from_secs(3600)) {
                Ok(job) => s.waiting.push_back(job),
                Err(RecvTimeoutError::Timeout) => continue,
                // The scheduler was dropped or finished; the flag says which.
                Err(RecvTimeoutError::Disconnected) => {
                    open = false;
                    continue;
                }
            }
        }
        loop {
            match jobs.try_recv() {
                Ok(job) => s.waiting.push_back(job),
                Err(mpsc::TryRecvError::Empty) => break,
                Err(mpsc::TryRecvError::Disconnected) => {
                    open = false;
                    break;
                }
            }
        }
        s.expire(&mut rows);
        while rows.busy() < rows.rows() {
            let Some(job) = s.waiting.pop_front() else {
                break;
            };
            match rows.join(&job.prompt, job.max_new, job.stop) {
                Ok(row) => {
                    s.out[row] = Some(job.out);
                    s.deadlines[row] = job.deadline;
                }
                // Room that requests in rows hold for now: the request waits, first in line,
                // until they end.
                Err(e) if rows.busy() > 0 && waits_for_rows(&e) => {
                    s.waiting.push_front(job);
                    break;
                }
                Err(e) => {
                    let _ = job.out.send(Err(e));
                }
            }
        }
        if rows.busy() == 0 {
            continue;
        }
        let events = match rows.step() {
            Ok(events) => events,
            Err(_) if stop.load(Ordering::SeqCst) => continue,
            Err(e) => {
                // Every request in flight gets the run's error (`Error::Batch`, the cause
                // shared) and ends; the rows are freed for the next requests.
                let cause = Arc::new(e);
                for row in 0..n {
                    let cause = Arc::clone(&cause);
                    if s.out[row].is_some() {
                        s.fail_row(&mut rows, row, Error::Batch { cause });
                    }
                }
                continue;
            }
        };
        let mut gone = Vec::new();
        for (row, event) in events.iter().enumerate() {
            let (token, last) = match *event {
                RowEvent::Idle => continue,
                RowEvent::Token(t) => (t, false),
                RowEvent::Last(t) => (t, true),
            };
            let Some(sender) = &s.out[row] else { continue };
            if !sender.send(Ok(token)) {
                // The reader dropped its `Tokens`: free the row.
                gone.push(row);
            }
            if last {
                s.out[row] = None;
                s.deadlines[row] = None;
            }
        }
        for row in gone {
            s.out[row] = None;
            s.deadlines[row] = None;
            rows.leave(row);
        }
    }
}
