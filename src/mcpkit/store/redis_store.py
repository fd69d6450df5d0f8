"""Redis behind the store seams: the client every seam of one backend shares, and `RedisStore`,
the single-use records.

redis-py's asyncio client keeps a pool of connections, made on first use, so building a
server connects to nothing. A command and a script are sent on one of redis-py's connections
with its connection calls (send, read the reply), kept idle between commands in a list of the
engine's own, not through the client's per-command path and its pool's checkout (its retry
object, observability hooks, health check), which together cost twice the loopback round
trip itself. A connection found dead (Redis restarted) is dropped and the command sent once
more on another; while Redis is down a command fails within `timeout` seconds with
`StoreUnavailableError` (-32603, HTTP 503) and the process stays up. A Redis that hangs (its
process stopped) fails each call the same way within `deadline` seconds (the URL's
`timeout=`, 5 by default), its connection, retry and reply included. A command's reply is its
acknowledgement: a call returns only after Redis answered it. Steps that must be atomic run as
one Lua script (Redis runs a script alone), so replicas cannot interleave them.

Keys live under one prefix (`mcpkit:` by default) so a Redis shared with other programs
keeps them apart. Times are Unix seconds from the caller's clock, as in every other backend.

Imports: the standard library, `mcpkit.protocol.extras`, `mcpkit.store`; redis-py when used.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from typing import Any, Final

from mcpkit.protocol.extras import require
from mcpkit.store import Store
from mcpkit.store.outage import DEFAULT_DEADLINE_S, deadline, unavailable

__all__ = [
    "RedisEngine",
    "RedisStore",
]

_ADD: Final = """
local held = redis.call('HGET', KEYS[1], 'e')
if held and tonumber(held) > tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[1], 'v', ARGV[1], 'e', ARGV[2])
local ttl = math.ceil(tonumber(ARGV[2]) - tonumber(ARGV[3]))
if ttl < 1 then ttl = 1 end
redis.call('EXPIRE', KEYS[1], ttl + 60)
return 1
"""
"""Record unless a live record holds the key. Redis's own expiry (with a minute's margin,
as the caller's clock decides liveness) removes records nobody asks for again."""


_INCR: Final = """
local held = redis.call('HGET', KEYS[1], 'e')
if (not held) or tonumber(held) <= tonumber(ARGV[2]) then
  redis.call('HSET', KEYS[1], 'c', 1, 'e', ARGV[1])
  local ttl = math.ceil(tonumber(ARGV[1]) - tonumber(ARGV[2]))
  if ttl < 1 then ttl = 1 end
  redis.call('EXPIRE', KEYS[1], ttl + 60)
  return 1
end
return redis.call('HINCRBY', KEYS[1], 'c', 1)
"""
"""One more for the key; a count past its expiry (by the caller's clock) starts again at 1."""


_IDLE_MAX: Final = 32
"""Idle connections one engine keeps; one more is closed once its command is answered."""


class RedisEngine:
    """One client to one Redis database, shared by the seams of a backend, and the one place
    where the driver's failures become `StoreUnavailableError`."""

    name: Final = "redis"

    def __init__(self, url: str, *, timeout: float = 2.0, prefix: str = "mcpkit:",
                 deadline: float = DEFAULT_DEADLINE_S) -> None:
        self._redis = require("redis", "the store redis://")
        self.url = url
        self.deadline = deadline
        self.timeout = min(timeout, deadline)
        self.prefix = prefix
        self._client: Any = None
        self._scripts: dict[str, str] = {}
        self._idle: list[Any] = []
        """Connections free for the next command (`_send`)."""
        """The SHA-1 digest of each script's source, by source."""

    @property
    def client(self) -> Any:
        if self._client is None:
            from redis.asyncio import Redis
            from redis.backoff import ExponentialBackoff
            from redis.retry import Retry

            self._client = Redis.from_url(
                self.url, socket_connect_timeout=self.timeout, socket_timeout=self.timeout,
                retry=Retry(ExponentialBackoff(cap=0.05, base=0.01), 1),
                retry_on_error=[self._redis.ConnectionError], health_check_interval=0,
            )
        return self._client

    def key(self, *parts: str) -> str:
        return self.prefix + ":".join(parts)

    async def _send(self, *command: Any) -> Any:
        """One command and its reply on an idle connection (one is made when none is idle).

        The connections are redis-py's, made by its pool's factory (the client's settings,
        timeouts included) and kept in a list of idle ones here: taking one from the pool and
        giving it back costs more than the loopback round trip. A connection that fails is
        dropped (redis-py disconnects it on any failure in a read, a timeout or a
        cancellation included, so no reply is left behind for the next user) and the command
        sent once more on another, as the client's retry would; one Redis closed while idle
        (a restart) fails that way on its first use. An error reply leaves the connection
        good."""
        idle = self._idle
        for attempt in (0, 1):
            conn = idle.pop() if idle else self.client.connection_pool.make_connection()
            try:
                if not conn.is_connected:
                    await conn.connect()
                await conn.send_command(*command)
                reply = await conn.read_response()
            except self._redis.ResponseError:
                idle.append(conn)
                raise
            except self._redis.ConnectionError:
                await conn.disconnect()
                if attempt:
                    raise
                continue
            except BaseException:
                await conn.disconnect()
                raise
            if len(idle) < _IDLE_MAX:
                idle.append(conn)
            else:
                await conn.disconnect()
            return reply
        raise AssertionError("unreachable")  # pragma: no cover

    async def run(self, what: str, command: str, *args: Any) -> Any:
        """One command; `StoreUnavailableError` naming `what` when Redis cannot be reached."""
        try:
            async with deadline(self.deadline):
                return await self._send(command, *args)
        except (self._redis.ConnectionError, self._redis.TimeoutError, TimeoutError) as exc:
            raise unavailable("Redis", self.name, what, exc) from None

    async def script(self, what: str, source: str, keys: Sequence[str],
                     args: Sequence[Any]) -> Any:
        """Run a Lua script atomically (by its digest, loaded again if Redis forgot it)."""
        digest = self._scripts.get(source)
        if digest is None:
            digest = self._scripts[source] = hashlib.sha1(source.encode()).hexdigest()
        try:
            async with deadline(self.deadline):
                try:
                    return await self._send("EVALSHA", digest, len(keys), *keys, *args)
                except self._redis.exceptions.NoScriptError:
                    await self._send("SCRIPT", "LOAD", source)
                    return await self._send("EVALSHA", digest, len(keys), *keys, *args)
        except (self._redis.ConnectionError, self._redis.TimeoutError, TimeoutError) as exc:
            raise unavailable("Redis", self.name, what, exc) from None

    async def pipeline(self, what: str, commands: Sequence[tuple[Any, ...]]) -> list[Any]:
        """Several commands in one MULTI/EXEC transaction, one round trip."""
        try:
            async with deadline(self.deadline), self.client.pipeline(transaction=True) as pipe:
                for command in commands:
                    pipe.execute_command(*command)
                return list(await pipe.execute())
        except (self._redis.ConnectionError, self._redis.TimeoutError, TimeoutError) as exc:
            raise unavailable("Redis", self.name, what, exc) from None

    async def close(self) -> None:
        client, self._client = self._client, None
        self._scripts.clear()
        idle, self._idle = self._idle, []
        for conn in idle:
            await conn.disconnect()
        if client is not None:
            await client.aclose()


class RedisStore(Store):
    """Expiring records as hashes (`<prefix>rec:<key>`), added by one script."""

    def __init__(self, engine: RedisEngine, *, clock: Callable[[], float] = time.time) -> None:
        self._engine = engine
        self._clock = clock

    async def add(self, key: str, value: bytes, expires_at: float) -> bool:
        added = await self._engine.script(
            "recording a single-use key", _ADD, [self._engine.key("rec", key)],
            [value, repr(float(expires_at)), repr(float(self._clock()))])
        return bool(added)

    async def incr(self, key: str, expires_at: float) -> int:
        count = await self._engine.script(
            "counting for a rate limit", _INCR, [self._engine.key("cnt", key)],
            [repr(float(expires_at)), repr(float(self._clock()))])
        return int(count)

    async def get(self, key: str) -> bytes | None:
        held = await self._engine.run("reading a record", "HMGET",
                                      self._engine.key("rec", key), "v", "e")
        value, expires = held
        if value is None or expires is None or float(expires) <= self._clock():
            return None
        return bytes(value)

    async def delete(self, key: str) -> None:
        await self._engine.run("deleting a record", "DEL", self._engine.key("rec", key))

    async def close(self) -> None:
        await self._engine.close()
