"""`RedisSessionStore`: legacy sessions in Redis, shared by every replica.

The same policy as `MemorySessionStore` (`mcpkit.store.legacy.sessions`): sessions idle for
`idle_s` end; an owner at `owner_limit` ends its own least recently used session; a full store
ends the least recently used anonymous session, or for an authenticated owner an
authenticated one when no anonymous one is left; otherwise the create is refused. Each
operation is one Lua script, which Redis runs alone, so replicas cannot race past a limit.

Layout under the engine's prefix: `sess:<id>` a hash (state, owner, authenticated flag, last
seen), `sess-recent:0` and `sess-recent:1` the anonymous and authenticated sessions by last
use, `sess-owned:<owner>` each owner's sessions by last use. Each hash also carries a Redis
expiry a minute past its idle limit, so a session abandoned by every replica frees itself.

Imports: the standard library, `mcpkit.store`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Final

from mcpkit.store.legacy.sessions import ANONYMOUS, SessionOwner
from mcpkit.store.redis_store import RedisEngine

__all__ = ["RedisSessionStore"]

_LIB: Final = """
local p = ARGV[1]
local function drop(id)
  local owner, auth = unpack(redis.call('HMGET', p .. 'sess:' .. id, 'o', 'a'))
  redis.call('DEL', p .. 'sess:' .. id)
  redis.call('ZREM', p .. 'sess-recent:0', id)
  redis.call('ZREM', p .. 'sess-recent:1', id)
  if owner then redis.call('ZREM', p .. 'sess-owned:' .. owner, id) end
  return owner ~= false and owner ~= nil
end
local function touch(id, owner, auth, now, idle)
  redis.call('HSET', p .. 'sess:' .. id, 's', now)
  redis.call('EXPIRE', p .. 'sess:' .. id, math.ceil(idle) + 60)
  redis.call('ZADD', p .. 'sess-recent:' .. auth, now, id)
  redis.call('ZADD', p .. 'sess-owned:' .. owner, now, id)
end
"""
"""Helpers of every script: ARGV[1] is the key prefix."""

_CREATE: Final = _LIB + """
local id, state, owner, auth = ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local limit, max, now, idle = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8]),
  tonumber(ARGV[9])
for _, flag in ipairs({'0', '1'}) do
  local old = redis.call('ZRANGEBYSCORE', p .. 'sess-recent:' .. flag, '-inf', now - idle,
    'LIMIT', 0, 1000)
  for _, victim in ipairs(old) do drop(victim) end
end
if limit >= 0 then
  while redis.call('ZCARD', p .. 'sess-owned:' .. owner) >= limit do
    local oldest = redis.call('ZRANGE', p .. 'sess-owned:' .. owner, 0, 0)
    if #oldest == 0 then break end
    drop(oldest[1])
    if limit == 0 and redis.call('ZCARD', p .. 'sess-owned:' .. owner) == 0 then break end
  end
end
drop(id)
local total = redis.call('ZCARD', p .. 'sess-recent:0') + redis.call('ZCARD', p .. 'sess-recent:1')
if total >= max then
  local victim = redis.call('ZRANGE', p .. 'sess-recent:0', 0, 0)
  if #victim == 0 and auth == '1' then victim = redis.call('ZRANGE', p .. 'sess-recent:1', 0, 0) end
  if #victim == 0 then return 0 end
  drop(victim[1])
end
redis.call('HSET', p .. 'sess:' .. id, 'v', state, 'o', owner, 'a', auth)
touch(id, owner, auth, now, idle)
return 1
"""

_LOAD: Final = _LIB + """
local id, now, idle = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local state, owner, auth, seen = unpack(redis.call('HMGET', p .. 'sess:' .. id, 'v', 'o', 'a', 's'))
if not state then drop(id) return false end
if now - tonumber(seen) >= idle then drop(id) return false end
touch(id, owner, auth, now, idle)
return state
"""

_SAVE: Final = _LIB + """
local id, state, now, idle = ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
local owner, auth = unpack(redis.call('HMGET', p .. 'sess:' .. id, 'o', 'a'))
if not owner then return 0 end
redis.call('HSET', p .. 'sess:' .. id, 'v', state)
touch(id, owner, auth, now, idle)
return 1
"""

_DELETE: Final = _LIB + """
if redis.call('EXISTS', p .. 'sess:' .. ARGV[2]) == 0 then
  drop(ARGV[2])
  return 0
end
drop(ARGV[2])
return 1
"""


class RedisSessionStore:
    """Sessions as Redis hashes; `codec` turns a state into bytes and back."""

    def __init__(self, engine: RedisEngine, codec: Any, *, max_sessions: int = 10_000,
                 idle_s: float = 3600.0, clock: Callable[[], float] = time.time) -> None:
        if max_sessions < 1 or not idle_s > 0:
            raise ValueError("RedisSessionStore: max_sessions and idle_s must be positive")
        self._engine = engine
        self._codec = codec
        self.max_sessions = max_sessions
        self.idle_s = idle_s
        self._clock = clock

    def _now(self) -> str:
        return repr(float(self._clock()))

    async def create(self, session_id: str, state: Any, owner: SessionOwner = ANONYMOUS,
                     owner_limit: int | None = None) -> bool:
        done = await self._engine.script("opening a session", _CREATE, [], [
            self._engine.prefix, session_id, self._codec.dumps(state), owner.key,
            "1" if owner.authenticated else "0", -1 if owner_limit is None else owner_limit,
            self.max_sessions, self._now(), repr(float(self.idle_s))])
        return bool(done)

    async def load(self, session_id: str) -> Any | None:
        data = await self._engine.script("loading a session", _LOAD, [], [
            self._engine.prefix, session_id, self._now(), repr(float(self.idle_s))])
        return None if data is None else self._codec.loads(bytes(data))

    async def save(self, session_id: str, state: Any) -> None:
        await self._engine.script("saving a session", _SAVE, [], [
            self._engine.prefix, session_id, self._codec.dumps(state), self._now(),
            repr(float(self.idle_s))])

    async def delete(self, session_id: str) -> bool:
        return bool(await self._engine.script("ending a session", _DELETE, [],
                                              [self._engine.prefix, session_id]))

    async def owned(self, owner: SessionOwner) -> int:
        """How many sessions `owner` has (expired ones included until they are swept)."""
        return int(await self._engine.run("counting sessions", "ZCARD",
                                          self._engine.key("sess-owned", owner.key)))

    async def count(self) -> int:
        """Sessions kept (expired ones included until they are swept)."""
        anonymous = await self._engine.run("counting sessions", "ZCARD",
                                           self._engine.key("sess-recent", "0"))
        signed = await self._engine.run("counting sessions", "ZCARD",
                                        self._engine.key("sess-recent", "1"))
        return int(anonymous) + int(signed)

    async def close(self) -> None:
        await self._engine.close()
