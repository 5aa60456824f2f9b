"""Channel ownership leases on Redis: one replica per exclusive connection.

`SET lease:<name> <replica> NX PX ttl` takes a lease; renew and release are compare-and-extend /
compare-and-delete scripts keyed by the replica id, so a replica that lost its lease (paused past
the TTL) can neither extend nor free the new holder's.

Fencing: a Redis that lost its data (restart without persistence, FLUSHALL) shows every lease as
free while the old holder still trusts its grant. The fence key (`FENCE_KEY`, no TTL, one per
Redis db for every key prefix) holds the Redis TIME at which it was first found missing; a free
lease is taken only once ``fence`` seconds have passed since then. A fresh Redis therefore makes
the first replica wait one fence too, which costs one validity once per deployment.
"""

from __future__ import annotations

from redis.asyncio import Redis

from chatgate.state.redis.client import Keys, cancel_safe
from chatgate.state.redis.lock_scripts import RELEASE, RENEW

FENCE_KEY = "chatgate:lease-fence"
# KEYS: lease, fence. ARGV: replica, px ms, fence ms. 1 = held by the caller now.
TAKE = """
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if holder then return 0 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local since = redis.call('GET', KEYS[2])
if not since then
  redis.call('SET', KEYS[2], now)
  since = now
end
if now - tonumber(since) < tonumber(ARGV[3]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
"""


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
        self._take = redis.register_script(TAKE)

    def _key(self, name: str) -> str:
        return self._keys("lease", name)

    async def acquire(self, name: str, ttl: float, fence: float = 0.0) -> bool:
        """Take (or keep, when already ours) ``name``; a free lease only outside the fence."""
        fence_ms = max(0, int(fence * 1000))
        taking = self._take(
            keys=[self._key(name), FENCE_KEY], args=[self.replica, _ms(ttl), fence_ms]
        )
        return bool(await cancel_safe(taking))

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
