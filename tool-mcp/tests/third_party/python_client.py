"""The PyPI `mcp` SDK (2.x) as a client of `tool serve`: lists and calls
read_file and grep_content on a real folder over stdio (2025-11-25
`initialize` and 2026-07-28 `server/discover`) and Streamable HTTP.

Usage: python_client.py TOOL_BINARY WORKSPACE
"""

import asyncio
import os
import socket
import subprocess
import sys
import time

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client


def text_of(result) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


async def exercise(session: ClientSession, label: str) -> None:
    names = []
    cursor = None
    while True:
        page = await session.list_tools(params={"cursor": cursor} if cursor else None)
        names += [t.name for t in page.tools]
        cursor = page.next_cursor
        if not cursor:
            break
    for needed in ("read_file", "grep_content"):
        assert needed in names, f"{label}: {needed} missing from {names}"
    read = await session.call_tool("read_file", {"file_path": "notes.txt"})
    assert not read.is_error, f"{label}: {read}"
    assert "needle in a haystack" in text_of(read), f"{label}: {text_of(read)}"
    grep = await session.call_tool("grep_content", {"pattern": "needle"})
    assert not grep.is_error, f"{label}: {grep}"
    assert "notes.txt" in text_of(grep), f"{label}: {text_of(grep)}"
    bad = await session.call_tool("read_file", {"file_path": 42})
    assert bad.is_error, f"{label}: bad arguments must be isError"
    print(f"ok   python mcp client, {label}: {len(names)} tools, read_file and grep_content")


async def over_stdio(tool: str, workspace: str, era: str) -> None:
    params = StdioServerParameters(command=tool, args=["--workspace", workspace, "serve"])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            if era == "2026-07-28":
                await session.discover()
            else:
                await session.initialize()
            await exercise(session, f"stdio {era}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def over_http(tool: str, workspace: str) -> None:
    port = free_port()
    server = subprocess.Popen([tool, "--workspace", workspace, "serve", "--http", f"127.0.0.1:{port}"])
    try:
        deadline = time.time() + 20
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                await asyncio.sleep(0.05)
        for era in ("2025-11-25", "2026-07-28"):
            async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write, *_):
                async with ClientSession(read, write) as session:
                    if era == "2026-07-28":
                        await session.discover()
                    else:
                        await session.initialize()
                    await exercise(session, f"http {era}")
    finally:
        server.terminate()
        server.wait(timeout=10)


async def main() -> None:
    tool, workspace = sys.argv[1], sys.argv[2]
    with open(os.path.join(workspace, "notes.txt"), "w") as f:
        f.write("first line\nneedle in a haystack\n")
    await over_stdio(tool, workspace, "2025-11-25")
    await over_stdio(tool, workspace, "2026-07-28")
    await over_http(tool, workspace)


asyncio.run(main())
