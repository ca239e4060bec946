//! How many items the next batch may hold. With [`BatchSizing::Fixed`] that is always
//! `max_batch`; with [`BatchSizing::Adaptive`] the batcher measures what batching buys on
//! this model and machine and serves at the size that costs least per item, which is 1
//! (no batching, no waiting) on a model that runs slower per item in batches.
//!
//! The sizes tried are the powers of two up to `max_batch`, and `max_batch`. A batch's
//! cost is the worker's time per item from the moment its first item was there to take
//! until its replies went out: waiting for the batch to fill, gathering, running,
//! scattering (so a size that makes workers wait for items pays for it). Each size keeps
//! its last [`SAMPLES`] costs and is judged by their median, which a batch slowed by
//! something else on the machine does not move. Sizes never measured are tried first,
//! smallest first; after that the cheapest serves, and every [`EXPLORE_EVERY`]th batch
//! re-measures a neighbour of it (one size up, then one down), so a change in load or in
//! the machine moves the choice.

use std::sync::Mutex;
use std::sync::PoisonError;
use std::time::Duration;

/// How a [`Batcher`](super::Batcher) sizes its batches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BatchSizing {
    /// Measure the time per item at each batch size and serve at the cheapest, down to
    /// unbatched: never serves slower than batching can (see the module docs).
    #[default]
    Adaptive,
    /// Always gather up to `max_batch` items (waiting up to `max_delay` for them).
    Fixed,
}

/// Costs kept per size (the median of them judges it); also the batches each size is
/// measured over before the choice settles.
pub(super) const SAMPLES: usize = 3;
/// Every this many batches, one re-measures a neighbour of the chosen size.
pub(super) const EXPLORE_EVERY: u64 = 16;

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
    batches: u64,
    explore_up: bool,
}

#[derive(Debug, Clone, Copy)]
struct Measured {
    size: usize,
    /// The last costs, seconds per item (a ring; `count` of them valid).
    costs: [f64; SAMPLES],
    count: usize,
    next: usize,
}

impl Measured {
    fn measured(&self) -> bool {
        self.count > 0
    }

    /// The median of the kept costs (of the valid ones while fewer than `SAMPLES`).
    fn cost(&self) -> f64 {
        let mut c = self.costs;
        let valid = &mut c[..self.count];
        valid.sort_by(f64::total_cmp);
        valid.get(valid.len() / 2).copied().unwrap_or(f64::INFINITY)
    }

    fn push(&mut self, cost: f64) {
        self.costs[self.next] = cost;
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
                        costs: [0.0; SAMPLES],
                        count: 0,
                        next: 0,
                    })
                    .collect(),
                batches: 0,
                explore_up: true,
            }),
        }
    }

    /// How many sizes may be in use (the bindings keep that many recent dims).
    pub(super) fn sizes(&self) -> usize {
        self.lock().sizes.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The most items the next batch may hold.
    pub(super) fn limit(&self) -> usize {
        if self.sizing == BatchSizing::Fixed {
            return self.max_batch;
        }
        let mut state = self.lock();
        if let Some(unmeasured) = state.sizes.iter().find(|m| m.count < SAMPLES) {
            return unmeasured.size;
        }
        let best = state.best();
        state.batches += 1;
        if !state.batches.is_multiple_of(EXPLORE_EVERY) {
            return state.sizes[best].size;
        }
        state.explore_up = !state.explore_up;
        let last = state.sizes.len() - 1;
        let neighbour = match (state.explore_up, best) {
            (true, b) if b < last => b + 1,
            (false, b) if b > 0 => b - 1,
            (_, 0) => 1.min(last),
            (_, b) => b - 1,
        };
        state.sizes[neighbour].size
    }

    /// A batch of `n` items took `took`, from its first item's being there to take to its
    /// replies' going out.
    pub(super) fn record(&self, n: usize, took: Duration) {
        if self.sizing == BatchSizing::Fixed || n == 0 {
            return;
        }
        let mut state = self.lock();
        // The largest size not above `n`: a batch that did not fill counts for the size it
        // reached.
        if let Some(m) = state.sizes.iter_mut().rev().find(|m| m.size <= n) {
            m.push(took.as_secs_f64() / n as f64);
        }
    }

    /// The size batches are served at now, and the measured seconds per item of each
    /// size (for [`Batcher::sizing`](super::Batcher::sizing)).
    pub(super) fn report(&self) -> (usize, Vec<(usize, Option<Duration>)>) {
        let state = self.lock();
        let chosen = match self.sizing {
            BatchSizing::Fixed => self.max_batch,
            BatchSizing::Adaptive => state.sizes[state.best()].size,
        };
        let sizes = state
            .sizes
            .iter()
            .map(|m| {
                let t = m.measured().then(|| Duration::from_secs_f64(m.cost()));
                (m.size, t)
            })
            .collect();
        (chosen, sizes)
    }
}

impl State {
    /// The measured size with the least cost per item (the smallest, among equals).
    fn best(&self) -> usize {
        let mut best = 0;
        for (i, m) in self.sizes.iter().enumerate() {
            let b = &self.sizes[best];
            if m.measured() && (!b.measured() || m.cost() < b.cost()) {
                best = i;
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(sizer: &Sizer, cost: impl Fn(usize) -> f64, batches: usize) -> Vec<usize> {
        (0..batches)
            .map(|_| {
                let n = sizer.limit();
                sizer.record(n, Duration::from_secs_f64(cost(n)));
                n
            })
            .collect()
    }

    #[test]
    fn sizes_are_powers_of_two_up_to_max_batch() {
        let s = Sizer::new(BatchSizing::Adaptive, 12);
        let sizes: Vec<usize> = s.lock().sizes.iter().map(|m| m.size).collect();
        assert_eq!(sizes, [1, 2, 4, 8, 12]);
        assert_eq!(Sizer::new(BatchSizing::Adaptive, 1).sizes(), 1);
    }

    #[test]
    fn a_model_that_gains_from_batching_is_served_at_the_largest_size() {
        let s = Sizer::new(BatchSizing::Adaptive, 8);
        // A fixed cost per run and a small one per item: bigger batches are cheaper.
        let chosen = feed(&s, |n| 1e-3 + 1e-5 * n as f64, 200);
        assert_eq!(
            &chosen[..4],
            [1, 1, 1, 2],
            "warm-up tries the smallest first"
        );
        assert_eq!(&chosen[12..15], [8, 8, 8], "then each size in turn");
        let settled = &chosen[100..];
        let at_8 = settled.iter().filter(|&&n| n == 8).count();
        assert!(at_8 * 16 >= settled.len() * 14, "{settled:?}");
        assert_eq!(s.report().0, 8);
    }

    #[test]
    fn a_model_that_loses_from_batching_is_served_unbatched() {
        let s = Sizer::new(BatchSizing::Adaptive, 8);
        // Slower per item in bigger batches (caches), as some CNNs are on CPU.
        let chosen = feed(&s, |n| 1e-3 * n as f64 * (1.0 + 0.1 * n as f64), 200);
        let settled = &chosen[100..];
        assert!(
            settled.iter().filter(|&&n| n == 1).count() * 16 >= settled.len() * 14,
            "{settled:?}"
        );
        assert!(settled.iter().all(|&n| n <= 2), "explores only neighbours");
        assert_eq!(s.report().0, 1);
    }

    #[test]
    fn the_choice_follows_a_change_in_the_costs() {
        let s = Sizer::new(BatchSizing::Adaptive, 8);
        feed(&s, |n| 1e-3 * n as f64 * (1.0 + 0.1 * n as f64), 100);
        assert_eq!(s.report().0, 1);
        feed(&s, |n| 1e-3 + 1e-5 * n as f64, 400);
        assert_eq!(s.report().0, 8, "{:?}", s.report());
    }

    #[test]
    fn one_slow_batch_does_not_move_the_choice() {
        let s = Sizer::new(BatchSizing::Adaptive, 8);
        feed(&s, |n| 1e-3 + 1e-5 * n as f64, 100);
        assert_eq!(s.report().0, 8);
        // The machine stalls one batch of 8 for 50 ms: the median of the last three ignores it.
        s.record(8, Duration::from_millis(50));
        assert_eq!(s.report().0, 8);
    }

    #[test]
    fn a_fixed_sizer_always_says_max_batch() {
        let s = Sizer::new(BatchSizing::Fixed, 6);
        assert!(feed(&s, |_| 1.0, 20).iter().all(|&n| n == 6));
    }
}
