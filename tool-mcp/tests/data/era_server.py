#!/usr/bin/env python3
"""A minimal MCP server over stdio that speaks one protocol era only.

`era_server.py 2025-11-25`: `initialize` and sessions; `server/discover` is
an unknown method (-32601), as in every server written before 2026-07-28.
`era_server.py 2026-07-28`: `server/discover` and self-contained requests;
`initialize` is refused with -32022 (unsupported protocol version), as a
server that dropped the old lifecycle answers it.

Tools: `which_era` answers with the era and the handshake the client used,
so a test can tell which lifecycle its client settled on (it has no
annotations: MCP's defaults apply); `client_name` with the `clientInfo.name`
the client sent; `weather` has annotations (read-only, not destructive, open
world) and an `outputSchema`, and answers with `structuredContent`. Written for the
tests of tool-mcp's era negotiation; no dependencies beyond Python 3.
"""

import json
import sys

from stdio_rpc import messages, reply

ERA = sys.argv[1] if len(sys.argv) > 1 else "2025-11-25"
handshake = None

NO_ARGS = {"type": "object", "properties": {}}
TOOLS = [
    {"name": "which_era", "description": "Names the protocol era and handshake.",
     "inputSchema": NO_ARGS},
    {"name": "client_name", "description": "Names the client.", "inputSchema": NO_ARGS},
    {"name": "roots", "description": "Lists the client's roots; logs a line first.",
     "inputSchema": NO_ARGS},
    {"name": "weather", "description": "Today's temperature.", "inputSchema": NO_ARGS,
     "annotations": {"readOnlyHint": True, "destructiveHint": False, "openWorldHint": True,
                     "idempotentHint": True},
     "outputSchema": {"type": "object", "properties": {"celsius": {"type": "number"}},
                      "required": ["celsius"]}},
]
client_name = None


def complete(result):
    if ERA == "2026-07-28":
        result = dict(result, resultType="complete")
    return result


for msg in messages():
    method, msg_id = msg.get("method"), msg.get("id")
    if msg_id is None:
        continue  # notifications
    if method == "initialize":
        if ERA == "2026-07-28":
            reply(msg_id, error={"code": -32022, "message": "Unsupported protocol version",
                                 "data": {"supported": ["2026-07-28"]}})
        else:
            handshake = "initialize"
            client_name = msg.get("params", {}).get("clientInfo", {}).get("name")
            reply(msg_id, {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                           "serverInfo": {"name": "era-server", "version": "1.0.0"}})
    elif method == "server/discover":
        if ERA == "2026-07-28":
            handshake = "server/discover"
            reply(msg_id, {"resultType": "complete", "supportedVersions": ["2026-07-28"],
                           "capabilities": {"tools": {}}, "ttlMs": 0, "cacheScope": "private",
                           "_meta": {"io.modelcontextprotocol/serverInfo":
                                     {"name": "era-server", "version": "1.0.0"}}})
        else:
            reply(msg_id, error={"code": -32601, "message": "Method not found: server/discover"})
    elif method == "tools/list":
        reply(msg_id, complete({"tools": TOOLS}))
    elif method == "tools/call":
        meta = msg.get("params", {}).get("_meta", {})
        name = msg.get("params", {}).get("name")
        if name == "roots":
            if ERA == "2026-07-28":
                answers = msg.get("params", {}).get("inputResponses")
                if not answers:
                    reply(msg_id, {"resultType": "input_required", "inputRequests":
                                   {"r": {"method": "roots/list", "params": {}}}})
                    continue
                roots = answers["r"].get("roots", [])
            else:
                notify = {"jsonrpc": "2.0", "method": "notifications/message",
                          "params": {"level": "warning", "logger": "era", "data": "asking roots"}}
                sys.stdout.write(json.dumps(notify) + "\n")
                sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": "roots-1",
                                             "method": "roots/list"}) + "\n")
                sys.stdout.flush()
                roots = []
                for answer in sys.stdin:
                    answer = json.loads(answer)
                    if answer.get("id") == "roots-1":
                        roots = answer.get("result", {}).get("roots", [])
                        break
            text = " ".join(r["uri"] for r in roots) or "no roots"
            reply(msg_id, complete({"content": [{"type": "text", "text": text}]}))
        elif name == "client_name":
            said = meta.get("io.modelcontextprotocol/clientInfo", {}).get("name", client_name)
            reply(msg_id, complete({"content": [{"type": "text", "text": str(said)}]}))
        elif name == "weather":
            reply(msg_id, complete({"content": [{"type": "text", "text": "21.5 C"}],
                                    "structuredContent": {"celsius": 21.5}}))
        else:
            text = f"era {ERA}, handshake {handshake}"
            reply(msg_id, complete({"content": [{"type": "text", "text": text}]}))
    elif method == "ping":
        reply(msg_id, complete({}))
    else:
        reply(msg_id, error={"code": -32601, "message": f"Method not found: {method}"})
