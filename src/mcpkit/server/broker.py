"""`SharedBroker`: the `Broker` of replicas sharing a store, over a `mcpkit.store.bus.Bus`.

What one replica announces reaches the streams other replicas hold, on three topics:

- `changes`: list-changed and resource-updated `Change`s, for `subscriptions/listen` streams
  and legacy GET streams (`publish`, `subscribe`: the `Broker` protocol);
- `answers`: a legacy client's answer to a request the server sent it mid-call, posted to
  whichever replica the load balancer chose, for the replica whose handler waits for it
  (`publish_answer`, `on_answer`; `mcpkit.transports.legacy.relay` uses them);
- `controls`: task cancel and update messages, for the replica running the task
  (`publish_control`, `controls`; the Tasks runtime uses them).

Every replica hears every message and keeps what concerns it; a message names the replica that
sent it, which delivers its own at once, without the round trip, and skips it when the bus
brings it back. So this replica's streams hear its own changes even while the engine is down.

Listening starts on first use in the running loop (a server is often built at import, before
any loop) and goes on until `close`, through engine restarts (`mcpkit.store.bus.follow`). A
change published while the engine is down is logged as lost for other replicas, since a
`publish` never blocks; an answer or a control message fails its caller with
`StoreUnavailableError`. Imports `mcpkit.store.bus` and `mcpkit.server.subscriptions`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, Final

from mcpkit.errors import StoreUnavailableError
from mcpkit.server.subscriptions import Change, LocalBroker
from mcpkit.store.bus import TOPICS, Bus, bus_for, follow

__all__ = [
    "SharedBroker",
    "share_broker",
]

log = logging.getLogger("mcpkit.server")

_READY_WAIT_S: Final = 2.0
"""How long a first use waits for listening to begin before it fails."""
_CONTROL_QUEUE: Final = 1024

Answer = Callable[[str, dict[str, Any]], None]
"""(session id, the client's JSON-RPC response) -> None."""


class SharedBroker:
    """Changes, legacy answers and task controls across replicas; see the module docstring."""

    def __init__(self, bus: Bus) -> None:
        self.bus = bus
        self.origin = secrets.token_hex(8)
        """This replica's name on the bus (new at every start)."""
        self._local = LocalBroker()
        self._answers: list[Answer] = []
        self._controls: set[asyncio.Queue[tuple[str, dict[str, Any]] | None]] = set()
        self._ready = asyncio.Event()
        self._order = asyncio.Lock()
        self._task: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pending: set[asyncio.Task[None]] = set()

    @classmethod
    def from_url(cls, url: str, namespace: str = "mcpkit") -> SharedBroker | None:
        """The broker of the engine a store URL names; None where no bus is needed."""
        bus = bus_for(url, namespace)
        return None if bus is None else cls(bus)

    # -- listening ------------------------------------------------------------------------

    def _start(self) -> None:
        if self._task is None or self._task.done():
            loop = asyncio.get_running_loop()
            if loop is not self._loop:  # an Event belongs to the loop that first waits on it
                self._loop, self._ready, self._order = loop, asyncio.Event(), asyncio.Lock()
            self._task = self._loop.create_task(follow(self.bus, TOPICS, self._deliver,
                                                       self._ready))

    async def ready(self) -> None:
        """Return once this replica listens (starting it on first use); raise
        `StoreUnavailableError` when it cannot, so a caller about to wait for another
        replica's message fails now rather than waiting for one it would never hear."""
        self._start()
        if self._ready.is_set():
            return
        try:
            async with asyncio.timeout(_READY_WAIT_S):
                await self._ready.wait()
        except TimeoutError:
            name = self.bus.name
            raise StoreUnavailableError(
                f"Service unavailable: this replica cannot listen to its {name} broker; it "
                f"recovers by itself when {name} returns, try again shortly", store=name) from None

    @property
    def listening(self) -> bool:
        """Whether messages of other replicas are being received right now (readiness)."""
        return self._ready.is_set()

    def _deliver(self, topic: str, payload: str) -> None:
        message = json.loads(payload)
        if type(message) is not dict or message.get("o") == self.origin:
            return
        body = message.get("m")
        if topic == "changes" and type(body) is dict and type(body.get("kind")) is str:
            uri, count = body.get("uri"), body.get("count")
            self._local.publish(Change(body["kind"], uri if type(uri) is str else None,
                                       count if type(count) is int and count > 1 else 1))
        elif topic == "answers" and type(body) is dict:
            self._answer(message.get("s"), body)
        elif topic == "controls" and type(body) is dict:
            self._control(message.get("t"), body)

    # -- changes (the Broker protocol) ------------------------------------------------------

    def publish(self, change: Change) -> None:
        """Deliver to this replica's streams now, and to the others' through the bus; never
        blocks, safe from any thread (the bus send is scheduled on the broker's loop)."""
        self._local.publish(change)
        payload = self._payload({"kind": change.kind, "uri": change.uri,
                                 **({"count": change.count} if change.count > 1 else {})})
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        loop = running or self._loop
        if loop is None or loop.is_closed():
            log.warning("a %s change was not sent to other replicas: the broker has not "
                        "started (publish it once the server serves)", change.kind)
            return
        if loop is running:
            self._send_later("changes", payload)
        else:
            loop.call_soon_threadsafe(self._send_later, "changes", payload)

    def _send_later(self, topic: str, payload: str) -> None:
        self._start()
        task = asyncio.get_running_loop().create_task(self._send_logged(topic, payload))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def _send_logged(self, topic: str, payload: str) -> None:
        try:
            async with self._order:  # fair: changes leave in the order they were published
                await self.bus.publish(topic, payload)
        except StoreUnavailableError as exc:
            log.warning("a change did not reach the other replicas: %s", exc)

    @asynccontextmanager
    async def subscribe(self) -> AsyncIterator[AsyncIterator[Change]]:
        self._start()
        async with self._local.subscribe() as changes:
            yield changes

    def close(self) -> None:
        """End every stream and stop listening (server shutdown)."""
        self._local.close()
        for queue in list(self._controls):
            queue.put_nowait(None)
        if self._task is not None:
            self._task.cancel()

    async def aclose(self) -> None:
        """`close`, then release the bus's connections."""
        self.close()
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)
        await self.bus.aclose()

    # -- legacy answers ---------------------------------------------------------------------

    async def publish_answer(self, session_id: str, response: dict[str, Any]) -> None:
        """Hand a legacy client's answer to the replica waiting for it (this one never is:
        it looked first); `StoreUnavailableError` when the bus is down."""
        await self.bus.publish("answers", self._payload(response, s=session_id))

    def on_answer(self, callback: Answer) -> None:
        """Call `callback(session_id, response)` for each answer another replica received."""
        self._answers.append(callback)

    def _answer(self, session_id: Any, response: dict[str, Any]) -> None:
        if type(session_id) is str:
            for callback in self._answers:
                callback(session_id, response)

    # -- task controls ----------------------------------------------------------------------

    async def publish_control(self, task_id: str, message: dict[str, Any]) -> None:
        """Send a task control message (cancel, update) to every replica, this one included:
        the one running the task acts on it. `StoreUnavailableError` when the bus is down."""
        await self.bus.publish("controls", self._payload(message, t=task_id))
        self._control(task_id, message)

    @asynccontextmanager
    async def controls(self) -> AsyncIterator[AsyncIterator[tuple[str, dict[str, Any]]]]:
        """(task id, message) for every control message published from now on, by any
        replica, until the broker closes."""
        await self.ready()
        queue: asyncio.Queue[tuple[str, dict[str, Any]] | None] = asyncio.Queue(_CONTROL_QUEUE)
        self._controls.add(queue)
        try:
            yield _drain(queue)
        finally:
            self._controls.discard(queue)

    def _control(self, task_id: Any, message: dict[str, Any]) -> None:
        if type(task_id) is not str:
            return
        for queue in list(self._controls):
            try:
                queue.put_nowait((task_id, message))
            except asyncio.QueueFull:
                log.warning("a control message for task %s was dropped: its reader is %d "
                            "messages behind", task_id, _CONTROL_QUEUE)

    def _payload(self, body: dict[str, Any], **fields: str) -> str:
        return json.dumps({"o": self.origin, "m": body, **fields}, separators=(",", ":"))


def share_broker(server: Any) -> None:
    """Give `server` a `SharedBroker` when its store URL (`ServerOptions.store`, else
    MCPKIT_STORE) is PostgreSQL or Redis and its broker is still the per-process default; a
    broker it was given (the calendar example's, one already shared) is kept. The HTTP app
    calls this as it is built: replicas are HTTP servers, and a stdio server is one process."""
    if type(server.broker) is not LocalBroker:
        return
    from mcpkit.store.urls import store_from_env

    given = server.options.store
    url = given if isinstance(given, str) else None if given is not None else store_from_env()
    shared = SharedBroker.from_url(url) if url else None
    if shared is not None:
        server.broker = shared


async def _drain(queue: asyncio.Queue[tuple[str, dict[str, Any]] | None]
                 ) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    while True:
        item = await queue.get()
        if item is None:
            return
        yield item
