"""The config-change audit trail on Redis: one list, newest first, trimmed to the kept count,
so every replica and the CLI read the same history."""

from __future__ import annotations

import json

from redis.asyncio import Redis

from chatgate.state.config_audit import KEEP, ConfigChange
from chatgate.state.redis.client import Keys, maps_errors


@maps_errors("config audit")
class RedisConfigAudit:
    def __init__(self, redis: Redis, keys: Keys) -> None:
        self._redis = redis
        self._keys = keys

    async def record(self, change: ConfigChange) -> int:
        ident = int(await self._redis.incr(self._keys("config_audit", "seq")))
        data = json.dumps({**change.to_json(), "id": ident}, separators=(",", ":"))
        key = self._keys("config_audit", "log")
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.lpush(key, data)
            pipe.ltrim(key, 0, KEEP - 1)
            await pipe.execute()
        return ident

    async def recent(self, limit: int = 20) -> list[ConfigChange]:
        rows = await self._redis.lrange(self._keys("config_audit", "log"), 0, max(0, limit - 1))
        return [ConfigChange.from_json(json.loads(row)) for row in rows]
