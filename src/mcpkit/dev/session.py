"""The inspector's connection to its target: one real `Client`, opened, switched, reopened.

The client is the public `mcpkit.Client` as any application holds it: it probes the
era (or is pinned to one when the page switches era), declares MCP Apps (so a server shows its
app-only tools too) and answers the server's questions through the page (`asking`). The
connector is the one the CLI builds for the same SERVER argument (`connector_for`), with this
run's tap and HTTP hooks added, so a sign-in kept by `mcpkit login` is sent here too.

What the page sees of the connection is one state event, `connection`, published on every
change: connecting, connected (era, version, the evidence of how the era was found, server
info, instructions, capabilities, extensions) or failed (the reason, and whether signing in
would help). While connected, one `subscriptions/listen` stream (or what a legacy server
offers in its place) carries list changes and the updates of the subscribed resources; a list
change lists again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any, Final

from mcpkit._version import __version__
from mcpkit.cli.servers import connector_for
from mcpkit.cli.usage import UsageError
from mcpkit.client import ClientOptions
from mcpkit.clients import Client
from mcpkit.dev.asking import Questions
from mcpkit.dev.catalogue import counted, evidence, gather
from mcpkit.dev.events import EventHub
from mcpkit.dev.targets import Target
from mcpkit.dev.views import Views
from mcpkit.dev.wire import WireLog
from mcpkit.errors import AuthError, MCPError, NotConnectedError
from mcpkit.ext.apps import APPS, MIME_TYPE
from mcpkit.types.methods import Method

__all__ = [
    "CLIENT_INFO",
    "ERAS",
    "Session",
]

log = logging.getLogger("mcpkit.dev")

CLIENT_INFO: Final = {"name": "mcpkit-dev", "version": __version__}
ERAS: Final = ("auto", "modern", "legacy")
"""What the page may ask the connection to use: probe, or pin one era."""
_LIST_CHANGES: Final = frozenset({Method.TOOLS_LIST_CHANGED, Method.PROMPTS_LIST_CHANGED,
                                  Method.RESOURCES_LIST_CHANGED})


class Session:
    def __init__(self, hub: EventHub, target: Target, *, era: str = "auto",
                 timeout: float = 300.0,
                 tap: Callable[[str, dict[str, Any]], None] | None = None) -> None:
        """`tap`, when given, also sees every message of the connection (as the transport's
        tap does: `("send" | "receive", message)`), after the wire log."""
        self.hub = hub
        self.target = target
        self.wire = WireLog(hub, target.server)
        self.questions = Questions(hub)
        self.views = Views()
        self.era_choice = era
        self.timeout = timeout
        self.client: Client | None = None
        self.subscribed: set[str] = set()
        self.reloads = 0
        self._listings = 0
        self._tap = tap
        self._lock = asyncio.Lock()
        self._listening: asyncio.Task[None] | None = None
        self._closing: list[Callable[[], Any]] = []
        self._failure: dict[str, Any] | None = None
        self._openings: list[dict[str, Any]] = []
        self._supported: list[str] = []

    # -- opening and closing ----------------------------------------------------------------

    def on_close(self, hook: Callable[[], Any]) -> None:
        """Run `hook` whenever the connection closes (the task board stops following)."""
        self._closing.append(hook)

    def _make_client(self) -> Client:
        http = self.target.url is not None
        connector = connector_for(
            self.target.server, tap=self._tapped,
            http_options={"event_hooks": self.wire.hooks()} if http else None)
        options = ClientOptions(era=self.era_choice, timeout=self.timeout,  # type: ignore[arg-type]
                                extensions={APPS: {"mimeTypes": [MIME_TYPE]}})
        questions = self.questions
        return Client(connector, client_info=CLIENT_INFO, elicit=questions.elicit,
                      elicit_url=questions.elicit_url, sample=questions.sample,
                      roots=questions.list_roots, on_log=self._on_log,
                      on_elicitation_complete=self._on_complete, options=options)

    def _tapped(self, direction: str, message: dict[str, Any]) -> None:
        try:
            self.wire.tap(direction, message)
        except Exception:  # the wire pane must never break the connection it shows
            log.exception("the wire log failed on a message (the connection goes on)")
        if self._tap is not None:
            self._tap(direction, message)

    def stderr(self) -> str | None:
        """What a stdio server wrote on stderr lately (its last 64 KiB), or None over HTTP."""
        transport = self.client.transport if self.client is not None else None
        text = getattr(transport, "stderr_text", None)
        return text if isinstance(text, str) else None

    async def open(self, era: str | None = None) -> dict[str, Any]:
        """(Re)connect, in `era` when given; the connection's state, as the page gets it."""
        if era is not None and era not in ERAS:
            raise ValueError(f"era is one of {', '.join(ERAS)}, not {era!r}")
        async with self._lock:
            await self._close()
            if era is not None:
                self.era_choice = era
            mark = len(self.wire.openings)
            self._failure = None
            self._publish("connecting")
            client: Client | None = None
            try:
                client = self._make_client()
                await client.connect()
                discovered = await client.discover()
            except (MCPError, UsageError, OSError) as exc:
                self._openings = self.wire.openings[mark:]
                self._failure = {"error": str(exc) or type(exc).__name__,
                                 "authNeeded": isinstance(exc, AuthError)}
                if client is not None:
                    with contextlib.suppress(Exception):
                        await client.close()
                return self._publish("failed")
            self.client = client
            self._openings = self.wire.openings[mark:]
            versions = discovered.get("supportedVersions")
            self._supported = [v for v in versions if isinstance(v, str)] if isinstance(
                versions, list) else []
            state = self._publish("connected")
        lists = await self._listed()
        self.listen()
        await self._counted(lists)
        return state

    async def close(self) -> None:
        async with self._lock:
            await self._close()

    async def _close(self) -> None:
        if self._listening is not None:
            self._listening.cancel()
            with contextlib.suppress(BaseException):
                await self._listening
            self._listening = None
        for hook in self._closing:
            hook()
        self.questions.withdraw()
        client, self.client = self.client, None
        if client is not None:
            with contextlib.suppress(Exception):
                await client.close()

    def require(self) -> Client:
        if self.client is None:
            why = (self._failure or {}).get("error")
            raise NotConnectedError(f"not connected{f': {why}' if why else ''}; reconnect first")
        return self.client

    # -- what the page sees ----------------------------------------------------------------------

    def state(self, status: str) -> dict[str, Any]:
        client = self.client
        out: dict[str, Any] = {
            "state": status, "target": self.target.given, "server": self.target.server,
            "transport": "http" if self.target.url is not None else "stdio",
            "eraChoice": self.era_choice, "evidence": evidence(self._openings),
            "reload": self.reloads, "signIn": self.target.url is not None,
        }
        if client is not None and status == "connected":
            out.update({
                "era": client.era, "version": client.protocol_version,
                "supportedVersions": self._supported, "serverInfo": client.server_info,
                "instructions": client.instructions,
                "capabilities": client.server_capabilities or {},
                "extensions": client.server_extensions, "declared": client.capabilities,
            })
        if self._failure is not None:
            out.update(self._failure)
        return out

    def _publish(self, status: str) -> dict[str, Any]:
        state = self.state(status)
        self.hub.publish("connection", state, key="connection")
        return state

    async def refresh(self) -> dict[str, Any]:
        """List everything again and publish it, then its token budget."""
        lists = await self._listed()
        return await self._counted(lists)

    async def _listed(self) -> dict[str, Any]:
        lists = await gather(self.require())
        lists["subscribed"] = sorted(self.subscribed)
        self._listings += 1
        lists["listing"] = self._listings
        self.hub.publish("catalogue", lists, key="catalogue")
        return lists

    async def _counted(self, lists: dict[str, Any]) -> dict[str, Any]:
        instructions = self.client.instructions if self.client is not None else None
        lists = {**lists, "budget": await counted(lists, instructions)}
        if lists["listing"] == self._listings:  # no newer listing was shown meanwhile
            self.hub.publish("catalogue", lists, key="catalogue")
        return lists

    # -- the listen stream -----------------------------------------------------------------------

    def listen(self) -> None:
        """(Re)open the listen stream for list changes and the subscribed resources."""
        if self._listening is not None:
            self._listening.cancel()
        self._listening = asyncio.ensure_future(self._listen(sorted(self.subscribed)))

    async def _listen(self, uris: list[str]) -> None:
        client = self.client
        if client is None:
            return
        try:
            async with client.listen(tools=True, prompts=True, resources=True,
                                     uris=uris) as subscription:
                self.hub.publish("listening", {"acknowledged": subscription.acknowledged,
                                               "uris": uris}, key="listening")
                async for note in subscription:
                    method = note.get("method")
                    self.hub.publish("changed", {"method": method, "params": note.get("params")})
                    if method in _LIST_CHANGES:
                        await self.refresh()
            self.hub.publish("listening", {"error": "the server ended the listen stream; "
                                           "reconnect to listen again", "uris": uris},
                             key="listening")
        except MCPError as exc:
            self.hub.publish("listening", {"error": str(exc), "uris": uris}, key="listening")

    # -- the client's callbacks --------------------------------------------------------------------

    def _on_log(self, level: str, data: Any, logger: str | None) -> None:
        self.hub.publish("log", {"level": level, "data": data, "logger": logger})

    def _on_complete(self, elicitation_id: str) -> None:
        self.hub.publish("asked", {"method": Method.ELICITATION_COMPLETE,
                                   "elicitationId": elicitation_id})
