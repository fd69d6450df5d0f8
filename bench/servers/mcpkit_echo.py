"""The echo tool on mcpkit.

stdio:  python -m mcpkit run bench/servers/mcpkit_echo.py
HTTP:   python -m mcpkit run bench/servers/mcpkit_echo.py --http 127.0.0.1:PORT
"""

from mcpkit import Server

server = Server("bench-echo", "1.0.0")


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


# @@TOOLS@@
