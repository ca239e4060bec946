#!/usr/bin/env bash
# GPU check: the CUDA tests and a small device benchmark in one command, within a time
# bound, for a machine with an NVIDIA GPU.
#
#   scripts/gpu-check.sh [SECONDS]        # default 900; nothing runs past it
#   scripts/gpu-check.sh --pack DIR       # build the binaries below into DIR (no GPU needed)
#   scripts/gpu-check.sh --prebuilt DIR [SECONDS]  # run DIR's binaries: for a GPU machine
#                                         # without cargo or network
#
# With --prebuilt, the binaries' compile-time paths must resolve on the GPU machine: run it
# from a checkout at the same path as where --pack ran, or link that path to the checkout.
#
# What it runs (log in target/gpu-check/log.txt):
#   1. ort-bind-tests/tests/cuda.rs (feature `cuda`): device memory, copies, adoption, out of memory,
#      device/stream checks, and runs through the generated bindings on the CUDA
#      execution provider (device inputs/outputs, the caller's stream, data-dependent
#      outputs, dims changes, state feed-back, pinned and host tensors, decoders in the
#      growing, shared-buffer and paged cache modes);
#   2. the runtime's CUDA tests (unit tests, and the fake-driver tests, which need no GPU);
#   3. examples/cuda_bench.rs: host-bound vs pinned vs device-bound inputs/outputs
#      (time per run, bytes copied per run).
#
# ONNX Runtime with the CUDA execution provider is taken from, in order: ORT_DYLIB_PATH;
# an onnxruntime-gpu 1.31 installed for python3; a copy in the ort-bind cache
# (~/.cache/ort-bind/onnxruntime-gpu-1.31.1, fetched once with `pip download` when the
# network allows). onnxruntime-gpu 1.31.1 is built for CUDA 13: the provider needs CUDA 13
# and cuDNN 9 libraries; NVIDIA's pip packages (nvidia-cuda-runtime, nvidia-cublas,
# nvidia-cudnn-cu13, ...) installed for python3 are put on LD_LIBRARY_PATH.
# Without any of it, the default CPU-only library is used: the tests that need the
# provider say so and skip, and the benchmark says there is nothing to measure; that is
# not a failure. The exit status is non-zero only when a test fails or the bound is hit.
set -uo pipefail
cd "$(dirname "$0")/.."

# The binaries this check runs, built by cargo here or taken from a --pack folder.
build_binaries() {
    cargo test --release -p ort-bind-tests --features cuda --test cuda --test ui_cuda --no-run &&
        cargo test --release -p ort-bind-runtime --features cuda --lib --test cuda_fake_driver --no-run &&
        cargo build --release --features cuda --example cuda_bench
}
# executable_of CARGO_ARGS...: the path of the test executable cargo builds for CARGO_ARGS.
executable_of() {
    cargo test --release --no-run --message-format=json "$@" 2>/dev/null |
        python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(m["executable"])'
}

if [[ ${1:-} == --pack ]]; then
    DIR=${2:?usage: scripts/gpu-check.sh --pack DIR}
    build_binaries || exit 1
    mkdir -p "$DIR"
    cp "$(executable_of -p ort-bind-tests --features cuda --test cuda)" "$DIR/cuda-tests"
    cp "$(executable_of -p ort-bind-runtime --features cuda --lib)" "$DIR/runtime-unit"
    cp "$(executable_of -p ort-bind-runtime --features cuda --test cuda_fake_driver)" "$DIR/runtime-fake-driver"
    cp target/release/examples/cuda_bench "$DIR/cuda-bench"
    echo "packed into $DIR (built at $PWD):"
    ls -l "$DIR"
    exit 0
fi
PREBUILT=
if [[ ${1:-} == --prebuilt ]]; then
    PREBUILT=$(cd "${2:?usage: scripts/gpu-check.sh --prebuilt DIR [SECONDS]}" && pwd)
    shift 2
fi
LIMIT=${1:-900}
START=$SECONDS
OUT=target/gpu-check
mkdir -p "$OUT"
exec > >(tee "$OUT/log.txt") 2>&1
STATUS=0

left() { echo $((LIMIT - (SECONDS - START))); }

# step NAME COMMAND...: runs COMMAND with what is left of the time bound.
step() {
    local name=$1
    shift
    local budget
    budget=$(left)
    if ((budget <= 5)); then
        echo "== $name: not run, the time bound (${LIMIT}s) is reached"
        STATUS=1
        return
    fi
    echo "== $name (at most ${budget}s)"
    timeout --kill-after=10 "$budget" "$@"
    local rc=$?
    if ((rc == 124 || rc == 137)); then
        echo "== $name: stopped at the time bound"
    fi
    if ((rc != 0)); then
        echo "== $name: FAILED (exit $rc)"
        STATUS=1
    fi
}

echo "== machine"
if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
else
    echo "nvidia-smi: not found (no NVIDIA driver on this machine?)"
fi
nproc 2>/dev/null | sed 's/^/cpus: /'

# --- ONNX Runtime with the CUDA execution provider -----------------------------------
CACHE=${ORT_BIND_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ort-bind}
GPU_ORT_DIR="$CACHE/onnxruntime-gpu-1.31.1"
GPU_ORT_LIB="$GPU_ORT_DIR/onnxruntime/capi/libonnxruntime.so.1.31.1"

python_gpu_ort() {
    python3 - <<'EOF' 2>/dev/null
import glob, os
import onnxruntime as o
if o.__version__.startswith("1.31.") and "CUDAExecutionProvider" in o.get_available_providers():
    libs = sorted(glob.glob(os.path.join(os.path.dirname(o.__file__), "capi", "libonnxruntime.so.*")))
    if libs:
        print(libs[0])
EOF
}

fetch_gpu_ort() {
    local tmp
    tmp=$(mktemp -d)
    echo "fetching onnxruntime-gpu==1.31.1 with pip download (once, into $GPU_ORT_DIR)"
    if timeout 300 python3 -m pip download --quiet --no-deps --only-binary=:all: \
        --dest "$tmp" "onnxruntime-gpu==1.31.1" && ls "$tmp"/*.whl >/dev/null 2>&1; then
        mkdir -p "$GPU_ORT_DIR.part"
        python3 -m zipfile -e "$tmp"/onnxruntime_gpu-*.whl "$GPU_ORT_DIR.part" &&
            rm -rf "$GPU_ORT_DIR" && mv "$GPU_ORT_DIR.part" "$GPU_ORT_DIR"
    else
        echo "pip download failed (no network?)"
    fi
    rm -rf "$tmp" "$GPU_ORT_DIR.part"
}

echo "== ONNX Runtime"
if [[ -n "${ORT_DYLIB_PATH:-}" ]]; then
    echo "ORT_DYLIB_PATH is set: $ORT_DYLIB_PATH"
else
    found=$(python_gpu_ort)
    if [[ -z "$found" && ! -f "$GPU_ORT_LIB" ]] && command -v nvidia-smi >/dev/null &&
        (($(left) > 400)); then
        fetch_gpu_ort
    fi
    if [[ -n "$found" ]]; then
        export ORT_DYLIB_PATH=$found
        echo "onnxruntime-gpu installed for python3: $found"
    elif [[ -f "$GPU_ORT_LIB" ]]; then
        export ORT_DYLIB_PATH=$GPU_ORT_LIB
        echo "onnxruntime-gpu from the ort-bind cache: $GPU_ORT_LIB"
    else
        echo "NO ONNX Runtime with the CUDA execution provider: using the default CPU-only"
        echo "library; tests that need the provider will say so and skip."
    fi
fi
# CUDA 13 / cuDNN 9 libraries from NVIDIA's pip packages, where installed.
nvidia_libs=$(python3 - <<'EOF' 2>/dev/null
import glob, os
try:
    import nvidia
except ImportError:
    raise SystemExit
dirs = sorted({os.path.dirname(p) for root in nvidia.__path__ for p in glob.glob(os.path.join(root, "*", "lib", "*.so*"))})
print(":".join(dirs))
EOF
)
if [[ -n "$nvidia_libs" ]]; then
    export LD_LIBRARY_PATH="$nvidia_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    echo "CUDA libraries from NVIDIA's pip packages: $nvidia_libs"
fi

# --- build, tests, benchmark ---------------------------------------------------------
if [[ -n $PREBUILT ]]; then
    echo "== prebuilt binaries from $PREBUILT"
    step "CUDA tests (ort-bind-tests/tests/cuda.rs)" bash -c "cd ort-bind-tests && '$PREBUILT/cuda-tests' \
        --nocapture --test-threads=1 2>&1 | tee '../$OUT/cuda-tests.txt'; exit \${PIPESTATUS[0]}"
    step "runtime CUDA tests (unit)" bash -c "cd ort-bind-runtime && '$PREBUILT/runtime-unit'"
    step "runtime CUDA tests (fake driver)" bash -c "cd ort-bind-runtime && '$PREBUILT/runtime-fake-driver'"
    step "device benchmark (examples/cuda_bench.rs)" "$PREBUILT/cuda-bench"
else
    step "build (release, feature cuda)" build_binaries
    step "CUDA tests (ort-bind-tests/tests/cuda.rs)" bash -c "cargo test --release -p ort-bind-tests --features cuda --test cuda \
        -- --nocapture --test-threads=1 2>&1 | tee '$OUT/cuda-tests.txt'; exit \${PIPESTATUS[0]}"
    step "runtime CUDA tests (unit, fake driver)" \
        cargo test --release -p ort-bind-runtime --features cuda --lib --test cuda_fake_driver
    step "device benchmark (examples/cuda_bench.rs)" \
        cargo run --release --features cuda --example cuda_bench
fi

echo "== summary"
if [[ -f "$OUT/cuda-tests.txt" ]]; then
    echo "tests/cuda.rs: $(grep 'test result:' "$OUT/cuda-tests.txt" | tail -1)"
    skipped=$(grep -o '[a-z0-9_]*: skipped: ' "$OUT/cuda-tests.txt" | sed 's/: skipped: //' | sort -u)
    echo "of which $(grep -c . <<<"$skipped") skipped their GPU part (see the reasons above):"
    sed '/^$/d; s/^/  /' <<<"$skipped"
fi
echo "elapsed: $((SECONDS - START))s of ${LIMIT}s; status: $([[ $STATUS == 0 ]] && echo ok || echo FAILED)"
exit $STATUS
