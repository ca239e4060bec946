//! A continuous-batching server core: [`Scheduler`] owns a [`Rows`] on a thread of its own,
//! takes requests from any thread ([`Scheduler::submit`]) and hands each its tokens as they
//! come ([`Tokens`], an iterator). Requests wait while every row is busy and join as rows
//! free up; a bad request fails alone (its first item is the error); a dropped [`Tokens`]
//! frees its row at the next run.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender, TrySendError};
use std::thread::JoinHandle;
use std::time::Duration;

use super::{DecoderModel, RowEvent, Rows};
use crate::device::Device;
use crate::error::{Error, Result};

/// One request: its prompt, limits, and where its tokens go.
#[derive(Debug)]
struct Job {
    prompt: Vec<i64>,
    max_new: usize,
    stop: Option<i64>,
    out: SyncSender<Result<i64>>,
}

/// The tokens of one request, as they are generated: an iterator that blocks until the
/// next token (or the end). It ends after the request's last token; an error is its last
/// item: the refusal of a bad request (`Error::Decode`), or a failed run of the batch it
/// was in (`Error::Batch`, shared by every request of that run). Dropping it ends the request: its row is freed
/// at the scheduler's next run.
#[derive(Debug)]
pub struct Tokens {
    rx: Receiver<Result<i64>>,
}

impl Iterator for Tokens {
    type Item = Result<i64>;

    fn next(&mut self) -> Option<Result<i64>> {
        self.rx.recv().ok()
    }
}

/// Continuous batching for a server: a thread that owns a [`Rows`], joins submitted
/// requests into free rows, runs while any row is busy, and sends each token to its
/// request's [`Tokens`]. Dropping the scheduler lets the requests in flight finish, then
/// ends the thread.
///
/// ```no_run
/// # fn demo(rows: ort_bind_runtime::decode::Rows<f32>) -> ort_bind_runtime::Result<()> {
/// use ort_bind_runtime::decode::Scheduler;
///
/// let scheduler = Scheduler::new(rows);
/// let tokens = scheduler.submit(&[5, 42, 79], 32, None); // from any thread
/// for token in tokens {
///     print!("{} ", token?);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Scheduler {
    jobs: Option<Sender<Job>>,
    thread: Option<JoinHandle<()>>,
}

impl Scheduler {
    /// Starts the scheduler's thread over `rows` (as many requests at a time as it has
    /// rows).
    pub fn new<T, D>(rows: Rows<T, D>) -> Scheduler
    where
        T: DecoderModel,
        D: Device,
        Rows<T, D>: Send,
    {
        let (jobs, rx) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("ort-bind-scheduler".into())
            .spawn(move || serve(rows, &rx))
            .ok();
        Scheduler {
            jobs: thread.is_some().then_some(jobs),
            thread,
        }
    }

    /// Queues a request: greedy decoding after `prompt`, at most `max_new` tokens, ending
    /// early after `stop`. Its tokens come through the returned [`Tokens`].
    pub fn submit(&self, prompt: &[i64], max_new: usize, stop: Option<i64>) -> Tokens {
        // Room for every token: the scheduler never waits for a slow reader.
        let (out, rx) = mpsc::sync_channel(max_new.max(1));
        let job = Job {
            prompt: prompt.to_vec(),
            max_new,
            stop,
            out,
        };
        if let Some(Err(mpsc::SendError(job))) = self.jobs.as_ref().map(|j| j.send(job)) {
            let _ = job.out.try_send(Err(Error::AsyncRun {
                reason: "the scheduler's thread could not start, or has stopped".into(),
            }));
        }
        Tokens { rx }
    }
}

impl Drop for Scheduler {
    fn drop(&mut self) {
        self.jobs = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The scheduler's thread: joins waiting requests into free rows, runs while any is busy.
fn serve<T: DecoderModel, D: Device>(mut rows: Rows<T, D>, jobs: &Receiver<Job>) {
    let mut waiting: VecDeque<Job> = VecDeque::new();
    let mut out: Vec<Option<SyncSender<Result<i64>>>> = (0..rows.rows()).map(|_| None).collect();
    let mut open = true;
    loop {
        // Idle: wait for work; busy: take what has arrived.
        if rows.busy() == 0 && waiting.is_empty() {
            if !open {
                return;
            }
            match jobs.recv_timeout(Duration::from_secs(3600)) {
                Ok(job) => waiting.push_back(job),
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => return,
            }
        }
        loop {
            match jobs.try_recv() {
                Ok(job) => waiting.push_back(job),
                Err(mpsc::TryRecvError::Empty) => break,
                Err(mpsc::TryRecvError::Disconnected) => {
                    open = false;
                    break;
                }
            }
        }
        while rows.busy() < rows.rows() {
            let Some(job) = waiting.pop_front() else {
                break;
            };
            match rows.join(&job.prompt, job.max_new, job.stop) {
                Ok(row) => out[row] = Some(job.out),
                Err(e) => {
                    let _ = job.out.try_send(Err(e));
                }
            }
        }
        if rows.busy() == 0 {
            continue;
        }
        let events = match rows.step() {
            Ok(events) => events,
            Err(e) => {
                // Every request in flight gets the run's error (`Error::Batch`, the cause
                // shared) and ends; the rows are freed for the next requests.
                let cause = Arc::new(e);
                for (row, sender) in out.iter_mut().enumerate() {
                    if let Some(sender) = sender.take() {
                        let _ = sender.try_send(Err(Error::Batch {
                            cause: Arc::clone(&cause),
                        }));
                        rows.leave(row);
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
            let Some(sender) = &out[row] else { continue };
            match sender.try_send(Ok(token)) {
                Ok(()) | Err(TrySendError::Full(_)) => {}
                // The reader dropped its `Tokens`: free the row.
                Err(TrySendError::Disconnected(_)) => gone.push(row),
            }
            if last {
                out[row] = None;
            }
        }
        for row in gone {
            out[row] = None;
            rows.leave(row);
        }
    }
}
