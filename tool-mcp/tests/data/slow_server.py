#!/usr/bin/env python3
"""A minimal MCP server over stdio (2025-11-25) whose tools never finish on
their own, for tests of cancellation (review 26, F1 and F2).

`slow_server.py RECORD`: every event below is appended to the file RECORD,
one line each, flushed at once, so a test can tell what reached the server
even after the client is gone:

- `started wait_plain ID`: a plain call of `wait_plain`, which is never
  answered;
- `cancelled ID`: `notifications/cancelled` naming request ID;
- `task TASK`: a call of `wait_task` as a task (the 2025-11-25 tasks
  utility, SEP-1686: `"task": {"ttl": ms}` in `tools/call`); the task stays
  `working` for ever. A plain call of `wait_task` is refused with -32601,
  as the utility has a server refuse a tool whose task support is
  `required`;
- `tasks/cancel TASK`: the task's cancellation.

`server/discover` is an unknown method (-32601): clients fall back to
`initialize`. No dependencies beyond Python 3.
"""

import sys

from stdio_rpc import messages, reply

RECORD = sys.argv[1] if len(sys.argv) > 1 else "/dev/null"
NO_ARGS = {"type": "object", "properties": {}}
TOOLS = [
    {"name": "wait_plain", "description": "Never answers.", "inputSchema": NO_ARGS},
    {"name": "wait_task", "description": "A task that never ends (call it as a task).",
     "inputSchema": NO_ARGS},
]
tasks = 0


def record(line):
    with open(RECORD, "a", encoding="utf-8") as out:
        out.write(line + "\n")


def task(task_id, status):
    return {"taskId": task_id, "status": status, "createdAt": "2026-01-01T00:00:00Z",
            "lastUpdatedAt": "2026-01-01T00:00:00Z", "ttl": 600000, "pollInterval": 200}


for msg in messages():
    method, msg_id = msg.get("method"), msg.get("id")
    params = msg.get("params") or {}
    if method == "notifications/cancelled":
        record(f"cancelled {params.get('requestId')}")
        continue
    if msg_id is None:
        continue
    if method == "initialize":
        reply(msg_id, {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                       "serverInfo": {"name": "slow-server", "version": "1.0.0"}})
    elif method == "tools/list":
        reply(msg_id, {"tools": TOOLS})
    elif method == "tools/call":
        name = params.get("name")
        if name == "wait_plain":
            record(f"started wait_plain {msg_id}")
        elif name == "wait_task" and "task" in params:
            tasks += 1
            task_id = f"task-{tasks}"
            record(f"task {task_id}")
            reply(msg_id, {"task": task(task_id, "working")})
        elif name == "wait_task":
            reply(msg_id, error={"code": -32601,
                                 "message": "Tool wait_task requires task augmentation"})
        else:
            reply(msg_id, error={"code": -32602, "message": f"Unknown tool: {name}"})
    elif method == "tasks/get":
        reply(msg_id, task(params.get("taskId"), "working"))
    elif method == "tasks/cancel":
        record(f"tasks/cancel {params.get('taskId')}")
        reply(msg_id, task(params.get("taskId"), "cancelled"))
    elif method == "ping":
        reply(msg_id, {})
    else:
        reply(msg_id, error={"code": -32601, "message": f"Method not found: {method}"})
