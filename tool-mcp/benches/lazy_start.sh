#!/usr/bin/env bash
# Lazy start (issue 26): `tool --mcp-config F call read_file` with three stdio
# MCP servers configured (Python `mcp` SDK servers, ~0.5-2 s each to start)
# against the same call with no servers. With lazy start a built-in's call
# starts none of them, so both should cost the same. Then `list` with the
# three servers' tool lists cached (warm: no server starts), without a cache
# (cold: all three start) and with no servers. The cache lives in a
# temporary XDG_STATE_HOME, never the user's.
# Usage: tool-mcp/benches/lazy_start.sh [RUNS]  (hyperfine; installs mcp into
# target/third_party/venv as third_party.sh does, or uses $VENV; a release
# build of `tool`, or the binary in $TOOL)
set -euo pipefail
cd "$(dirname "$0")/../.."
runs="${1:-20}"
target=${CARGO_TARGET_DIR:-$PWD/target}
venv=${VENV:-$target/third_party/venv}
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import mcp' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "mcp==2.3.0"
fi
if [ -z "${TOOL:-}" ]; then
  cargo build -q --release -p tool-cli --bin tool
fi
tool=${TOOL:-$target/release/tool}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'hello\n' >"$work/notes.txt"
server="$PWD/tool-mcp/benches/python_echo_server.py"
cat >"$work/three.json" <<JSON
{"mcpServers": {
  "one": {"command": "$venv/bin/python", "args": ["$server"]},
  "two": {"command": "$venv/bin/python", "args": ["$server"]},
  "three": {"command": "$venv/bin/python", "args": ["$server"]}
}}
JSON
echo '{"mcpServers": {}}' >"$work/none.json"
export XDG_STATE_HOME="$work/state"
hyperfine -N --warmup 2 --runs "$runs" \
  -n "no servers" "$tool --workspace $work --mcp-config $work/none.json call read_file --file-path notes.txt" \
  -n "three servers" "$tool --workspace $work --mcp-config $work/three.json call read_file --file-path notes.txt" \
  -n "three servers, one used" "$tool --workspace $work --mcp-config $work/three.json call one__echo --text hi"
cache="$XDG_STATE_HOME/agent-tools/mcp-tools"
hyperfine -N --warmup 1 --runs "$runs" \
  -n "list, no servers" "$tool --workspace $work --mcp-config $work/none.json list" \
  -n "list, three servers, warm cache" "$tool --workspace $work --mcp-config $work/three.json list"
hyperfine --warmup 1 --runs "$(( (runs + 3) / 4 ))" \
  --prepare "rm -rf '$cache'" \
  -n "list, three servers, cold cache" "$tool --workspace $work --mcp-config $work/three.json list"
