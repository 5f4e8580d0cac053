#!/usr/bin/env bash
# The durable-runs test of issue 32, against a real Restate server (npm
# package, started by scripts/durable on loopback) and a scripted
# OpenAI-compatible model (tests/model_server.py). Run from anywhere:
#
#   tool-durable/tests/restate.sh
#
# Needs npm (first run installs the server under target/restate), python3,
# curl. Takes about 6 s once the worker is built (4.5 s by the closing line's
# clock on 2 shared cores; 3.3 s before scenarios D and E).
#
# Scenarios, all on one worker address (workers behind one address, as
# replicas behind a load balancer are; Restate retries a run whose worker
# died against the same deployment):
#   A. five calls (read, append, append, read, append); worker 1 is SIGKILLed
#      once call 3's outcome is journaled; worker 2 finishes the run. The file
#      holds each appended line once; the model saw each result once.
#   B. the same calls; worker 2 is SIGKILLed inside the 2nd append, after its
#      line was written and before its outcome was journaled; worker 3 does
#      not run it again but lists it as an unknown outcome; the test settles
#      it as a person would ("skip", with the result the person gives); the
#      run finishes. The file holds each line once.
#   C. a question (`ask_user`) and a call needing approval become durable
#      promises; the test answers and approves them through the ingress, each
#      twice at once: one resolution is taken, the other refused (409).
#   D. the same five calls; worker 3 is SIGKILLed inside the 2nd append; the
#      person settles it "rerun" (twice at once: one refused); worker 4 is
#      SIGKILLed inside that rerun too; worker 5 does not run it again but asks
#      the person about attempt 2 (a stale settle of attempt 1 is refused);
#      "rerun" again, the run finishes. The file holds the three approved
#      writes of "two" (the model's and two reruns), each once.
#   E. `scripts/durable register` of an address already registered changes
#      nothing without --force (same deployment id, a note on stderr).
set -euo pipefail
cd "$(dirname "$0")/../.."
root="$(pwd)"
started=$(date +%s.%N)

export DURABLE_DIR="$root/target/durable-test"
rm -rf "$DURABLE_DIR"
work="$DURABLE_DIR/work"
mkdir -p "$work/notes"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  scripts/durable stop || true
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  for f in "$work"/*.log; do echo "--- $f" >&2; tail -15 "$f" >&2; done
  exit 1
}
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# wait_for FILE PATTERN SECONDS
wait_for() {
  for _ in $(seq 1 $(($3 * 10))); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  fail "no '$2' in $1 after $3 s"
}
# SIGKILLs worker $1 and waits until it is gone (its port free again).
kill_worker() {
  kill -9 "$1"
  wait "$1" 2>/dev/null || true
}

cargo build -q -p tool-durable --example worker
worker_bin="${CARGO_TARGET_DIR:-$root/target}/debug/examples/worker"
scripts/durable start
# shellcheck disable=SC1091
. "$DURABLE_DIR/state"

model_port=$(free_port)
python3 tool-durable/tests/model_server.py "$model_port" "$work/model.jsonl" 2>"$work/model.log" &
pids+=($!)
worker_port=$(free_port)
worker_url="http://127.0.0.1:$worker_port"
start_worker() { # log name, then env assignments
  local log="$work/$1.log"
  shift
  env "$@" "$worker_bin" --bind "127.0.0.1:$worker_port" --model scripted \
    --model-url "http://127.0.0.1:$model_port/v1" --workspace "$work/notes" 2>"$log" &
  pids+=($!)
  last_pid=$!
  wait_for "$log" "worker listening" 30
}
# Starts run $1 with task $2 (returns at once).
send() {
  curl -fsS --max-time 30 -X POST "$INGRESS_URL/DurableAgent/$1/run/send" -H 'content-type: application/json' \
    -d "{\"task\": \"$2\"}" >/dev/null
}
# The run's summary, waiting for its end (at most 120 s).
attach() {
  curl -fsS --max-time 120 "$INGRESS_URL/restate/workflow/DurableAgent/$1/attach"
}
call() { # run, handler, JSON body
  curl -fsS --max-time 30 -X POST "$INGRESS_URL/DurableAgent/$1/$2" -H 'content-type: application/json' -d "$3"
}
wait_pending() { # run, pattern: prints the pending list once it matches
  for _ in $(seq 1 300); do
    out=$(curl -sS --max-time 5 -X POST "$INGRESS_URL/DurableAgent/$1/pending" 2>&1 || true)
    if echo "$out" | grep -q "$2"; then
      echo "$out"
      return 0
    fi
    sleep 0.1
  done
  fail "run $1 never listed a pending $2 (last: $out)"
}
# Sends body $3 and body $4 to handler $2 of run $1 at once. Exactly one
# must be taken (200) and the other refused as already resolved (409);
# prints the number (1 or 2) of the one taken.
race() {
  local codes=()
  curl -sS --max-time 30 -o "$work/race1.out" -w '%{http_code}' -X POST "$INGRESS_URL/DurableAgent/$1/$2" \
    -H 'content-type: application/json' -d "$3" >"$work/race1.code" &
  local other=$!
  curl -sS --max-time 30 -o "$work/race2.out" -w '%{http_code}' -X POST "$INGRESS_URL/DurableAgent/$1/$2" \
    -H 'content-type: application/json' -d "$4" >"$work/race2.code"
  wait "$other"
  codes=("$(cat "$work/race1.code")" "$(cat "$work/race2.code")")
  case "${codes[0]} ${codes[1]}" in
    "200 409") grep -q "already" "$work/race2.out" || fail "$2: the refusal does not say why: $(cat "$work/race2.out")"; echo 1 ;;
    "409 200") grep -q "already" "$work/race1.out" || fail "$2: the refusal does not say why: $(cat "$work/race1.out")"; echo 2 ;;
    *) fail "$1 $2 twice at once: HTTP ${codes[*]} ($(cat "$work/race1.out") / $(cat "$work/race2.out")), expected one 200 and one 409" ;;
  esac
}

# --- A: killed after call 3 -------------------------------------------------
start_worker worker1 DURABLE_PAUSE_AFTER_CALL=3
w1=$last_pid
scripts/durable register "$worker_url" >"$work/register.json"
send runA "file=a.txt script=five"
wait_for "$work/worker1.log" "PAUSED after call 3" 60
kill_worker "$w1"
echo "A: worker 1 SIGKILLed after call 3; file: $(tr '\n' ' ' <"$work/notes/a.txt")"
start_worker worker2 DURABLE_PAUSE_IN_APPEND=b.txt:two
w2=$last_pid
attach runA >"$work/a.json" || fail "run A did not finish"
echo "A: worker 2 finished: $(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s["stop"], s["turns"], "turns,", s["tool_calls"], "calls, text", repr(s["text"]))' "$work/a.json")"

# --- B: killed inside a non-idempotent call ----------------------------------
send runB "file=b.txt script=five"
wait_for "$work/worker2.log" "PAUSED in append b.txt:two" 60
kill_worker "$w2"
echo "B: worker 2 SIGKILLed inside append 'two' (written, not journaled)"
start_worker worker3 DURABLE_PAUSE_IN_APPEND=d.txt:two
w3=$last_pid
pending=$(wait_pending runB '"kind":"unknown_outcome"')
echo "B: worker 3 asks a person: $pending"
key=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])[0]["key"])' "$pending")
call runB settle "{\"key\": \"$key\", \"decision\": \"skip\", \"result\": \"appended (checked by a person)\"}" >/dev/null
attach runB >"$work/b.json" || fail "run B did not finish"

# --- C: a question and an approval -------------------------------------------
send runC "file=c.txt script=person"
pending=$(wait_pending runC '"kind":"question"')
echo "C: question pending: $pending"
# An unknown key is refused.
if call runC answer '{"key": "t9.9", "answer": "x"}' >/dev/null 2>&1; then fail "an unknown key was accepted"; fi
# Two people answer at once: one answer is taken, the other is told so.
won=$(race runC answer '{"key": "t1.1", "answer": "alpha"}' '{"key": "t1.1", "answer": "beta"}')
answer=$([ "$won" = 1 ] && echo alpha || echo beta)
echo "C: two answers at once: '$answer' taken, the other refused (409)"
pending=$(wait_pending runC '"kind":"approval"')
echo "C: approval pending: $pending"
approval='{"key": "t2.1", "decision": {"ApproveWithEdits": {"file": "c.txt", "line": "edited-by-person"}}}'
race runC approve "$approval" "$approval" >/dev/null
attach runC >"$work/c.json" || fail "run C did not finish"

# --- D: killed inside the rerun of an unknown outcome ------------------------
send runD "file=d.txt script=five"
wait_for "$work/worker3.log" "PAUSED in append d.txt:two" 60
kill_worker "$w3"
start_worker worker4 DURABLE_PAUSE_IN_APPEND=d.txt:two
w4=$last_pid
pending=$(wait_pending runD '"attempt":1,"kind":"unknown_outcome"')
echo "D: worker 3 SIGKILLed inside append 'two'; worker 4 asks: $pending"
race runD settle '{"key": "t3.1", "attempt": 1, "decision": "rerun"}' '{"key": "t3.1", "decision": "rerun"}' >/dev/null
wait_for "$work/worker4.log" "PAUSED in append d.txt:two" 60
kill_worker "$w4"
d_lines=$(tr '\n' ' ' <"$work/notes/d.txt")
[ "$d_lines" = "one two two " ] || fail "after the approved rerun: $d_lines"
start_worker worker5
pending=$(wait_pending runD '"attempt":2,"kind":"unknown_outcome"')
echo "D: worker 4 SIGKILLed inside the rerun; worker 5 asks again: $pending"
d_lines=$(tr '\n' ' ' <"$work/notes/d.txt")
[ "$d_lines" = "one two two " ] || fail "the rerun was run again before a person decided: $d_lines"
code=$(curl -sS --max-time 30 -o "$work/stale.out" -w '%{http_code}' -X POST "$INGRESS_URL/DurableAgent/runD/settle" \
  -H 'content-type: application/json' -d '{"key": "t3.1", "attempt": 1, "decision": "rerun"}')
[ "$code" = 409 ] || fail "a settle of attempt 1 while attempt 2 is pending: HTTP $code $(cat "$work/stale.out")"
call runD settle '{"key": "t3.1", "attempt": 2, "decision": "rerun"}' >/dev/null
attach runD >"$work/d.json" || fail "run D did not finish"

# --- E: registering an address again -----------------------------------------
scripts/durable register "$worker_url" >"$work/register2.json" 2>"$work/register2.err"
grep -q "already registered" "$work/register2.err" || fail "no note on registering again: $(cat "$work/register2.err")"
python3 - "$work" <<'EOF' || fail "registering again changed the deployment"
import json, sys
a, b = (json.load(open(f"{sys.argv[1]}/{n}.json")) for n in ("register", "register2"))
assert a["id"] == b["id"], (a["id"], b["id"])
EOF

# --- checks ------------------------------------------------------------------
python3 - "$work" "$answer" <<'EOF' || fail "checks"
import json, sys
work, answer = sys.argv[1], sys.argv[2]
log = [json.loads(l) for l in open(f"{work}/model.jsonl")]

def check_five(name, expect_results, expect_lines=("one", "two", "three")):
    lines = open(f"{work}/notes/{name}").read().splitlines()
    assert lines == list(expect_lines), f"{name}: {lines}"
    reqs = [r for r in log if r["file"] == name]
    # One request per turn, never repeated: request i carries i-1 results.
    assert [len(r["tools"]) for r in reqs] == [0, 1, 2, 3, 4, 5], [len(r["tools"]) for r in reqs]
    # Each result was delivered once and never changed afterwards.
    last = reqs[-1]["tools"]
    for r in reqs:
        assert r["tools"] == last[: len(r["tools"])], (r, last)
    got = [c for _, c in last]
    assert [i for i, _ in last] == ["c1", "c2", "c3", "c4", "c5"], last
    assert got == expect_results, (name, got)
    print(f"{name}: lines {lines}; {len(reqs)} model requests; results {got}")

check_five("a.txt", ["(no output)", 'appended "one"', 'appended "two"', "one\ntwo\n", 'appended "three"'])
check_five("b.txt", ["(no output)", 'appended "one"', "appended (checked by a person)", "one\ntwo\n", 'appended "three"'])
check_five("d.txt", ["(no output)", 'appended "one"', 'appended "two"', "one\ntwo\ntwo\ntwo\n", 'appended "three"'],
           ["one", "two", "two", "two", "three"])
c = open(f"{work}/notes/c.txt").read().splitlines()
assert c == ["edited-by-person"], c
reqs = [r for r in log if r["file"] == "c.txt"]
assert [len(r["tools"]) for r in reqs] == [0, 1, 2, 3], reqs
assert reqs[-1]["tools"][0] == ["c1", answer], reqs[-1]
assert reqs[-1]["tools"][1][1].startswith('appended "edited-by-person"'), reqs[-1]
assert "edited it first" in reqs[-1]["tools"][1][1], reqs[-1]
print(f"c.txt: answer {answer!r}, approved with edits: {c}")
for run in "abcd":
    s = json.load(open(f"{work}/{run}.json"))
    assert s["stop"] == "answered" and s["text"] == "done", s
EOF
grep -c "replayed=true" "$work"/worker[2-5].log | sed 's/^/replayed steps: /'
elapsed=$(python3 -c "import time; print(round(time.time() - $started, 1))")
echo "restate: 5 passed, 0 failed (${elapsed} s)"
