#!/usr/bin/env bash
# Indexed search benchmark (issue 29): makes a corpus of MB megabytes
# (default 1024) with the shared generator (/work/shared/bench/make-corpus,
# or GENERATOR=path), runs benches/index.rs on it (release build), prints
# its report and deletes the corpus (KEEP=1 keeps it; CORPUS=dir uses an
# existing one and never deletes it). Needs rg and python3; refuses to
# start with less than 3x MB of free disk. Not run by `cargo test`.
#
# Usage: tool-builtins/benches/index.sh     (MB=N, RUNS=N, CORPUS=dir, KEEP=1,
#        PATTERNS=file: other selective patterns, e.g. benches/selective_patterns_rust.txt
#        with CORPUS a copy of ~/.cargo/registry/src)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
case "$TARGET" in /*) ;; *) TARGET=$ROOT/$TARGET ;; esac
MB=${MB:-1024}
GENERATOR=${GENERATOR:-$ROOT/../shared/bench/make-corpus}
[ -f "$GENERATOR" ] || GENERATOR=/work/shared/bench/make-corpus
for bin in rg python3; do
    command -v "$bin" >/dev/null 2>&1 || { echo "$bin is required (apt-get install -y ripgrep)" >&2; exit 2; }
done

made=
if [ -z "${CORPUS:-}" ]; then
    mkdir -p "$TARGET/index-bench"
    free_mb=$(df -Pm "$TARGET/index-bench" | awk 'NR==2 {print $4}')
    if [ "$free_mb" -lt $((MB * 3)) ]; then
        echo "only $free_mb MB free; the corpus needs $MB MB and room beside it" >&2
        exit 2
    fi
    CORPUS=$TARGET/index-bench/corpus-$MB
    rm -rf "$CORPUS"
    python3 "$GENERATOR" "$CORPUS" --mb "$MB" >&2
    made=1
fi
cleanup() {
    if [ -n "$made" ] && [ -z "${KEEP:-}" ]; then rm -rf "$CORPUS"; fi
}
trap cleanup EXIT

# The bench runs in the package's folder: a relative PATTERNS is taken from here.
if [ -n "${PATTERNS:-}" ]; then
    PATTERNS=$(realpath -- "$PATTERNS")
    export PATTERNS
fi
CORPUS=$CORPUS cargo bench --quiet -p tool-builtins --bench index
