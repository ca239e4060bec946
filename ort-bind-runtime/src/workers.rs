//! ort-bind's worker threads: where [`Binding::run_async`](crate::Binding::run_async) runs
//! when ONNX Runtime's `RunAsync` cannot serve (a session with one intra-op thread, a
//! device session, outputs allocated on a device).
//!
//! One process-wide pool, started on first use and grown on demand (a thread is started
//! when a job arrives and every thread is busy with a run) up to one thread per core
//! ([`std::thread::available_parallelism`]); threads then live for the process, waiting on
//! a condition variable when idle. Jobs wait in a FIFO queue whose capacity is reused, so
//! submitting a job allocates nothing in steady state: a job is three raw handles and a
//! counted reference to the binding's [`Completion`], moved into the queue.
//!
//! A job makes the binding's ordinary blocking run (`RunWithBinding`, as `Binding::run`
//! does, with the binding's run options, so stops and timeouts reach it) and then reports
//! its result to the [`Completion`], exactly as `RunAsync`'s callback does.

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};

use crate::error::{Error, Result};
use crate::run_async::Completion;
use crate::sys::DetachedRun;

/// Runs for a worker thread, made in order (a decoder's embedding model, decoder and head;
/// a binding's one run); the first that fails ends the job with its error.
#[derive(Debug)]
pub(crate) struct Job {
    pub(crate) runs: [Option<DetachedRun>; 3],
    pub(crate) completion: Arc<Completion>,
}

impl Job {
    /// The runs, one after another, until one fails.
    fn run(runs: [Option<DetachedRun>; 3]) -> Result<()> {
        runs.into_iter().flatten().try_for_each(DetachedRun::run)
    }
}

#[derive(Debug)]
struct Workers {
    queue: Mutex<Queue>,
    work: Condvar,
    /// Threads that have made their run and are about to look for the next job (they
    /// count as idle: a job queued now needs no new thread, e.g. one run after another).
    finishing: AtomicUsize,
    /// The most threads the pool starts.
    max: usize,
}

#[derive(Debug)]
struct Queue {
    jobs: VecDeque<Job>,
    /// Threads waiting for a job.
    idle: usize,
    /// Threads started.
    threads: usize,
}

/// How many cores the process may use (read once: the lookup allocates on some systems).
pub(crate) fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}

fn workers() -> &'static Workers {
    static WORKERS: OnceLock<Workers> = OnceLock::new();
    WORKERS.get_or_init(|| Workers {
        queue: Mutex::new(Queue {
            jobs: VecDeque::with_capacity(64),
            idle: 0,
            threads: 0,
        }),
        work: Condvar::new(),
        finishing: AtomicUsize::new(0),
        max: cores(),
    })
}

/// Queues `job` for a worker thread, starting one when every thread is busy and the pool
/// is not full. When no thread runs and none can be started, drops the job unmade and
/// returns the error.
pub(crate) fn submit(job: Job) -> Result<()> {
    let workers = workers();
    let mut queue = workers.lock();
    queue.jobs.push_back(job);
    let free = queue.idle + workers.finishing.load(Ordering::Acquire);
    if queue.jobs.len() > free && queue.threads < workers.max {
        let number = queue.threads;
        let spawned = std::thread::Builder::new()
            .name(format!("ort-bind-run-{number}"))
            .spawn(move || workers.serve());
        match spawned {
            Ok(_) => queue.threads += 1,
            Err(e) if queue.threads == 0 => {
                drop(queue.jobs.pop_back());
                return Err(Error::AsyncRun {
                    reason: format!("cannot start ort-bind's worker thread: {e}"),
                });
            }
            // A thread already running takes the job when it is free.
            Err(_) => {}
        }
    }
    // A thread that is not waiting looks at the queue before it waits: wake one only when
    // one waits (a condition variable's notification is a system call).
    let wake = queue.idle > 0;
    drop(queue);
    if wake {
        workers.work.notify_one();
    }
    Ok(())
}

impl Workers {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn serve(&self) {
        let mut queue = self.lock();
        loop {
            if let Some(job) = queue.jobs.pop_front() {
                drop(queue);
                let Job { runs, completion } = job;
                let result: Result<()> = catch_unwind(AssertUnwindSafe(|| Job::run(runs)))
                    .unwrap_or_else(|_| {
                        Err(Error::AsyncRun {
                            reason: "ort-bind's worker thread panicked while running".into(),
                        })
                    });
                // Before the completion: the caller may queue its next run at once.
                self.finishing.fetch_add(1, Ordering::AcqRel);
                completion.complete(result);
                drop(completion);
                queue = self.lock();
                self.finishing.fetch_sub(1, Ordering::AcqRel);
            } else {
                queue.idle += 1;
                queue = self
                    .work
                    .wait(queue)
                    .unwrap_or_else(PoisonError::into_inner);
                queue.idle -= 1;
            }
        }
    }
}
