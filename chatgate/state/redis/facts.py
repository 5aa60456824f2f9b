"""Channel facts on Redis: one string key each, expiring by Redis' own TTL."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from redis.asyncio import Redis

from chatgate.state.redis.client import Keys, maps_errors


@maps_errors("channel facts")
class RedisFacts:
    def __init__(self, redis: Redis, keys: Keys) -> None:
        self._redis = redis
        self._keys = keys

    async def put(
        self, channel: str, key: str, value: dict[str, Any], now: float, ttl_s: float
    ) -> None:
        payload = json.dumps(value, separators=(",", ":"))
        await self._redis.set(
            self._keys("fact", channel, key), payload, px=max(1, math.ceil(ttl_s * 1000))
        )

    async def get_many(
        self, channel: str, keys: Sequence[str], now: float
    ) -> dict[str, dict[str, Any]]:
        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return {}
        values = await self._redis.mget([self._keys("fact", channel, k) for k in wanted])
        return {k: json.loads(v) for k, v in zip(wanted, values, strict=True) if v is not None}
