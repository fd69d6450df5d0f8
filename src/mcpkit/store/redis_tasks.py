"""`RedisTaskStore`: the Tasks extension's records in Redis, shared by every replica.

Each task is a hash (`task:<id>`): the runner's record as JSON beside the fields others
change on their own (lease owner and time, cancel request) and those the sweeper reads
(status, expiry); the answers not yet taken are a hash of their own (`task-answers:<id>`, one
field per input key), so a heartbeat, a `tasks/cancel` or a `tasks/update` never overwrites
what the runner wrote (`mcpkit.store.tasks`). Two sorted sets index the leases and the
expiries for the sweeper. Every call that reads and then writes is one Lua script, so a
claim has one winner; a reply from Redis is its acknowledgement.

Imports: the standard library, `mcpkit.store`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Final

import orjson

from mcpkit.store.redis_store import RedisEngine
from mcpkit.store.tasks import TaskRecord, TaskStore, record_from_json, record_to_json

__all__ = ["RedisTaskStore"]

_TERMINAL: Final = frozenset({"completed", "failed", "cancelled"})

_WRITE: Final = """
local p, id, create = ARGV[1], ARGV[2], ARGV[3]
local key = p .. 'task:' .. id
local exists = redis.call('EXISTS', key) == 1
if create == '1' and exists then return 0 end
if create == '0' and not exists then return 0 end
redis.call('HSET', key, 'rec', ARGV[4], 'st', ARGV[5])
if ARGV[6] == '' then
  redis.call('HDEL', key, 'lo', 'lu')
  redis.call('ZREM', p .. 'tasks-lease', id)
else
  redis.call('HSET', key, 'lo', ARGV[6])
  if ARGV[7] == '' then
    redis.call('HDEL', key, 'lu')
    redis.call('ZREM', p .. 'tasks-lease', id)
  else
    redis.call('HSET', key, 'lu', ARGV[7])
    redis.call('ZADD', p .. 'tasks-lease', ARGV[7], id)
  end
end
if ARGV[8] == '' then
  redis.call('HDEL', key, 'ex')
  redis.call('ZREM', p .. 'tasks-exp', id)
else
  redis.call('HSET', key, 'ex', ARGV[8])
  redis.call('ZADD', p .. 'tasks-exp', ARGV[8], id)
end
return 1
"""
"""Create (ARGV[3] '1': only if absent) or save (only if present) the runner's fields."""

_PUT_ANSWERS: Final = """
if redis.call('EXISTS', ARGV[1] .. 'task:' .. ARGV[2]) == 0 then return 0 end
for i = 3, #ARGV, 2 do
  redis.call('HSET', ARGV[1] .. 'task-answers:' .. ARGV[2], ARGV[i], ARGV[i + 1])
end
return 1
"""

_TAKE_ANSWERS: Final = """
local key = ARGV[1] .. 'task-answers:' .. ARGV[2]
local all = redis.call('HGETALL', key)
redis.call('DEL', key)
return all
"""

_CANCEL: Final = """
local key = ARGV[1] .. 'task:' .. ARGV[2]
if redis.call('EXISTS', key) == 1 then redis.call('HSET', key, 'cx', '1') end
return 1
"""

_RENEW: Final = """
local p, owner, untl = ARGV[1], ARGV[2], ARGV[3]
for i = 4, #ARGV do
  local key = p .. 'task:' .. ARGV[i]
  if redis.call('HGET', key, 'lo') == owner then
    redis.call('HSET', key, 'lu', untl)
    redis.call('ZADD', p .. 'tasks-lease', untl, ARGV[i])
  end
end
return 1
"""

_CLAIM: Final = """
local p, id, had_owner, old, owner, untl = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local key = p .. 'task:' .. id
if redis.call('EXISTS', key) == 0 then return 0 end
local current = redis.call('HGET', key, 'lo')
if had_owner == '1' then
  if current ~= old then return 0 end
elseif current then
  return 0
end
redis.call('HSET', key, 'lo', owner, 'lu', untl)
redis.call('ZADD', p .. 'tasks-lease', untl, id)
return 1
"""

_PURGE: Final = """
local p = ARGV[1]
local gone = redis.call('ZRANGEBYSCORE', p .. 'tasks-exp', '-inf', ARGV[2])
for _, id in ipairs(gone) do
  redis.call('DEL', p .. 'task:' .. id, p .. 'task-answers:' .. id)
  redis.call('ZREM', p .. 'tasks-exp', id)
  redis.call('ZREM', p .. 'tasks-lease', id)
end
return #gone
"""

_FIELDS: Final = ("rec", "lo", "lu", "cx", "ex", "st")


def _num(value: float | None) -> str:
    return "" if value is None else repr(float(value))


class RedisTaskStore(TaskStore):
    """Tasks as Redis hashes under the engine's prefix."""

    def __init__(self, engine: RedisEngine, *, clock: Callable[[], float] = time.time) -> None:
        self._engine = engine
        self._clock = clock

    def _write_args(self, record: TaskRecord, create: bool) -> list[Any]:
        return [self._engine.prefix, record.task_id, "1" if create else "0",
                record_to_json(record), record.status, record.lease_owner or "",
                _num(record.lease_until),
                _num(record.expires_at)]

    async def _read(self, task_id: str, what: str, now: float | None = None
                    ) -> TaskRecord | None:
        rec, lo, lu, cx, ex, _st = await self._engine.run(
            what, "HMGET", self._engine.key("task", task_id), *_FIELDS)
        if rec is None or (ex is not None and float(ex) <= (self._clock() if now is None
                                                             else now)):
            return None
        record = record_from_json(bytes(rec))
        record.lease_owner = None if lo is None else bytes(lo).decode()
        record.lease_until = None if lu is None else float(lu)
        record.cancel_requested = cx is not None
        return record

    async def create(self, record: TaskRecord) -> None:
        done = await self._engine.script("creating a task", _WRITE, [],
                                         self._write_args(record, True))
        if not done:
            raise ValueError(f"task {record.task_id!r} already exists")

    async def get(self, task_id: str) -> TaskRecord | None:
        return await self._read(task_id, "reading a task")

    async def save(self, record: TaskRecord) -> None:
        await self._engine.script("saving a task", _WRITE, [], self._write_args(record, False))

    async def put_answers(self, task_id: str, answers: dict[str, Any]) -> None:
        if not answers:
            return
        pairs: list[Any] = []
        for key, value in answers.items():
            pairs += [key, orjson.dumps(value)]
        await self._engine.script("keeping a task's answers", _PUT_ANSWERS, [],
                                  [self._engine.prefix, task_id, *pairs])

    async def take_answers(self, task_id: str) -> dict[str, Any]:
        flat = await self._engine.script("taking a task's answers", _TAKE_ANSWERS, [],
                                         [self._engine.prefix, task_id])
        return {bytes(flat[i]).decode(): orjson.loads(flat[i + 1])
                for i in range(0, len(flat), 2)}

    async def request_cancel(self, task_id: str) -> None:
        await self._engine.script("cancelling a task", _CANCEL, [],
                                  [self._engine.prefix, task_id])

    async def renew(self, task_ids: list[str], owner: str, until: float) -> None:
        if task_ids:
            await self._engine.script("renewing task leases", _RENEW, [],
                                      [self._engine.prefix, owner, _num(until), *task_ids])

    async def claim(self, task_id: str, old_owner: str | None, owner: str, until: float) -> bool:
        return bool(await self._engine.script("claiming a task", _CLAIM, [], [
            self._engine.prefix, task_id, "0" if old_owner is None else "1", old_owner or "",
            owner, _num(until)]))

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

    async def close(self) -> None:
        await self._engine.close()
