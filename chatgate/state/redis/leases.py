"""Channel ownership leases on Redis: one replica per exclusive connection.

`SET lease:<name> <replica> NX PX ttl` takes a lease; renew and release are compare-and-extend /
compare-and-delete scripts keyed by the replica id, so a replica that lost its lease (paused past
the TTL) can neither extend nor free the new holder's.
"""

from __future__ import annotations

from redis.asyncio import Redis

from chatgate.state.redis.client import Keys, cancel_safe
from chatgate.state.redis.lock import RELEASE, RENEW


def _ms(seconds: float) -> int:
    return max(1, int(seconds * 1000))


class RedisLeases:
    shared = True

    def __init__(self, redis: Redis, keys: Keys, replica: str) -> None:
        self._redis = redis
        self._keys = keys
        self.replica = replica
        self._release = redis.register_script(RELEASE)
        self._renew = redis.register_script(RENEW)

    def _key(self, name: str) -> str:
        return self._keys("lease", name)

    async def acquire(self, name: str, ttl: float) -> bool:
        if await cancel_safe(self._redis.set(self._key(name), self.replica, nx=True, px=_ms(ttl))):
            return True
        return await self.renew(name, ttl)  # already ours (e.g. after a restart of the channel)

    async def renew(self, name: str, ttl: float) -> bool:
        renewal = self._renew(keys=[self._key(name)], args=[self.replica, _ms(ttl)])
        return bool(await cancel_safe(renewal))

    async def release(self, name: str) -> None:
        await cancel_safe(self._release(keys=[self._key(name)], args=[self.replica]))

    async def holders(self) -> dict[str, str]:
        prefix = self._key("")
        names = [str(k) async for k in self._redis.scan_iter(match=prefix + "*", count=100)]
        values = await self._redis.mget(names) if names else []
        return {n[len(prefix) :]: str(v) for n, v in sorted(zip(names, values, strict=True)) if v}

    async def peers(self) -> list[str]:
        prefix = self._keys("replica", "")
        out = [str(k)[len(prefix) :] async for k in self._redis.scan_iter(match=prefix + "*")]
        return sorted(out)
