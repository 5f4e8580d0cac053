#!/usr/bin/env python3
"""Throughput of `tools/call` through the cluster of scripts/cluster: THREADS
clients, each on its own keep-alive connection to HAProxy, call `read_file`
of a small file for SECONDS (stateless era). Every call names a fresh trace,
so none is answered from the per-trace read cache and every one records its
read in the Redis ledger (one Lua script). Prints one line: calls/s, p50/p99
latency, errors, and the calls each replica served.

  python3 tests/cluster/bench.py [--threads 8] [--seconds 10]
"""

import argparse
import os
import sys
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the checkout
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcp_http  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--state", default="target/cluster/state")
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    state = mcp_http.load_state(args.state)
    with open(state["TOKEN_FILE"], encoding="utf-8") as f:
        token = f.readline().strip()
    with open(os.path.join(state["WORKSPACE"], "bench.txt"), "w", encoding="utf-8") as f:
        f.write("".join(f"line {i}\n" for i in range(40)))
    # One warm-up call per replica (first calls build per-process caches).
    warm = mcp_http.Client(state["URL"], token)
    for _ in state["REPLICA_PORTS"].split():
        warm.call("read_file", {"file_path": "bench.txt"})
    warm.close()
    before = mcp_http.haproxy_stats(state["HAPROXY_SOCKET"])

    latencies, errors, lock = [], [0], threading.Lock()
    deadline = time.monotonic() + args.seconds

    def worker():
        client = mcp_http.Client(state["URL"], token)
        mine, bad = [], 0
        while time.monotonic() < deadline:
            client.trace = mcp_http.new_traceparent()
            t0 = time.monotonic()
            try:
                result = client.call("read_file", {"file_path": "bench.txt"})
                if result.get("isError"):
                    bad += 1
                    continue
            except (mcp_http.Unanswered, RuntimeError):
                bad += 1
                continue
            mine.append(time.monotonic() - t0)
        client.close()
        with lock:
            latencies.extend(mine)
            errors[0] += bad

    started = time.monotonic()
    threads = [threading.Thread(target=worker) for _ in range(args.threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - started
    after = mcp_http.haproxy_stats(state["HAPROXY_SOCKET"])
    latencies.sort()

    def pct(p):
        return latencies[min(len(latencies) - 1, int(p * len(latencies)))] * 1000 if latencies else float("nan")

    spread = " ".join(f"{n}:{after[n][1] - before.get(n, (None, 0))[1]}" for n in sorted(after))
    replicas = len(state["REPLICA_PORTS"].split())
    print(
        f"{replicas} replica(s), {args.threads} clients, {elapsed:.1f} s: "
        f"{len(latencies) / elapsed:.0f} calls/s, p50 {pct(0.50):.1f} ms, p99 {pct(0.99):.1f} ms, "
        f"errors {errors[0]}; per replica {spread}"
    )
    return 1 if errors[0] else 0


if __name__ == "__main__":
    sys.exit(main())
