"""A minimal MCP Streamable HTTP client (Python stdlib only) for the cluster
drivers: stateless 2026-07-28 `tools/call` requests naming their trace in
`params._meta.traceparent`, and 2025-11-25 sessions (`initialize`, then the
`Mcp-Session-Id` header).

Errors are split the way a client must treat them behind a load balancer:
`Unanswered` (no JSON-RPC answer: connection refused or reset, a 502/503
from the proxy, a timeout) means the request may or may not have taken
effect; `SessionGone` (404 on a session) means the session must be started
again; a JSON-RPC result (even `isError: true`) is an answer.
"""

import http.client
import json
import secrets
import urllib.parse

STATELESS = "2026-07-28"
SESSIONS = "2025-11-25"


class Unanswered(Exception):
    """No answer: the request's effect is unknown."""


class SessionGone(Exception):
    """The server does not know the session (404): start a new one."""


def load_state(path):
    """The `KEY=VALUE` lines of scripts/cluster's state file, as a dict."""
    state = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            key, sep, value = line.strip().partition("=")
            if sep:
                state[key] = value.strip("'")
    return state


def new_traceparent():
    """A fresh W3C traceparent: a random trace-id and span-id, sampled."""
    return f"00-{secrets.token_hex(16)}-{secrets.token_hex(8)}-01"


def _answer(body, content_type):
    """The JSON-RPC message in a response body (JSON, or the last SSE `data:`)."""
    text = body.decode("utf-8", "replace")
    if "text/event-stream" in (content_type or ""):
        found = None
        for line in text.splitlines():
            if line.startswith("data:"):
                data = line[5:].strip()
                if data.startswith("{"):
                    message = json.loads(data)
                    if "id" in message and ("result" in message or "error" in message):
                        found = message
        return found
    return json.loads(text) if text.strip() else None


class Client:
    """One client of the MCP endpoint `url`, with its own keep-alive connection.

    `era` is STATELESS (every call names `trace`) or SESSIONS (a session is
    started on first use and again after `SessionGone`).
    """

    def __init__(self, url, token, era=STATELESS, trace=None, timeout=60.0):
        parts = urllib.parse.urlsplit(url)
        self.host, self.port, self.path = parts.hostname, parts.port, parts.path
        self.authority = parts.netloc
        self.token, self.era, self.timeout = token, era, timeout
        self.trace = trace or new_traceparent()
        self.conn = None
        self.session = None
        self.next_id = 0

    def close(self):
        """Ends the session (DELETE, best effort) and closes the connection."""
        if self.session is not None and self.conn is not None:
            try:
                self.conn.request(
                    "DELETE",
                    self.path,
                    headers={
                        "Host": self.authority,
                        "Authorization": f"Bearer {self.token}",
                        "Mcp-Session-Id": self.session,
                        "MCP-Protocol-Version": self.era,
                    },
                )
                self.conn.getresponse().read()
            except (OSError, http.client.HTTPException):
                pass
            self.session = None
        self._drop_connection()

    def _drop_connection(self):
        """Closes the connection only (the session, if any, is kept)."""
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def _post(self, message, extra_headers=None):
        """POSTs one message; returns (status, headers, body) or raises Unanswered."""
        body = json.dumps(message).encode()
        headers = {
            "Host": self.authority,
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {self.token}",
            "MCP-Protocol-Version": self.era,
        }
        headers.update(extra_headers or {})
        try:
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            self.conn.request("POST", self.path, body=body, headers=headers)
            response = self.conn.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException) as e:
            self._drop_connection()
            raise Unanswered(f"{type(e).__name__}: {e}") from e
        if response.getheader("connection", "").lower() == "close":
            self._drop_connection()
        return response.status, response, data

    def _start_session(self):
        self.session = None
        self.next_id += 1
        status, response, data = self._post(
            {
                "jsonrpc": "2.0",
                "id": self.next_id,
                "method": "initialize",
                "params": {
                    "protocolVersion": SESSIONS,
                    "capabilities": {},
                    "clientInfo": {"name": "cluster-driver", "version": "1"},
                },
            }
        )
        if status >= 500:
            raise Unanswered(f"initialize: HTTP {status}")
        session = response.getheader("mcp-session-id")
        if status != 200 or not session:
            raise RuntimeError(f"initialize: HTTP {status} {data[:300]!r}")
        self.session = session
        status, _, data = self._post(
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"Mcp-Session-Id": session},
        )
        if status == 404:
            raise SessionGone("initialized: 404")
        if status >= 500:
            raise Unanswered(f"notifications/initialized: HTTP {status}")

    def call(self, name, arguments):
        """`tools/call` of `name`; returns the result object (with `isError`).

        Raises Unanswered, SessionGone, or RuntimeError (a JSON-RPC error or
        an unexpected HTTP status: a bug, not a failover).
        """
        if self.era == SESSIONS and self.session is None:
            self._start_session()
        self.next_id += 1
        params = {"name": name, "arguments": arguments}
        headers = {}
        if self.era == STATELESS:
            params["_meta"] = {
                "io.modelcontextprotocol/protocolVersion": STATELESS,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "cluster-driver", "version": "1"},
                "traceparent": self.trace,
            }
            headers = {"Mcp-Method": "tools/call", "Mcp-Name": name}
        else:
            headers = {"Mcp-Session-Id": self.session}
        status, response, data = self._post(
            {"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call", "params": params},
            headers,
        )
        if status == 404 and self.era == SESSIONS:
            self.session = None
            raise SessionGone(f"HTTP 404 {data[:200]!r}")
        if status in (502, 503, 504):
            raise Unanswered(f"HTTP {status}")
        if status != 200:
            raise RuntimeError(f"tools/call {name}: HTTP {status} {data[:300]!r}")
        try:
            message = _answer(data, response.getheader("content-type"))
        except ValueError as e:
            raise Unanswered(f"unreadable answer: {e}") from e
        if message is None:
            # A 200 whose stream ended before the answer: the replica died mid-call.
            raise Unanswered("HTTP 200 without an answer")
        if "error" in message:
            raise RuntimeError(f"tools/call {name}: JSON-RPC error {message['error']}")
        return message["result"]


def result_text(result):
    """The text blocks of a tools/call result, joined."""
    return "\n".join(
        block.get("text", "") for block in result.get("content", []) if block.get("type") == "text"
    )


def haproxy_stats(socket_path):
    """{server name: (status, requests sent)} of the `replicas` backend."""
    import socket

    s = socket.socket(socket.AF_UNIX)
    s.connect(socket_path)
    s.sendall(b"show stat\n")
    out = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        out += chunk
    s.close()
    lines = out.decode().splitlines()
    header = lines[0].lstrip("# ").split(",")
    stats = {}
    for line in lines[1:]:
        row = dict(zip(header, line.split(",")))
        if row.get("pxname") == "replicas" and row.get("svname") not in ("BACKEND", None):
            stats[row["svname"]] = (row.get("status"), int(row.get("stot") or 0))
    return stats
