"""Long button payloads on Redis, so a button sent by one replica resolves on any other."""

from __future__ import annotations

import asyncio
import hashlib
from collections import OrderedDict

from redis.asyncio import Redis

from chatgate.presentation.degrade import REF_PREFIX
from chatgate.state.redis.client import Keys

MEMORY_ENTRIES = 10_000
TTL_S = 90 * 86_400


class RedisCallbacks:
    def __init__(self, redis: Redis, keys: Keys) -> None:
        self._redis = redis
        self._keys = keys
        self._memory: OrderedDict[str, str] = OrderedDict()
        self._pending: set[asyncio.Task[None]] = set()

    def put(self, value: str) -> str:
        """Sync by contract (presentation is pure); the key is written behind."""
        ref = hashlib.blake2s(value.encode(), digest_size=9).hexdigest()
        if ref not in self._memory:
            self._memory[ref] = value
            if len(self._memory) > MEMORY_ENTRIES:
                self._memory.popitem(last=False)
            task = asyncio.get_running_loop().create_task(self._persist(ref, value))
            self._pending.add(task)
            task.add_done_callback(self._pending.discard)
        return ref

    async def _persist(self, ref: str, value: str) -> None:
        await self._redis.set(self._keys("callback", ref), value, ex=TTL_S)

    async def flush(self) -> None:
        if self._pending:
            await asyncio.gather(*self._pending, return_exceptions=True)

    async def resolve(self, data: str) -> str | None:
        ref = data[len(REF_PREFIX) :] if data.startswith(REF_PREFIX) else data
        if ref in self._memory:
            return self._memory[ref]
        value = await self._redis.get(self._keys("callback", ref))
        return str(value) if value is not None else None
