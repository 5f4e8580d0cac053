#!/usr/bin/env bash
# Reliability under load (issue 17, items 3 and 4; RELIABILITY.md quotes the figures).
#   1. Concurrent edits: 20 agent tasks + 20 `tool batch` processes on one workspace,
#      EDITS edits each (default 25), four scenarios; prints attempted/applied/refused/lost.
#   2. A loaded MCP server: release `tool serve --http` with SESSIONS sessions for
#      SECONDS seconds (default 200 x 60) and SETTLE seconds of RSS samples after (10).
# Usage: scripts/load.sh [SESSIONS] [SECONDS] [SETTLE] [EDITS]
set -euo pipefail
cd "$(dirname "$0")/.."
sessions="${1:-200}"
seconds="${2:-60}"
settle="${3:-10}"
edits="${4:-25}"
export CARGO_INCREMENTAL=0
TOOL_SCALE_EDITS="$edits" cargo test -q -p tool-cli --test cli scale -- --nocapture --test-threads 1
cargo build -q --release -p tool-cli --bin tool
# Enough descriptors for every session's connections (client and server).
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
cargo bench -q -p tool-mcp --bench load -- "$PWD/target/release/tool" "$sessions" "$seconds" "$settle"
