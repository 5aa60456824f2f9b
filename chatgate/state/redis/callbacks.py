"""Long button payloads on Redis, so a button sent by one replica resolves on any other."""

from __future__ import annotations

from redis.asyncio import Redis

from chatgate.state.callback_cache import WriteBehindCallbacks
from chatgate.state.redis.client import Keys, maps_errors

TTL_S = 90 * 86_400


@maps_errors("callbacks")
class RedisCallbacks(WriteBehindCallbacks):
    def __init__(self, redis: Redis, keys: Keys) -> None:
        super().__init__()
        self._redis = redis
        self._keys = keys

    async def _persist(self, ref: str, value: str) -> None:
        await self._redis.set(self._keys("callback", ref), value, ex=TTL_S)

    async def _load(self, ref: str) -> str | None:
        value = await self._redis.get(self._keys("callback", ref))
        return str(value) if value is not None else None
