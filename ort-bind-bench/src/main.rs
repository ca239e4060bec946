//! ort-bind's benchmark harness: ort-bind against raw `ort` (I/O binding and `run`),
//! Python onnxruntime (`run` and `run_with_iobinding`) and, for the memory-bound workload,
//! a plain Rust loop, all paired in one run. `scripts/bench.sh` is the one command that
//! installs the Python side and runs this; see BENCHMARKS.md for what is measured.
//!
//! ```text
//! ort-bind-bench [--python PY] [--peer SCRIPT] [--out DIR] [--workloads tiny,big,cnn,dynamic]
//!                [--metadata DIR] [--quick]
//! ort-bind-bench switch-loop fixed|switch RUNS    (for scripts/bucket_callgrind.sh)
//! ort-bind-bench serving [--python PY] [--peer SCRIPT] [--out DIR] [--quick] [--threads-only]
//!                # the serving figures (see `serving.rs`)
//! ort-bind-bench batching [--quick] [--rounds N] [--out DIR]
//!                # adaptive vs fixed vs unbatched vs `ort` (see `batching.rs`)
//! ort-bind-bench seq2seq [--python PY] [--no-genai] [--out DIR] [--only speech,marian]
//!                [--contexts 16,256] [--rounds N] [--steps N] [--warmup N] [--quick]
//!                # encoder-decoder generation vs `ort`, Python, genai (see `seq2seq.rs`)
//! ort-bind-bench argmax [--rounds N]
//!                # greedy selection: decode::argmax vs the one-pass loop (see `argmax.rs`)
//! ort-bind-bench speculative [--rounds N] [--k 3 | --k 2,3,4,6] [--steps N] [--mode growing|shared|both]
//!                # speculative vs plain greedy decoding (see `speculative.rs`)
//! ort-bind-bench beam [--rounds N] [--beams 4] [--max-length 140] [--python PY]
//!                # beam search, both cache modes, vs onnxruntime-genai's (see `beam.rs`)
//! ort-bind-bench rows [--rounds N] [--requests 1,4,8,16] [--new N] [--model target|gqa_f32|mha_concat]
//!                # continuous batching vs one request after another (see `rows.rs`)
//! ort-bind-bench paged [--rounds N] [--requests N] [--memory POSITIONS] [--capacity N]
//!                # continuous batching in equal cache memory: paged vs shared buffer (see `paged.rs`)
//! ```

mod argmax;
mod batching;
mod beam;
mod contenders;
mod decode;
mod decode_floor;
mod harness;
mod metadata;
mod paged;
mod peer;
mod report;
mod rows;
mod seq2seq;
mod serving;
mod speculative;
mod workloads;

use std::path::{Path, PathBuf};
use std::sync::Arc;

// The counting allocator (one home for the workspace: `ort-bind-testkit`), so the harness
// can report how many allocations each contender makes per run: every allocation made
// through Rust's global allocator, on any thread (ort-bind's, the `ort` crate's, this
// harness's, which allocates nothing inside a timed iteration); ONNX Runtime allocates
// through its own C++ allocators and is not counted.
use ort_bind_testkit::alloc;

use contenders::Clock;
use harness::Runner;
use workloads::{Plan, Workload};

#[global_allocator]
static GLOBAL: alloc::Counting = alloc::Counting;

/// Errors of the harness: reported and exit 1.
type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

#[derive(Debug)]
struct Args {
    python: Option<PathBuf>,
    peer: PathBuf,
    out: PathBuf,
    workloads: Vec<String>,
    metadata: Option<PathBuf>,
    quick: bool,
    threads_only: bool,
}

const USAGE: &str = "usage: ort-bind-bench [--python PY] [--peer SCRIPT] [--out DIR] \
[--workloads tiny,big,cnn,dynamic] [--metadata DIR] [--quick] [--threads-only (serving)]";

fn parse_args(mut argv: impl Iterator<Item = String>) -> Result<Args> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let mut args = Args {
        python: None,
        peer: root.join("scripts/bench_peer.py"),
        out: root.join("target/bench"),
        workloads: ["tiny", "big", "cnn", "dynamic"].map(String::from).to_vec(),
        metadata: None,
        quick: false,
        threads_only: false,
    };
    while let Some(a) = argv.next() {
        let mut value = |name: &str| {
            argv.next()
                .ok_or_else(|| format!("{name} needs a value\n{USAGE}"))
        };
        match a.as_str() {
            "--python" => args.python = Some(value("--python")?.into()),
            "--peer" => args.peer = value("--peer")?.into(),
            "--out" => args.out = value("--out")?.into(),
            "--workloads" => {
                args.workloads = value("--workloads")?
                    .split(',')
                    .map(str::to_owned)
                    .collect();
            }
            "--metadata" => args.metadata = Some(value("--metadata")?.into()),
            "--quick" => args.quick = true,
            "--threads-only" => args.threads_only = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument `{other}`\n{USAGE}").into()),
        }
    }
    for w in &args.workloads {
        if !["tiny", "big", "cnn", "dynamic"].contains(&w.as_str()) {
            return Err(format!("unknown workload `{w}` (tiny, big, cnn, dynamic)").into());
        }
    }
    Ok(args)
}

fn plan(workload: &str, quick: bool) -> Plan {
    let full = match workload {
        "tiny" => Plan {
            rounds: 40,
            iters: 2000,
            warm: 200,
            clock: Clock::Wall,
        },
        // One timed run per block: the machines these run on are shared and their noise
        // comes in bursts longer than a run, so pairs of adjacent single runs compare best.
        "big" => Plan {
            rounds: 40,
            iters: 1,
            warm: 1,
            clock: Clock::ThreadCpu,
        },
        "cnn" => Plan {
            rounds: 150,
            iters: 1,
            warm: 1,
            clock: Clock::ThreadCpu,
        },
        _ => Plan {
            rounds: 40,
            iters: 240,
            warm: 16,
            clock: Clock::Wall,
        },
    };
    if quick {
        Plan {
            rounds: full.rounds.min(3),
            iters: full.iters.div_ceil(10),
            warm: full.warm.div_ceil(10),
            clock: full.clock,
        }
    } else {
        full
    }
}

fn make_workload(name: &str, quick: bool) -> Result<Workload> {
    let p = plan(name, quick);
    Ok(match name {
        "tiny" => Workload::tiny(p),
        "big" => Workload::big(p),
        "dynamic" => Workload::dynamic(p),
        _ => Workload::cnn(p)?,
    })
}

fn runners(w: &Arc<Workload>, python: bool) -> Result<Vec<Runner>> {
    use contenders::{OrtRun, OrtRunBinding, PlainLoop, ort_bind_for};
    let mut r = vec![
        Runner::Local(ort_bind_for(w)?),
        Runner::Local(Box::new(OrtRunBinding::new(w.clone())?)),
        Runner::Local(Box::new(OrtRun::new(w.clone())?)),
    ];
    if python {
        r.push(Runner::Peer("python_run"));
        r.push(Runner::Peer("python_iobinding"));
    }
    if w.name == "big" {
        r.push(Runner::Local(Box::new(PlainLoop::new(w.clone())?)));
    }
    Ok(r)
}

/// The CPU, cores and load average, in one line for reports.
pub(crate) fn loadavg_note() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|l| l.split_once(':'))
        .map_or("unknown CPU".to_owned(), |(_, v)| v.trim().to_owned());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!(
        "{cpu}, {cores} cores, load average {} at the end",
        loadavg()
    )
}

/// The load average (1, 5, 15 minutes), as `/proc/loadavg` shows it.
pub(crate) fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

fn machine(ort_version: &str, python_ort: Option<&str>, load: (&str, &str)) -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|l| l.split_once(':'))
        .map_or("unknown".to_owned(), |(_, v)| v.trim().to_owned());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem_gib = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        .map_or("?".to_owned(), |kib| {
            format!("{:.0}", kib / (1024.0 * 1024.0))
        });
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let rustc = std::process::Command::new("rustc")
        .arg("-V")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    format!(
        "- CPU: {cpu}, {cores} cores available to the process; {mem_gib} GiB RAM; Linux {}\n\
         - ONNX Runtime {ort_version} (Rust: loaded by ort-bind; `ort` 2.0.0-rc.15); Python onnxruntime {}\n\
         - {rustc}, release profile; one intra-op thread everywhere, graph optimisations on (all); \
         plain loop compiled for {}\n\
         - load average (1/5/15 min) at the start: {}; after the runtime workloads: {} (other work shares the machine)\n",
        kernel.trim(),
        python_ort.unwrap_or("not run"),
        contenders::Isa::detect().name(),
        load.0,
        load.1,
    )
}

fn run() -> Result<()> {
    let mut argv = std::env::args().skip(1).peekable();
    if argv.peek().map(String::as_str) == Some("probe") {
        argv.next();
        let kind = argv.next().ok_or("probe KIND PATH REPS")?;
        let path: PathBuf = argv.next().ok_or("probe KIND PATH REPS")?.into();
        let reps = argv.next().and_then(|r| r.parse().ok()).unwrap_or(5);
        return metadata::probe(&kind, &path, reps);
    }
    if argv.peek().map(String::as_str) == Some("switch-loop") {
        argv.next();
        let mode = argv.next().ok_or("switch-loop fixed|switch RUNS")?;
        let runs = argv
            .next()
            .and_then(|r| r.parse().ok())
            .ok_or("switch-loop fixed|switch RUNS")?;
        ort_bind_runtime::library::init()?;
        return serving::switch_loop(&mode, runs);
    }
    if argv.peek().map(String::as_str) == Some("beam") {
        argv.next();
        return beam::main(argv);
    }
    if argv.peek().map(String::as_str) == Some("paged") {
        argv.next();
        return paged::main(argv);
    }
    if argv.peek().map(String::as_str) == Some("rows") {
        argv.next();
        return rows::main(argv);
    }
    if argv.peek().map(String::as_str) == Some("speculative") {
        argv.next();
        return speculative::main(argv);
    }
    if argv.peek().map(String::as_str) == Some("argmax") {
        argv.next();
        return argmax::main(argv);
    }
    if argv.peek().map(String::as_str) == Some("batching") {
        argv.next();
        return batching::main(argv);
    }
    if argv.peek().map(String::as_str) == Some("decode") {
        argv.next();
        return decode::main(argv);
    }
    if argv.peek().map(String::as_str) == Some("seq2seq") {
        argv.next();
        return seq2seq::main(argv);
    }
    if argv.peek().map(String::as_str) == Some("serving") {
        argv.next();
        let args = parse_args(argv)?;
        ort_bind_runtime::library::init()?;
        let python = args.python.as_deref().map(|py| (py, args.peer.as_path()));
        return serving::run(&args.out, args.quick, args.threads_only, python);
    }
    let args = parse_args(argv)?;
    std::fs::create_dir_all(&args.out)?;
    let load_start = loadavg();
    let lib = ort_bind_runtime::library::init()?;
    println!(
        "ONNX Runtime {} from {}",
        lib.version(),
        lib.path().display()
    );

    let mut peer = match &args.python {
        Some(py) => Some(peer::Peer::spawn(py, &args.peer)?),
        None => {
            println!("no --python given: the Python contenders are skipped");
            None
        }
    };
    let mut python_ort = None;
    let mut results = Vec::new();
    for name in &args.workloads {
        let w = Arc::new(make_workload(name, args.quick)?);
        println!("\n{}: {} ...", w.name, w.title);
        if let Some(p) = peer.as_mut() {
            let files = w.write_inputs(&args.out.join("inputs"))?;
            python_ort = Some(p.setup(&w, &files)?);
        }
        let mut rs = runners(&w, peer.is_some())?;
        let samples = harness::run_workload(&w, &mut rs, peer.as_mut())?;
        drop(rs);
        if let Some(p) = peer.as_mut() {
            p.drop_workload(&w)?;
        }
        let r = report::WorkloadResult::new(&w, samples);
        print!("\n{}", report::table(&r));
        results.push(r);
    }

    let targets = report::targets(&results);
    println!("\n### Targets\n\n{}", report::targets_table(&targets));

    let mut md = String::new();
    md.push_str("## Machine\n\n");
    md.push_str(&machine(
        lib.version(),
        python_ort.as_deref(),
        (&load_start, &loadavg()),
    ));
    md.push_str("\n## Runtime\n\nMedian per run; ratios are ort-bind's time over the contender's, paired per round (below 1: ort-bind is faster).\n\n");
    for r in &results {
        md.push_str(&report::table(r));
        md.push('\n');
    }
    md.push_str("### Targets\n\n");
    md.push_str(&report::targets_table(&targets));

    if let Some(dir) = &args.metadata {
        println!("\nmetadata extraction on {} ...", dir.display());
        let py = args.python.as_deref().map(|p| (p, args.peer.as_path()));
        let m = metadata::measure(dir, py, args.quick)?;
        let sizes: Vec<(String, u64)> = [
            "weights_1gib.onnx",
            "weights_1gib_external.onnx",
            "weights_1gib_external.onnx.data",
        ]
        .iter()
        .filter_map(|f| Some((f.to_string(), std::fs::metadata(dir.join(f)).ok()?.len())))
        .collect();
        let table = report::metadata_table(&m, &sizes);
        println!("\n{table}");
        md.push_str("\n## Metadata extraction (build time)\n\n");
        md.push_str(&table);
        let json = serde_json::Value::Array(m.iter().map(metadata::Measure::to_json).collect());
        std::fs::write(
            args.out.join("metadata.json"),
            serde_json::to_string_pretty(&json)?,
        )?;
    }

    let json = report::results_json(&results);
    std::fs::write(
        args.out.join("results.json"),
        serde_json::to_string_pretty(&json)?,
    )?;
    std::fs::write(args.out.join("results.md"), &md)?;
    std::fs::write(
        args.out.join("rounds.json"),
        serde_json::to_string(&report::rounds_json(&results))?,
    )?;
    if let Some(p) = &peer {
        println!("(Python peer: {})", p.python().display());
    }
    println!(
        "\nwrote {} and {}",
        args.out.join("results.json").display(),
        args.out.join("results.md").display()
    );
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("ort-bind-bench: {e}");
        std::process::exit(1);
    }
}
