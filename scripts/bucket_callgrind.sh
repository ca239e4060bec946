#!/usr/bin/env bash
# Instructions a shape-bucket switch adds to a run, counted by valgrind's callgrind
# (repeatable whatever else the machine is doing): `ort-bind-bench switch-loop` runs one
# Add binding N times at [16], or switching [16] <-> [8] before every run; each mode runs
# twice (N and 2N runs) and the difference divided by N is the cost of one run, start-up
# excluded. Prints both, and their ratio (the serving table's "switch over fixed" figure,
# in instructions instead of time).
#
#   scripts/bucket_callgrind.sh [N]      # default 10000
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
N="${1:-10000}"
cargo build --release -p ort-bind-bench
BIN="$(pwd)/target/release/ort-bind-bench"
OUT="$(mktemp -d)"
refs() {
    valgrind --tool=callgrind --callgrind-out-file="$OUT/cg" "$BIN" switch-loop "$1" "$2" 2>&1 |
        sed -n 's/.*I *refs: *//p' | tr -d ','
}
declare -A per_run
for mode in fixed switch; do
    a=$(refs "$mode" "$N")
    b=$(refs "$mode" $((2 * N)))
    per_run[$mode]=$(( (b - a) / N ))
    echo "$mode: ${per_run[$mode]} instructions per run"
done
python3 -c "f, s = ${per_run[fixed]}, ${per_run[switch]}; print(f'a switch adds {s - f} instructions: {s / f:.3f}x a fixed run')"
rm -rf "$OUT"
