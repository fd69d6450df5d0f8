"""`RedisBus`: the replicas' bus on Redis pub/sub (`mcpkit.store.bus`).

Each topic is the channel `NAMESPACE:bus:TOPIC`. Publishing is one `PUBLISH` on a small pool;
listening holds a connection of its own in subscribe mode. Neither retries behind the
caller's back: redis-py's default is to reconnect and re-subscribe silently, which would hide
the gap from the log, so `mcpkit.store.bus.follow` does the retrying and says so. Timeouts are
short for the same reason: a request that needs the bus fails in seconds, never hangs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import Any, Final

from mcpkit.protocol.extras import require
from mcpkit.store.bus import Bus, unavailable

__all__ = ["RedisBus"]

_TIMEOUT_S: Final = 2.0
"""Connecting, and each publish, give up after this long."""


class RedisBus(Bus):
    """Topics on the Redis server `url` names (`redis://` or `rediss://`)."""

    name = "Redis"

    def __init__(self, url: str, namespace: str = "mcpkit") -> None:
        self._redis = require("redis.asyncio", "a Redis broker (redis:// store URL)")
        self._url = url
        self._prefix = f"{namespace}:bus:"
        self._publisher: Any = None

    def _client(self, *, listening: bool) -> Any:
        from redis.asyncio.retry import Retry
        from redis.backoff import NoBackoff

        return self._redis.Redis.from_url(
            self._url, socket_connect_timeout=_TIMEOUT_S,
            socket_timeout=None if listening else _TIMEOUT_S,
            retry=Retry(NoBackoff(), 0), health_check_interval=0 if listening else 10)

    def _errors(self) -> tuple[type[BaseException], ...]:
        return (self._redis.RedisError, OSError, TimeoutError)

    async def publish(self, topic: str, payload: str) -> None:
        if self._publisher is None:
            self._publisher = self._client(listening=False)
        try:
            await self._publisher.publish(self._prefix + topic, payload)
        except self._errors() as exc:
            raise unavailable(self.name, f"publish on {topic!r}", exc) from None

    async def ping(self) -> None:
        if self._publisher is None:
            self._publisher = self._client(listening=False)
        try:
            await self._publisher.ping()
        except self._errors() as exc:
            raise unavailable(self.name, "answer a ping", exc) from None

    @asynccontextmanager
    async def listening(self, topics: Iterable[str]) -> AsyncIterator[AsyncIterator[tuple[str, str]]]:
        client = self._client(listening=True)
        pubsub = client.pubsub()
        channels = [self._prefix + t for t in topics]
        try:
            try:
                # Every SUBSCRIBE is confirmed before this yields: a publish made after that is
                # heard.
                await pubsub.subscribe(*channels)
                confirmed = 0
                while confirmed < len(channels):
                    reply = await pubsub.get_message(timeout=_TIMEOUT_S)
                    if reply is None:
                        raise TimeoutError("no subscription confirmed")
                    confirmed += reply.get("type") == "subscribe"
            except self._errors() as exc:
                raise unavailable(self.name, "subscribe", exc) from None
            yield self._messages(pubsub)
        finally:
            try:
                await pubsub.aclose()
                await client.aclose()
            except self._errors():  # the connection is already gone
                pass

    async def _messages(self, pubsub: Any) -> AsyncIterator[tuple[str, str]]:
        cut = len(self._prefix)
        while True:
            try:
                message = await pubsub.get_message(timeout=None)
            except self._errors() as exc:
                raise unavailable(self.name, "listen", exc) from None
            if message is None or message.get("type") != "message":
                continue
            channel, data = message["channel"], message["data"]
            yield (channel.decode() if isinstance(channel, bytes) else channel)[cut:], (
                data.decode() if isinstance(data, bytes) else data)

    async def aclose(self) -> None:
        if self._publisher is not None:
            publisher, self._publisher = self._publisher, None
            try:
                await publisher.aclose()
            except self._errors():
                pass
