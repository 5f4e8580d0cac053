#!/usr/bin/env python3
"""HAProxy's HTTP health check of the replicas of scripts/cluster (issue 32):
a replica cut off from Redis leaves the rotation, and comes back with it.

Steps, each checked (exit status 0 only when all hold):
1. every replica answers `GET /health` with `200 ok` without a token, and
   HAProxy counts every replica UP; a `tools/call` through HAProxy answers;
2. redis-server is paused (SIGSTOP: the port still accepts connections, as a
   hung server does, so a TCP check would pass): every replica answers
   `503 unavailable` within a few seconds, HAProxy takes every replica out
   (DOWN), and a request through HAProxy gets `503` from HAProxy at once;
3. redis-server resumes (SIGCONT): every replica is `200` and UP again, and a
   `tools/call` through HAProxy answers.

  scripts/cluster start 2
  python3 tests/cluster/health.py            # about 15 s
"""

import argparse
import http.client
import os
import signal
import socket
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the checkout
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcp_http  # noqa: E402


def health(port):
    """(status, body) of `GET /health` on a replica, without a token."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", "/health", headers={"Host": f"127.0.0.1:{port}"})
        response = conn.getresponse()
        return response.status, response.read().decode("utf-8", "replace")
    except (OSError, http.client.HTTPException) as e:
        return 0, f"{type(e).__name__}: {e}"
    finally:
        conn.close()


def haproxy_status(sock_path):
    """Replica name -> HAProxy status (UP, DOWN, `UP 1/2`, ...), from the stats socket."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(sock_path)
        s.sendall(b"show stat\n")
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    status = {}
    for line in data.decode().splitlines():
        fields = line.split(",")
        if len(fields) > 17 and fields[0] == "replicas" and fields[1] not in ("BACKEND", "FRONTEND"):
            status[fields[1]] = fields[17]
    return status


def wait_for(what, check, timeout):
    """Polls `check()` (truthy: done) every 100 ms for `timeout` s; returns the seconds taken."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if check():
            return time.monotonic() - start
        time.sleep(0.1)
    raise AssertionError(f"not within {timeout} s: {what}")


def call_through_haproxy(state):
    """A stateless `read_file` of a missing file through HAProxy: the HTTP status or result."""
    with open(state["TOKEN_FILE"], encoding="utf-8") as f:
        token = f.readline().strip()
    client = mcp_http.Client(state["URL"], token, timeout=10)
    try:
        return client.call("read_file", {"path": "health-probe-missing.txt"})
    finally:
        client.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--state", default=os.path.join(os.environ.get("CLUSTER_DIR", "target/cluster"), "state"))
    args = parser.parse_args()
    state = mcp_http.load_state(args.state)
    ports = [int(p) for p in state["REPLICA_PORTS"].split()]
    sock, redis_pid = state["HAPROXY_SOCKET"], int(state["REDIS_PID"])

    def all_health(code):
        return all(health(p)[0] == code for p in ports)

    def all_haproxy(word):
        status = haproxy_status(sock)
        return len(status) == len(ports) and all(s.split()[0] == word for s in status.values())

    for port in ports:
        assert health(port) == (200, "ok\n"), (port, health(port))
    wait_for("every replica UP in HAProxy", lambda: all_haproxy("UP"), 10)
    result = call_through_haproxy(state)
    assert "content" in result, result
    print(f"health: {len(ports)} replicas 200 ok and UP; a call through HAProxy answered")

    os.kill(redis_pid, signal.SIGSTOP)
    try:
        took = wait_for("every replica 503 while Redis is paused", lambda: all_health(503), 15)
        body = health(ports[0])[1]
        assert body == "unavailable\n", body
        print(f"health: Redis paused: every replica 503 after {took:.1f} s")
        took = wait_for("every replica DOWN in HAProxy", lambda: all_haproxy("DOWN"), 15)
        print(f"health: HAProxy took every replica out after {took:.1f} more s")
        start = time.monotonic()
        try:
            call_through_haproxy(state)
            raise AssertionError("a call through HAProxy answered while every replica is DOWN")
        except mcp_http.Unanswered as e:
            assert "503" in str(e), e
        print(f"health: a call through HAProxy: 503 in {time.monotonic() - start:.2f} s")
    finally:
        os.kill(redis_pid, signal.SIGCONT)

    took = wait_for("every replica 200 after Redis resumed", lambda: all_health(200), 15)
    took += wait_for("every replica UP in HAProxy again", lambda: all_haproxy("UP"), 15)
    result = call_through_haproxy(state)
    assert "content" in result, result
    print(f"health: Redis resumed: every replica UP again after {took:.1f} s; a call answered")
    print("health: ok")


if __name__ == "__main__":
    main()
