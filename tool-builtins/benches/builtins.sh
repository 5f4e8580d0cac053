#!/usr/bin/env bash
# Benchmarks of the built-in tools on the shared corpus (issue 3, "Done means"):
#
#   grep_content vs `rg -n`       per pattern (dense `fn `, the middling one below, sparse `TODO`
#                                 and `xelxel_wu`): same match count; target <= 1.0x rg's wall time
#                                 (rg writes every match; grep_content its default 100 lines)
#   glob_files   vs `rg --files`  every file of the tree;        target <= 1.2x
#   read_file    100 lines at line 900 000 of big/huge.txt;      target < 150 ms, < 16 MB peak RSS
#   bash_command `yes | head -c 500000000`;                      target < 64 MB peak RSS
#
# Each tool call runs through ToolRegistry::execute in a fresh process of the
# `bench_driver` example, so wall times compare process to process with rg.
# Peak memory is /usr/bin/time -v's "Maximum resident set size". Every
# measurement is the median of RUNS runs (default 7) after one warm-up run;
# the page cache is warm for both sides.
#
# The corpus (~210 MB, ~12 000 files) is generated once by
# ../shared/bench/make-corpus into $CARGO_TARGET_DIR/builtins-bench/corpus and
# reused. Installs ripgrep and GNU time when missing. Exit status 1 when a
# target is missed, so the script can gate a change; not run by `cargo test`.
#
# grep_vs_rg.sh next to this script runs the grep comparison through hyperfine
# with the `tool` CLI instead (the issue-13 measurement).
#
# Usage: tool-builtins/benches/builtins.sh        (RUNS=N, MAKE_CORPUS=path to override)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
case "$TARGET" in /*) ;; *) TARGET=$ROOT/$TARGET ;; esac
WORK=$TARGET/builtins-bench
CORPUS=$WORK/corpus
MAKE_CORPUS=${MAKE_CORPUS:-$ROOT/../shared/bench/make-corpus}
export RUNS=${RUNS:-7}

have() { command -v "$1" >/dev/null 2>&1; }
apt_install() {
    have apt-get || return 1
    if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
    $SUDO apt-get update -qq >/dev/null 2>&1 || true
    $SUDO apt-get install -y -qq "$@" >/dev/null
}

have python3 || { echo "python3 is required (make-corpus and this script's report use it)" >&2; exit 2; }
if ! have rg; then
    echo "installing ripgrep ..." >&2
    apt_install ripgrep || cargo install --locked ripgrep
    export PATH="$HOME/.cargo/bin:$PATH"
fi
if [ ! -x /usr/bin/time ]; then
    echo "installing GNU time ..." >&2
    apt_install time
fi

if [ ! -f "$WORK/corpus.ok" ]; then
    [ -x "$MAKE_CORPUS" ] || [ -f "$MAKE_CORPUS" ] || { echo "make-corpus not found at $MAKE_CORPUS" >&2; exit 2; }
    echo "generating the corpus in $CORPUS (once; takes a while) ..." >&2
    rm -rf "$CORPUS" "$CORPUS.tmp"
    mkdir -p "$WORK"
    python3 "$MAKE_CORPUS" "$CORPUS.tmp"
    mv "$CORPUS.tmp" "$CORPUS"
    touch "$WORK/corpus.ok"
fi

cargo build --quiet --release -p tool-builtins --example bench_driver
DRIVER=$TARGET/release/examples/bench_driver

export CORPUS DRIVER
exec python3 - <<'PY'
import json, os, re, statistics, subprocess, sys, time

CORPUS = os.environ["CORPUS"]
DRIVER = os.environ["DRIVER"]
RUNS = int(os.environ["RUNS"])
GREP_PATTERNS = ["fn ", r"fn [a-z]+_[a-z]+\(", "TODO", "xelxel_wu"]
RG_COMMON = ["rg", "--hidden", "--follow", "--glob", "!.git"]


def timed(cmd, stdout_path=None):
    """Runs cmd under /usr/bin/time -v; returns (wall seconds, peak RSS in MB, stdout text)."""
    out = open(stdout_path, "w") if stdout_path else subprocess.PIPE
    t0 = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-v", *cmd], stdout=out, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    if stdout_path:
        out.close()
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
    rss = int(m.group(1)) / 1024 if m else float("nan")
    text = "" if stdout_path == os.devnull else open(stdout_path).read() if stdout_path else p.stdout
    return wall, rss, text, p.returncode


def bench(cmd, stdout_path=None, after=None):
    _, _, text, _ = timed(cmd, stdout_path)  # warm-up
    if after:
        after(text)
    walls, rsss, last = [], [], None
    for _ in range(RUNS):
        wall, rss, text, _ = timed(cmd, stdout_path)
        walls.append(wall)
        rsss.append(rss)
        last = text
        if after:
            after(text)
    return statistics.median(walls), max(rsss), last


def bench_pair(cmd_a, cmd_b, stdout_a=None):
    """bench() of two commands with their runs interleaved (a, b, a, b, ...), so
    that a change in the machine's load meets both alike."""
    timed(cmd_a, stdout_a)
    timed(cmd_b)  # warm-ups
    walls_a, walls_b, rss_a, rss_b, last_b = [], [], [], [], None
    for _ in range(RUNS):
        wall, rss, _, _ = timed(cmd_a, stdout_a)
        walls_a.append(wall)
        rss_a.append(rss)
        wall, rss, last_b, _ = timed(cmd_b)
        walls_b.append(wall)
        rss_b.append(rss)
    return (statistics.median(walls_a), max(rss_a)), (statistics.median(walls_b), max(rss_b), last_b)


def tool(name, args):
    return [DRIVER, CORPUS, name, json.dumps(args)]


def result_of(text):
    line = text.strip().splitlines()[-1]
    return json.loads(line)


def remove_spill(text):
    path = (result_of(text).get("metadata") or {}).get("output_path")
    if path and os.path.exists(path):
        os.remove(path)


rows, failures = [], []


def check(label, ok, detail):
    rows.append((label, "ok" if ok else "MISSED", detail))
    if not ok:
        failures.append(label)


# grep_content vs rg -n: same pattern, same number of matching lines; rg
# writes every match (to /dev/null), grep_content gives its default output.
# Their runs alternate, as the machine is shared.
tmp = os.path.join(os.path.dirname(CORPUS), "rg-count.txt")
g_rss = rg_rss = 0.0
for pattern in GREP_PATTERNS:
    subprocess.run([*RG_COMMON, "--count", pattern, CORPUS], stdout=open(tmp, "w"), check=False)
    rg_matches = sum(int(l.rsplit(":", 1)[1]) for l in open(tmp) if l.strip())
    (rg_wall, rss), (g_wall, rss_g, g_text) = bench_pair(
        [*RG_COMMON, "-n", pattern, CORPUS], tool("grep_content", {"pattern": pattern}), stdout_a=os.devnull)
    rg_rss, g_rss = max(rg_rss, rss), max(g_rss, rss_g)
    g = result_of(g_text)
    g_matches = g["metadata"]["matches"]
    check(f"grep_content {pattern!r} matches == rg", g_matches == rg_matches, f"{g_matches} vs {rg_matches}")
    check(f"grep_content {pattern!r} <= 1.0x rg -n", g_wall <= rg_wall,
          f"{g_wall*1000:.0f} ms vs {rg_wall*1000:.0f} ms ({g_wall/rg_wall:.2f}x); in-process call {g['ms']:.0f} ms")

# glob_files vs rg --files: every file of the tree.
f_wall, f_rss, f_text = bench([*RG_COMMON, "--files", CORPUS])
f_count = len(f_text.splitlines())
gl_wall, gl_rss, gl_text = bench(tool("glob_files", {"pattern": "**/*"}))
gl = result_of(gl_text)
full = subprocess.run(tool("glob_files", {"pattern": "**/*"}), capture_output=True, text=True,
                      env={**os.environ, "RESULT_LIMIT": "10000000"})
full_count = result_of(full.stdout)["metadata"]["count"]
remove_spill(full.stdout)  # 11 000 paths exceed the registry's output budget
check("glob_files files == rg --files", full_count == f_count, f"{full_count} vs {f_count}")
check("glob_files <= 1.2x rg --files", gl_wall <= 1.2 * f_wall,
      f"{gl_wall*1000:.0f} ms vs {f_wall*1000:.0f} ms ({gl_wall/f_wall:.2f}x; rg lists {f_count} files); in-process call {gl['ms']:.0f} ms")

# read_file: a window deep inside a huge file.
r_wall, r_rss, r_text = bench(tool("read_file", {"file_path": "big/huge.txt", "offset": 900000, "limit": 100}))
r = result_of(r_text)
check("read_file 100 lines @ 900000 < 150 ms", r_wall < 0.150 and r["error"] is None,
      f"{r_wall*1000:.0f} ms process, {r['ms']:.0f} ms in-process call")
check("read_file peak RSS < 16 MB", r_rss < 16, f"{r_rss:.1f} MB")

# bash_command: 500 MB of output.
b_wall, b_rss, b_text = bench(tool("bash_command", {"command": "yes | head -c 500000000"}), after=remove_spill)
b = result_of(b_text)
check("bash_command 500 MB output peak RSS < 64 MB", b_rss < 64 and b["metadata"]["truncated"],
      f"{b_rss:.1f} MB, {b_wall:.2f} s, output shown: {b['output_chars']} chars")

width = max(len(r[0]) for r in rows)
print(f"built-in tool benchmarks ({RUNS} runs each, median wall time, max peak RSS; rg {subprocess.run(['rg', '--version'], capture_output=True, text=True).stdout.split()[1]})")
for label, status, detail in rows:
    print(f"  {label:<{width}}  {status:<6}  {detail}")
print(f"  peak RSS: grep_content {g_rss:.1f} MB (rg {rg_rss:.1f} MB), glob_files {gl_rss:.1f} MB (rg --files {f_rss:.1f} MB)")
sys.exit(1 if failures else 0)
PY
