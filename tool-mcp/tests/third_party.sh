#!/usr/bin/env bash
# Third-party MCP checks against `tool serve`: the PyPI `mcp` SDK (pinned
# 2.3.0) lists and calls read_file and grep_content over stdio (2025-11-25 and
# 2026-07-28) and Streamable HTTP. Installs into target/third_party/.
# Not yet here: @modelcontextprotocol/inspector CLI, @modelcontextprotocol/conformance.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=target/third_party/venv
if ! "$venv/bin/python" -c 'import mcp' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "mcp==2.3.0"
fi
cargo build -q -p tool-cli
workspace=$(mktemp -d)
trap 'rm -rf "$workspace"' EXIT
"$venv/bin/python" tool-mcp/tests/third_party/python_client.py "$PWD/target/debug/tool" "$workspace"
