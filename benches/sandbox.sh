#!/usr/bin/env bash
# What the sandbox costs per command, through the CLI (issue 22):
#   plain `bash -c true` and `git status`, then
#   `tool call bash_command '{"command":"true"}'` and `... "git status"`
#   without the sandbox (`--sandbox off`) and with it (`--sandbox-tier full`,
#   `--sandbox-tier no-namespaces`).
#
#   benches/sandbox.sh                 # RUNS=100 by default, release build
#   BIN=target/debug/tool benches/sandbox.sh   # an existing binary, no build
#
# Uses hyperfine (`apt-get install -y hyperfine`); the figures include the
# CLI's start-up (~10 ms), so they are an upper bound for the supervisor's
# own cost (the in-process figure is tool-sandbox's criterion bench). A
# binary without the sandbox flags (before issue 22) is measured with no
# flags, and the sandboxed rows are left out. Runs in a fresh git repository
# (50 files) under the system's temporary folder and prints hyperfine's
# Markdown table (hyperfine's own report goes to stderr).
set -euo pipefail
cd "$(dirname "$0")/.."

runs="${RUNS:-100}"
if ! command -v hyperfine >/dev/null; then
    echo "hyperfine is not installed (apt-get install -y hyperfine)" >&2
    exit 2
fi
if [ -z "${BIN:-}" ]; then
    cargo build --release --quiet -p tool-cli
    bin="$PWD/target/release/tool"
else
    bin="$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")"
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
ws="$work/ws"
mkdir -p "$ws"
git -C "$ws" init -q
git -C "$ws" -c user.name=bench -c user.email=bench@example.com commit -q --allow-empty -m init
for i in $(seq 50); do echo "file $i" > "$ws/f$i.txt"; done
git -C "$ws" add . && git -C "$ws" -c user.name=bench -c user.email=bench@example.com commit -qm files
cd "$ws"

true_args='{"command":"true"}'
git_args='{"command":"git status"}'
cmds=(-n "bash -c true" "bash -c true"
      -n "git status" "git status")
if "$bin" --help | grep -q -- '--sandbox '; then
    cmds+=(-n "tool, no sandbox: true" "$bin --sandbox off call bash_command '$true_args'"
           -n "tool, no sandbox: git status" "$bin --sandbox off call bash_command '$git_args'")
    for tier in full no-namespaces; do
        if "$bin" --sandbox-tier "$tier" call bash_command "$true_args" >/dev/null 2>&1; then
            cmds+=(-n "tool, sandbox $tier: true" "$bin --sandbox-tier $tier call bash_command '$true_args'"
                   -n "tool, sandbox $tier: git status" "$bin --sandbox-tier $tier call bash_command '$git_args'")
        else
            echo "note: the $tier tier does not run here; left out" >&2
        fi
    done
else
    echo "note: $bin has no sandbox flags (before issue 22): measured without the sandbox only" >&2
    cmds+=(-n "tool (no sandbox flags): true" "$bin call bash_command '$true_args'"
           -n "tool (no sandbox flags): git status" "$bin call bash_command '$git_args'")
fi

hyperfine --shell=none --warmup 10 --runs "$runs" \
    --export-markdown "$work/sandbox.md" \
    "${cmds[@]}" >&2
cat "$work/sandbox.md"
