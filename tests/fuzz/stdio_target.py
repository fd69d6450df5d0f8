"""The sample server as `mcpkit run` serves it, for the relay of the stdio fuzz test."""

from __future__ import annotations

from helpers.sample_server import make_server

server = make_server()
