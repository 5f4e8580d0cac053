"""The JSON-RPC half the tests' small stdio MCP servers share
(`era_server.py`, `slow_server.py`): messages read one per line from stdin,
answers written one per line to stdout, flushed at once. Python 3 only."""

import json
import sys


def messages():
    """Yields each JSON object read from stdin; a line that is not JSON is
    skipped (a server of these tests never answers it)."""
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if isinstance(msg, dict):
            yield msg


def reply(msg_id, result=None, error=None):
    """Writes the answer to request `msg_id`: `error` when given, else
    `result`."""
    out = {"jsonrpc": "2.0", "id": msg_id}
    if error is not None:
        out["error"] = error
    else:
        out["result"] = result
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
