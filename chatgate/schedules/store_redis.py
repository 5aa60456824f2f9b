"""The job store on Redis: shared by every replica (same keys as the rest of the state)."""

from __future__ import annotations

import json

from redis.asyncio import Redis

from chatgate.config.models import GatewaySection
from chatgate.schedules.jobs import RunRecord, ScheduledJob
from chatgate.schedules.store import KEEP_RUNS, CapReached, ChatCap
from chatgate.state.redis.client import connect, maps_errors

OWN_CONNECTIONS = 8  # a client of its own (the CLI): a few commands at a time
# Compare and set: only the replica that read the current cursor moves it (values are repr()s).
_ADVANCE = """
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
  return 1
end
return 0
"""
# Save a job unless its chat has its cap of agent-made jobs (ChatCap.counts, in Lua). KEYS: the
# jobs hash; ARGV: id, data, the chat (`to`), the cap (0: none) → 1 saved, 0 id taken, -1 cap.
_SAVE = """
local most = tonumber(ARGV[4])
if most > 0 then
  local n = 0
  for _, raw in ipairs(redis.call('HVALS', KEYS[1])) do
    local job = cjson.decode(raw)
    local to = job.source == 'chat' and job.spec and job.spec.deliver and job.spec.deliver.to
    if type(to) == 'table' and #to == 1 and to[1] == ARGV[3] then n = n + 1 end
  end
  if n >= most then return -1 end
end
return redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2])
"""


@maps_errors("schedules")
class RedisJobStore:
    def __init__(self, gateway: GatewaySection, client: object = None) -> None:
        self._gateway = gateway
        self._prefix = gateway.redis_prefix() + "sched:"
        self._redis: Redis | None = None
        self._shared = client if isinstance(client, Redis) else None  # the stores' (they close it)

    def _r(self) -> Redis:
        if self._redis is None:
            raise RuntimeError("job store is not open")
        return self._redis

    def _k(self, *parts: str) -> str:
        return self._prefix + ":".join(parts)

    async def open(self) -> None:
        self._redis = self._shared or connect(self._gateway, max_connections=OWN_CONNECTIONS)

    async def compact(self) -> None:
        return None  # deleted keys are gone from the server

    async def close(self) -> None:
        redis, self._redis = self._redis, None
        if redis is not None and redis is not self._shared:
            await redis.aclose()

    async def save(self, job: ScheduledJob, cap: ChatCap | None = None) -> bool:
        data = json.dumps(job.to_dict())
        to, most = (cap.to, cap.most) if cap is not None else ("", 0)
        saved = int(await self._r().eval(_SAVE, 1, self._k("jobs"), job.id, data, to, most))
        if saved < 0:
            raise CapReached(job.id)
        return saved == 1

    async def delete(self, job_id: str) -> bool:
        r = self._r()
        async with r.pipeline(transaction=True) as pipe:
            pipe.hdel(self._k("jobs"), job_id)
            pipe.hdel(self._k("cursor"), job_id)
            pipe.srem(self._k("paused"), job_id)
            pipe.delete(self._k("runs", job_id))
            removed, *_ = await pipe.execute()
        return bool(removed)

    async def jobs(self) -> list[ScheduledJob]:
        found = await self._r().hgetall(self._k("jobs"))
        return [ScheduledJob.from_dict(json.loads(v)) for v in found.values()]

    async def cursor(self, job_id: str, start: float) -> float:
        r = self._r()
        await r.hsetnx(self._k("cursor"), job_id, repr(start))
        return float(await r.hget(self._k("cursor"), job_id) or start)

    async def advance(self, job_id: str, expected: float, to: float) -> bool:
        moved = await self._r().eval(
            _ADVANCE, 1, self._k("cursor"), job_id, repr(expected), repr(to)
        )
        return bool(moved)

    async def paused(self) -> set[str]:
        return {str(m) for m in await self._r().smembers(self._k("paused"))}

    async def set_paused(self, job_id: str, paused: bool) -> None:
        if paused:
            await self._r().sadd(self._k("paused"), job_id)
        else:
            await self._r().srem(self._k("paused"), job_id)

    async def add_run(self, job_id: str, record: RunRecord) -> None:
        key = self._k("runs", job_id)
        async with self._r().pipeline(transaction=True) as pipe:
            pipe.lpush(key, json.dumps(record.to_dict()))
            pipe.ltrim(key, 0, KEEP_RUNS - 1)
            await pipe.execute()

    async def runs(self, job_id: str, limit: int) -> list[RunRecord]:
        found = await self._r().lrange(self._k("runs", job_id), 0, max(0, limit - 1))
        return [RunRecord.from_dict(json.loads(v)) for v in found]
