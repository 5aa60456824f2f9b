"""Pending tool approvals on Redis: one hash per prompt (created and decided by Lua scripts, so
the first decision wins on any replica) and a sorted set per chat for yes/no replies."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

from redis.asyncio import Redis

from chatgate.policies.approvals import ApprovalState
from chatgate.state.approvals import KEEP_S, ApprovalRecord
from chatgate.state.redis.client import Keys, maps_errors

# KEYS: record, chat index, message index. ARGV: data, expires_at, ttl ms, id, oldest kept.
_CREATE = """
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 'data', ARGV[1], 'state', 'pending', 'prompt_ids', '[]')
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[5])
  redis.call('ZADD', KEYS[2], ARGV[2], ARGV[4])
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
  redis.call('ZADD', KEYS[3], ARGV[2], ARGV[4])
  redis.call('PEXPIRE', KEYS[3], ARGV[3])
end
return redis.call('HGETALL', KEYS[1])
"""
# KEYS: record. ARGV: state, by, at. Returns {decided by this call (0/1), fields...}.
_DECIDE = """
local changed = 0
if redis.call('HGET', KEYS[1], 'state') == 'pending' then
  redis.call('HSET', KEYS[1], 'state', ARGV[1], 'decided_by', ARGV[2], 'decided_at', ARGV[3])
  changed = 1
end
local out = redis.call('HGETALL', KEYS[1])
table.insert(out, 1, changed)
return out
"""


def _record(ident: str, fields: dict[str, str]) -> ApprovalRecord | None:
    if "data" not in fields:
        return None
    at = fields.get("decided_at")
    return ApprovalRecord.from_static(
        ident,
        json.loads(fields["data"]),
        fields.get("state", ApprovalState.PENDING.value),
        fields.get("decided_by", ""),
        float(at) if at else None,
        json.loads(fields.get("prompt_ids") or "[]"),
    )


def _pairs(flat: Sequence[str]) -> dict[str, str]:
    return {str(flat[i]): str(flat[i + 1]) for i in range(0, len(flat) - 1, 2)}


@maps_errors("approvals")
class RedisApprovals:
    def __init__(self, redis: Redis, keys: Keys) -> None:
        self._redis = redis
        self._keys = keys

    def _key(self, ident: str) -> str:
        return self._keys("approval", ident)

    def _chat(self, channel: str, chat_id: str) -> str:
        return self._keys("approvals", "chat", channel, chat_id)

    async def create(self, record: ApprovalRecord) -> ApprovalRecord:
        channel, chat, _ = record.prompt
        ttl_ms = max(1, math.ceil((record.expires_at - record.created_at + KEEP_S) * 1000))
        data = json.dumps(record.static(), ensure_ascii=False, default=str)
        flat = await self._redis.eval(
            _CREATE,
            3,
            self._key(record.id),
            self._chat(channel, chat),
            self._keys("approvals", "msg", record.key),
            data,
            repr(record.expires_at),
            ttl_ms,
            record.id,
            repr(record.created_at - KEEP_S),
        )
        stored = _record(record.id, _pairs(flat))
        return stored or record

    async def get(self, ident: str) -> ApprovalRecord | None:
        fields = await self._redis.hgetall(self._key(ident))
        return _record(ident, {str(k): str(v) for k, v in fields.items()})

    async def set_prompt(self, ident: str, message_ids: Sequence[str]) -> None:
        key = self._key(ident)
        if await self._redis.exists(key):
            await self._redis.hset(key, "prompt_ids", json.dumps(list(message_ids)))

    async def decide(
        self, ident: str, state: ApprovalState, by: str, now: float
    ) -> tuple[ApprovalRecord | None, bool]:
        out = await self._redis.eval(_DECIDE, 1, self._key(ident), state.value, by, repr(now))
        changed, flat = int(out[0]), out[1:]
        return _record(ident, _pairs(flat)), changed == 1

    async def pending_in(self, channel: str, chat_id: str, now: float) -> list[ApprovalRecord]:
        ids = await self._redis.zrevrangebyscore(self._chat(channel, chat_id), "+inf", f"({now!r}")
        found = []
        for ident in ids:
            record = await self.get(str(ident))
            if record is not None and record.state is ApprovalState.PENDING:
                found.append(record)
        return found

    async def for_message(self, key: str) -> list[ApprovalRecord]:
        ids = await self._redis.zrange(self._keys("approvals", "msg", key), 0, -1)
        found = [await self.get(str(ident)) for ident in ids]
        return sorted((r for r in found if r is not None), key=lambda r: r.created_at)
