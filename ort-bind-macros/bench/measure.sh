#!/usr/bin/env bash
# Measures what the macros add to a build, on the models make_models.py writes:
#   ort-bind-macros/bench/measure.sh [BENCH_DIR]        (default /tmp/ort-bind-bench)
#
# 1. the expansion functions alone (examples/expand_timing.rs, release build);
# 2. real builds of scratch crates that depend on ort-bind: a 2,000-field struct with and
#    without #[derive(OnnxBinding)] (wide.onnx), bindings!("wide.onnx"), and both macros
#    on big.onnx (1 GiB). Each crate is built once to warm up, then its source is touched
#    and it is rebuilt three times; the script prints the fastest rebuild and rustc's own
#    macro-expansion time for it (`-Z time-passes`, enabled on the stable compiler with
#    RUSTC_BOOTSTRAP=1 for this measurement only), plus the peak memory of rustc.
set -euo pipefail
BENCH=${1:-/tmp/ort-bind-bench}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
[ -f "$BENCH/wide.onnx" ] && [ -f "$BENCH/big.onnx" ] || python3 "$REPO/ort-bind-macros/bench/make_models.py" "$BENCH"

echo "== expansion functions (no rustc)"
cargo run --quiet --release --manifest-path "$REPO/Cargo.toml" -p ort-bind-macros --example expand_timing -- "$BENCH"

fields() { # $1 = prefix, $2 = count
  for i in $(seq 0 $(($2 - 1))); do echo "    pub $1_$i: Tensor<f32, (Dyn, Fix<16>)>,"; done
}

make_crate() { # $1 = name, $2 = lib.rs body
  local dir="$BENCH/crates/$1"
  mkdir -p "$dir/src"
  cat > "$dir/Cargo.toml" <<TOML
[package]
name = "$1"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
ort-bind = { path = "$REPO" }

[workspace]
TOML
  cp "$REPO/Cargo.lock" "$dir/Cargo.lock"
  printf '%s\n' "$2" > "$dir/src/lib.rs"
  ln -sf "$BENCH/wide.onnx" "$dir/wide.onnx"
  ln -sf "$BENCH/big.onnx" "$dir/big.onnx"
}

STRUCT_FIELDS="$(fields in 1000; fields out 1000)"
HEADER='#![allow(missing_docs, dead_code)]
use ort_bind::{Dyn, Fix, Tensor};'
make_crate wide_plain "$HEADER
pub struct Wide {
$STRUCT_FIELDS
}"
make_crate wide_derive "$HEADER
#[derive(ort_bind::OnnxBinding)]
#[onnx(model = \"wide.onnx\")]
pub struct Wide {
$STRUCT_FIELDS
}"
make_crate wide_bindings '#![allow(missing_docs)]
pub mod wide { ort_bind::bindings!("wide.onnx"); }'
make_crate big_derive '#![allow(missing_docs)]
use ort_bind::{Dyn, Fix, Tensor};
#[derive(ort_bind::OnnxBinding)]
#[onnx(model = "big.onnx")]
pub struct Big { pub x: Tensor<f32, (Fix<4>,)>, pub y: Tensor<f32, (Dyn,)> }
pub mod big { ort_bind::bindings!("big.onnx"); }'
make_crate big_plain '#![allow(missing_docs)]
use ort_bind::{Dyn, Fix, Tensor};
pub struct Big { pub x: Tensor<f32, (Fix<4>,)>, pub y: Tensor<f32, (Dyn,)> }'

export CARGO_TARGET_DIR="$BENCH/target"
# Every build with RUSTC_BOOTSTRAP=1 (Cargo rebuilds all dependencies when it changes) and
# without incremental compilation (so each rebuild compiles the crate in full).
export RUSTC_BOOTSTRAP=1 CARGO_INCREMENTAL=0
echo "== builds (dev profile; dependencies built once first)"
LIMIT=${LIMIT:-180}   # seconds per build; a build that takes longer is reported, not waited for
for c in wide_plain wide_derive wide_bindings big_plain big_derive; do
  dir="$BENCH/crates/$c"
  if ! (cd "$dir" && timeout "$LIMIT" cargo build --quiet --offline >/dev/null 2>&1); then
    printf '%-14s did not build within %s s\n' "$c" "$LIMIT"
    continue
  fi
  best=""; expand=""; rss=""
  for _ in 1 2 3; do
    touch "$dir/src/lib.rs"
    out=$(cd "$dir" && /usr/bin/time -f "TIME %e %M" timeout "$LIMIT" cargo rustc --quiet --offline --lib -- -Z time-passes 2>&1) || true
    t=$(echo "$out" | awk '/^TIME/ {print $2}')
    e=$(echo "$out" | awk '$NF == "expand_crate" {sub(";", "", $2); print $2}')
    m=$(echo "$out" | awk '/^TIME/ {print $3}')
    if [ -z "$best" ] || awk "BEGIN {exit !($t < $best)}"; then best=$t; expand=$e; rss=$m; fi
  done
  printf '%-14s rebuild %6.2f s   macro expansion in rustc (expand_crate) %s s   peak RSS %s MiB\n' \
    "$c" "$best" "$expand" "$((rss / 1024))"
done
