"""`RedisTaskStore`: the Tasks extension's records in Redis, shared by every replica.

Each task is a hash (`task:<id>`): the runner's record as JSON beside the fields others
change on their own (lease owner and time, cancel request) and those the sweeper and the
shares read (status, expiry, owner tag, sizes); the answers are a hash of their own
(`task-answers:<id>`, one field per input key, the first answer to a key kept), so a heartbeat,
a `tasks/cancel` or a `tasks/update` never touches the runner's record, and a save writes
only while its caller holds the lease (`mcpkit.ext.tasks.records`). Sorted sets index the leases
and the expiries for the sweeper, and each owner's tasks for its share. Every call that reads
and then writes is one Lua script (Redis runs a script alone), so a claim has one winner and
two replicas never both take the last place of one share; a reply from Redis is its
acknowledgement.

Imports: the standard library, `mcpkit.store`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Final

import orjson

from mcpkit.ext.tasks.records import (
    TERMINAL_STATUSES,
    TaskQuota,
    TaskRecord,
    TaskStore,
    TaskUsage,
    owner_tag,
    record_from_json,
    stored_json,
)
from mcpkit.store.redis_store import RedisEngine

__all__ = ["RedisTaskStore"]

_COMMON: Final = """
local function ended(st)
  return st == 'completed' or st == 'failed' or st == 'cancelled'
end
local function usage(p, tag, now)
  local owned = p .. 'tasks-owner:' .. tag
  local ids = redis.call('ZRANGEBYSCORE', owned, '(' .. now, '+inf', 'WITHSCORES')
  local active, stored, size, first = 0, 0, 0, ''
  for i = 1, #ids, 2 do
    local f = redis.call('HMGET', p .. 'task:' .. ids[i], 'st', 'sz', 'asz')
    if f[1] then
      stored = stored + 1
      if not ended(f[1]) then active = active + 1 end
      size = size + tonumber(f[2] or '0') + tonumber(f[3] or '0')
      if first == '' and ids[i + 1] ~= 'inf' then first = ids[i + 1] end
    else
      redis.call('ZREM', owned, ids[i])
    end
  end
  return {active, stored, size, first}
end
"""
"""Shared by the scripts: a terminal status; one owner's usage (expired ones left out, ids of
deleted tasks dropped from its index). Expiries are the index's scores, read in order, so the
first finite one is the earliest."""

_CREATE: Final = _COMMON + """
local p, id = ARGV[1], ARGV[2]
local key = p .. 'task:' .. id
if redis.call('EXISTS', key) == 1 then return {-1} end
local tag, now = ARGV[8], ARGV[9]
if ARGV[10] ~= '' then
  local u = usage(p, tag, now)
  if u[1] + 1 > tonumber(ARGV[10]) or u[2] + 1 > tonumber(ARGV[11])
      or u[3] + #ARGV[3] > tonumber(ARGV[12]) then
    return {0, u[1], u[2], u[3], u[4]}
  end
end
redis.call('HSET', key, 'rec', ARGV[3], 'st', ARGV[4], 'ow', tag, 'sz', #ARGV[3])
if ARGV[5] ~= '' then redis.call('HSET', key, 'lo', ARGV[5]) end
if ARGV[6] ~= '' then
  redis.call('HSET', key, 'lu', ARGV[6])
  redis.call('ZADD', p .. 'tasks-lease', ARGV[6], id)
end
local score = '+inf'
if ARGV[7] ~= '' then
  redis.call('HSET', key, 'ex', ARGV[7])
  redis.call('ZADD', p .. 'tasks-exp', ARGV[7], id)
  score = ARGV[7]
end
redis.call('ZADD', p .. 'tasks-owner:' .. tag, score, id)
local asz = 0
for i = 13, #ARGV, 2 do
  redis.call('HSET', p .. 'task-answers:' .. id, ARGV[i], ARGV[i + 1])
  asz = asz + #ARGV[i] + #ARGV[i + 1]
end
redis.call('HSET', key, 'asz', asz)
return {1}
"""
"""p, id, record, status, lease owner, lease until, expiry, owner tag, now, the quota (active,
stored, bytes; '' for none), then the answers as key, value pairs. {1} created, {-1} the id
exists, {0, usage...} full."""

_SAVE: Final = _COMMON + """
local p, id, owner = ARGV[1], ARGV[2], ARGV[3]
local key = p .. 'task:' .. id
local f = redis.call('HMGET', key, 'st', 'lo', 'asz')
if not f[1] or ended(f[1]) or f[2] ~= owner then return 0 end
if ARGV[6] == '1' then
  redis.call('HSET', key, 'rec', ARGV[4], 'st', ARGV[5], 'sz', #ARGV[4], 'asz', 0)
  redis.call('HDEL', key, 'lo', 'lu')
  redis.call('ZREM', p .. 'tasks-lease', id)
  redis.call('DEL', p .. 'task-answers:' .. id)
else
  redis.call('HSET', key, 'rec', ARGV[4], 'st', ARGV[5], 'sz', #ARGV[4])
  if ARGV[7] == '1' then
    redis.call('HSET', key, 'lu', '0')
    redis.call('ZADD', p .. 'tasks-lease', 0, id)
  end
end
return 1
"""
"""p, id, owner, record, status, '1' when terminal, '1' to end the lease now (a release)."""

_PUT_ANSWERS: Final = _COMMON + """
local p, id = ARGV[1], ARGV[2]
local key = p .. 'task:' .. id
local st = redis.call('HGET', key, 'st')
if not st or ended(st) then return 0 end
for i = 3, #ARGV, 2 do
  if redis.call('HSETNX', p .. 'task-answers:' .. id, ARGV[i], ARGV[i + 1]) == 1 then
    redis.call('HINCRBY', key, 'asz', #ARGV[i] + #ARGV[i + 1])
  end
end
return 1
"""

_CANCEL: Final = """
local key = ARGV[1] .. 'task:' .. ARGV[2]
if redis.call('EXISTS', key) == 1 then redis.call('HSET', key, 'cx', '1') end
return 1
"""

_RENEW: Final = _COMMON + """
local p, owner, untl = ARGV[1], ARGV[2], ARGV[3]
local held = {}
for i = 4, #ARGV do
  local key = p .. 'task:' .. ARGV[i]
  local f = redis.call('HMGET', key, 'st', 'lo')
  if f[1] and not ended(f[1]) and f[2] == owner then
    redis.call('HSET', key, 'lu', untl)
    redis.call('ZADD', p .. 'tasks-lease', untl, ARGV[i])
    held[#held + 1] = ARGV[i]
  end
end
return held
"""

_CLAIM: Final = _COMMON + """
local p, id, owner, now, untl = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local key = p .. 'task:' .. id
local f = redis.call('HMGET', key, 'st', 'lu', 'ex')
if not f[1] or ended(f[1]) or not f[2] or tonumber(f[2]) >= tonumber(now) then return 0 end
if f[3] and tonumber(f[3]) <= tonumber(now) then return 0 end
redis.call('HSET', key, 'lo', owner, 'lu', untl)
redis.call('ZADD', p .. 'tasks-lease', untl, id)
return 1
"""

_PURGE: Final = """
local p = ARGV[1]
local gone = redis.call('ZRANGEBYSCORE', p .. 'tasks-exp', '-inf', ARGV[2])
for _, id in ipairs(gone) do
  local tag = redis.call('HGET', p .. 'task:' .. id, 'ow')
  if tag then redis.call('ZREM', p .. 'tasks-owner:' .. tag, id) end
  redis.call('DEL', p .. 'task:' .. id, p .. 'task-answers:' .. id)
  redis.call('ZREM', p .. 'tasks-exp', id)
  redis.call('ZREM', p .. 'tasks-lease', id)
end
return #gone
"""

_USAGE: Final = _COMMON + """
return usage(ARGV[1], ARGV[2], ARGV[3])
"""

_FIELDS: Final = ("rec", "lo", "lu", "cx", "ex", "st")
_TERMINAL: Final = frozenset(TERMINAL_STATUSES)


def _num(value: float | None) -> str:
    return "" if value is None else repr(float(value))


def _usage(reply: list[Any]) -> TaskUsage:
    active, stored, size, first = reply
    first = bytes(first).decode() if isinstance(first, bytes) else str(first)
    return TaskUsage(int(active), int(stored), int(size), float(first) if first else None)


class RedisTaskStore(TaskStore):
    """Tasks as Redis hashes under the engine's prefix."""

    def __init__(self, engine: RedisEngine, *, clock: Callable[[], float] = time.time) -> None:
        self._engine = engine
        self._clock = clock

    async def _read(self, task_id: str, what: str, now: float | None = None
                    ) -> TaskRecord | None:
        fields, answers = await self._engine.pipeline(what, [
            ("HMGET", self._engine.key("task", task_id), *_FIELDS),
            ("HGETALL", self._engine.key("task-answers", task_id))])
        rec, lo, lu, cx, ex, _st = fields
        if rec is None or (ex is not None and float(ex) <= (self._clock() if now is None
                                                             else now)):
            return None
        record = record_from_json(bytes(rec))
        record.lease_owner = None if lo is None else bytes(lo).decode()
        record.lease_until = None if lu is None else float(lu)
        record.cancel_requested = cx is not None
        if isinstance(answers, dict):
            record.answers = {bytes(k).decode(): orjson.loads(v) for k, v in answers.items()}
        else:  # a flat [field, value, ...] reply
            record.answers = {bytes(answers[i]).decode(): orjson.loads(answers[i + 1])
                              for i in range(0, len(answers), 2)}
        return record

    async def create(self, record: TaskRecord, quota: TaskQuota | None = None
                     ) -> TaskUsage | None:
        data = stored_json(record)
        limits = ["", "", ""] if quota is None else [quota.active, quota.stored, quota.bytes]
        pairs: list[Any] = []
        for key, value in record.answers.items():
            pairs += [key, orjson.dumps(value)]
        reply = await self._engine.script("creating a task", _CREATE, [], [
            self._engine.prefix, record.task_id, data, record.status,
            record.lease_owner or "", _num(record.lease_until), _num(record.expires_at),
            owner_tag(record.owner), _num(self._clock()), *limits, *pairs])
        if reply[0] == -1:
            raise ValueError(f"task {record.task_id!r} already exists")
        return None if reply[0] == 1 else _usage(reply[1:])

    async def get(self, task_id: str) -> TaskRecord | None:
        return await self._read(task_id, "reading a task")

    async def _save(self, record: TaskRecord, owner: str, release: bool, what: str) -> bool:
        return bool(await self._engine.script(what, _SAVE, [], [
            self._engine.prefix, record.task_id, owner, stored_json(record), record.status,
            "1" if record.terminal else "0", "1" if release else "0"]))

    async def save(self, record: TaskRecord, owner: str) -> bool:
        return await self._save(record, owner, False, "saving a task")

    async def release(self, record: TaskRecord, owner: str) -> bool:
        return await self._save(record, owner, True, "handing a task back")

    async def put_answers(self, task_id: str, answers: dict[str, Any]) -> None:
        if not answers:
            return
        pairs: list[Any] = []
        for key, value in answers.items():
            pairs += [key, orjson.dumps(value)]
        await self._engine.script("keeping a task's answers", _PUT_ANSWERS, [],
                                  [self._engine.prefix, task_id, *pairs])

    async def request_cancel(self, task_id: str) -> None:
        await self._engine.script("cancelling a task", _CANCEL, [],
                                  [self._engine.prefix, task_id])

    async def renew(self, task_ids: list[str], owner: str, until: float) -> set[str]:
        if not task_ids:
            return set()
        held = await self._engine.script("renewing task leases", _RENEW, [],
                                         [self._engine.prefix, owner, _num(until), *task_ids])
        return {bytes(i).decode() if isinstance(i, bytes) else str(i) for i in held}

    async def claim(self, task_id: str, owner: str, now: float, until: float
                    ) -> TaskRecord | None:
        if not await self._engine.script("claiming a task", _CLAIM, [], [
                self._engine.prefix, task_id, owner, _num(now), _num(until)]):
            return None
        return await self._read(task_id, "claiming a task", now)

    async def stale(self, now: float) -> list[TaskRecord]:
        ids = await self._engine.run("finding stale tasks", "ZRANGEBYSCORE",
                                     self._engine.key("tasks-lease"), "-inf", f"({now!r}")
        found = []
        for raw in ids:
            record = await self._read(bytes(raw).decode(), "finding stale tasks", now)
            if record is not None and record.status not in _TERMINAL and \
                    record.lease_until is not None and record.lease_until < now:
                found.append(record)
        return found

    async def purge(self, now: float) -> int:
        return int(await self._engine.script("purging expired tasks", _PURGE, [],
                                             [self._engine.prefix, _num(now)]))

    async def usage(self, owner: str | None, now: float) -> TaskUsage:
        return _usage(await self._engine.script("counting a principal's tasks", _USAGE, [], [
            self._engine.prefix, owner_tag(owner), _num(now)]))

    async def close(self) -> None:
        await self._engine.close()
