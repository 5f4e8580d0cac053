#!/usr/bin/env bash
# Start-up of `tool call` to the first byte of its output, for a trivial tool
# (the `cli_fixture_echo` fixture) in a release build. Target: under 30 ms.
#
#   tool-cli/benches/startup.sh            # RUNS=200 by default
#
# Builds `target/release/tool-fixtures` (the `tool` program plus the
# cli_fixture_* test tools; `target/release/tool` is left as it is).
# Measures, per run, the time from spawning the process to reading the first
# byte on its stdout (includes fork/exec; a Python driver, so the figure is
# slightly pessimistic). Then, when hyperfine is installed
# (`apt-get install hyperfine`), the whole run to exit; otherwise a shell loop
# timed with `date +%s%N`.
set -euo pipefail
cd "$(dirname "$0")/../.."

runs="${RUNS:-200}"
cargo build --release --quiet -p tool-cli --features fixtures --bin tool-fixtures
bin="$PWD/target/release/tool-fixtures"
workdir="$(mktemp -d)"
trap 'rm -rf "$workdir"' EXIT
cd "$workdir"
"$bin" call cli_fixture_echo --text=hi >/dev/null

echo "== first byte of \`tool call cli_fixture_echo --text=hi\` ($runs runs)"
python3 - "$bin" "$runs" <<'PY'
import statistics, subprocess, sys, time

binary, runs = sys.argv[1], int(sys.argv[2])
cmd = [binary, "call", "cli_fixture_echo", "--text=hi"]
samples = []
for _ in range(runs):
    t0 = time.perf_counter_ns()
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
    first = p.stdout.read(1)
    t1 = time.perf_counter_ns()
    rest = p.stdout.read()
    p.wait()
    assert first == b"{" and p.returncode == 0, (first, rest)
    samples.append((t1 - t0) / 1e6)
samples.sort()
p95 = samples[int(len(samples) * 0.95) - 1]
print(f"first byte: median {statistics.median(samples):.2f} ms, p95 {p95:.2f} ms, "
      f"min {samples[0]:.2f} ms, max {samples[-1]:.2f} ms")
PY

echo "== whole run to exit"
if command -v hyperfine >/dev/null; then
    hyperfine --shell=none --warmup 20 --runs "$runs" \
        "$bin call cli_fixture_echo --text=hi" \
        "$bin list"
else
    start=$(date +%s%N)
    for _ in $(seq "$runs"); do "$bin" call cli_fixture_echo --text=hi >/dev/null; done
    end=$(date +%s%N)
    echo "mean $(( (end - start) / runs / 1000 )) µs per call (shell loop, $runs runs)"
fi
