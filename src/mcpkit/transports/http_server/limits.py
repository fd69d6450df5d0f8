"""The limits of the HTTP listener (`ListenerLimits`, `HTTPOptions.listener`): what it refuses
before the app sees a request, each with its default for a public server and the reason for it.

Plain data, importable without uvicorn: `mcpkit.transports.http_server.listener` applies them when
`run_http` serves, and docs/security.md lists them with what each protection costs. Under
another ASGI server, or mounted in another application, that server's own settings apply.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ListenerLimits"]


@dataclass(frozen=True, slots=True)
class ListenerLimits:
    """The listener's limits (`HTTPOptions.listener`), with defaults for a public server."""

    max_header_bytes: int = 64 * 1024
    """A request head in all (request line and headers). 64 KiB is eight times what most
    proxies allow (nginx: 4 x 8 KiB) and far above what an MCP client sends; past it: 431."""
    max_header_line_bytes: int = 16 * 1024
    """One header line, or the request line (414 past it): room for a long bearer token."""
    max_headers: int = 100
    """Headers in one request; an MCP request carries about ten. Past it: 431."""
    header_timeout_s: float = 10.0
    """From a request's first byte (or the connection's opening) to the end of its head; a
    client slower than that gets 408 and the connection closes (one that sent nothing is
    closed without an answer). Raise it for clients on very slow links."""
    body_timeout_s: float = 30.0
    """Longest silence between two pieces of a body the app is waiting for: 408 (or, once the
    answer began, the connection closes). The wait is not counted while the app, not the
    client, is the slow one (reading paused, or 100-continue not sent yet)."""
    max_connections: int | None = 1000
    """uvicorn's `limit_concurrency`: past this many open connections or running requests, a
    request is answered 503 at once. Each SSE stream is a connection held open, so size it for
    the streams you expect; None: no bound."""
    keep_alive_s: float = 5.0
    """uvicorn's `timeout_keep_alive`: how long an idle connection waits for its next request.
    Behind a proxy that pools connections, make it longer than the proxy's own idle timeout
    (60 s for many balancers), or the proxy may reuse a connection the server is closing."""
    trusted_proxies: tuple[str, ...] = ("127.0.0.1",)
    """Addresses (or networks) whose X-Forwarded-For and X-Forwarded-Proto are believed
    (uvicorn's `forwarded_allow_ips`), so that behind a reverse proxy the client each request
    came from is known and per-client limits see clients, not the proxy. The default, as
    uvicorn's, believes a proxy on this host; name a proxy elsewhere, or () to believe none
    (a local proxy that passes a client's own X-Forwarded-For on unchecked)."""

    def __post_init__(self) -> None:
        for name in ("max_header_bytes", "max_header_line_bytes", "max_headers"):
            value = getattr(self, name)
            if type(value) is not int or value < 1:
                raise ValueError(f"ListenerLimits.{name} must be an int >= 1, not {value!r}")
        for name in ("header_timeout_s", "body_timeout_s", "keep_alive_s"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
                raise ValueError(f"ListenerLimits.{name} must be seconds > 0, not {value!r}")
        if self.max_connections is not None and (
                type(self.max_connections) is not int or self.max_connections < 1):
            raise ValueError(f"ListenerLimits.max_connections must be None or an int >= 1, "
                             f"not {self.max_connections!r}")
        if type(self.trusted_proxies) is not tuple:  # one string would be taken per letter
            raise ValueError(f"ListenerLimits.trusted_proxies must be a tuple of addresses, "
                             f"not {self.trusted_proxies!r}")
