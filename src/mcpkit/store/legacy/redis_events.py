"""`RedisEventStore`: the SSE events of legacy sessions in Redis, so a client whose stream
broke resumes it with `Last-Event-ID` through any replica.

The same contract as `MemoryEventStore` (`mcpkit.store.legacy.events`): ids are `<stream>.<n>`,
unique within the session and increasing (`n` comes from one Redis counter, so no id is ever
issued twice, even to a session kept anew); a stream id belongs to one session; each session
keeps at most `max_events` events and `max_bytes` bytes, the oldest going first, and the event
just appended is always kept; the whole store keeps `max_total_bytes`, evicting the oldest
events of all (those of the sessions quiet longest); resuming from before an evicted event, or
from a stream no longer kept, is "gone", and from an id this session never had "invalid"
(`EventReplayError`). Each operation is one Lua script, so replicas never see half of one, and
an append's reply (the id) comes after Redis has applied it.

Imports: the standard library, `mcpkit.store`.
"""

from __future__ import annotations

from typing import Final

from mcpkit.store.legacy.events import (
    _EVENT_OVERHEAD,
    _MAX_STREAM_CHARS,
    _SESSION_OVERHEAD,
    _STREAM_OVERHEAD,
    BoundedEvents,
    Replay,
    _is_stream_id,
)
from mcpkit.store.redis_store import RedisEngine

__all__ = ["RedisEventStore"]

_LIB: Final = """
local p, EO, SO, SESS = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local function evict(s, n)
  local skey = p .. 'ev-sess:' .. s
  local st = redis.call('HGET', p .. 'ev-of:' .. s, n)
  local d = redis.call('HGET', p .. 'ev-data:' .. s, n) or ''
  local freed = #d + EO
  redis.call('HDEL', p .. 'ev-data:' .. s, n)
  redis.call('HDEL', p .. 'ev-of:' .. s, n)
  redis.call('ZREM', p .. 'ev-order:' .. s, n)
  redis.call('ZREM', p .. 'ev-all', s .. ' ' .. n)
  if st then
    local stkey = p .. 'ev-stream:' .. st
    redis.call('ZREM', p .. 'ev-sorder:' .. st, n)
    local left = redis.call('HINCRBY', stkey, 'events', -1)
    redis.call('HSET', stkey, 'floor', n)
    if left <= 0 then
      redis.call('DEL', stkey, p .. 'ev-sorder:' .. st)
      redis.call('SREM', p .. 'ev-streams:' .. s, st)
      freed = freed + SO
    end
  end
  redis.call('HSET', skey, 'floor', n)
  redis.call('HINCRBY', skey, 'size', -freed)
  redis.call('INCRBY', p .. 'ev-total', -freed)
  return redis.call('HINCRBY', skey, 'events', -1)
end
local function drop_session(s)
  local skey = p .. 'ev-sess:' .. s
  if redis.call('EXISTS', skey) == 0 then return end
  local size = tonumber(redis.call('HGET', skey, 'size') or '0')
  for _, n in ipairs(redis.call('ZRANGE', p .. 'ev-order:' .. s, 0, -1)) do
    redis.call('ZREM', p .. 'ev-all', s .. ' ' .. n)
  end
  for _, st in ipairs(redis.call('SMEMBERS', p .. 'ev-streams:' .. s)) do
    redis.call('DEL', p .. 'ev-stream:' .. st, p .. 'ev-sorder:' .. st)
  end
  redis.call('DEL', skey, p .. 'ev-data:' .. s, p .. 'ev-of:' .. s, p .. 'ev-order:' .. s,
    p .. 'ev-streams:' .. s)
  redis.call('INCRBY', p .. 'ev-total', -(size + SESS))
end
"""
"""Helpers: ARGV[1..4] are the prefix and the bytes counted per event, stream and session."""

_APPEND: Final = _LIB + """
local sid, stream, data, final = ARGV[5], ARGV[6], ARGV[7], ARGV[8]
local maxe, maxb, maxt = tonumber(ARGV[9]), tonumber(ARGV[10]), tonumber(ARGV[11])
local sk = p .. 'ev-sess:' .. sid
local stk = p .. 'ev-stream:' .. stream
local owner = redis.call('HGET', stk, 'session')
if owner and owner ~= sid then return -1 end
if redis.call('EXISTS', sk) == 0 then
  redis.call('HSET', sk, 'seq', 0, 'floor', 0, 'size', 0, 'events', 0)
  redis.call('INCRBY', p .. 'ev-total', SESS)
end
if not owner then
  redis.call('HSET', stk, 'session', sid, 'floor', redis.call('HGET', sk, 'floor'),
    'events', 0, 'ended', 0)
  redis.call('SADD', p .. 'ev-streams:' .. sid, stream)
  redis.call('HINCRBY', sk, 'size', SO)
  redis.call('INCRBY', p .. 'ev-total', SO)
end
local seq = redis.call('INCR', p .. 'ev-num')
local size = #data + EO
redis.call('HSET', p .. 'ev-data:' .. sid, seq, data)
redis.call('HSET', p .. 'ev-of:' .. sid, seq, stream)
redis.call('ZADD', p .. 'ev-order:' .. sid, seq, seq)
redis.call('ZADD', p .. 'ev-sorder:' .. stream, seq, seq)
redis.call('ZADD', p .. 'ev-all', seq, sid .. ' ' .. seq)
redis.call('HINCRBY', stk, 'events', 1)
redis.call('HSET', stk, 'ended', final)
redis.call('HSET', sk, 'seq', seq)
local events = redis.call('HINCRBY', sk, 'events', 1)
local held = redis.call('HINCRBY', sk, 'size', size)
redis.call('INCRBY', p .. 'ev-total', size)
while events > 1 and (events > maxe or held > maxb) do
  local oldest = redis.call('ZRANGE', p .. 'ev-order:' .. sid, 0, 0)
  events = evict(sid, oldest[1])
  held = tonumber(redis.call('HGET', sk, 'size'))
end
local current = sid .. ' ' .. seq
while tonumber(redis.call('GET', p .. 'ev-total')) > maxt do
  local two = redis.call('ZRANGE', p .. 'ev-all', 0, 1)
  local pick = two[1]
  if pick == current then pick = two[2] end
  if not pick then break end
  local s, n = string.match(pick, '^(.*) (%d+)$')
  if evict(s, n) <= 0 and s ~= sid then drop_session(s) end
end
return seq
"""

_REPLAY: Final = _LIB + """
local sid, stream, n = ARGV[5], ARGV[6], tonumber(ARGV[7])
local owner, floor, ended = unpack(redis.call('HMGET', p .. 'ev-stream:' .. stream,
  'session', 'floor', 'ended'))
if not owner then return {'gone'} end
if owner ~= sid then return {'other'} end
local newest = redis.call('HGET', p .. 'ev-sess:' .. sid, 'seq') or '0'
if n > tonumber(newest) then return {'never', newest} end
if tonumber(floor) > n then return {'evicted'} end
local seqs = redis.call('ZRANGEBYSCORE', p .. 'ev-sorder:' .. stream, '(' .. n, '+inf')
local out = {'ok', ended}
for _, s in ipairs(seqs) do
  out[#out + 1] = s
  out[#out + 1] = redis.call('HGET', p .. 'ev-data:' .. sid, s) or ''
end
return out
"""

_FORGET: Final = _LIB + "drop_session(ARGV[5]) return 1"


class RedisEventStore(BoundedEvents):
    """Events in Redis hashes and sorted sets, per session and per stream."""

    def __init__(self, engine: RedisEngine, max_events: int = 1000,
                 max_bytes: int = 8 * 1024 * 1024,
                 max_total_bytes: int = 128 * 1024 * 1024) -> None:
        super().__init__(max_events, max_bytes, max_total_bytes)
        self._engine = engine

    def _head(self) -> list[object]:
        return [self._engine.prefix, _EVENT_OVERHEAD, _STREAM_OVERHEAD, _SESSION_OVERHEAD]

    async def append(self, session_id: str, stream_id: str, data: bytes, *,
                     final: bool = False) -> str:
        if not _is_stream_id(stream_id) or len(stream_id) > _MAX_STREAM_CHARS:
            raise ValueError(f"RedisEventStore.append: stream id {stream_id[:80]!r} must be "
                             f"1 to {_MAX_STREAM_CHARS} letters, digits, '-' or '_'")
        seq = await self._engine.script("keeping an SSE event", _APPEND, [], [
            *self._head(), session_id, stream_id, data, "1" if final else "0",
            self.max_events, self.max_bytes, self.max_total_bytes])
        if int(seq) < 0:
            raise ValueError(f"RedisEventStore.append: stream id {stream_id!r} is a stream of "
                             "another session; stream ids are unique across sessions")
        return f"{stream_id}.{int(seq)}"

    async def replay_after(self, session_id: str, event_id: str) -> Replay:
        stream_id, seq = self.replay_point(event_id)
        reply = await self._engine.script("replaying SSE events", _REPLAY, [], [
            *self._head(), session_id, stream_id, seq])
        status = bytes(reply[0]).decode()
        if status == "gone":
            raise self.unknown_stream(event_id)
        if status == "other":
            raise self.other_session(event_id)
        if status == "never":
            raise self.not_issued(event_id, bytes(reply[1]).decode())
        if status == "evicted":
            raise self.evicted(event_id)
        ended = bytes(reply[1]) == b"1"
        rest = reply[2:]
        events = [(f"{stream_id}.{int(rest[i])}", bytes(rest[i + 1]))
                  for i in range(0, len(rest), 2)]
        return Replay(stream_id, events, ended)

    async def forget(self, session_id: str) -> None:
        await self._engine.script("forgetting a session's SSE events", _FORGET, [],
                                  [*self._head(), session_id])

    async def close(self) -> None:
        await self._engine.close()
