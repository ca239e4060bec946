//! ONNX's own backend test data through the typed bindings: every model of the
//! `simple`, `pytorch-converted`, `pytorch-operator` and `light` groups of the
//! `onnx==1.23.2` wheel goes through build-time codegen (build/conformance.rs), is compiled
//! into this binary (warnings denied), runs on the CPU through its generated `Binding`, and
//! its outputs are compared with the expected ones at the tolerance ONNX's backend runner
//! uses (rtol 1e-3, atol 1e-7).
//!
//! `cargo test --release --test conformance [-- FILTER]` prints one line per case, a table
//! per group, and `N passed, M failed` alone on a line. It fails (exit code 1) on any
//! failure not listed in `harness::KNOWN_FAILURES` with its explanation (all of them are
//! models ONNX Runtime 1.31 itself cannot load), when a listed one passes or fails
//! differently (the list must stay true), and when the test data is missing. Models codegen refuses
//! are counted and listed with codegen's reason; they do not fail the run.

#[path = "conformance/harness.rs"]
mod harness;

use harness::{Case, Tally, Verdict, explain, is_listed, python_counts, python_fails, run_case};

#[deny(warnings)]
mod simple {
    include!(concat!(env!("OUT_DIR"), "/ort-bind/conformance/simple.rs"));
}
#[deny(warnings)]
mod pytorch_converted {
    include!(concat!(
        env!("OUT_DIR"),
        "/ort-bind/conformance/pytorch_converted.rs"
    ));
}
#[deny(warnings)]
mod pytorch_operator {
    include!(concat!(
        env!("OUT_DIR"),
        "/ort-bind/conformance/pytorch_operator.rs"
    ));
}
#[deny(warnings)]
mod light {
    include!(concat!(env!("OUT_DIR"), "/ort-bind/conformance/light.rs"));
}
#[deny(warnings)]
mod node {
    include!(concat!(env!("OUT_DIR"), "/ort-bind/conformance/node.rs"));
}

/// The groups: name, why its data is missing (if it is), cases.
const GROUPS: &[(&str, Option<&str>, &[Case])] = &[
    ("simple", simple::UNAVAILABLE, simple::CASES),
    (
        "pytorch-converted",
        pytorch_converted::UNAVAILABLE,
        pytorch_converted::CASES,
    ),
    (
        "pytorch-operator",
        pytorch_operator::UNAVAILABLE,
        pytorch_operator::CASES,
    ),
    ("light", light::UNAVAILABLE, light::CASES),
    ("node", node::UNAVAILABLE, node::CASES),
];

/// The group of ONNX's per-operator tests, which Python onnxruntime is the reference for.
const NODE: &str = "node";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // libtest flags cargo may pass (`--nocapture`, `--test-threads N`, `-q`) are ignored;
    // the first other argument filters cases by substring of `group/name`.
    let mut filter = None;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        if ["--test-threads", "--skip", "--format", "--color", "-Z"].contains(&arg.as_str()) {
            rest.next();
        } else if !arg.starts_with('-') && filter.is_none() {
            filter = Some(arg.clone());
        }
    }
    if args.iter().any(|a| a == "--list") {
        for (_, _, cases) in GROUPS {
            for case in *cases {
                println!("{}/{}: test", case.group, case.name);
            }
        }
        return;
    }

    let started = std::time::Instant::now();
    let mut unexplained: Vec<String> = Vec::new();
    let mut unsupported: Vec<String> = Vec::new();
    let mut known = 0usize;
    let mut python_only_fails: Vec<String> = Vec::new();
    let mut tallies: Vec<(&str, Tally)> = Vec::new();
    for (group, missing, cases) in GROUPS {
        let mut tally = Tally::default();
        if let Some(reason) = missing {
            println!("MISSING {group}: {reason}");
            unexplained.push(format!("{group}: test data missing: {reason}"));
        }
        for case in *cases {
            let id = format!("{}/{}", case.group, case.name);
            if filter.as_ref().is_some_and(|f| !id.contains(f.as_str())) {
                continue;
            }
            let (verdict, took) = run_case(case);
            tally.add(&verdict);
            if *group == NODE {
                let python = python_fails(case.name);
                match (&verdict, python) {
                    (Verdict::Passed, None) => println!("ok          {id} ({took:.1?})"),
                    (Verdict::Passed, Some((stage, reason))) => {
                        python_only_fails.push(id.clone());
                        println!(
                            "ok          {id} ({took:.1?}) -- Python onnxruntime fails it ({stage}: {reason})"
                        );
                    }
                    (Verdict::Failed(why), Some((stage, reason))) => {
                        known += 1;
                        println!(
                            "failed      {id} (known: Python onnxruntime fails it too, {stage}: {reason}): {why}"
                        );
                    }
                    (Verdict::Failed(why), None) | (Verdict::Unsupported(why), None) => {
                        println!("FAILED      {id} (Python onnxruntime passes it): {why}");
                        unexplained.push(format!("{id}: {why}"));
                    }
                    (Verdict::Unsupported(why), Some((stage, reason))) => {
                        known += 1;
                        println!(
                            "unsupported {id} (Python onnxruntime fails it too, {stage}: {reason}): {why}"
                        );
                    }
                }
                continue;
            }
            match &verdict {
                Verdict::Passed if is_listed(&id) => {
                    println!("ok          {id} ({took:.1?}) -- but listed as a known failure");
                    unexplained.push(format!("{id} passes but is listed in KNOWN_FAILURES"));
                }
                Verdict::Passed => println!("ok          {id} ({took:.1?})"),
                Verdict::Failed(why) => match explain(&id, why) {
                    Some(because) => {
                        known += 1;
                        println!("failed      {id} (known: {because}): {why}");
                    }
                    None => {
                        println!("FAILED      {id}: {why}");
                        unexplained.push(format!("{id}: {why}"));
                    }
                },
                Verdict::Unsupported(why) => {
                    println!("unsupported {id}: {why}");
                    unsupported.push(format!("{id}: {why}"));
                }
            }
        }
        tallies.push((group, tally));
    }

    println!();
    println!(
        "{:<20} {:>6} {:>6} {:>11}",
        "group", "passed", "failed", "unsupported"
    );
    let mut total = Tally::default();
    for (group, t) in &tallies {
        println!(
            "{group:<20} {:>6} {:>6} {:>11}",
            t.passed, t.failed, t.unsupported
        );
        total.passed += t.passed;
        total.failed += t.failed;
        total.unsupported += t.unsupported;
    }
    println!(
        "{:<20} {:>6} {:>6} {:>11}",
        "total", total.passed, total.failed, total.unsupported
    );
    if !unsupported.is_empty() {
        println!("\nunsupported (codegen refuses these models; counted, not run):");
        for u in &unsupported {
            println!("  {u}");
        }
    }
    if let Some((_, t)) = tallies.iter().find(|(g, _)| *g == NODE) {
        let (total, python_failed) = python_counts();
        println!(
            "\nnode group (ONNX's per-operator tests; Python onnxruntime 1.31.1 passes {} of {total}):",
            total - python_failed
        );
        println!(
            "node: {} passed, {} failed",
            t.passed,
            t.failed + t.unsupported
        );
        if !python_only_fails.is_empty() {
            println!(
                "{} node cases pass here that Python onnxruntime fails: {}",
                python_only_fails.len(),
                python_only_fails.join(", ")
            );
        }
        println!(
            "node cases: {} (tests/reference/node_reference.py takes this folder)",
            env!("ORT_BIND_NODE_CASES")
        );
    }
    println!("\nconformance took {:.1?}", started.elapsed());
    println!("{} passed, {} failed", total.passed, total.failed);
    println!(
        "{} of the failures are known ONNX Runtime limitations (listed above); {} unexplained",
        known,
        unexplained.len()
    );
    println!("{} unsupported", total.unsupported);
    if !unexplained.is_empty() {
        eprintln!("\nunexplained failures:");
        for u in &unexplained {
            eprintln!("  {u}");
        }
        std::process::exit(1);
    }
}
