#!/usr/bin/env bash
# The one benchmark command (see BENCHMARKS.md):
#
#   scripts/bench.sh                 # everything: four workloads + metadata extraction
#   scripts/bench.sh --quick         # a short smoke run (few rounds; numbers are noisy)
#   scripts/bench.sh --no-metadata   # skip building/measuring the 1 GiB models
#   scripts/bench.sh --workloads tiny,cnn   # other flags go to ort-bind-bench
#   scripts/bench.sh serving [--quick]      # the serving figures (issue 13), with Python's
#                                           # threads row; writes target/bench/serving.md
#   scripts/bench.sh decode [--quick] [--rounds N] [--steps N] [--contexts 16,256,2048]
#                                           # the decode-loop figures (issue 21): ort-bind's
#                                           # Decoder vs `ort`, Python onnxruntime and
#                                           # onnxruntime-genai 0.18.0; writes target/bench/decode.md
#   scripts/bench.sh seq2seq [--quick] [--rounds N] [--steps N] [--contexts 16,256]
#                                           # the encoder-decoder figures (issue 32): ort-bind's
#                                           # EncoderDecoder vs `ort`, Python onnxruntime and
#                                           # onnxruntime-genai 0.18.0; writes target/bench/seq2seq.md
#
# It installs the Python side (onnxruntime==1.31.1, numpy, onnx==1.23.2) into a venv under
# target/bench/venv, checks that the committed workload models are what
# ort-bind-bench/models/make_models.py writes (light_squeezenet comes from the onnx wheel's
# backend test data), writes the 1 GiB metadata models under target/bench/models (once),
# builds ort-bind-bench in release mode and runs it. It writes target/bench/results.json,
# target/bench/results.md and target/bench/metadata.json.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
OUT="${ORT_BIND_BENCH_OUT:-$ROOT/target/bench}"
VENV="$OUT/venv"
PY="$VENV/bin/python"

METADATA=1
MODE=()
if [ "${1:-}" = serving ]; then
    MODE=(serving)
    METADATA=0
    shift
fi
DECODE=0
if [ "${1:-}" = decode ] || [ "${1:-}" = seq2seq ]; then
    MODE=("$1")
    METADATA=0
    DECODE=1
    shift
fi
ARGS=()
for a in "$@"; do
    case "$a" in
        --no-metadata) METADATA=0 ;;
        *) ARGS+=("$a") ;;
    esac
done

mkdir -p "$OUT"
if [ ! -x "$PY" ]; then
    echo "== creating $VENV"
    python3 -m venv "$VENV"
fi
if ! "$PY" - <<'PYCHECK' 2>/dev/null; then
import onnxruntime, onnx, numpy
assert onnxruntime.__version__ == "1.31.1", onnxruntime.__version__
assert onnx.__version__ == "1.23.2", onnx.__version__
PYCHECK
    echo "== installing onnxruntime==1.31.1 numpy onnx==1.23.2 into $VENV"
    "$PY" -m pip install --quiet --disable-pip-version-check "onnxruntime==1.31.1" numpy "onnx==1.23.2"
fi

if [ "$DECODE" = 1 ]; then
    if ! "$PY" -c 'import onnxruntime_genai as og; assert og.__version__ == "0.18.0", og.__version__' 2>/dev/null; then
        echo "== installing onnxruntime-genai==0.18.0 into $VENV"
        "$PY" -m pip install --quiet --disable-pip-version-check "onnxruntime==1.31.1" "onnxruntime-genai==0.18.0"
    fi
    if [ "${MODE[0]}" = decode ]; then
        echo "== checking the decoder fixtures against make_decoders.py and their greedy references"
        "$PY" ort-bind-tests/tests/fixtures/decoders/make_decoders.py --check
    else
        echo "== checking the encoder-decoder fixtures against make_seq2seq.py"
        "$PY" ort-bind-tests/tests/fixtures/pipelines/make_seq2seq.py --check
    fi
    echo "== building ort-bind-bench (release)"
    cargo build --release -p ort-bind-bench
    exec "$ROOT/target/release/ort-bind-bench" "${MODE[0]}" --python "$PY" --out "$OUT" "${ARGS[@]}"
fi

echo "== checking the committed workload models against make_models.py"
"$PY" ort-bind-bench/models/make_models.py --check

if [ "$METADATA" = 1 ]; then
    echo "== metadata models (>= 1 GiB) under $OUT/models"
    "$PY" ort-bind-bench/models/make_models.py --check --metadata "$OUT/models"
    ARGS+=(--metadata "$OUT/models")
fi

echo "== building ort-bind-bench (release)"
cargo build --release -p ort-bind-bench

echo "== running"
exec "$ROOT/target/release/ort-bind-bench" "${MODE[@]}" --python "$PY" --out "$OUT" "${ARGS[@]}"
