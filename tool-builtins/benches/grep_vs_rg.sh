#!/usr/bin/env bash
# grep_content against ripgrep, the way issue 13 measures it: one hyperfine
# run (`-N`, no shell), RUNS runs per command (default 15) after 3 warm-ups,
#
#   rg -n PATTERN DIR                                      all matches, output discarded
#   tool --workspace DIR call grep_content --pattern=PATTERN   its default output (100 lines)
#
# with the release build of tool-cli, median against median, for a dense
# pattern (`fn `, ~219 000 matching lines), a middling one (the builtins.sh
# pattern, ~43 000) and two sparse ones (`TODO` ~13 000, `xelxel_wu` 262).
# Target: every pattern at most 1.0x rg's median; exit status 1 when one is
# missed. The corpus is the one builtins.sh generates (or CORPUS=dir);
# BASELINE=path/to/other/tool adds a third command per pattern (a build from
# before a change), reported as its own ratio. Needs hyperfine and rg
# (`apt-get install -y ripgrep hyperfine`); not run by `cargo test`.
#
# Usage: tool-builtins/benches/grep_vs_rg.sh     (RUNS=N, CORPUS=dir, BASELINE=binary)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
case "$TARGET" in /*) ;; *) TARGET=$ROOT/$TARGET ;; esac
CORPUS=${CORPUS:-$TARGET/builtins-bench/corpus}
RUNS=${RUNS:-15}
BASELINE=${BASELINE:-}

for bin in rg hyperfine python3; do
    command -v "$bin" >/dev/null 2>&1 || { echo "$bin is required (apt-get install -y ripgrep hyperfine)" >&2; exit 2; }
done
[ -d "$CORPUS" ] || { echo "no corpus at $CORPUS: run tool-builtins/benches/builtins.sh once, or set CORPUS" >&2; exit 2; }

cargo build --quiet --release -p tool-cli
TOOL=$TARGET/release/tool

PATTERNS=('fn ' 'fn [a-z]+_[a-z]+\(' 'TODO' 'xelxel_wu')
commands=()
for p in "${PATTERNS[@]}"; do
    commands+=("rg -n '$p' $CORPUS" "$TOOL --workspace $CORPUS call grep_content '--pattern=$p'")
    [ -n "$BASELINE" ] && commands+=("$BASELINE --workspace $CORPUS call grep_content '--pattern=$p'")
done
JSON=$(mktemp)
trap 'rm -f "$JSON"' EXIT
hyperfine -N --warmup 3 --runs "$RUNS" --style basic --export-json "$JSON" "${commands[@]}" >&2

export JSON BASELINE
exec python3 - "${PATTERNS[@]}" <<'PY'
import json, os, sys
results = json.load(open(os.environ["JSON"]))["results"]
patterns = sys.argv[1:]
per = 3 if os.environ["BASELINE"] else 2
missed = []
print(f"grep_content vs rg -n, median of {len(results[0]['times'])} runs each (hyperfine -N)")
for i, p in enumerate(patterns):
    group = [r["median"] * 1000 for r in results[i * per:(i + 1) * per]]
    rg, ours = group[0], group[1]
    line = f"  {p!r:<24} rg {rg:6.1f} ms  grep_content {ours:6.1f} ms ({ours / rg:.2f}x)"
    if per == 3:
        line += f"  baseline {group[2]:6.1f} ms ({group[2] / rg:.2f}x)"
    ok = ours <= rg
    print(line + ("" if ok else "  MISSED (target <= 1.0x)"))
    if not ok:
        missed.append(p)
sys.exit(1 if missed else 0)
PY
