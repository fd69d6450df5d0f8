"""The echo tool on mcpkit, written as a coroutine (it then runs on the event loop's thread).

stdio:  python -m mcpkit run bench/servers/mcpkit_echo_async.py
HTTP:   python -m mcpkit run bench/servers/mcpkit_echo_async.py --http 127.0.0.1:PORT
"""

from mcpkit import Server

server = Server("bench-echo", "1.0.0")


@server.tool()
async def echo(text: str) -> str:
    """Echo the text back."""
    return text


# @@TOOLS@@
