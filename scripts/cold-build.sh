#!/usr/bin/env bash
# Cold release builds of a user's app, side by side: the same small program on ort-bind
# (one model through build.rs, one through bindings!, one derive, plus an `embed` binary)
# and on `ort` alone (the same three runs, and a binary with the model embedded). Each round builds both from empty target folders, one after the
# other (alternating which goes first); prints seconds and crates compiled, checks the ort-bind app's dependency tree,
# and runs its binaries copied away from the crate; ends with each round's ratio and their median.
#
#   scripts/cold-build.sh [ROUNDS]      (default 2; needs the crates in the local registry)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
rounds="${1:-2}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

for app in userapp ortapp; do
    cp -r "$repo/scripts/cold-build/$app" "$work/$app"
    mkdir -p "$work/$app/models"
    cp "$repo/examples/models/add.onnx" "$repo/examples/models/dynamic.onnx" "$work/$app/models/"
    cp "$repo/Cargo.lock" "$work/$app/Cargo.lock"
done
cat > "$work/userapp/Cargo.toml" <<TOML
[package]
name = "userapp"
version = "0.1.0"
edition = "2024"

[dependencies]
ort-bind = { path = "$repo" }

[build-dependencies]
ort-bind-codegen = { path = "$repo/ort-bind-codegen" }
TOML
cat > "$work/ortapp/Cargo.toml" <<TOML
[package]
name = "ortapp"
version = "0.1.0"
edition = "2024"

[dependencies]
ort = { version = "=2.0.0-rc.15", default-features = false, features = ["std", "load-dynamic", "api-31", "half"] }
TOML

echo "| round | app | seconds | CPU seconds | crates compiled | load |"
echo "| --- | --- | ---: | ---: | ---: | ---: |"
for round in $(seq 1 "$rounds"); do
    # Alternate which goes first: the first build of a round also warms the page cache.
    order="ortapp userapp"
    if [ $((round % 2)) -eq 0 ]; then order="userapp ortapp"; fi
    for app in $order; do
        rm -rf "$work/target-$app"
        start=$(date +%s.%N)
        # CPU seconds (user + system, all of cargo's processes): less disturbed by other
        # work on the machine than wall time.
        cpu0=$(awk '{print $14 + $15 + $16 + $17}' /proc/$$/stat)
        (cd "$work/$app" && CARGO_TARGET_DIR="$work/target-$app" cargo build --release --offline 2>"$work/$app.log")
        end=$(date +%s.%N)
        cpu1=$(awk '{print $14 + $15 + $16 + $17}' /proc/$$/stat)
        crates=$(grep -c Compiling "$work/$app.log")
        secs=$(echo "$end - $start" | bc)
        printf '| %s | %s | %.1f | %.1f | %s | %s |\n' "$round" "$app" "$secs" \
            "$(echo "($cpu1 - $cpu0) / $(getconf CLK_TCK)" | bc -l)" "$crates" "$(cut -d' ' -f1 /proc/loadavg)"
        echo "$round $app $secs" >>"$work/seconds"
    done
done

# The ratio of each round (ort-bind app / ort app, wall time), and their median.
echo
awk '{ t[$1, $2] = $3; if ($1 > n) n = $1 }
     END {
         for (r = 1; r <= n; r++) { q[r] = t[r, "userapp"] / t[r, "ortapp"]; printf "round %d: %.2fx\n", r, q[r] }
         for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (q[j] < q[i]) { x = q[i]; q[i] = q[j]; q[j] = x }
         m = (n % 2) ? q[(n + 1) / 2] : (q[n / 2] + q[n / 2 + 1]) / 2
         printf "ort-bind app / ort app, cold build: median %.2fx over %d rounds (%.2f-%.2fx)\n", m, n, q[1], q[n]
     }' "$work/seconds"

echo
unwanted=$(cd "$work/userapp" && cargo tree --offline -e normal,build | grep -cE 'clap|libc|memmap2|npyz|prettyplease|prost|serde|thiserror|zip' || true)
echo "clap/libc/memmap2/npyz/prettyplease/prost/serde/thiserror/zip in the ort-bind app's tree: $unwanted"
if [ "$unwanted" -ne 0 ]; then
    (cd "$work/userapp" && cargo tree --offline -e normal,build | grep -E 'clap|libc|memmap2|npyz|prettyplease|prost|serde|thiserror|zip')
    exit 1
fi

# Deployed: the binary beside its models/ in an empty folder, the crate's models gone.
mkdir -p "$work/deployed/models" "$work/alone"
cp "$work/target-userapp/release/userapp" "$work/deployed/"
cp "$work/userapp/models/"*.onnx "$work/deployed/models/"
cp "$work/target-userapp/release/embedded" "$work/alone/"
rm -rf "$work/userapp/models"
(cd "$work/deployed" && ./userapp)
(cd "$work/alone" && ./embedded)
