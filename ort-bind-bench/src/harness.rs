//! Runs a workload's contenders in interleaved blocks and collects per-run timings.
//!
//! Every round runs one block of every contender, in an order that rotates from round to
//! round; a block is `warm` untimed runs and `iters` timed runs. In the first and the last
//! round a block ends with one untimed validation run whose full output is checked (its sum);
//! every run's first and last output element are checked (outside the timed window). Comparisons are paired: for each round the ratio
//! of two contenders' block medians is taken, and the median of those ratios is reported.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::Result;
use crate::alloc;
use crate::contenders::{Contender, Laps};
use crate::peer::Peer;
use crate::workloads::{Summary, Workload};

/// A contender: in this process, or in the Python peer.
pub(crate) enum Runner {
    /// A Rust contender.
    Local(Box<dyn Contender>),
    /// A Python contender, by name.
    Peer(&'static str),
}

impl Runner {
    fn name(&self) -> &'static str {
        match self {
            Runner::Local(c) => c.name(),
            Runner::Peer(name) => name,
        }
    }
}

/// Index of each phase in the sample arrays.
pub(crate) const FILL: usize = 0;
pub(crate) const RUN: usize = 1;
pub(crate) const READ: usize = 2;
pub(crate) const TOTAL: usize = 3;
/// Phase names, in index order.
pub(crate) const PHASES: [&str; 4] = ["fill", "run", "read", "total"];

/// Everything measured for one contender on one workload.
#[derive(Debug)]
pub(crate) struct Samples {
    /// Contender name.
    pub(crate) name: &'static str,
    /// Per timed run, per phase: nanoseconds.
    pub(crate) ns: [Vec<u64>; 4],
    /// Per round, per phase: the block's median.
    pub(crate) rounds: Vec<[u64; 4]>,
    /// Rust allocations over all timed runs (`None` for Python).
    pub(crate) allocations: Option<u64>,
    /// Rust allocations in timed runs whose batch was smaller than the run before, and how
    /// many such runs there were.
    pub(crate) shrink: Option<(u64, u64)>,
    /// Runs done so far (timed or not): the next run's index `k`.
    next_k: usize,
}

impl Samples {
    fn new(name: &'static str, capacity: usize, local: bool) -> Samples {
        Samples {
            name,
            ns: std::array::from_fn(|_| Vec::with_capacity(capacity)),
            rounds: Vec::new(),
            allocations: local.then_some(0),
            shrink: local.then_some((0, 0)),
            next_k: 0,
        }
    }

    /// Median of a phase over all timed runs.
    pub(crate) fn median(&self, phase: usize) -> u64 {
        median(&self.ns[phase])
    }

    /// Timed runs.
    pub(crate) fn runs(&self) -> usize {
        self.ns[TOTAL].len()
    }

    /// Runs done, timed or not (warm-up and validation runs included).
    pub(crate) fn total_runs(&self) -> usize {
        self.next_k
    }

    /// Allocations per timed run.
    pub(crate) fn allocations_per_run(&self) -> Option<f64> {
        self.allocations
            .map(|a| a as f64 / self.runs().max(1) as f64)
    }
}

/// Median of `values` (the lower middle for an even count); 0 when empty.
pub(crate) fn median(values: &[u64]) -> u64 {
    if values.is_empty() {
        return 0;
    }
    let mut v = values.to_vec();
    let mid = (v.len() - 1) / 2;
    *v.select_nth_unstable(mid).1
}

/// Median of `values`; NaN when empty.
pub(crate) fn median_f64(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Per-round ratios `a / b` of a phase's block medians.
fn round_ratios(a: &Samples, b: &Samples, phase: usize) -> Vec<f64> {
    a.rounds
        .iter()
        .zip(&b.rounds)
        .filter(|(_, rb)| rb[phase] > 0)
        .map(|(ra, rb)| ra[phase] as f64 / rb[phase] as f64)
        .collect()
}

/// Paired ratio `a / b` of a phase: the median over rounds of the ratio of block medians.
pub(crate) fn paired_ratio(a: &Samples, b: &Samples, phase: usize) -> f64 {
    median_f64(&round_ratios(a, b, phase))
}

/// The spread of the per-round ratios `a / b`: first and third quartile.
pub(crate) fn paired_quartiles(a: &Samples, b: &Samples, phase: usize) -> (f64, f64) {
    let mut r = round_ratios(a, b, phase);
    if r.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    r.sort_by(f64::total_cmp);
    let at = |q: f64| r[((r.len() - 1) as f64 * q).round() as usize];
    (at(0.25), at(0.75))
}

/// Runs every contender of `w` for `w.plan.rounds` rounds; returns their samples in the
/// order of `runners`.
pub(crate) fn run_workload(
    w: &Arc<Workload>,
    runners: &mut [Runner],
    mut peer: Option<&mut Peer>,
) -> Result<Vec<Samples>> {
    let plan = w.plan;
    let capacity = plan.rounds * plan.iters;
    let mut samples: Vec<Samples> = runners
        .iter()
        .map(|r| Samples::new(r.name(), capacity, matches!(r, Runner::Local(_))))
        .collect();
    let n = runners.len();
    for round in 0..plan.rounds {
        let validate = round == 0 || round + 1 == plan.rounds;
        for j in 0..n {
            let i = (round + j) % n;
            let s = &mut samples[i];
            match &mut runners[i] {
                Runner::Local(c) => local_block(w, c.as_mut(), s, validate)?,
                Runner::Peer(name) => {
                    let peer = peer
                        .as_deref_mut()
                        .ok_or_else(|| format!("{name} needs the Python peer"))?;
                    peer_block(w, name, peer, s, validate)?
                }
            }
        }
    }
    Ok(samples)
}

fn record_round(s: &mut Samples, from: usize) {
    let medians = std::array::from_fn(|p| median(&s.ns[p][from..]));
    s.rounds.push(medians);
}

fn local_block(w: &Workload, c: &mut dyn Contender, s: &mut Samples, validate: bool) -> Result<()> {
    let plan = w.plan;
    let mut laps = Laps::new(plan.clock);
    let name = c.name();
    for _ in 0..plan.warm {
        laps.start();
        let got = c.iterate(s.next_k, &mut laps, false)?;
        w.check(name, s.next_k, &got)?;
        s.next_k += 1;
    }
    let from = s.runs();
    for _ in 0..plan.iters {
        let k = s.next_k;
        let before = alloc::count();
        laps.start();
        let got = c.iterate(k, &mut laps, false)?;
        let allocations = alloc::count() - before;
        let phases = laps
            .phases()
            .ok_or_else(|| format!("{name} did not mark its three phases"))?;
        for (p, ns) in phases.into_iter().enumerate() {
            s.ns[p].push(ns);
        }
        if let Some(a) = s.allocations.as_mut() {
            *a += allocations;
        }
        if w.shrinks(k)
            && let Some((a, runs)) = s.shrink.as_mut()
        {
            *a += allocations;
            *runs += 1;
        }
        w.check(name, k, &got)?;
        s.next_k += 1;
    }
    if validate {
        laps.start();
        let got = c.iterate(s.next_k, &mut laps, true)?;
        w.check(name, s.next_k, &got)?;
        s.next_k += 1;
    }
    record_round(s, from);
    Ok(())
}

fn numbers(reply: &Value, key: &str) -> Result<Vec<u64>> {
    reply[key]
        .as_array()
        .ok_or_else(|| format!("the peer's reply has no `{key}` list"))?
        .iter()
        .map(|v| {
            v.as_u64()
                .ok_or_else(|| format!("`{key}` holds a non-integer").into())
        })
        .collect()
}

fn peer_block(
    w: &Workload,
    name: &'static str,
    peer: &mut Peer,
    s: &mut Samples,
    validate: bool,
) -> Result<()> {
    let plan = w.plan;
    let start = s.next_k;
    let reply = peer.request(&json!({
        "cmd": "block",
        "workload": w.name,
        "contender": name,
        "start": start,
        "warm": plan.warm,
        "iters": plan.iters,
        "validate": validate,
        "clock": plan.clock.name(),
    }))?;
    let from = s.runs();
    for (p, key) in PHASES.iter().enumerate() {
        let values = numbers(&reply, key)?;
        if values.len() != plan.iters {
            return Err(format!(
                "the peer sent {} `{key}` values for {} runs",
                values.len(),
                plan.iters
            )
            .into());
        }
        s.ns[p].extend(values);
    }
    let edges = reply["edges"]
        .as_array()
        .ok_or("the peer's reply has no `edges`")?;
    if edges.len() != plan.iters {
        return Err(format!(
            "the peer sent {} `edges` for {} runs",
            edges.len(),
            plan.iters
        )
        .into());
    }
    let float = |v: &Value| v.as_f64().map(|f| f as f32).unwrap_or(f32::NAN);
    for (i, e) in edges.iter().enumerate() {
        let k = start + plan.warm + i;
        let got = Summary {
            first: float(&e[0]),
            last: float(&e[1]),
            sum: None,
        };
        w.check(name, k, &got)?;
    }
    s.next_k = start + plan.warm + plan.iters;
    if validate {
        let v = &reply["validate"];
        let k = v["k"]
            .as_u64()
            .ok_or("the peer's reply has no validation run")? as usize;
        let got = Summary {
            first: float(&v["first"]),
            last: float(&v["last"]),
            sum: v["sum"].as_f64(),
        };
        if got.sum.is_none() {
            return Err(format!("{name}: the peer's validation run has no sum").into());
        }
        w.check(name, k, &got)?;
        s.next_k = k + 1;
    }
    record_round(s, from);
    Ok(())
}
