"""A proxy as an ASGI application (`proxy.asgi()`), for uvicorn to serve: `uvicorn
asgi_proxy:app`. Its upstream is the test upstream over stdio; the ASGI lifespan starts and
stops the proxy, and so the upstream process (whose pid it logs at start)."""

import logging
import sys

from helpers.proxy.proxy_command import python_upstream
from mcpkit import Server, StdioServer

proxy = Server.proxy(StdioServer(python_upstream(), stderr="capture"))
app = proxy.asgi()
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(message)s")
