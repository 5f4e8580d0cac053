#!/usr/bin/env python3
"""A scripted OpenAI-compatible chat model for tests/restate.sh.

POST /v1/chat/completions (non-streaming). The task (first user message)
names a file and a script, `file=NAME script=SCRIPT`; the answer to a request
is the script's step k+1, where k is the number of tool messages in the
request, so the answer depends only on the conversation and any worker gets
the same one. Every request is appended to LOG (JSON Lines): the file, the
number of messages, and the tool messages (call id, content) in order.

usage: model_server.py PORT LOG
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def call(n, name, **args):
    return {"call": {"id": f"c{n}", "name": name, "arguments": args}}


def script(name, f):
    if name == "five":
        # Five calls: read, append, append, read, append; then the answer.
        return [
            call(1, "read_notes", file=f),
            call(2, "append_note", file=f, line="one"),
            call(3, "append_note", file=f, line="two"),
            call(4, "read_notes", file=f),
            call(5, "append_note", file=f, line="three"),
            {"text": "done"},
        ]
    if name == "person":
        # A question, then an append that needs an approval.
        return [
            call(1, "ask_user", question="Which line?", choices=["alpha", "beta"]),
            call(2, "guarded_append", file=f, line="from-model"),
            call(3, "read_notes", file=f),
            {"text": "done"},
        ]
    raise ValueError(f"unknown script {name!r}")


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        messages = body["messages"]
        task = next(m["content"] for m in messages if m["role"] == "user")
        fields = dict(part.split("=", 1) for part in task.split() if "=" in part)
        tools = [(m.get("tool_call_id"), m.get("content")) for m in messages if m["role"] == "tool"]
        with open(sys.argv[2], "a") as log:
            log.write(json.dumps({"file": fields["file"], "messages": len(messages), "tools": tools}) + "\n")
        steps = script(fields["script"], fields["file"])
        step = steps[min(len(tools), len(steps) - 1)]
        if "text" in step:
            message = {"role": "assistant", "content": step["text"]}
            finish = "stop"
        else:
            c = step["call"]
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [{
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])},
                }],
            }
            finish = "tool_calls"
        answer = json.dumps({
            "id": "scripted",
            "object": "chat.completion",
            "model": "scripted",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)


ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
