"""Two of the examples in one server: the quickstart mounted as `quick`, the calendar as `cal`.

    mcpkit run tests/e2e/composed_server.py --http 127.0.0.1:0
"""

from __future__ import annotations

from pathlib import Path

from mcpkit import Server
from mcpkit.cli.target import load_server

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

server = Server("company", "1.0.0", instructions="The quickstart and the calendar, mounted.")
server.mount(load_server(str(EXAMPLES / "quickstart" / "server.py")), namespace="quick")
server.mount(load_server(str(EXAMPLES / "calendar" / "server.py")), namespace="cal")
