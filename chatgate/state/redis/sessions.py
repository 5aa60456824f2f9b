"""Session transcripts on Redis, shared by every replica and the CLI.

Per session: a hash with the epoch/count/updated_at, one list of JSON lines per epoch, and a set of
"source|role" already appended (appends stay idempotent per (session, epoch, source, role)). A
sorted set orders sessions by activity for `chatgate sessions`. Appends run as one Lua script.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from redis.asyncio import Redis

from chatgate.model.chat import ChatMessage
from chatgate.state.records import SessionInfo, StoredSession, TranscriptLine
from chatgate.state.redis.client import Keys, maps_errors

# KEYS: meta, index, the epoch's seen-set, the epoch's lines; ARGV: session, epoch, now, then
# (dedupe|"", line) pairs
APPEND = """
local meta, index = KEYS[1], KEYS[2]
local session, epoch, now = ARGV[1], ARGV[2], tonumber(ARGV[3])
if redis.call('hsetnx', meta, 'epoch', epoch) == 1 then redis.call('hset', meta, 'count', 0) end
local current = redis.call('hget', meta, 'epoch')
local added = 0
for i = 4, #ARGV, 2 do
  local dedupe, line = ARGV[i], ARGV[i + 1]
  if dedupe == '' or redis.call('sadd', KEYS[3], dedupe) == 1 then
    redis.call('rpush', KEYS[4], line)
    added = added + 1
  end
end
if current == epoch then redis.call('hincrby', meta, 'count', added) end
redis.call('hset', meta, 'updated_at', ARGV[3])
redis.call('hincrby', meta, 'rev', 1)
redis.call('zadd', index, now, session)
return added
"""
RESET = """
local epoch = redis.call('hincrby', KEYS[1], 'epoch', 1)
redis.call('hset', KEYS[1], 'count', 0, 'updated_at', ARGV[2])
redis.call('hincrby', KEYS[1], 'rev', 1)
redis.call('zadd', KEYS[2], tonumber(ARGV[2]), ARGV[1])
return epoch
"""


@maps_errors("sessions")
class RedisSessionStore:
    def __init__(self, redis: Redis, keys: Keys) -> None:
        self._redis = redis
        self._keys = keys
        self._append = redis.register_script(APPEND)
        self._reset = redis.register_script(RESET)

    def _base(self, key: str) -> str:
        return self._keys("session", key)

    async def _epoch(self, key: str) -> int | None:
        raw = await self._redis.hget(self._base(key), "epoch")
        return int(raw) if raw is not None else None

    async def revision(self, key: str) -> int | None:
        raw = await self._redis.hget(self._base(key), "rev")
        return int(raw) if raw is not None else 0

    async def load(self, key: str, limit: int) -> StoredSession:
        epoch_raw, rev_raw = await self._redis.hmget(self._base(key), ["epoch", "rev"])
        epoch = int(epoch_raw) if epoch_raw is not None else 0
        lines = await self._redis.lrange(f"{self._base(key)}:{epoch}:lines", -limit, -1)
        messages = []
        for raw in lines:
            messages.append(ChatMessage.from_dict(json.loads(raw)))
        return StoredSession(key, epoch, messages, int(rev_raw or 0))

    async def append(
        self, key: str, epoch: int, messages: Sequence[ChatMessage], now: float
    ) -> None:
        args: list[str | int | float] = [key, epoch, now]
        for m in messages:
            line = m.to_dict()
            line["at"] = now
            args += [f"{m.source}|{m.role}" if m.source else "", json.dumps(line)]
        base = self._base(key)
        keys = [base, self._keys("sessions"), f"{base}:{epoch}:seen", f"{base}:{epoch}:lines"]
        await self._append(keys=keys, args=args)

    async def reset(self, key: str, now: float) -> int:
        epoch = await self._reset(keys=[self._base(key), self._keys("sessions")], args=[key, now])
        return int(epoch)

    async def recent(self, limit: int = 100) -> list[SessionInfo]:
        names = [str(n) for n in await self._redis.zrevrange(self._keys("sessions"), 0, limit - 1)]
        async with self._redis.pipeline(transaction=False) as pipe:
            for name in names:
                pipe.hmget(self._base(name), "epoch", "count", "updated_at")
            rows = await pipe.execute()
        return [
            SessionInfo(name, int(e or 0), int(c or 0), float(u or 0))
            for name, (e, c, u) in zip(names, rows, strict=True)
        ]

    async def transcript(self, key: str) -> list[TranscriptLine] | None:
        epoch = await self._epoch(key)
        if epoch is None:
            return None
        lines = await self._redis.lrange(f"{self._base(key)}:{epoch}:lines", 0, -1)
        out = []
        for raw in lines:
            d = json.loads(raw)
            human = (d.get("meta") or {}).get("human")
            line = TranscriptLine(
                d["role"], d["content"], d.get("name"), float(d["at"]), human, d.get("source")
            )
            out.append(line)
        return out

    async def flush(self) -> None:
        """Every append is awaited until Redis acknowledged it; nothing is written behind."""
