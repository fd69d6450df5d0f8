"""`mcpkit.Server`: the server applications import, the core `Server` plus serving it.

The core class (`mcpkit.server.server.Server`) registers and serves requests and knows no
transport: the server layer sits below `transports/` and never imports one, not even when a
method is called. What an application wants in one call is added here, a layer above the
transports (like `testing/` and `cli/`), so the dependency points down: its server as an ASGI
application (`asgi()`), and serving it from a script (`run()`, so that `python server.py` works
as `mcpkit run server.py` does) or from a running event loop (`serve_stdio()`,
`serve_http()`).

Every transport, registry and check takes the core class, so an instance of either serves the
same everywhere (`isinstance(mcpkit.Server(...), mcpkit.server.server.Server)` holds). Each
transport loads only when it is asked for: a server run over stdio never imports HTTP.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar, Unpack

from mcpkit.server.server import Server as CoreServer

if TYPE_CHECKING:
    import httpx

    from mcpkit.client.transport import Connector
    from mcpkit.ext.tasks.options import TaskToolOptions
    from mcpkit.legacy.session_quota import SessionLimits
    from mcpkit.openapi import OpenAPIOptions
    from mcpkit.proxy import ProxyOptions, ProxyServer
    from mcpkit.server.options import ServerOptions
    from mcpkit.server.tools import Tool
    from mcpkit.transports.http_server.app import HTTPApp
    from mcpkit.transports.http_server.limits import ListenerLimits
    from mcpkit.transports.http_server.options import HTTPOptions

__all__ = ["Server"]

F = TypeVar("F", bound=Callable[..., Any])

_DEFAULT_ADDRESS = "127.0.0.1:8000/mcp"


class Server(CoreServer):
    """An MCP server: register tools, resources and prompts, then serve it on any transport."""

    if TYPE_CHECKING:  # the same methods, taking the Tasks extension's tool options too
        def add_tool(self, fn: Callable[..., Any], name: str | None = None,
                     **options: Unpack[TaskToolOptions]) -> Tool: ...

        def tool(self, name: str | None = None,
                 **options: Unpack[TaskToolOptions]) -> Callable[[F], F]: ...

    @classmethod
    def from_openapi(
        cls,
        spec: Any,
        *,
        client: httpx.AsyncClient | None = None,
        base_url: str | None = None,
        options: OpenAPIOptions | None = None,
        name: str | None = None,
        version: str | None = None,
        **settings: Any,
    ) -> Server:
        """A server whose tools (and resources, by `options.rules`) are the operations of an
        OpenAPI 3.0 or 3.1 document: a mapping, bytes, a path or an http(s) URL, in JSON or
        YAML (docs/openapi.md). Requests go through `client` (credentials and other defaults
        set on it, or in `options.headers`) to `base_url`, else the client's base URL, else
        the document's first server. `name` and `version` default to the document's
        `info`; `settings` are the `Server`'s other keywords (`options=` excepted: pass a
        `ServerOptions` as `settings["server_options"]`). Needs the `openapi` extra."""
        from mcpkit.openapi import add_openapi, load_document

        document = load_document(spec, options)
        server = cls(name or document.title, version or document.info_version,
                     **_server_settings(settings))
        add_openapi(server, document, client=client, base_url=base_url, options=options)
        return server

    @classmethod
    def from_fastapi(
        cls,
        app: Any,
        *,
        options: OpenAPIOptions | None = None,
        name: str | None = None,
        version: str | None = None,
        **settings: Any,
    ) -> Server:
        """A server whose tools are the routes of the FastAPI application `app`, called in
        this process over ASGI with no network hop (docs/openapi.md); the rest is
        `from_openapi`'s."""
        from mcpkit.openapi import add_fastapi

        info = app.openapi().get("info", {}) if callable(getattr(app, "openapi", None)) else {}
        server = cls(name or str(info.get("title") or "fastapi"),
                     version or str(info.get("version") or "0.0.0"),
                     **_server_settings(settings))
        add_fastapi(server, app, options=options)
        return server

    def admit_tool(self, tool: Tool) -> None:
        """A tool registered with the Tasks extension's options (`task=`) needs the extension:
        serve it (its options: `ServerOptions.extensions["tasks"]`)."""
        if tool.extension_options and tool.delegate is None:
            from mcpkit.ext.tasks import enable_tasks
            from mcpkit.ext.tasks.options import TASK_TOOL_OPTIONS

            if any(option in tool.extension_options and option not in self.tool_option_checks
                   for option in TASK_TOOL_OPTIONS):
                enable_tasks(self)
        super().admit_tool(tool)

    @classmethod
    def proxy(cls, connector: Connector, *, name: str | None = None,
              options: ProxyOptions | None = None,
              server_options: ServerOptions | None = None) -> ProxyServer:
        """A server serving another one: what the upstream behind `connector` (a
        `StdioServer`, an `HTTPConnector`, an `InMemory`; 2026-07-28 or 2025-11-25) offers, to
        callers of either era on any transport, its questions bridged between the eras
        (`mcpkit.proxy`, docs/proxy.md). It connects when it starts: `async with proxy`, or
        `run()`, `serve_stdio()`, `serve_http()`, `asgi()`, which start it themselves."""
        from mcpkit.proxy import ProxyServer

        return ProxyServer(connector, name=name, options=options, server_options=server_options)

    def asgi(self, options: HTTPOptions | None = None, **settings: Any) -> HTTPApp:
        """This server as a plain ASGI application speaking Streamable HTTP (both eras).

        Run it under any ASGI server, or mount it in Starlette/FastAPI. Settings are those of
        `mcpkit.transports.http_server.options.HTTPOptions`, e.g. `allowed_hosts=("mcp.example.com",)`.
        """
        from mcpkit.transports.http_server.app import HTTPApp

        return HTTPApp(self, options, **settings)

    def run(
        self,
        http: str | int | None = None,
        *,
        allowed_hosts: Iterable[str] = (),
        allowed_origins: Iterable[str] = (),
        listener: ListenerLimits | None = None,
        sessions: SessionLimits | None = None,
        session_idle_s: float | None = None,
    ) -> None:
        """Serve until the client goes (stdio) or until interrupted (HTTP), in an event loop
        of its own: the last line of a script, `if __name__ == "__main__": server.run()`.

        Without `http`, it serves stdio exactly as `mcpkit run server.py` does: stdout is the
        protocol's from this call on, and a `print()` (or logging, or a C extension writing to
        descriptor 1) goes to stderr, as does anything the script printed while it loaded that
        Python still held in its buffer. (Output already flushed before this call cannot be
        taken back; `mcpkit run` claims stdout before the script is imported at all.)

        `http` serves Streamable HTTP (both eras) with uvicorn on the address `mcpkit run
        --http` takes: `[HOST:]PORT[/PATH]`, e.g. `8000`, `"127.0.0.1:8000/mcp"` (the
        default path is `/mcp`, the host 127.0.0.1; port 0 picks a free one). The URL is
        printed on stderr. `allowed_hosts` adds `Host` values to accept (the public name
        behind a reverse proxy; bound to loopback, the loopback names are always accepted),
        `allowed_origins` browser origins. `listener`, `sessions` and `session_idle_s` set the
        limits of `HTTPOptions` (docs/security.md): what a connection may send, how fast a
        client may open 2025-11-25 sessions, and when an unused one ends.

        Inside a running event loop (a notebook, an async main) it is refused: await
        `serve_stdio()` or `serve_http()` there instead. A key ring file that exists but cannot
        be used (`mcpkit.store.state_keys.KeyFileError`) is refused before serving.
        """
        address = None if http is None else _address(http)
        hosts, origins = _names("allowed_hosts", allowed_hosts), _names(
            "allowed_origins", allowed_origins)
        if _loop_running():
            raise _inside_a_loop(address)
        self.sealer.check_keys()  # a key ring others may read is refused before serving
        if address is None:
            from mcpkit.transports.stdio.server import run_stdio

            _claim_stdout()
            _hint_on_a_terminal(self)
            run_stdio(self)
            return
        from mcpkit.transports.http_server.running import run_http

        run_http(self, address, allowed_hosts=hosts, allowed_origins=origins,
                 listener=listener, sessions=sessions, session_idle_s=session_idle_s)

    async def serve_stdio(self) -> None:
        """Serve on this process's stdin and stdout until stdin closes, in the running event
        loop; stdout is claimed for the protocol as `run()` claims it."""
        from mcpkit.transports.stdio.server import serve_stdio

        self.sealer.check_keys()
        _claim_stdout()
        await serve_stdio(self)

    async def serve_http(
        self,
        address: str | int = _DEFAULT_ADDRESS,
        *,
        allowed_hosts: Iterable[str] = (),
        allowed_origins: Iterable[str] = (),
        listener: ListenerLimits | None = None,
        sessions: SessionLimits | None = None,
        session_idle_s: float | None = None,
    ) -> None:
        """Serve Streamable HTTP with uvicorn in the running event loop until interrupted or
        cancelled; the address and options are those of `run(http=...)`."""
        from mcpkit.transports.http_server.running import serve_http

        self.sealer.check_keys()
        await serve_http(self, _address(address),
                         allowed_hosts=_names("allowed_hosts", allowed_hosts),
                         allowed_origins=_names("allowed_origins", allowed_origins),
                         listener=listener, sessions=sessions, session_idle_s=session_idle_s)


def _server_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """`from_openapi`'s keywords for the `Server` itself: `options` names the OpenAPI
    options there, so a `ServerOptions` comes as `server_options`."""
    out = dict(settings)
    if "server_options" in out:
        out["options"] = out.pop("server_options")
    return out


def _address(http: object) -> str:
    """`run(http=...)`'s address, checked before anything starts: a port number, or the text
    `mcpkit run --http` takes."""
    from mcpkit.transports.http_server.running import parse_address

    if isinstance(http, bool) or not isinstance(http, str | int):
        raise TypeError(f"Server.run(http=...) takes an address such as '127.0.0.1:8000/mcp' "
                        f"or a port number, not {http!r}")
    address = str(http)
    try:
        parse_address(address)
    except ValueError:
        raise ValueError(f"Server.run(http={http!r}): expected [HOST:]PORT[/PATH], e.g. 8000, "
                         "'127.0.0.1:8000' or '0.0.0.0:8000/mcp'") from None
    return address


def _names(option: str, names: Iterable[str]) -> tuple[str, ...]:
    """A list of host or origin names; a lone string would otherwise be read letter by
    letter, accepting hosts named `m`, `c` and `p`."""
    if isinstance(names, str):
        raise TypeError(f"Server.run({option}=...) takes a list of names, not the string "
                        f"{names!r}: write ({names!r},)")
    listed = tuple(names)
    for name in listed:
        if not isinstance(name, str) or not name:
            raise TypeError(f"Server.run({option}=...): {name!r} is not a host or origin name")
    return listed


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _inside_a_loop(address: str | None) -> RuntimeError:
    form = "await server.serve_stdio()" if address is None else (
        f"await server.serve_http({address!r})")
    return RuntimeError(f"Server.run() starts an event loop of its own, and one is already "
                        f"running here; use {form} instead")


def _claim_stdout() -> None:
    """Make stdout the protocol's, first sending what the script printed while it loaded and
    Python still buffers (stdout to a pipe is block-buffered) to stderr, where `mcpkit run`
    would have sent it: flushed onto the real stdout, it would reach the client as a line
    that is no message."""
    from mcpkit.transports.stdio.server import claim_stdout

    if sys.stdout is not sys.stderr:
        saved = os.dup(1)
        try:
            os.dup2(2, 1)
            with contextlib.suppress(Exception):
                sys.stdout.flush()
        finally:
            os.dup2(saved, 1)
            os.close(saved)
    claim_stdout()


def _hint_on_a_terminal(server: CoreServer) -> None:
    """`python server.py` typed at a terminal waits silently for JSON-RPC on stdin; one line on
    stderr says so. A host launching the server gives it pipes, and sees nothing of this."""
    with contextlib.suppress(OSError, ValueError):
        if os.isatty(0):
            print(f"mcpkit: serving {server.name} over stdio: an MCP client talks to it on "
                  "stdin and stdout (Ctrl-D ends it); server.run(http=8000) serves HTTP",
                  file=sys.stderr, flush=True)
