"""Dead letters and dead targets on Redis, visible to every replica and the CLI.

The DLQ is a hash id → JSON plus an INCR counter for ids; dead targets are one hash address →
kind. Nothing is cached: another replica or the CLI may change either at any time.
"""

from __future__ import annotations

import json
from typing import Any

from redis.asyncio import Redis

from chatgate.model.messages import Target
from chatgate.model.reasons import SendErrorKind
from chatgate.state.records import DeadLetter
from chatgate.state.redis.client import Keys, maps_errors

TAKE = """
local v = redis.call('hget', KEYS[1], ARGV[1])
if v then redis.call('hdel', KEYS[1], ARGV[1]) end
return v
"""


def _letter(raw: str) -> DeadLetter:
    d = json.loads(raw)
    return DeadLetter(
        id=d["id"],
        created_at=d["created_at"],
        target=Target.from_dict(d["target"]),
        message=d["message"],
        kind=d["kind"],
        error=d["error"],
        attempts=d["attempts"],
        inbound_key=d["inbound_key"],
        session=d["session"],
    )


@maps_errors("dead letters")
class RedisDeadLetters:
    def __init__(self, redis: Redis, keys: Keys) -> None:
        self._redis = redis
        self._keys = keys
        self._take = redis.register_script(TAKE)

    @property
    def _hash(self) -> str:
        return self._keys("dlq")

    async def count(self) -> int:
        return int(await self._redis.hlen(self._hash))

    async def add(
        self,
        target: Target,
        message: dict[str, Any],
        kind: SendErrorKind | str,
        error: str,
        attempts: int,
        now: float,
        *,
        inbound_key: str | None = None,
        session: str | None = None,
    ) -> int:
        entry_id = int(await self._redis.incr(self._keys("dlq", "seq")))
        record = {
            "id": entry_id,
            "created_at": now,
            "target": target.to_dict(),
            "message": message,
            "kind": str(kind),
            "error": error[:500],
            "attempts": attempts,
            "inbound_key": inbound_key,
            "session": session,
        }
        await self._redis.hset(self._hash, str(entry_id), json.dumps(record, separators=(",", ":")))
        return entry_id

    async def list(self, limit: int = 100) -> list[DeadLetter]:
        values = await self._redis.hvals(self._hash)
        letters = sorted((_letter(str(v)) for v in values), key=lambda d: d.id)
        return letters[:limit]

    async def get(self, entry_id: int) -> DeadLetter | None:
        raw = await self._redis.hget(self._hash, str(entry_id))
        return _letter(str(raw)) if raw else None

    async def take(self, entry_id: int) -> DeadLetter | None:
        raw = await self._take(keys=[self._hash], args=[str(entry_id)])
        return _letter(raw) if raw else None

    async def drop(self, entry_id: int) -> bool:
        return bool(await self._redis.hdel(self._hash, str(entry_id)))


@maps_errors("dead targets")
class RedisDeadTargets:
    def __init__(self, redis: Redis, keys: Keys) -> None:
        self._redis = redis
        self._keys = keys

    @property
    def _hash(self) -> str:
        return self._keys("dead_targets")

    async def kind(self, target: Target) -> str | None:
        value = await self._redis.hget(self._hash, target.address)
        return str(value) if value is not None else None

    async def all(self) -> dict[str, str]:
        return {str(k): str(v) for k, v in (await self._redis.hgetall(self._hash)).items()}

    async def mark(self, target: Target, kind: SendErrorKind, error: str, now: float) -> None:
        await self._redis.hset(self._hash, target.address, kind.value)

    async def revive(self, address: str) -> bool:
        return bool(await self._redis.hdel(self._hash, address))
