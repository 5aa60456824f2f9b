"""Pairing on Redis: pending codes, approvals and failed-approval times, shared by every replica.

The decisions are in policies.pairing; this module only stores them. A read-decide-write step
runs under a short per-channel Redis lock so two replicas never issue or approve concurrently.
"""

from __future__ import annotations

import json
import random
from typing import Any

from redis.asyncio import Redis

from chatgate.policies.pairing import (
    CODE_TTL_S,
    ApprovalDecision,
    ApprovalOutcome,
    IssueDecision,
    IssueOutcome,
    PendingCode,
    decide_approval,
    decide_issue,
    normalize_code,
)
from chatgate.state.records import Approved, PendingRequest
from chatgate.state.redis.client import Keys, maps_errors

MUTEX_TTL_S = 5.0


def _approved(raw: str) -> Approved:
    d = json.loads(raw)
    return Approved(d["channel"], d["sender_id"], d["sender_name"], d["approved_at"], d["chat_id"])


@maps_errors("pairing")
class RedisPairing:
    def __init__(self, redis: Redis, keys: Keys, rng: random.Random | None = None) -> None:
        self._redis = redis
        self._keys = keys
        self._rng = rng or random.SystemRandom()

    def _k(self, what: str, channel: str) -> str:
        return self._keys("pairing", what, channel)

    async def _pending_raw(self, channel: str, now: float) -> dict[str, dict[str, Any]]:
        raw = await self._redis.hgetall(self._k("pending", channel))
        pending = {str(code): json.loads(v) for code, v in raw.items()}
        stale = [c for c, d in pending.items() if d["issued_at"] < now - CODE_TTL_S]
        if stale:
            await self._redis.hdel(self._k("pending", channel), *stale)
        return {c: d for c, d in pending.items() if c not in stale}

    @staticmethod
    def _codes(pending: dict[str, dict[str, Any]]) -> list[PendingCode]:
        rows = sorted(pending.items(), key=lambda kv: kv[1]["issued_at"])
        return [PendingCode(c, d["sender_id"], d["issued_at"], d["sender_name"]) for c, d in rows]

    async def is_approved(self, channel: str, sender_id: str) -> bool:
        return bool(await self._redis.hexists(self._k("approved", channel), sender_id))

    async def request(
        self, channel: str, sender_id: str, sender_name: str, chat_id: str, now: float
    ) -> IssueDecision:
        async with self._redis.lock(self._k("mutex", channel), timeout=MUTEX_TTL_S):
            pending = await self._pending_raw(channel, now)
            decision = decide_issue(self._codes(pending), sender_id, now, self._rng)
            if decision.outcome is IssueOutcome.ISSUED and decision.code:
                record = {
                    "sender_id": sender_id,
                    "sender_name": sender_name,
                    "chat_id": chat_id,
                    "issued_at": now,
                }
                await self._redis.hset(
                    self._k("pending", channel), decision.code, json.dumps(record)
                )
                await self._redis.sadd(self._keys("pairing", "channels"), channel)
            return decision

    async def approve(self, channel: str, code: str, now: float) -> ApprovalDecision:
        code = normalize_code(code)
        async with self._redis.lock(self._k("mutex", channel), timeout=MUTEX_TTL_S):
            pending = await self._pending_raw(channel, now)
            failures = [
                float(f) for f in await self._redis.lrange(self._k("failures", channel), 0, -1)
            ]
            decision = decide_approval(self._codes(pending), code, now, failures)
            if decision.outcome is ApprovalOutcome.APPROVED and decision.sender_id is not None:
                row = pending.get(code, {})
                record = {
                    "channel": channel,
                    "sender_id": decision.sender_id,
                    "sender_name": row.get("sender_name", ""),
                    "approved_at": now,
                    "chat_id": row.get("chat_id", ""),
                }
                mine = [c for c, d in pending.items() if d["sender_id"] == decision.sender_id]
                async with self._redis.pipeline(transaction=True) as pipe:
                    if mine:
                        pipe.hdel(self._k("pending", channel), *mine)
                    pipe.hset(self._k("approved", channel), decision.sender_id, json.dumps(record))
                    pipe.sadd(self._keys("pairing", "channels"), channel)
                    pipe.rpush(self._keys("pairing", "unnotified"), json.dumps(record))
                    pipe.delete(self._k("failures", channel))
                    await pipe.execute()
            elif decision.outcome in (ApprovalOutcome.UNKNOWN_CODE, ApprovalOutcome.EXPIRED):
                await self._redis.rpush(self._k("failures", channel), now)
            return decision

    async def deny(self, channel: str, code: str) -> bool:
        return bool(await self._redis.hdel(self._k("pending", channel), normalize_code(code)))

    async def revoke(self, channel: str, sender_id: str) -> bool:
        return bool(await self._redis.hdel(self._k("approved", channel), sender_id))

    async def _channels(self) -> list[str]:
        return sorted(str(c) for c in await self._redis.smembers(self._keys("pairing", "channels")))

    async def pending(self, now: float) -> list[PendingRequest]:
        out: list[PendingRequest] = []
        for ch in await self._channels():
            for p in self._codes(await self._pending_raw(ch, now)):
                out.append(PendingRequest(ch, p.code, p.sender_id, p.sender_name, p.issued_at))
        return out

    async def approved(self, channel: str | None = None) -> list[Approved]:
        channels = [channel] if channel else await self._channels()
        out: list[Approved] = []
        for ch in channels:
            out += [
                _approved(str(v))
                for v in (await self._redis.hgetall(self._k("approved", ch))).values()
            ]
        return sorted(out, key=lambda a: a.approved_at)

    async def take_unnotified(self) -> list[Approved]:
        """Each approval is handed out once, to whichever replica asks first (LPOP is atomic)."""
        out: list[Approved] = []
        while True:
            raw = await self._redis.lpop(self._keys("pairing", "unnotified"))
            if raw is None:
                return out
            out.append(_approved(str(raw)))
