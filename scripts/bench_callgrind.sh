#!/usr/bin/env bash
# Deterministic cross-check of the timing benchmark: instructions per run, counted by
# valgrind's callgrind (repeatable whatever else the machine is doing).
#
#   scripts/bench_callgrind.sh               # workload tiny
#   scripts/bench_callgrind.sh tiny cnn      # several (cnn takes a few minutes under valgrind)
#
# Builds ort-bind-bench with line tables into target/bench/callgrind-target (a separate
# target dir, so the normal release build is untouched), runs `ort-bind-bench --quick
# --workloads W` under callgrind for each workload W, and prints, per Rust contender, the
# instructions of one run (fill + run + read: the contender's `iterate`, ONNX Runtime
# included) and, for ort-bind, how many of them are ONNX Runtime's `RunWithBinding`.
# valgrind replaces memcpy with a slower version of its own, so large input copies (fill)
# count more instructions than they execute natively; every contender copies the same bytes.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${ORT_BIND_BENCH_OUT:-$(pwd)/target/bench}/callgrind"
mkdir -p "$OUT"
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
WORKLOADS=("$@")
[ ${#WORKLOADS[@]} -eq 0 ] && WORKLOADS=(tiny)

CARGO_TARGET_DIR="$(pwd)/target/bench/callgrind-target" CARGO_PROFILE_RELEASE_DEBUG=line-tables-only \
    cargo build --release -p ort-bind-bench
BIN="$(pwd)/target/bench/callgrind-target/release/ort-bind-bench"

for w in "${WORKLOADS[@]}"; do
    echo "== $w under callgrind"
    valgrind --tool=callgrind --callgrind-out-file="$OUT/$w.callgrind" \
        "$BIN" --quick --workloads "$w" --out "$OUT/run-$w" >"$OUT/$w.log" 2>&1
    callgrind_annotate --tree=caller --inclusive=yes "$OUT/$w.callgrind" >"$OUT/$w.annotate" 2>/dev/null
    python3 - "$OUT/$w.annotate" "$OUT/run-$w/results.json" "$w" <<'PY'
import json, re, sys
path, results, workload = sys.argv[1], sys.argv[2], sys.argv[3]
# Every run of a contender, warm-up and validation runs included, calls its `iterate` once.
calls = {e["contender"]: e["runs_total"] for e in json.load(open(results))}
names = {"OrtBindTiny": "ort-bind", "OrtBindBig": "ort-bind", "OrtBindDynamic": "ort-bind",
         "OrtBindCnn": "ort-bind", "OrtRunBinding": "ort_run_binding", "OrtRun": "ort_run",
         "PlainLoop": "plain_loop"}
# Inlining splits a function into entries per source file; the outermost (largest) entry
# is the whole function.
cost = {}
for line in open(path, errors="replace"):
    m = re.match(r"\s*([\d,]+) \(.*?\)\s+\*\s+(.*)", line)
    if not m:
        continue
    total, what = int(m.group(1).replace(",", "")), m.group(2)
    t = re.search(r"contenders::(\w+) as ort_bind_bench::contenders::Contender>::iterate", what)
    key = names.get(t.group(1), t.group(1)) if t else (
        "ort-bind: of which RunWithBinding" if "sys::IoBinding::run_with" in what else None)
    if key:
        cost[key] = max(cost.get(key, 0), total)
base = cost.get("ort_run_binding", 0) / calls.get("ort_run_binding", 1)
for key, total in cost.items():
    per = total / calls.get(key.split(":")[0], 1)
    ratio = f"  ({per / base:.4f}x ort_run_binding)" if base and ":" not in key else ""
    print(f"{workload:8} {key:36} {per:14,.0f} instructions per run{ratio}")
PY
done
