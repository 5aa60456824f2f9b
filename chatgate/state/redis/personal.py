"""A person's data in the Redis state: the journal (tombstoned on erase), transcripts and tool
approvals, the privacy audit trail and retention. Each write bumps what replicas watch (a
session's ``rev``), so a warm transcript elsewhere is rebuilt from the erased store."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from redis.asyncio import Redis

from chatgate.model.messages import InboundMessage
from chatgate.model.reasons import PrivacyReason
from chatgate.state.personal import (
    ERASED_STAGE,
    AuditRecord,
    Erased,
    Footprint,
    Found,
    Person,
    PersonalData,
    direct_chats,
    footprint_of,
    session_is_theirs,
    tombstone,
    with_sessions,
)
from chatgate.state.records import TERMINAL, JournalState
from chatgate.state.redis.client import Keys, maps_errors

SCAN = 500  # journal entries read per round trip
AUDIT_KEPT = 10_000


def _json(text: Any) -> Any:
    return json.loads(text) if text else None


class _Journal:
    name = "journal"

    def __init__(self, redis: Redis, keys: Keys) -> None:
        self._redis, self._keys = redis, keys

    async def collect(self, footprint: Footprint) -> Found:
        out = []
        for key in sorted(footprint.keys):
            h = await self._redis.hgetall(self._keys("journal", "e", key))
            if h:
                out.append(
                    {
                        "key": key,
                        "received_at": float(h["received_at"]),
                        "state": h.get("state"),
                        "stage": h.get("stage"),
                        "reason": h.get("reason"),
                        "session": h.get("session"),
                        "message": _json(h.get("message")),
                        "reply": _json(h.get("reply")),
                        "delivery": h.get("delivery"),
                    }
                )
        return Found(self.name, tuple(out))

    async def erase(self, footprint: Footprint, now: float) -> Erased:
        done = 0
        for key in sorted(footprint.keys):
            done += await _tombstone(self._redis, self._keys, key, now)
        person = footprint.person
        await self._redis.delete(self._keys("journal", "sender", person.channel, person.user))
        return Erased(self.name, tombstones=done)


async def _tombstone(redis: Redis, keys: Keys, key: str, now: float) -> int:
    entry = keys("journal", "e", key)
    raw = await redis.hget(entry, "message")
    if raw is None:
        return 0
    blank = tombstone(InboundMessage.from_dict(json.loads(raw)))
    async with redis.pipeline(transaction=True) as pipe:
        pipe.hdel(entry, "reply", "session", "delivery_ids", "sending_by", "sending_at")
        pipe.hset(
            entry,
            mapping={
                "message": json.dumps(blank.to_dict(), separators=(",", ":")),
                "state": JournalState.DROPPED.value,
                "stage": ERASED_STAGE,
                "reason": PrivacyReason.ERASED.value,
                "updated_at": repr(now),
            },
        )
        pipe.zrem(keys("journal", "open"), key)
        await pipe.execute()
    return 1


class _Transcripts:
    name = "transcripts"

    def __init__(self, redis: Redis, keys: Keys) -> None:
        self._redis, self._keys = redis, keys

    async def _epochs(self, session: str) -> int:
        raw = await self._redis.hget(self._keys("session", session), "epoch")
        return int(raw) if raw is not None else -1

    def _lines(self, session: str, epoch: int) -> str:
        return f"{self._keys('session', session)}:{epoch}:lines"

    async def collect(self, footprint: Footprint) -> Found:
        out: list[dict[str, Any]] = []
        for session in sorted(footprint.sessions | footprint.own_sessions):
            whole = session in footprint.own_sessions
            for epoch in range(await self._epochs(session) + 1):
                for raw in await self._redis.lrange(self._lines(session, epoch), 0, -1):
                    line = json.loads(raw)
                    if whole or line.get("source") in footprint.keys:
                        out.append({"session": session, "epoch": epoch, **line})
        return Found(self.name, tuple(out))

    async def erase(self, footprint: Footprint, now: float) -> Erased:
        removed = 0
        for session in sorted(footprint.own_sessions):
            removed += await self._drop(session)
        for session in sorted(footprint.sessions - footprint.own_sessions):
            removed += await self._filter(session, footprint.keys)
        return Erased(self.name, removed=removed)

    async def _drop(self, session: str) -> int:
        base = self._keys("session", session)
        last = await self._epochs(session)
        removed = 0
        for epoch in range(last + 1):
            removed += int(await self._redis.llen(self._lines(session, epoch)))
        doomed = [base] + [
            f"{base}:{e}:{kind}" for e in range(last + 1) for kind in ("lines", "seen")
        ]
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.delete(*doomed)
            pipe.zrem(self._keys("sessions"), session)
            await pipe.execute()
        return removed

    async def _filter(self, session: str, sources: frozenset[str]) -> int:
        removed = 0
        for epoch in range(await self._epochs(session) + 1):
            removed += await self._rewrite(
                session, epoch, lambda line: line.get("source") in sources
            )
        if removed:
            await self._redis.hincrby(self._keys("session", session), "rev", 1)
        return removed

    async def _rewrite(self, session: str, epoch: int, doomed: Any) -> int:
        """Rewrite one epoch's lines without those ``doomed(line)`` names."""
        name = self._lines(session, epoch)
        lines = await self._redis.lrange(name, 0, -1)
        kept = [raw for raw in lines if not doomed(json.loads(raw))]
        if len(kept) == len(lines):
            return 0
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.delete(name)
            if kept:
                pipe.rpush(name, *kept)
            await pipe.execute()
        current = await self._epochs(session)
        if current == epoch:
            await self._redis.hset(self._keys("session", session), "count", len(kept))
        return len(lines) - len(kept)


class _Approvals:
    name = "approvals"

    def __init__(self, redis: Redis, keys: Keys) -> None:
        self._redis, self._keys = redis, keys

    async def _ids(self, footprint: Footprint) -> list[tuple[str, str]]:
        found = []
        for key in sorted(footprint.keys):
            for ident in await self._redis.zrange(self._keys("approvals", "msg", key), 0, -1):
                found.append((key, str(ident)))
        return found

    async def collect(self, footprint: Footprint) -> Found:
        out = []
        for key, ident in await self._ids(footprint):
            h = await self._redis.hgetall(self._keys("approval", ident))
            if h:
                out.append(
                    {"id": ident, "key": key, **{str(k): _maybe_json(str(v)) for k, v in h.items()}}
                )
        return Found(self.name, tuple(out))

    async def erase(self, footprint: Footprint, now: float) -> Erased:
        removed = 0
        for key, ident in await self._ids(footprint):
            raw = await self._redis.hget(self._keys("approval", ident), "data")
            if raw:
                channel, chat, _ = json.loads(raw)["prompt"]
                await self._redis.zrem(self._keys("approvals", "chat", channel, chat), ident)
            removed += int(await self._redis.delete(self._keys("approval", ident)))
            await self._redis.delete(self._keys("approvals", "msg", key))
        return Erased(self.name, removed=removed)


def _maybe_json(value: str) -> Any:
    try:
        return json.loads(value)
    except ValueError:
        return value


class _Announcements:
    """Approvals waiting to be announced to their user (the pairing store's queue)."""

    name = "pairing_announcements"

    def __init__(self, redis: Redis, keys: Keys) -> None:
        self._redis, self._keys = redis, keys

    async def _theirs(self, footprint: Footprint) -> list[str]:
        person = footprint.person
        queued = await self._redis.lrange(self._keys("pairing", "unnotified"), 0, -1)
        found = []
        for raw in map(str, queued):
            record = json.loads(raw)
            if record.get("channel") == person.channel and record.get("sender_id") == person.user:
                found.append(raw)
        return found

    async def collect(self, footprint: Footprint) -> Found:
        return Found(self.name, tuple(json.loads(r) for r in await self._theirs(footprint)))

    async def erase(self, footprint: Footprint, now: float) -> Erased:
        removed = 0
        for raw in await self._theirs(footprint):
            removed += int(await self._redis.lrem(self._keys("pairing", "unnotified"), 0, raw))
        return Erased(self.name, removed=removed)


@maps_errors("privacy")
class RedisPersonal:
    """`PersonalStores` over the shared Redis state."""

    def __init__(self, redis: Redis, keys: Keys) -> None:
        self._redis, self._keys = redis, keys

    async def footprint(self, person: Person) -> Footprint:
        """Every journal entry is read (the per-sender list is trimmed), a batch at a time."""
        found: list[tuple[str, InboundMessage, str | None]] = []
        everything = self._keys("journal", "all")
        start = 0
        while True:
            names = [str(k) for k in await self._redis.zrange(everything, start, start + SCAN - 1)]
            if not names:
                return await self._with_sessions(person, footprint_of(person, found))
            start += len(names)
            async with self._redis.pipeline(transaction=False) as pipe:
                for name in names:
                    pipe.hmget(self._keys("journal", "e", name), "message", "session")
                rows = await pipe.execute()
            for name, (raw, session) in zip(names, rows, strict=True):
                if raw is None:
                    continue
                msg = InboundMessage.from_dict(json.loads(raw))
                if msg.channel == person.channel and msg.sender_id == person.user:
                    found.append((name, msg, session))

    async def _with_sessions(self, person: Person, journal: Footprint) -> Footprint:
        raw = await self._redis.hget(self._keys("pairing", "approved", person.channel), person.user)
        paired = json.loads(raw).get("chat_id") if raw else None
        chats = direct_chats(person, journal, paired)
        marker = f":{person.channel}:"
        names = [str(n) for n in await self._redis.zrange(self._keys("sessions"), 0, -1)]
        own = frozenset(n for n in names if marker in n and session_is_theirs(n, person, chats))
        return with_sessions(journal, chats, own)

    def parts(self) -> Sequence[PersonalData]:
        return (
            _Journal(self._redis, self._keys),
            _Transcripts(self._redis, self._keys),
            _Approvals(self._redis, self._keys),
            _Announcements(self._redis, self._keys),
        )

    async def audit(self, record: AuditRecord) -> None:
        name = self._keys("privacy", "audit")
        await self._redis.lpush(name, json.dumps(record.to_json(), separators=(",", ":")))
        await self._redis.ltrim(name, 0, AUDIT_KEPT - 1)

    async def audit_log(self, limit: int) -> list[AuditRecord]:
        raw = await self._redis.lrange(self._keys("privacy", "audit"), 0, limit - 1)
        return [AuditRecord.from_json(json.loads(r)) for r in raw]

    async def expire(self, channel: str, older_than: float, batch: int) -> int:
        done = await self._expire_journal(channel, older_than, batch)
        transcripts = _Transcripts(self._redis, self._keys)
        marker = f":{channel}:"
        for session in map(str, await self._redis.zrange(self._keys("sessions"), 0, -1)):
            if done >= batch:
                break
            if marker not in session:
                continue
            removed = 0
            for epoch in range(await transcripts._epochs(session) + 1):
                removed += await transcripts._rewrite(
                    session, epoch, lambda line: float(line.get("at") or 0) < older_than
                )
            if removed:
                await self._redis.hincrby(self._keys("session", session), "rev", 1)
            done += removed
        return done

    async def _expire_journal(self, channel: str, older_than: float, batch: int) -> int:
        old = await self._redis.zrangebyscore(
            self._keys("journal", "all"), "-inf", f"({older_than}"
        )
        done = 0
        for name in map(str, old):
            if done >= batch:
                break
            state, raw = await self._redis.hmget(
                self._keys("journal", "e", name), "state", "message"
            )
            if state is None or raw is None or JournalState(str(state)) not in TERMINAL:
                continue
            msg = InboundMessage.from_dict(json.loads(raw))
            if msg.channel == channel and msg.sender_id:
                done += await _tombstone(self._redis, self._keys, name, older_than)
        return done

    async def compact(self) -> None:
        return None  # deleted keys are gone from the server's memory
