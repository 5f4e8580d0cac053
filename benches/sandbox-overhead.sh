#!/usr/bin/env bash
# The shell sandbox's own cost per command (issue 27): N calls of
# `bash_command` running `true`, in one process, with the sandbox off, in its
# full tier and in its no-namespaces tier, interleaved; prints p50 / p95 /
# min per variant and each tier's median minus the unsandboxed one.
#
#   benches/sandbox-overhead.sh              # RUNS=200 calls per variant
#   RUNS=500 benches/sandbox-overhead.sh
#
# In process (tool-builtins' `sandbox_overhead` bench, an optimised build):
# no CLI start-up, so the difference is the sandbox itself. `benches/sandbox.sh`
# measures the same through the `tool` binary (start-up included) with
# hyperfine. Not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
SANDBOX_RUNS="${RUNS:-200}" exec cargo bench --quiet -p tool-builtins --bench sandbox_overhead
