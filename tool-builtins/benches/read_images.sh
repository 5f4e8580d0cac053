#!/usr/bin/env bash
# Benchmark of `read_images` (issue 16, "Done means"): one call on 16 JPEGs of
# 4000 × 3000 px with noisy content, grid layout. Target: under 1.5 s wall
# time and under 400 MB peak memory on the 2-core machine, decoding spread
# over the cores.
#
# The JPEGs (~16 × 3 MB) are generated once into
# $CARGO_TARGET_DIR/read-images-bench and reused. The call runs in a fresh
# process of the `read_images_bench` example (release build) under
# /usr/bin/time -v: its own line gives the wall time of the call, time's
# "Maximum resident set size" the peak memory of the whole process. Each of
# RUNS runs (default 3) is printed, with the CPU time and the load average:
# on a loaded machine the wall time says little, CPU time / cores is the
# floor the call reaches on an idle one. `read_images_bench stages DIR` times
# one decode and one scaling. Not run by `cargo test` or CI.
#
# Usage: tool-builtins/benches/read_images.sh      (RUNS=N to change the count)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
case "$TARGET" in /*) ;; *) TARGET=$ROOT/$TARGET ;; esac
WORK=$TARGET/read-images-bench
RUNS=${RUNS:-3}

cargo build --release -q -p tool-builtins --example read_images_bench
BIN=$TARGET/release/examples/read_images_bench
"$BIN" generate "$WORK" 16
echo "inputs: $(ls "$WORK"/*.jpg | wc -l) JPEGs, $(du -sh "$WORK" | cut -f1) in $WORK; $(nproc) cores"
for i in $(seq "$RUNS"); do
    /usr/bin/time -v "$BIN" run "$WORK" 2> "$WORK/time.txt"
    rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$WORK/time.txt")
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$WORK/time.txt")
    user=$(awk -F': ' '/User time/ {print $2}' "$WORK/time.txt")
    sys=$(awk -F': ' '/System time/ {print $2}' "$WORK/time.txt")
    echo "run $i: process wall $wall, CPU ${user} s user + ${sys} s sys, peak RSS $((rss / 1024)) MB, load $(cut -d' ' -f1 /proc/loadavg)"
done
