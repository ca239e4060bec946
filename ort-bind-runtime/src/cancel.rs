//! Cancellation: stopping a run that is in progress, from any thread.
//!
//! Every binding has its own ONNX Runtime run options, and so its own terminate flag.
//! [`Binding::terminator`](crate::Binding::terminator) hands out a [`Terminator`] for it: a
//! cheap, cloneable, `Send + Sync` handle that another thread (a request handler whose
//! client went away, a shutdown hook) calls [`Terminator::terminate`] on. The run, sync
//! ([`Binding::run`](crate::Binding::run)) or asynchronous
//! ([`Binding::run_async`](crate::Binding::run_async)), then returns [`Error::Terminated`]
//! (or [`Error::TimedOut`] when a timeout of
//! [`Binding::run_with_timeout`](crate::Binding::run_with_timeout) fired), and the binding stays
//! usable: the next run proceeds normally.
//!
//! **A stop belongs to one run.** A [`Terminator`] is for the run in progress when it was
//! taken or, when none was (the usual case: take it, hand it to a disconnect hook, then
//! run), the next run the binding starts; that run only. Once that run has finished, the
//! handle is inert: a late `terminate()` returns `Ok` and stops nothing. A binding that
//! goes back to its [`Pool`](crate::Pool) ends every stop taken for it, so a hook that
//! fires after the reply can never stop the next request's run on that binding. A timeout
//! is, the same way, for its own run only.
//!
//! ONNX Runtime reads the flag between kernels, so a run stops after the kernel it is in
//! (on a model of 128 small kernels: well under a millisecond; on a model with one huge
//! kernel: when that kernel ends).
//!
//! ```no_run
//! # fn demo<Io: ort_bind_runtime::BindingIo + Send>(mut bound: ort_bind_runtime::Binding<Io>)
//! # -> ort_bind_runtime::Result<()> {
//! use std::time::Duration;
//! use ort_bind_runtime::Error;
//!
//! let stop = bound.terminator(); // for the next run
//! let hook = stop.clone();
//! std::thread::spawn(move || {
//!     std::thread::sleep(Duration::from_millis(10));
//!     hook.terminate()
//! });
//! match bound.run() {
//!     Err(Error::Terminated) => println!("stopped"),
//!     other => other?,
//! }
//! stop.terminate()?; // too late: its run is over, so this does nothing
//! bound.run()?; // the binding still works
//! match bound.run_with_timeout(Duration::from_millis(5)) {
//!     Err(Error::TimedOut { .. }) => println!("too slow"),
//!     other => other?,
//! }
//! # Ok(()) }
//! ```

use std::sync::atomic::{AtomicU64, Ordering};
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
///
/// Runs are numbered by epochs: the epoch is the number of the run in progress or, when
/// none is, of the next run the binding starts. A [`Terminator`] and a timeout each record
/// the epoch of the one run they are for and act only while that epoch is current; the
/// owner of the binding ends an epoch ([`RunControl::close`]) when a run returns, when a
/// dropped asynchronous run is abandoned, and when a binding goes back to its pool, so a
/// stop that arrives later finds a newer epoch and does nothing.
#[derive(Debug)]
pub(crate) struct RunControl {
    /// Options of every run, but the ones below.
    plain: RunOptions,
    /// Options of runs that return before the device has finished (a CUDA session on the
    /// caller's stream, with every bound tensor in device memory).
    device_async: Option<RunOptions>,
    /// `epoch << 1 | stop`: the current epoch, and whether a stop of its run is requested.
    /// Requesters set the stop bit (under `state`'s lock); only the binding's owner moves
    /// the epoch on, without the lock when no stop is requested (a run that finished
    /// normally costs one compare-and-swap).
    word: AtomicU64,
    state: Mutex<ControlState>,
}

#[derive(Debug, Default)]
struct ControlState {
    /// Why the current epoch's run is to stop; `Some` exactly while the stop bit is set.
    reason: Option<Reason>,
    /// An abandoned asynchronous run (its future was dropped) is still in flight: the
    /// flag of both run options stays set until [`RunControl::settled`]. Otherwise the flag
    /// is set exactly while the stop bit is.
    abandoned: bool,
}

const STOP: u64 = 1;
const EPOCH: u64 = 2;

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
            word: AtomicU64::new(0),
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

    /// The current epoch: the run in progress, or else the next one to start.
    pub(crate) fn epoch(&self) -> u64 {
        self.word.load(Ordering::SeqCst) / EPOCH
    }

    fn set_flags(&self) -> Result<()> {
        self.plain.set_terminate()?;
        if let Some(options) = &self.device_async {
            options.set_terminate()?;
        }
        Ok(())
    }

    fn clear_flags(&self) {
        // Clearing can only fail if ONNX Runtime cannot allocate a status; the next run
        // would then stop at once and report it.
        let _ = self.plain.unset_terminate();
        if let Some(options) = &self.device_async {
            let _ = options.unset_terminate();
        }
    }

    /// Requests that the run of `epoch` stop: the run in progress, or the next one to
    /// start, while `epoch` is current; nothing once that run has ended (or the epoch was
    /// closed otherwise). The first request of an epoch gives its reason.
    pub(crate) fn request(&self, reason: Reason, epoch: u64) -> Result<()> {
        let mut state = self.lock();
        let word = self.word.load(Ordering::SeqCst);
        if word / EPOCH != epoch || word & STOP != 0 {
            return Ok(());
        }
        // Fails only when the owner has just closed the epoch (without the lock): too late.
        if self
            .word
            .compare_exchange(word, word | STOP, Ordering::SeqCst, Ordering::SeqCst)
            .is_err()
        {
            return Ok(());
        }
        // Set before the flag, under the lock the owner takes to collect it: a run that
        // stops because of the flag finds the reason.
        state.reason = Some(reason);
        self.set_flags()
    }

    /// Ends the current epoch (called by the binding's owner, with no run in progress):
    /// every [`Terminator`] and timeout taken so far becomes inert. Returns the reason of
    /// a stop that was requested for the epoch, and clears the flag (unless an abandoned
    /// run still needs it).
    pub(crate) fn close(&self) -> Option<Reason> {
        let word = self.word.load(Ordering::SeqCst);
        if word & STOP == 0
            && self
                .word
                .compare_exchange(word, word + EPOCH, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
        {
            return None;
        }
        // A stop was requested: the lock waits for the requester to finish setting flags.
        let mut state = self.lock();
        let word = self.word.load(Ordering::SeqCst);
        self.word
            .store((word / EPOCH + 1) * EPOCH, Ordering::SeqCst);
        if !state.abandoned {
            self.clear_flags();
        }
        state.reason.take()
    }

    /// Gives up the asynchronous run of `epoch` (its future was dropped or leaked), if that
    /// epoch is still current: stops the run and ends its epoch at once, so a
    /// [`Terminator`] taken from now on is for the next run; `true` when it did. The flag
    /// stays set until [`RunControl::settled`] says the run has finished.
    pub(crate) fn abandon(&self, epoch: u64) -> bool {
        let mut state = self.lock();
        let word = self.word.load(Ordering::SeqCst);
        if word / EPOCH != epoch {
            return false;
        }
        state.abandoned = true;
        // Failing to set the flag leaves the run to finish; the owner waits either way.
        let _ = self.set_flags();
        self.word
            .store((word / EPOCH + 1) * EPOCH, Ordering::SeqCst);
        state.reason = None;
        true
    }

    /// The abandoned run has finished: the flag again says whether the current epoch's run
    /// is to stop.
    pub(crate) fn settled(&self) {
        let mut state = self.lock();
        if std::mem::take(&mut state.abandoned) && self.word.load(Ordering::SeqCst) & STOP == 0 {
            self.clear_flags();
        }
    }
}

/// Stops one run of a binding from any thread: see the [module docs](self).
///
/// A `Terminator` is for one run: the run in progress when it was taken, or, when none
/// was, the next run the binding starts. Once that run has finished (or its binding went
/// back to its pool, or its asynchronous future was dropped), the handle is inert:
/// [`Terminator::terminate`] returns `Ok` and stops nothing, so a late call can never stop
/// a later run, whoever runs it. Take a new one for each run.
///
/// Cheap to clone (clones are for the same run); `Send + Sync`. It keeps the binding's run
/// options alive, not the binding.
#[derive(Debug, Clone)]
pub struct Terminator {
    control: Arc<RunControl>,
    epoch: u64,
}

impl Terminator {
    pub(crate) fn new(control: Arc<RunControl>) -> Terminator {
        let epoch = control.epoch();
        Terminator { control, epoch }
    }

    /// Stops the run this handle is for (see [`Terminator`]): the run in progress when it
    /// was taken, or the next run its binding started or starts. That run returns
    /// [`Error::Terminated`] (ONNX Runtime stops after the kernel it is in); a call before
    /// it starts makes it stop at once. Calling again, or after that run has finished,
    /// does nothing. A call that races with the end of the run is absorbed by that run
    /// (which then returns its results); it never stops a later run.
    ///
    /// Errors only when ONNX Runtime cannot set the flag (it cannot allocate a status).
    pub fn terminate(&self) -> Result<()> {
        self.control.request(Reason::Terminated, self.epoch)
    }
}
