"""The echo tool on mcpkit, a plain function declared never to wait (`blocking=False`): it runs
on the event loop's thread, without the worker-thread hop of a plain function.

stdio:  python -m mcpkit run bench/servers/mcpkit_echo_inline.py
HTTP:   python -m mcpkit run bench/servers/mcpkit_echo_inline.py --http 127.0.0.1:PORT
"""

from mcpkit import Server

server = Server("bench-echo", "1.0.0")


@server.tool(blocking=False)
def echo(text: str) -> str:
    """Echo the text back."""
    return text


# @@TOOLS@@
