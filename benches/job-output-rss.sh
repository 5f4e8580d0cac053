#!/usr/bin/env bash
# Memory of polling a background job that prints 100 MB (issue 27): starts
# `bash_command` with run_in_background on a command printing 100 MB as fast
# as it can, polls it with `tool call job_output` (a new process per poll,
# as a CLI agent does) until it ends, and prints the peak resident memory of
# the slowest poll (GNU time's "Maximum resident set size") and of the job's
# supervisor (VmHWM from /proc while it runs), with the output file's size.
#
#   benches/job-output-rss.sh                      # debug build of tool-cli
#   BIN=target/release/tool benches/job-output-rss.sh
#
# Needs GNU time (/usr/bin/time). Runs in a temporary workspace and state folder.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${BIN:-}" ]; then
    cargo build --quiet -p tool-cli
    BIN=target/debug/tool
fi
bin="$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
export XDG_STATE_HOME="$tmp/state"
mkdir -p "$tmp/ws"
t() { "$bin" --workspace "$tmp/ws" --trace-id bench-rss "$@"; }
# 100 chunks of 1 MB, 50 ms apart: a few seconds of polling.
cmd='for i in $(seq 100); do head -c 1000000 /dev/zero | tr "\\0" x | fold -w 99; sleep 0.05; done'
id=$(t call bash_command "$(python3 -c 'import json,sys; print(json.dumps({"command": sys.argv[1], "run_in_background": True}))' "$cmd")" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["job_id"])')
sup_hwm=0
poll_max=0
polls=0
status=running
while [ "$status" = running ]; do
    for p in $(pgrep -f "$bin" || true); do
        h=$(awk '/VmHWM/ {print $2}' "/proc/$p/status" 2>/dev/null || echo 0)
        [ "${h:-0}" -gt "$sup_hwm" ] && sup_hwm=$h
    done
    out=$(/usr/bin/time -f '%M' -o "$tmp/rss" "$bin" --workspace "$tmp/ws" --trace-id bench-rss \
        call job_output "{\"job_id\":\"$id\",\"wait\":0.3}")
    rss=$(cat "$tmp/rss")
    [ "$rss" -gt "$poll_max" ] && poll_max=$rss
    polls=$((polls + 1))
    status=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["status"])')
done
total=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["output_bytes"])')
size=$(stat -c %s "$XDG_STATE_HOME/agent-tools/job-output/$id/output")
echo "job printed $total bytes; $polls polls; status $status"
echo "peak RSS of one job_output process: $poll_max KiB"
echo "peak RSS (VmHWM) of the job's supervisor seen: $sup_hwm KiB"
echo "output file: $size bytes"
