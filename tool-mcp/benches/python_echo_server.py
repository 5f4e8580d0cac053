"""The benchmark's reference: the same `echo(text)` tool served by the Python
`mcp` SDK over stdio."""

from mcp.server.mcpserver import MCPServer

server = MCPServer("python-echo")


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


server.run("stdio")
