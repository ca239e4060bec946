//! Cancellation: stopping a run that is in progress, from any thread.
//!
//! Every binding has its own ONNX Runtime run options, and so its own terminate flag.
//! [`Bound::terminator`](crate::Bound::terminator) hands out a [`Terminator`] for it: a
//! cheap, cloneable, `Send + Sync` handle that another thread (a request handler whose
//! client went away, a shutdown hook) calls [`Terminator::terminate`] on. The run, sync
//! ([`Bound::run`](crate::Bound::run)) or asynchronous
//! ([`Bound::run_async`](crate::Bound::run_async)), then returns [`Error::Terminated`]
//! (or [`Error::TimedOut`] when a timeout of
//! [`Bound::run_with_timeout`](crate::Bound::run_with_timeout) fired), and the binding stays
//! usable: the next run proceeds normally.
//!
//! ONNX Runtime reads the flag between kernels, so a run stops after the kernel it is in
//! (on a model of 128 small kernels: well under a millisecond; on a model with one huge
//! kernel: when that kernel ends).
//!
//! ```no_run
//! # fn demo<Io: ort_bind_runtime::BindingIo + Send>(mut bound: ort_bind_runtime::Bound<Io>)
//! # -> ort_bind_runtime::Result<()> {
//! use std::time::Duration;
//! use ort_bind_runtime::Error;
//!
//! let stop = bound.terminator();
//! std::thread::spawn(move || {
//!     std::thread::sleep(Duration::from_millis(10));
//!     stop.terminate()
//! });
//! match bound.run() {
//!     Err(Error::Terminated) => println!("stopped"),
//!     other => other?,
//! }
//! bound.run()?; // the binding still works
//! match bound.run_with_timeout(Duration::from_millis(5)) {
//!     Err(Error::TimedOut { .. }) => println!("too slow"),
//!     other => other?,
//! }
//! # Ok(()) }
//! ```

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crate::error::{Error, Result};
use crate::session::Session;
use crate::sys::RunOptions;

/// Why a run was asked to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reason {
    /// [`Terminator::terminate`], or an asynchronous run's future dropped before it finished.
    Terminated,
    /// The timeout of a timed run passed.
    TimedOut(Duration),
}

impl Reason {
    pub(crate) fn error(self) -> Error {
        match self {
            Reason::Terminated => Error::Terminated,
            Reason::TimedOut(timeout) => Error::TimedOut { timeout },
        }
    }
}

/// A binding's run options and the state of requests to stop its runs.
#[derive(Debug)]
pub(crate) struct RunControl {
    /// Options of every run, but the ones below.
    plain: RunOptions,
    /// Options of runs that return before the device has finished (a CUDA session on the
    /// caller's stream, with every bound tensor in device memory).
    device_async: Option<RunOptions>,
    /// Set (before the flag) while a stop is requested; lets a run that finished normally
    /// skip the lock.
    requested: AtomicBool,
    state: Mutex<ControlState>,
}

#[derive(Debug, Default)]
struct ControlState {
    /// The pending request; the flag of both run options is set exactly while this is `Some`.
    reason: Option<Reason>,
    /// The run a timeout may stop (0: none), and the last number handed out.
    armed: u64,
    last: u64,
}

impl RunControl {
    pub(crate) fn new(session: &Session) -> Result<RunControl> {
        let device_async = match session.async_run_options() {
            // The entry `device/cuda.rs` puts in the session's own options for such runs.
            Some(_) => Some(RunOptions::with_config(&[(
                c"disable_synchronize_execution_providers",
                c"1",
            )])?),
            None => None,
        };
        Ok(RunControl {
            plain: RunOptions::with_config(&[])?,
            device_async,
            requested: AtomicBool::new(false),
            state: Mutex::new(ControlState::default()),
        })
    }

    /// The options for the next run (`device_async`: the run may return before the device
    /// has finished).
    pub(crate) fn options(&self, device_async: bool) -> &RunOptions {
        match (&self.device_async, device_async) {
            (Some(options), true) => options,
            _ => &self.plain,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ControlState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Requests that the run in progress (or else the next one) stop. With `only`, only
    /// while the run that [`RunControl::arm`] numbered `only` is still the armed one (a
    /// timeout of a run that already returned does nothing).
    pub(crate) fn request(&self, reason: Reason, only: Option<u64>) -> Result<()> {
        let mut state = self.lock();
        if let Some(run) = only
            && state.armed != run
        {
            return Ok(());
        }
        if state.reason.is_some() {
            return Ok(());
        }
        // Visible before the flag: a run that stops because of the flag finds the reason.
        self.requested.store(true, Ordering::SeqCst);
        state.reason = Some(reason);
        self.plain.set_terminate()?;
        if let Some(options) = &self.device_async {
            options.set_terminate()?;
        }
        Ok(())
    }

    /// Numbers the run about to start so that a timeout can stop it and only it.
    pub(crate) fn arm(&self) -> u64 {
        let mut state = self.lock();
        state.last += 1;
        state.armed = state.last;
        state.armed
    }

    /// Called when a run has returned (`timed`: it was armed; `failed`: it returned an
    /// error). Disarms its timeout and consumes a pending request: the flag is cleared so
    /// the next run proceeds, and the reason is returned.
    pub(crate) fn finish(&self, timed: bool, failed: bool) -> Option<Reason> {
        if !timed && !failed && !self.requested.load(Ordering::SeqCst) {
            return None;
        }
        let mut state = self.lock();
        state.armed = 0;
        let reason = state.reason.take()?;
        self.requested.store(false, Ordering::SeqCst);
        // Clearing can only fail if ONNX Runtime cannot allocate a status; the next run
        // would then stop at once and report it.
        let _ = self.plain.unset_terminate();
        if let Some(options) = &self.device_async {
            let _ = options.unset_terminate();
        }
        Some(reason)
    }
}

/// Stops runs of one binding from any thread: see the [module docs](self).
///
/// Cheap to clone; `Send + Sync`. It keeps the binding's run options alive, not the binding.
#[derive(Debug, Clone)]
pub struct Terminator {
    control: Arc<RunControl>,
}

impl Terminator {
    pub(crate) fn new(control: Arc<RunControl>) -> Terminator {
        Terminator { control }
    }

    /// Stops the binding's run in progress, or, when none is, the next run it starts: that
    /// run returns [`Error::Terminated`] (ONNX Runtime stops after the kernel it is in).
    /// One call stops one run; later runs proceed. A call that races with the end of a run
    /// is absorbed by that run (which returns its results) or stops the next one.
    ///
    /// Errors only when ONNX Runtime cannot set the flag (it cannot allocate a status).
    pub fn terminate(&self) -> Result<()> {
        self.control.request(Reason::Terminated, None)
    }
}
