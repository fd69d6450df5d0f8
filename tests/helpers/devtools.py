"""Headless Chromium driven over the Chrome DevTools protocol, for tests that read back what a
page rendered, inside its iframes too (the MCP Apps view), or act on it as a user would (a
sign-in at an authorization server's pages).

The browser is started the way the probe's page test starts it (the same flags, a new empty
profile, `chromium` from PATH: a skip here, a failure under CI, where scripts/test installs it),
with `--remote-debugging-port=0`; the port it picked is read from the line it prints. One
websocket carries every command; a reader task hands each answer to its command and keeps the
events. A sandboxed iframe without `allow-same-origin` has an origin of its own, which Chromium
may render out of process: such a frame is reached through the target it attaches
(`Target.setAutoAttach`), an in-process one through an isolated world of its frame. Every wait
is bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from helpers.chromium import FLAGS, chromium

__all__ = ["LOOPBACK_ONLY", "Browser", "Frame", "Page", "chromium", "launched"]

WAIT = 30.0
"""The longest any one step may take (a loaded CI machine starts Chromium in seconds)."""


class Browser:
    """One Chromium process and its DevTools connection."""

    def __init__(self, process: asyncio.subprocess.Process, socket: Any) -> None:
        self.process = process
        self.socket = socket
        self.ids = itertools.count(1)
        self.waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.events: list[dict[str, Any]] = []
        self.arrived = asyncio.Condition()
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for raw in self.socket:
            message = json.loads(raw)
            future = self.waiting.pop(message.get("id"), None) if "id" in message else None
            if future is not None:
                if not future.done():
                    future.set_result(message)
                continue
            async with self.arrived:
                self.events.append(message)
                self.arrived.notify_all()

    async def send(self, method: str, params: dict[str, Any] | None = None,
                   session: str | None = None) -> dict[str, Any]:
        """The result of one command; AssertionError with the browser's words on an error."""
        ident = next(self.ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[ident] = future
        message: dict[str, Any] = {"id": ident, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        await self.socket.send(json.dumps(message))
        answer = await asyncio.wait_for(future, WAIT)
        assert "error" not in answer, f"{method}: {answer['error']}"
        result: dict[str, Any] = answer["result"]
        return result

    async def event(self, method: str, session: str | None = None,
                    **matching: Any) -> dict[str, Any]:
        """The params of the first event `method` (of `session`) whose params hold `matching`,
        waiting for it if it has not come yet."""
        def found() -> dict[str, Any] | None:
            for event in self.events:
                if event.get("method") != method or event.get("sessionId") != session:
                    continue
                params: dict[str, Any] = event.get("params", {})
                if all(_holds(params, key, value) for key, value in matching.items()):
                    return params
            return None

        async def wait() -> dict[str, Any]:
            async with self.arrived:
                while (params := found()) is None:
                    await self.arrived.wait()
                return params

        return await asyncio.wait_for(wait(), WAIT)

    async def new_page(self) -> Page:
        """A blank tab, attached, with its iframes attached as they appear."""
        target = (await self.send("Target.createTarget", {"url": "about:blank"}))["targetId"]
        session = (await self.send("Target.attachToTarget",
                                   {"targetId": target, "flatten": True}))["sessionId"]
        await self.send("Page.enable", session=session)
        await self.send("Target.setAutoAttach", {"autoAttach": True, "flatten": True,
                                                 "waitForDebuggerOnStart": False}, session)
        return Page(self, session)


def _holds(params: dict[str, Any], key: str, value: Any) -> bool:
    """`key` in `params`, a path into nested objects with `__` between keys (`targetInfo__type`)."""
    here: Any = params
    for part in key.split("__"):
        if not isinstance(here, dict) or part not in here:
            return False
        here = here[part]
    return bool(here == value)


class Frame:
    """Where an expression is evaluated: a session (an out-of-process frame's own), or an
    isolated world of an in-process frame (its DOM, apart from the page's scripts)."""

    def __init__(self, browser: Browser, session: str, context: int | None = None) -> None:
        self.browser = browser
        self.session = session
        self.context = context

    async def evaluate(self, expression: str) -> Any:
        """The JSON value of `expression`, a promise awaited; AssertionError on a throw."""
        params: dict[str, Any] = {"expression": expression, "awaitPromise": True,
                                  "returnByValue": True}
        if self.context is not None:
            params["contextId"] = self.context
        done = await self.browser.send("Runtime.evaluate", params, self.session)
        assert "exceptionDetails" not in done, done["exceptionDetails"]
        return done["result"].get("value")


class Page(Frame):
    def __init__(self, browser: Browser, session: str) -> None:
        super().__init__(browser, session)

    async def open(self, url: str) -> None:
        """Navigate and wait for the load event."""
        await self.browser.send("Page.navigate", {"url": url}, self.session)
        await self.browser.event("Page.loadEventFired", self.session)

    async def child_frame(self) -> Frame:
        """The page's (only) iframe, wherever Chromium renders it."""
        tree = (await self.browser.send("Page.getFrameTree", session=self.session))["frameTree"]
        children = tree.get("childFrames") or []
        if children:
            frame_id = children[0]["frame"]["id"]
            world = await self.browser.send("Page.createIsolatedWorld",
                                            {"frameId": frame_id, "worldName": "test"},
                                            self.session)
            return Frame(self.browser, self.session, world["executionContextId"])
        attached = await self.browser.event("Target.attachedToTarget", self.session,
                                            targetInfo__type="iframe")
        return Frame(self.browser, attached["sessionId"])


LOOPBACK_ONLY = "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"
"""A flag for pages that name hosts elsewhere (a web font): those names never resolve, so the
browser reaches 127.0.0.1 only."""


@contextlib.asynccontextmanager
async def launched(profile: Path, *flags: str) -> AsyncIterator[Browser]:
    """Chromium with a new empty profile in `profile` (and `flags`), closed (and reaped) on
    the way out."""
    import websockets

    process = await asyncio.create_subprocess_exec(
        chromium(), *FLAGS, *flags, f"--user-data-dir={profile}", "--remote-debugging-port=0",
        "--remote-debugging-address=127.0.0.1", "about:blank",
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE)
    assert process.stderr is not None
    said: list[str] = []

    async def endpoint() -> str:
        assert process.stderr is not None
        while line := (await process.stderr.readline()).decode(errors="replace"):
            said.append(line)
            found = re.search(r"DevTools listening on (ws://\S+)", line)
            if found:
                return found.group(1)
        raise AssertionError("chromium exited before listening: " + "".join(said)[-2000:])

    async def drain() -> None:  # the rest of its stderr, so the pipe never fills
        assert process.stderr is not None
        while line := await process.stderr.readline():
            said.append(line.decode(errors="replace"))

    browser: Browser | None = None
    try:
        url = await asyncio.wait_for(endpoint(), WAIT)
        draining = asyncio.create_task(drain())
        socket = await websockets.connect(url, max_size=None)
        browser = Browser(process, socket)
        yield browser
    finally:
        if browser is not None:
            with contextlib.suppress(Exception):
                await browser.send("Browser.close")
                await asyncio.wait_for(process.wait(), 10)
            await browser.socket.close()
            browser.reader.cancel()
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
        await asyncio.wait_for(process.wait(), WAIT)
        if browser is not None:
            draining.cancel()
