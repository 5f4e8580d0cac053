#!/usr/bin/env bash
# Sequential tools/call round trips per second over stdio, same Rust client:
# our fixture server (release build) vs a Python `mcp` server with the same tool.
# Usage: tool-mcp/benches/roundtrip.sh [SECONDS]   (installs mcp into target/third_party/venv)
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-5}"
venv=target/third_party/venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import mcp' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "mcp==2.3.0"
fi
cargo build -q --release -p tool-mcp --features fixture --bin tool-mcp-fixture
cargo bench -q -p tool-mcp --features fixture --bench roundtrip -- "$seconds" "$PWD/target/release/tool-mcp-fixture"
cargo bench -q -p tool-mcp --features fixture --bench roundtrip -- "$seconds" "$PWD/$venv/bin/python" "$PWD/tool-mcp/benches/python_echo_server.py"
