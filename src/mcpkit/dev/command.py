"""`mcpkit dev TARGET`: start the target (or reach it), serve the inspector on 127.0.0.1, open
it in the browser.

The page's address carries a token new to each run (`http://127.0.0.1:PORT/TOKEN/`), printed on
stdout; `--no-browser` only prints it. The app runs on uvicorn in this process, beside the
connection it inspects, until Ctrl-C. Mistakes on the command line are one line on stderr and
exit status 2, as for every mcpkit command.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import secrets
import signal
import socket
import sys
import threading
import webbrowser
from collections.abc import AsyncIterator, Iterator
from typing import Any

from mcpkit.cli.usage import EXIT_USAGE, UsageError

__all__ = [
    "Inspector",
    "inspector",
    "register",
    "run_dev",
]


def register(sub: Any) -> None:
    """Add `mcpkit dev` to `mcpkit`'s subparsers."""
    p = sub.add_parser(
        "dev", help="inspect a server in the browser (both eras, the wire in view)",
        description="Open an inspector for a server in the browser: its tools with a form per "
        "input schema, resources, prompts, tasks, MCP App views, the questions it asks, and "
        "every JSON-RPC message on the wire. Served on 127.0.0.1 by this process, at an "
        "address with a token new to each run.",
        epilog="examples: mcpkit dev examples/calendar/server.py | mcpkit dev server.py --http "
        "--reload | mcpkit dev http://127.0.0.1:8000/mcp | mcpkit dev 'npx -y some-server'")
    p.set_defaults(dev_command=True)
    p.add_argument("target", metavar="TARGET",
                   help="a server file (path/to/server.py[:name]), an http(s) URL, or a quoted "
                   "command line")
    p.add_argument("--http", action="store_true",
                   help="serve the file over Streamable HTTP (a child `mcpkit run --http` on a "
                   "free port) and inspect it there")
    p.add_argument("--reload", action="store_true",
                   help="restart the server when a .py file beside it changes")
    p.add_argument("--era", choices=("auto", "modern", "legacy"), default="auto",
                   help="probe the era (auto, the default), or speak 2026-07-28 (modern) or "
                   "2025-11-25 (legacy) from the start; the page can switch")
    p.add_argument("--port", type=int, default=0, metavar="PORT",
                   help="the inspector's port on 127.0.0.1 (default: a free one)")
    p.add_argument("--no-browser", action="store_true",
                   help="print the inspector's address without opening a browser")
    p.add_argument("--timeout", type=float, default=300.0, metavar="SECONDS",
                   help="wait this long for each response (default 300: a question may wait "
                   "for you)")


def run_dev(args: argparse.Namespace) -> int:
    from mcpkit.dev.targets import read_target
    from mcpkit.transports.loop import run

    try:
        target = read_target(args.target, http=args.http, reload=args.reload)
        if not 0 <= args.port <= 65535:
            raise UsageError(f"--port {args.port} is not a port (0-65535)")
        if not args.timeout > 0:
            raise UsageError("--timeout is a number of seconds above zero")
        return run(_serve(args, target))
    except UsageError as exc:
        print(f"mcpkit dev: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 0


def _bound(port: int) -> socket.socket:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind(("127.0.0.1", port))
    except OSError as exc:
        listener.close()
        raise UsageError(f"cannot serve on 127.0.0.1:{port}: {exc.strerror or exc} (choose "
                         "another --port, or leave it out for a free one)") from None
    listener.listen(128)
    return listener


def _open_browser(url: str) -> None:
    from mcpkit.transports.oauth.redirect import can_open_browser

    if not can_open_browser():
        print("mcpkit dev: no browser can be shown here; open the address above", flush=True)
        return

    def opening() -> None:
        with contextlib.suppress(webbrowser.Error, OSError):
            webbrowser.open(url, new=2)

    threading.Thread(target=opening, name="mcpkit-browser", daemon=True).start()


@dataclasses.dataclass
class Inspector:
    """One running inspector: its page's address, its event hub and its connection."""

    url: str
    sandbox: str
    """The origin MCP App views are served from."""
    hub: Any
    session: Any
    served: Any
    serving: asyncio.Future[Any]
    server: Any

    def stop(self) -> None:
        """End the app (`serving` then completes, and `inspector()` cleans up); the pages'
        event streams end first, so uvicorn has no open stream to wait for."""
        self.hub.close()
        self.server.should_exit = True


def _uvicorn_server(app: Any) -> Any:
    """uvicorn's server without its own signal handling: uvicorn re-raises a captured SIGINT
    or SIGTERM once it has stopped, which would end this process before it stops the server
    process it started; `mcpkit dev` handles the signals itself (`_serve`)."""
    import uvicorn

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    return Server(uvicorn.Config(app, log_level="warning", lifespan="off", ws="none",
                                 timeout_graceful_shutdown=2))


@contextlib.asynccontextmanager
async def inspector(target: Any, *, era: str = "auto", timeout: float = 300.0, port: int = 0,
                    tap: Any = None) -> AsyncIterator[Inspector]:
    """The inspector of `target` served on 127.0.0.1 (and its server started: over HTTP when
    `target.kind` says so), connecting in the background; everything stops on the way out.
    What `mcpkit dev` runs, and what its tests run in their own process (`tap` sees each
    message)."""
    from mcpkit.dev.actions import Actions
    from mcpkit.dev.events import EventHub
    from mcpkit.dev.guard import Guard
    from mcpkit.dev.session import Session
    from mcpkit.dev.targets import Served
    from mcpkit.dev.web import DevApp

    served = None
    if target.file is not None and target.kind == "http":
        served = Served(target)
        await served.start()
        target = dataclasses.replace(target, url=served.url)
    page_socket, sandbox_socket = _bound(port), _bound(0)
    page = Guard(page_socket.getsockname()[1], secrets.token_urlsafe(24))
    sandbox = Guard(sandbox_socket.getsockname()[1], secrets.token_urlsafe(24),
                    methods=frozenset({"GET", "HEAD"}), framed=True)
    hub = EventHub()
    session = Session(hub, target, era=era, timeout=timeout, tap=tap)
    actions = Actions(session, frames=f"{sandbox.origin}/{sandbox.token}/view/")
    app = DevApp(hub, actions, session.views, page, sandbox)
    server = _uvicorn_server(app)
    serving = asyncio.ensure_future(server.serve(sockets=[page_socket, sandbox_socket]))
    opening = asyncio.ensure_future(session.open())
    try:
        yield Inspector(f"{page.origin}/{page.token}/", sandbox.origin, hub, session, served,
                        serving, server)
    finally:
        opening.cancel()
        with contextlib.suppress(BaseException):
            await opening
        hub.close()
        server.should_exit = True
        with contextlib.suppress(BaseException):
            await serving
        await session.close()
        if served is not None:
            await served.stop()
        page_socket.close()
        sandbox_socket.close()


async def _serve(args: argparse.Namespace, target: Any) -> int:
    from mcpkit.dev.targets import watch

    async with inspector(target, era=args.era, timeout=args.timeout, port=args.port) as running:
        print(f"mcpkit dev: inspecting {running.session.target.server} at {running.url} (MCP "
              f"App views from {running.sandbox})", flush=True)
        if not args.no_browser:
            _open_browser(running.url)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):  # not on Windows
                loop.add_signal_handler(sig, running.stop)
        session, served, hub = running.session, running.served, running.hub

        async def changed(name: str) -> None:
            session.reloads += 1
            hub.publish("reload", {"file": name, "count": session.reloads})
            print(f"mcpkit dev: {name} changed; restarting the server", file=sys.stderr,
                  flush=True)
            if served is not None:
                await served.stop()
                try:
                    await served.start()
                except UsageError as exc:
                    print(f"mcpkit dev: {exc}", file=sys.stderr, flush=True)
            await session.open()

        watching = asyncio.ensure_future(watch(target, changed)) if args.reload else None
        try:
            await running.serving
        finally:
            if watching is not None:
                watching.cancel()
                with contextlib.suppress(BaseException):
                    await watching
    return 0
