//! How many items the next batch may hold. With [`BatchSizing::Fixed`] that is always
//! `max_batch`; with [`BatchSizing::Adaptive`] the batcher measures what each size serves
//! on this model and machine and keeps to the best, which is 1 (no batching, no waiting)
//! on a model that runs slower per item in batches.
//!
//! What is measured is throughput, the thing batching is for: the batcher serves at one
//! size for a window (at least [`WINDOW_BATCHES`] batches and [`WINDOW_MIN`]) and counts
//! the items its workers served per second of it. That takes in everything a size costs:
//! the runs, the copies, waiting for batches to fill, and workers idle while the callers
//! of a big batch send their next requests. The sizes are the powers of two up to
//! `max_batch`, and `max_batch`; each is judged by the best of its last [`SAMPLES`]
//! windows (other work on the machine only ever slows a window down, so the best is the
//! size's own throughput). The sizes are measured first, round by round, smallest first,
//! until each has [`SAMPLES`] windows (the best so far is the choice from the end of the
//! first round); after that the batcher serves at the smallest size within [`TOLERANCE`]
//! of the best (so a
//! tie, as under light load where every size serves all that arrives, goes to the size
//! that waits least), and every [`EXPLORE_EVERY`]th window re-measures a neighbour of it
//! (one size up, then one down), so a change in load or in the machine moves the choice.

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// How a [`Batcher`](super::Batcher) sizes its batches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BatchSizing {
    /// Measure the throughput at each batch size and serve at the best, down to
    /// unbatched: never serves slower than batching can (see the module docs).
    #[default]
    Adaptive,
    /// Always gather up to `max_batch` items (waiting up to `max_delay` for them).
    Fixed,
}

/// Windows kept per size (the best of them judges it); also the windows each size is
/// measured over before the choice settles.
pub(super) const SAMPLES: usize = 3;
/// Batches a window holds at least.
pub(super) const WINDOW_BATCHES: u32 = 8;
/// How long a window lasts at least.
pub(super) const WINDOW_MIN: Duration = Duration::from_millis(20);
/// How long a window lasts at most (under light load, where batches are few).
const WINDOW_MAX: Duration = Duration::from_millis(500);
/// Every this many windows, one re-measures a neighbour of the chosen size.
pub(super) const EXPLORE_EVERY: u64 = 6;
/// A smaller size within this fraction of the best throughput is preferred to it.
pub(super) const TOLERANCE: f64 = 0.03;

/// The measured sizes, shared by a batcher's workers.
#[derive(Debug)]
pub(super) struct Sizer {
    sizing: BatchSizing,
    max_batch: usize,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    sizes: Vec<Measured>,
    /// The size (index) batches are gathered at in this window.
    current: usize,
    /// The size judged best (index).
    best: usize,
    window: Window,
    windows: u64,
    explore_up: bool,
}

/// The window being measured.
#[derive(Debug, Clone, Copy)]
struct Window {
    start: Option<Instant>,
    items: u64,
    batches: u32,
}

#[derive(Debug, Clone, Copy)]
struct Measured {
    size: usize,
    /// The last throughputs, items per second (a ring; `count` of them valid).
    served: [f64; SAMPLES],
    count: usize,
    next: usize,
}

impl Measured {
    fn measured(&self) -> bool {
        self.count > 0
    }

    /// The best of the kept throughputs (0 while none is kept).
    fn throughput(&self) -> f64 {
        self.served[..self.count]
            .iter()
            .copied()
            .fold(0.0, f64::max)
    }

    fn push(&mut self, items_per_second: f64) {
        self.served[self.next] = items_per_second;
        self.next = (self.next + 1) % SAMPLES;
        self.count = (self.count + 1).min(SAMPLES);
    }
}

impl Sizer {
    pub(super) fn new(sizing: BatchSizing, max_batch: usize) -> Self {
        let mut sizes: Vec<usize> = std::iter::successors(Some(1usize), |s| s.checked_mul(2))
            .take_while(|&s| s < max_batch)
            .collect();
        sizes.push(max_batch);
        Sizer {
            sizing,
            max_batch,
            state: Mutex::new(State {
                sizes: sizes
                    .into_iter()
                    .map(|size| Measured {
                        size,
                        served: [0.0; SAMPLES],
                        count: 0,
                        next: 0,
                    })
                    .collect(),
                current: 0,
                best: 0,
                window: Window {
                    start: None,
                    items: 0,
                    batches: 0,
                },
                windows: 0,
                explore_up: true,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The most items the next batch may hold.
    pub(super) fn limit(&self) -> usize {
        match self.sizing {
            BatchSizing::Fixed => self.max_batch,
            BatchSizing::Adaptive => {
                let state = self.lock();
                state.sizes[state.current].size
            }
        }
    }

    /// A batch of `n` items gathered under `limit` was served at `now`; `counted` is
    /// `false` for a batch whose time is no measure of its size (a worker's first run at
    /// new dims, which ONNX Runtime spends planning and allocating): it closes no window.
    pub(super) fn record(&self, limit: usize, n: usize, now: Instant, counted: bool) {
        if self.sizing == BatchSizing::Fixed {
            return;
        }
        let mut state = self.lock();
        if state.sizes[state.current].size != limit {
            // Gathered before the window's size changed: it belongs to no window.
            return;
        }
        let Some(start) = state.window.start else {
            // The window starts with its first batch served.
            state.window = Window {
                start: Some(now),
                items: 0,
                batches: 0,
            };
            return;
        };
        if !counted {
            state.window.start = Some(now);
            state.window.items = 0;
            state.window.batches = 0;
            return;
        }
        state.window.items += n as u64;
        state.window.batches += 1;
        let long = now.saturating_duration_since(start);
        if (state.window.batches < WINDOW_BATCHES || long < WINDOW_MIN) && long < WINDOW_MAX {
            return;
        }
        let current = state.current;
        let served = state.window.items as f64 / long.as_secs_f64().max(1e-9);
        state.sizes[current].push(served);
        state.next_window();
    }

    /// The size batches are served at now, and the throughput measured at each size.
    pub(super) fn report(&self) -> (usize, Vec<(usize, Option<f64>)>) {
        let state = self.lock();
        let chosen = match self.sizing {
            BatchSizing::Fixed => self.max_batch,
            BatchSizing::Adaptive => state.sizes[state.best].size,
        };
        let sizes = state
            .sizes
            .iter()
            .map(|m| (m.size, m.measured().then(|| m.throughput())))
            .collect();
        (chosen, sizes)
    }
}

impl State {
    /// Picks the size of the next window.
    fn next_window(&mut self) {
        self.window = Window {
            start: None,
            items: 0,
            batches: 0,
        };
        self.windows += 1;
        // The choice so far, once every size has a window: what `report` shows while the
        // remaining windows are measured (a busy machine may take a while to finish them).
        if self.sizes.iter().all(Measured::measured) {
            self.best = self.best();
        }
        // Round by round, smallest first: one window of every size before a second of any,
        // so a choice exists after one round.
        let fewest = self.sizes.iter().map(|m| m.count).min().unwrap_or(SAMPLES);
        if fewest < SAMPLES {
            self.current = self
                .sizes
                .iter()
                .position(|m| m.count == fewest)
                .unwrap_or(0);
            return;
        }
        self.current = self.best;
        if !self.windows.is_multiple_of(EXPLORE_EVERY) {
            return;
        }
        let last = self.sizes.len() - 1;
        self.explore_up = !self.explore_up;
        self.current = match (self.explore_up, self.best) {
            (true, b) if b < last => b + 1,
            (false, b) if b > 0 => b - 1,
            (_, 0) => 1.min(last),
            (_, b) => b - 1,
        };
    }

    /// The smallest size within [`TOLERANCE`] of the best throughput.
    fn best(&self) -> usize {
        let top = self
            .sizes
            .iter()
            .map(Measured::throughput)
            .fold(0.0, f64::max);
        self.sizes
            .iter()
            .position(|m| m.measured() && m.throughput() >= top * (1.0 - TOLERANCE))
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Serves `batches` batches one after another, a batch of `n` taking `cost(n)`.
    fn feed(
        sizer: &Sizer,
        now: &mut Instant,
        cost: impl Fn(usize) -> f64,
        batches: usize,
    ) -> Vec<usize> {
        (0..batches)
            .map(|_| {
                let n = sizer.limit();
                *now += Duration::from_secs_f64(cost(n));
                sizer.record(n, n, *now, true);
                n
            })
            .collect()
    }

    fn share(sizes: &[usize], n: usize) -> f64 {
        sizes.iter().filter(|&&s| s == n).count() as f64 / sizes.len() as f64
    }

    #[test]
    fn sizes_are_powers_of_two_up_to_max_batch() {
        let s = Sizer::new(BatchSizing::Adaptive, 12);
        let sizes: Vec<usize> = s.lock().sizes.iter().map(|m| m.size).collect();
        assert_eq!(sizes, [1, 2, 4, 8, 12]);
        assert_eq!(Sizer::new(BatchSizing::Adaptive, 1).lock().sizes.len(), 1);
    }

    #[test]
    fn a_model_that_gains_from_batching_is_served_at_the_largest_size() {
        let s = Sizer::new(BatchSizing::Adaptive, 8);
        let mut now = Instant::now();
        // A fixed cost per run and a small one per item: bigger batches serve more.
        let chosen = feed(&s, &mut now, |n| 3e-3 + 1e-5 * n as f64, 3000);
        assert_eq!(chosen[0], 1, "warm-up: the smallest first");
        let settled = &chosen[1500..];
        assert!(share(settled, 8) > 0.75, "{:?}", s.report());
        assert_eq!(s.report().0, 8);
    }

    #[test]
    fn a_choice_exists_after_one_window_of_each_size() {
        let s = Sizer::new(BatchSizing::Adaptive, 8);
        let mut now = Instant::now();
        let mut batches = 0;
        while !s.lock().sizes.iter().all(Measured::measured) {
            feed(&s, &mut now, |n| 3e-3 + 1e-5 * n as f64, 1);
            batches += 1;
            assert!(batches < 1000, "{:?}", s.report());
        }
        assert!(s.lock().sizes.iter().all(|m| m.count == 1), "one round");
        assert_eq!(s.report().0, 8, "{:?}", s.report());
    }

    #[test]
    fn a_model_that_loses_from_batching_is_served_unbatched() {
        let s = Sizer::new(BatchSizing::Adaptive, 8);
        let mut now = Instant::now();
        // Slower per item in bigger batches (caches), as some CNNs are on CPU.
        let chosen = feed(
            &s,
            &mut now,
            |n| 3e-3 * n as f64 * (1.0 + 0.1 * n as f64),
            3000,
        );
        let settled = &chosen[1500..];
        assert!(share(settled, 1) > 0.75, "{:?}", s.report());
        assert!(settled.iter().all(|&n| n <= 2), "explores only neighbours");
        assert_eq!(s.report().0, 1);
    }

    #[test]
    fn a_tie_goes_to_the_smaller_size() {
        let s = Sizer::new(BatchSizing::Adaptive, 8);
        let mut now = Instant::now();
        // Light load: every size serves what arrives, 1000 items a second.
        feed(&s, &mut now, |n| 1e-3 * n as f64, 3000);
        assert_eq!(s.report().0, 1, "{:?}", s.report());
    }

    #[test]
    fn the_choice_follows_a_change_in_the_model_s_costs() {
        let s = Sizer::new(BatchSizing::Adaptive, 8);
        let mut now = Instant::now();
        feed(
            &s,
            &mut now,
            |n| 3e-3 * n as f64 * (1.0 + 0.1 * n as f64),
            2000,
        );
        assert_eq!(s.report().0, 1);
        feed(&s, &mut now, |n| 3e-3 + 1e-5 * n as f64, 20000);
        assert_eq!(s.report().0, 8, "{:?}", s.report());
    }

    #[test]
    fn slow_windows_do_not_move_the_choice() {
        let s = Sizer::new(BatchSizing::Adaptive, 8);
        let mut now = Instant::now();
        let gains = |n: usize| 3e-3 + 1e-5 * n as f64;
        feed(&s, &mut now, gains, 3000);
        assert_eq!(s.report().0, 8);
        // The machine is busy for a moment: every batch takes 5x longer.
        feed(&s, &mut now, |n| 5.0 * gains(n), 20);
        assert_eq!(s.report().0, 8);
    }

    #[test]
    fn a_batch_that_is_no_measure_restarts_the_window_and_old_batches_are_ignored() {
        let s = Sizer::new(BatchSizing::Adaptive, 8);
        let start = Instant::now();
        s.record(1, 1, start, true);
        s.record(1, 1, start + Duration::from_secs(1), false);
        // Gathered at a size that is not the window's: ignored.
        s.record(4, 4, start + Duration::from_secs(2), true);
        assert_eq!(s.lock().window.items, 0);
        assert_eq!(s.lock().window.start, Some(start + Duration::from_secs(1)));
    }

    #[test]
    fn a_fixed_sizer_always_says_max_batch() {
        let s = Sizer::new(BatchSizing::Fixed, 6);
        let mut now = Instant::now();
        assert!(feed(&s, &mut now, |_| 1.0, 20).iter().all(|&n| n == 6));
    }
}
