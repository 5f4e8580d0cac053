#!/usr/bin/env python3
"""Concurrent read-before-write edits through the cluster of scripts/cluster
(issue 32): AGENTS agents x EDITS edits of ONE shared counter file, every
agent its own client trace, every request to HAProxy (so an agent's read and
its edit usually land on different replicas).

The file starts as `count: 0`. An edit is `read_file`, then `edit_file`
replacing `count: N` by `count: N+1` and a line naming the edit (`aXX-YYY`).
A write whose read is stale (another agent wrote in between) must be refused
by the read-before-write rule (`modified since it was last read`); the agent
reads again and retries. A request without an answer (connection reset, a
502 from HAProxy: the replica died mid-call) has an unknown outcome: the
agent reads again and finds its line there (applied: counted as
"recovered") or not (retried).

At the end, checked on disk: the count equals the number of edit lines; no
line twice; every acknowledged edit is there (lost = 0); every line is an
acknowledged or a recovered edit. Exit status 0 only then.

  scripts/cluster start 2
  python3 tests/cluster/edits.py                       # 20 x 25, stateless era
  python3 tests/cluster/edits.py --kill-after 150      # SIGKILL replica r1 after 150 acks
  python3 tests/cluster/edits.py --era 2025-11-25      # sessions, sticky in HAProxy
"""

import argparse
import os
import random
import re
import signal
import sys
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the checkout
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcp_http  # noqa: E402

COUNT = re.compile(r"count: (\d+)")
# An edit line, on disk or in read_file's numbered output (`2: a07-024`).
LINE = re.compile(r"^(?:\d+: )?(a\d{2}-\d{3})$", re.M)
STALE = "modified since it was last read"


class Tally:
    def __init__(self):
        self.lock = threading.Lock()
        self.acked = set()
        self.recovered = set()
        self.stale = 0  # refused by the read-before-write rule
        self.other_refused = []  # refused for another reason (should stay empty)
        self.unanswered = 0  # requests without an answer (each retried)
        self.sessions_restarted = 0
        self.failures = []

    def add(self, field, value=1):
        with self.lock:
            setattr(self, field, getattr(self, field) + value)


def agent(n, args, state, tally, acked_event):
    client = mcp_http.Client(state["URL"], args.token, era=args.era)
    path = args.file
    try:
        for seq in range(args.edits):
            name = f"a{n:02d}-{seq:03d}"
            # Twenty writers on one line: most tries lose the race. Bounded all the same.
            retry_budget = 500
            while True:
                if retry_budget <= 0:
                    raise RuntimeError(f"{name}: out of retries")
                # Read (any replica). A failed read is simply read again.
                try:
                    read = client.call("read_file", {"file_path": path})
                except mcp_http.Unanswered:
                    tally.add("unanswered")
                    retry_budget -= 1
                    time.sleep(0.05)
                    continue
                except mcp_http.SessionGone:
                    tally.add("sessions_restarted")
                    retry_budget -= 1
                    continue
                text = mcp_http.result_text(read)
                if read.get("isError"):
                    raise RuntimeError(f"{name}: read_file failed: {text[:300]}")
                if name in LINE.findall(text):
                    # An earlier edit_file of ours without an answer did apply.
                    with tally.lock:
                        tally.recovered.add(name)
                    acked_event.set()
                    break
                found = COUNT.search(text)
                if not found:
                    raise RuntimeError(f"{name}: no count in {text[:300]!r}")
                count = int(found.group(1))
                if args.tool == "edit_file":
                    call = {
                        "file_path": path,
                        "old_string": f"count: {count}\n",
                        "new_string": f"count: {count + 1}\n{name}\n",
                    }
                else:
                    # The whole file, built from this read: only the
                    # read-before-write rule stands between a stale read and
                    # a lost update.
                    lines = LINE.findall(text)
                    body = "".join(f"{line}\n" for line in [name, *lines])
                    call = {"file_path": path, "content": f"count: {count + 1}\n{body}"}
                try:
                    edit = client.call(args.tool, call)
                except mcp_http.Unanswered:
                    # Unknown outcome: the next read tells.
                    tally.add("unanswered")
                    retry_budget -= 1
                    continue
                except mcp_http.SessionGone:
                    # The session's replica is gone; so is its ledger: read again.
                    tally.add("sessions_restarted")
                    retry_budget -= 1
                    continue
                out = mcp_http.result_text(edit)
                if edit.get("isError"):
                    if STALE in out:
                        tally.add("stale")
                        # Back off a little (random) so the writers spread out.
                        time.sleep(random.uniform(0, 0.02))
                    else:
                        with tally.lock:
                            tally.other_refused.append(f"{name}: {out[:200]}")
                    retry_budget -= 1
                    continue
                with tally.lock:
                    tally.acked.add(name)
                acked_event.set()
                break
    except Exception as e:  # noqa: BLE001 - reported and failed on below
        with tally.lock:
            tally.failures.append(f"agent {n}: {type(e).__name__}: {e}")
    finally:
        client.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--state", default="target/cluster/state", help="scripts/cluster's state file")
    parser.add_argument("--agents", type=int, default=20)
    parser.add_argument("--edits", type=int, default=25)
    parser.add_argument("--file", default="counter.txt", help="in the cluster's workspace")
    parser.add_argument("--era", default=mcp_http.STATELESS, choices=[mcp_http.STATELESS, mcp_http.SESSIONS])
    parser.add_argument(
        "--tool", default="edit_file", choices=["edit_file", "write_file"],
        help="edit_file (count: N -> N+1 and a line), or write_file of the whole file built from the read",
    )
    parser.add_argument(
        "--kill-after", type=int, default=0, metavar="ACKS",
        help="SIGKILL the first replica once this many edits are acknowledged (0: never)",
    )
    args = parser.parse_args()
    state = mcp_http.load_state(args.state)
    with open(state["TOKEN_FILE"], encoding="utf-8") as f:
        args.token = f.readline().strip()
    disk = os.path.join(state["WORKSPACE"], args.file)
    with open(disk, "w", encoding="utf-8") as f:
        f.write("count: 0\n")
    before = mcp_http.haproxy_stats(state["HAPROXY_SOCKET"])

    tally = Tally()
    acked_event = threading.Event()
    killed = {}

    def killer():
        victim = int(state["REPLICA_PIDS"].split()[0])
        while True:
            acked_event.wait(1.0)
            acked_event.clear()
            with tally.lock:
                done = len(tally.acked) + len(tally.recovered)
            if done >= args.kill_after:
                os.kill(victim, signal.SIGKILL)
                killed.update(pid=victim, at=done, t=time.monotonic() - started)
                return
            if all(not t.is_alive() for t in threads):
                return

    started = time.monotonic()
    threads = [
        threading.Thread(target=agent, args=(n, args, state, tally, acked_event), daemon=True)
        for n in range(args.agents)
    ]
    for t in threads:
        t.start()
    if args.kill_after:
        k = threading.Thread(target=killer, daemon=True)
        k.start()
    for t in threads:
        t.join()
    duration = time.monotonic() - started

    with open(disk, encoding="utf-8") as f:
        final = f.read()
    count = int(COUNT.search(final).group(1))
    lines = LINE.findall(final)
    in_file = set(lines)
    lost = tally.acked - in_file
    unexplained = in_file - tally.acked - tally.recovered
    after = mcp_http.haproxy_stats(state["HAPROXY_SOCKET"])
    spread = ", ".join(
        f"{name} {after[name][1] - before.get(name, (None, 0))[1]} ({after[name][0]})" for name in sorted(after)
    )
    total = args.agents * args.edits
    print(
        f"cluster edits ({args.era}, {args.tool}, {len(state['REPLICA_PIDS'].split())} replicas): "
        f"{args.agents} agents x {args.edits} edits = {total} in {duration:.1f} s; "
        f"acknowledged {len(tally.acked)}, recovered after an unanswered call {len(tally.recovered)}, "
        f"refused stale writes {tally.stale}, other refusals {len(tally.other_refused)}, "
        f"unanswered requests retried {tally.unanswered}, sessions restarted {tally.sessions_restarted}; "
        f"file: count {count}, {len(lines)} edit lines; lost {len(lost)}, duplicated {len(lines) - len(in_file)}, "
        f"unexplained {len(unexplained)}"
    )
    if killed:
        print(f"SIGKILLed replica r1 (pid {killed['pid']}) at {killed['t']:.1f} s after {killed['at']} edits")
    print(f"requests per replica (HAProxy): {spread}")
    problems = list(tally.failures) + tally.other_refused[:5]
    if lost:
        problems.append(f"lost acknowledged edits: {sorted(lost)[:10]}")
    if unexplained:
        problems.append(f"edits in the file nobody was told of: {sorted(unexplained)[:10]}")
    if count != len(lines):
        problems.append(f"count {count} != {len(lines)} edit lines")
    if len(lines) != len(in_file):
        problems.append("an edit line appears twice")
    if len(tally.acked) + len(tally.recovered) != total:
        problems.append(f"{total - len(tally.acked) - len(tally.recovered)} edits never done")
    if args.kill_after and not killed:
        problems.append("the replica was never killed")
    for p in problems:
        print(f"FAIL: {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
