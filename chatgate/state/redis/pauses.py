"""Paused chats on Redis: one hash (chat → JSON), so a pause taken on one replica silences the
chat on every replica at its next message."""

from __future__ import annotations

import json

from redis.asyncio import Redis

from chatgate.policies.takeover import Pause
from chatgate.state.redis.client import Keys, maps_errors

# Remove the chat's pause only if it is the one taken at ARGV[2] (a newer one stays).
_DELETE_IF = """
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if raw and cjson.decode(raw)['since'] == tonumber(ARGV[2]) then
  return redis.call('HDEL', KEYS[1], ARGV[1])
end
return 0
"""


@maps_errors("paused chats")
class RedisPauses:
    def __init__(self, redis: Redis, keys: Keys) -> None:
        self._redis = redis
        self._key = keys("pauses")

    async def put(self, pause: Pause) -> None:
        await self._redis.hset(self._key, pause.chat, json.dumps(pause.to_dict()))

    async def get(self, chat: str) -> Pause | None:
        raw = await self._redis.hget(self._key, chat)
        return Pause.from_dict(json.loads(raw)) if raw is not None else None

    async def delete(self, chat: str, since: float | None = None) -> bool:
        if since is None:
            return bool(await self._redis.hdel(self._key, chat))
        return bool(await self._redis.eval(_DELETE_IF, 1, self._key, chat, repr(since)))

    async def all(self) -> list[Pause]:
        found = await self._redis.hgetall(self._key)
        pauses = [Pause.from_dict(json.loads(v)) for v in found.values()]
        return sorted(pauses, key=lambda p: p.since)
