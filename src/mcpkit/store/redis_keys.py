"""The shared state key ring in Redis: `RedisKeys`, a `SharedRing` whose record is one string
key (`<prefix>state-keys`).

The ring is read with redis-py's synchronous client (sealing is synchronous, see
`mcpkit.store.shared_ring`); a read happens every few seconds at most. The record is
created with `SET NX`, so replicas starting at once all end up with the first one's key, and a
rotation is a `WATCH`ed transaction, tried again if another rotation got in first.

Imports: the standard library, `mcpkit.protocol.extras`, `mcpkit.store`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcpkit.protocol.extras import require
from mcpkit.store.outage import unavailable
from mcpkit.store.shared_ring import SharedRing

__all__ = [
    "RedisKeys",
    "RedisRingSource",
]


class RedisRingSource:
    """The record as one string; every failure to reach Redis is `StoreUnavailableError`."""

    engine = "Redis"
    name = "redis"

    def __init__(self, url: str, *, prefix: str = "mcpkit:", timeout: float = 2.0) -> None:
        self._redis = require("redis", "the store redis://")
        self.url = url
        self.key = prefix + "state-keys"
        self.timeout = timeout
        self._client: Any = None

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = self._redis.Redis.from_url(
                self.url, socket_connect_timeout=self.timeout, socket_timeout=self.timeout)
        return self._client

    def _call(self, what: str, work: Callable[[Any], Any]) -> Any:
        try:
            return work(self.client)
        except (self._redis.ConnectionError, self._redis.TimeoutError) as exc:
            raise unavailable("Redis", "redis", what, exc) from None

    def read(self) -> str | None:
        data = self._call("reading the state keys", lambda c: c.get(self.key))
        return None if data is None else bytes(data).decode()

    def create(self, text: str) -> str:
        def work(client: Any) -> Any:
            client.set(self.key, text, nx=True)
            return client.get(self.key)
        return bytes(self._call("creating the state keys", work)).decode()

    def update(self, change: Callable[[str | None], str]) -> str:
        def work(client: Any) -> str:
            for _ in range(100):  # bounded: another rotation at the same moment
                with client.pipeline() as pipe:
                    try:
                        pipe.watch(self.key)
                        held = pipe.get(self.key)
                        record = change(None if held is None else bytes(held).decode())
                        pipe.multi()
                        pipe.set(self.key, record)
                        pipe.execute()
                        return record
                    except self._redis.WatchError:
                        continue
            raise RuntimeError("the state keys changed 100 times during one rotation")
        return str(self._call("rotating the state keys", work))

    def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            client.close()


class RedisKeys(SharedRing):
    """The ring kept in the Redis at `url`."""

    def __init__(self, url: str, *, prefix: str = "mcpkit:", **options: Any) -> None:
        super().__init__(RedisRingSource(url, prefix=prefix), **options)
