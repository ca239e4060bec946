//! Results: the printed tables, `results.json` and `results.md`.

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::harness::{FILL, READ, RUN, Samples, TOTAL, paired_quartiles, paired_ratio};
use crate::metadata::Measure;
use crate::workloads::Workload;

/// One workload's results.
#[derive(Debug)]
pub(crate) struct WorkloadResult {
    /// Name (`tiny`, ...).
    pub(crate) name: &'static str,
    /// What it runs.
    pub(crate) title: String,
    /// Rounds and timed runs per block.
    pub(crate) rounds: usize,
    /// Timed runs per block.
    pub(crate) iters: usize,
    /// The clock the phases were timed with.
    pub(crate) clock: &'static str,
    /// What one clock reading costs (included in every phase).
    pub(crate) clock_overhead_ns: u64,
    /// Per contender.
    pub(crate) samples: Vec<Samples>,
}

impl WorkloadResult {
    pub(crate) fn new(w: &Workload, samples: Vec<Samples>) -> WorkloadResult {
        WorkloadResult {
            name: w.name,
            title: w.title.clone(),
            rounds: w.plan.rounds,
            iters: w.plan.iters,
            clock: match w.plan.clock {
                crate::contenders::Clock::Wall => "wall-clock time",
                crate::contenders::Clock::ThreadCpu => "CPU time of the running thread",
            },
            clock_overhead_ns: w.plan.clock.overhead_ns(),
            samples,
        }
    }

    /// The samples of `contender`, if it ran.
    pub(crate) fn get(&self, contender: &str) -> Option<&Samples> {
        self.samples.iter().find(|s| s.name == contender)
    }
}

/// Nanoseconds, readably.
pub(crate) fn fmt_ns(ns: u64) -> String {
    match ns {
        0..10_000 => format!("{ns} ns"),
        10_000..1_000_000 => format!("{:.1} µs", ns as f64 / 1e3),
        _ => format!("{:.3} ms", ns as f64 / 1e6),
    }
}

fn fmt_allocs(s: &Samples) -> String {
    match s.allocations_per_run() {
        None => "n/a".into(),
        Some(a) if a == a.trunc() => format!("{a:.0}"),
        Some(a) => format!("{a:.2}"),
    }
}

/// A markdown table of one workload: medians per phase, allocations, and paired ratios
/// of ort-bind against each contender.
pub(crate) fn table(r: &WorkloadResult) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "### `{}`: {} ({} rounds x {} timed runs per contender; {})\n",
        r.name, r.title, r.rounds, r.iters, r.clock
    );
    let _ = writeln!(
        out,
        "Reading this clock costs about {} (median of back-to-back reads); every phase includes about one reading.\n",
        fmt_ns(r.clock_overhead_ns)
    );
    let _ = writeln!(
        out,
        "| contender | fill | run | read | total | allocations/run | ort-bind / this (total, paired) | ort-bind / this (run phase, paired) |"
    );
    let _ = writeln!(
        out,
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    let ours = r.get("ort-bind");
    for s in &r.samples {
        let ratio = |phase| match ours {
            Some(o) if o.name != s.name => format!("{:.2}x", paired_ratio(o, s, phase)),
            _ => "—".into(),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            s.name,
            fmt_ns(s.median(FILL)),
            fmt_ns(s.median(RUN)),
            fmt_ns(s.median(READ)),
            fmt_ns(s.median(TOTAL)),
            fmt_allocs(s),
            ratio(TOTAL),
            ratio(RUN),
        );
    }
    if let Some(o) = ours
        && let Some((allocs, runs)) = o.shrink
        && runs > 0
    {
        let _ = writeln!(
            out,
            "\nort-bind allocations in the {runs} timed runs whose batch shrank: {allocs}."
        );
    }
    out
}

/// One target and whether it was met.
#[derive(Debug)]
pub(crate) struct Target {
    /// What is compared.
    pub(crate) what: String,
    /// Goal, as text.
    pub(crate) goal: String,
    /// Measured value, as text.
    pub(crate) got: String,
    /// Met?
    pub(crate) met: Option<bool>,
}

/// Checks the targets against the results.
pub(crate) fn targets(results: &[WorkloadResult]) -> Vec<Target> {
    let find = |w: &str| results.iter().find(|r| r.name == w);
    let mut out = Vec::new();
    let mut ratio_target =
        |w: &str, a: &str, b: &str, phase: usize, phase_name: &str, max: f64, what: String| {
            let got = find(w).and_then(|r| {
                let (a, b) = (r.get(a)?, r.get(b)?);
                Some((paired_ratio(a, b, phase), paired_quartiles(a, b, phase)))
            });
            out.push(Target {
                what,
                goal: format!("<= {max:.2}x ({phase_name})"),
                got: got.map_or("not measured".into(), |(g, (q1, q3))| {
                    format!("{g:.3}x (rounds' quartiles {q1:.3}-{q3:.3})")
                }),
                met: got.map(|(g, _)| g <= max),
            });
        };
    ratio_target(
        "tiny",
        "ort-bind",
        "ort_run_binding",
        TOTAL,
        "total",
        0.85,
        "tiny: ort-bind time / raw ort run_binding time".into(),
    );
    ratio_target(
        "cnn",
        "ort-bind",
        "ort_run_binding",
        TOTAL,
        "total",
        1.00,
        "cnn: ort-bind time / raw ort run_binding time".into(),
    );
    ratio_target(
        "tiny",
        "ort-bind",
        "python_iobinding",
        TOTAL,
        "total",
        1.0 / 1.8,
        "tiny: ort-bind time / Python run_with_iobinding time (>= 1.8x faster)".into(),
    );
    ratio_target(
        "big",
        "ort-bind",
        "plain_loop",
        RUN,
        "run phase",
        1.15,
        "big: ort-bind run / plain Rust loop".into(),
    );
    for r in results {
        if let Some(o) = r.get("ort-bind") {
            let a = o.allocations_per_run();
            out.push(Target {
                what: format!("{}: ort-bind Rust allocations per steady-state run", r.name),
                goal: "0".into(),
                got: a.map_or("not counted".into(), |a| format!("{a}")),
                met: a.map(|a| a == 0.0),
            });
            if let Some((allocs, runs)) = o.shrink
                && runs > 0
            {
                out.push(Target {
                    what: format!(
                        "{}: ort-bind allocations in runs where the batch shrank",
                        r.name
                    ),
                    goal: "0".into(),
                    got: format!("{allocs} in {runs} runs"),
                    met: Some(allocs == 0),
                });
            }
        }
    }
    out
}

/// Markdown list of targets.
pub(crate) fn targets_table(targets: &[Target]) -> String {
    let mut out = String::from("| target | goal | measured | met |\n| --- | --- | --- | --- |\n");
    for t in targets {
        let met = match t.met {
            Some(true) => "yes",
            Some(false) => "**no**",
            None => "not measured",
        };
        let _ = writeln!(out, "| {} | {} | {} | {} |", t.what, t.goal, t.got, met);
    }
    out
}

/// Markdown table of the metadata measurements.
pub(crate) fn metadata_table(m: &[Measure], sizes: &[(String, u64)]) -> String {
    let mut out = String::new();
    for (name, bytes) in sizes {
        let _ = writeln!(
            out,
            "- `{name}`: {:.2} GiB on disk",
            *bytes as f64 / (1u64 << 30) as f64
        );
    }
    out.push_str("\n| model | probe | median time | peak RSS | RSS before | reps |\n| --- | --- | ---: | ---: | ---: | ---: |\n");
    let mib = |k: Option<u64>| k.map_or("?".into(), |k| format!("{:.1} MiB", k as f64 / 1024.0));
    for x in m {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} | {} |",
            x.model,
            x.probe,
            fmt_ns(x.median_ns),
            mib(x.peak_rss_kib),
            mib(x.baseline_rss_kib),
            x.reps
        );
    }
    out
}

/// The entries of `results.json`.
pub(crate) fn results_json(results: &[WorkloadResult]) -> Value {
    let mut entries = Vec::new();
    for r in results {
        for s in &r.samples {
            entries.push(json!({
                "workload": r.name,
                "contender": s.name,
                "median_ns": s.median(TOTAL),
                "allocations_per_run": s.allocations_per_run(),
                "fill_ns": s.median(FILL),
                "run_ns": s.median(RUN),
                "read_ns": s.median(READ),
                "runs": s.runs(),
                "runs_total": s.total_runs(),
            }));
        }
    }
    Value::Array(entries)
}

/// Per workload and contender, every round's block medians `[fill, run, read, total]` in
/// nanoseconds: what the paired ratios are computed from (`samples.json`).
pub(crate) fn rounds_json(results: &[WorkloadResult]) -> Value {
    let mut out = serde_json::Map::new();
    for r in results {
        let per: serde_json::Map<String, Value> = r
            .samples
            .iter()
            .map(|s| (s.name.to_owned(), json!(s.rounds)))
            .collect();
        out.insert(r.name.to_owned(), Value::Object(per));
    }
    Value::Object(out)
}
