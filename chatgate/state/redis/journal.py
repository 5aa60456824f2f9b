"""The ingress journal on Redis: dedupe and claims shared by every replica.

Each message is one hash; `record` creates it with SET-NX semantics inside a Lua script, so a
message delivered to two replicas (webhook retries behind a load balancer) is processed once.
Every entry names the replica that claimed it. Open (pending/answered) entries sit in a sorted set;
`unfinished` hands a replica its own open entries (a restart with the same replica id); `orphaned`
those of replicas whose liveness key has expired (a replica that died mid-turn) or handed to
nobody, on the channels the caller serves, re-claiming them atomically so only one replica
resumes each. An answered entry keeps its reply, so the resuming replica re-sends instead of re-running.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, replace

from redis.asyncio import Redis
from redis.exceptions import RedisError
from redis.typing import EncodableT

from chatgate.model.compact import compact_json
from chatgate.model.messages import InboundMessage
from chatgate.state.records import TERMINAL, JournalEntry, JournalMark, JournalState
from chatgate.state.redis.client import Keys, listen, unavailable
from chatgate.state.redis.leases import FENCE_KEY

log = logging.getLogger("chatgate.state")
SENDER_HISTORY = 50
RESUBSCRIBE_S = 1.0

# KEYS: entry, open, all, msgid-index, sender-list, open-seq, the session's open messages;
# ARGV: key, now, window, message, owner, message_id, sender_history, channel, '1' when the
# session is known (its open-message index is written with the entry, left when it settles),
# when the message came in (the index's order: the same after a wipe's restore by any replica)
_WRITE = """
redis.call('del', KEYS[1])
redis.call('hset', KEYS[1], 'state', 'pending', 'message', ARGV[4], 'received_at', ARGV[2],
  'updated_at', ARGV[2], 'owner', ARGV[5], 'channel', ARGV[8])
local seq = redis.call('incr', KEYS[6])
redis.call('zadd', KEYS[2], seq, ARGV[1])
if ARGV[9] == '1' then
  redis.call('zadd', KEYS[7], ARGV[10], ARGV[1])
  redis.call('hset', KEYS[1], 'open_index', KEYS[7])
end
redis.call('zadd', KEYS[3], tonumber(ARGV[2]), ARGV[1])
if ARGV[6] ~= '' then redis.call('hset', KEYS[4], ARGV[6], ARGV[1]) end
redis.call('lpush', KEYS[5], ARGV[1])
redis.call('ltrim', KEYS[5], 0, tonumber(ARGV[7]) - 1)
"""
RECORD = (
    """
local received = redis.call('hget', KEYS[1], 'received_at')
if received and tonumber(received) >= tonumber(ARGV[2]) - tonumber(ARGV[3]) then
  return 0
end
"""
    + _WRITE
    + "return 1\n"
)
# RECORD's KEYS and ARGV (no window): a message a replica still holds after Redis lost its data.
# Written as the replica's when missing (or only a later write's fields are left); taken over
# from a pending entry that no restore wrote (another replica's intake took the message in again
# after the loss, as Telegram re-delivers an update not yet confirmed), so only its holder
# answers it. 1: the entry is the caller's now.
RESTORE = (
    """
local h = redis.call('hmget', KEYS[1], 'owner', 'state', 'restored', 'received_at')
if h[4] then
  if h[3] or h[2] ~= 'pending' or h[1] == ARGV[5] then return 0 end
  redis.call('hset', KEYS[1], 'owner', ARGV[5], 'restored', '1')
  return 1
end
"""
    + _WRITE
    + "redis.call('hset', KEYS[1], 'restored', '1')\nreturn 1\n"
)
# Compare-and-set of one entry's owner. KEYS: entry, the previous owner's liveness key;
# ARGV: previous owner, me → 1 when the entry is now mine.
CLAIM = """
local owner = redis.call('hget', KEYS[1], 'owner')
if owner ~= ARGV[1] then return 0 end
if owner ~= ARGV[2] and owner ~= '' and redis.call('exists', KEYS[2]) == 1 then return 0 end
redis.call('hset', KEYS[1], 'owner', ARGV[2])
return 1
"""
# KEYS: entry; ARGV: me → 1 when the entry was mine and now belongs to no replica.
# A send of mine that failed is not one the next sender waits for: the mark goes too.
HAND_OFF = """
if redis.call('hget', KEYS[1], 'owner') ~= ARGV[1] then return 0 end
local t = redis.call('time')
redis.call('hset', KEYS[1], 'owner', '', 'handed_at', t[1] .. '.' .. string.format('%06d', t[2]))
if redis.call('hget', KEYS[1], 'sending_by') == ARGV[1] then
  redis.call('hdel', KEYS[1], 'sending_by', 'sending_at')
end
return 1
"""
NOBODY = ""  # the owner of a handed-off entry: any replica serving its channel takes it
# KEYS: entry, open. ARGV: me, guard, terminal (1: leave the open set), key, then field/value
# pairs. Guard 1: only while the entry is mine, or while I hold its sending mark (a replica that
# stalled mid-send records what it sent, so the adopter does not send it again); 2: or while it
# is still pending (an answer a stalled replica made is kept for the replica that adopted it,
# which sends it). 0: not written.
SETTLE = """
if ARGV[2] ~= '0' then
  local owner = redis.call('hget', KEYS[1], 'owner')
  if owner and owner ~= ARGV[1] then
    local ok = (ARGV[2] == '2' and redis.call('hget', KEYS[1], 'state') == 'pending')
      or (ARGV[2] == '1' and redis.call('hget', KEYS[1], 'sending_by') == ARGV[1])
    if not ok then return 0 end
  end
end
redis.call('hset', KEYS[1], unpack(ARGV, 5))
if ARGV[3] == '1' then
  redis.call('zrem', KEYS[2], ARGV[4])
  local index = redis.call('hget', KEYS[1], 'open_index')
  if index then redis.call('zrem', index, ARGV[4]) end
end
return 1
"""
# Right before an answer's first chunk. KEYS: entry; ARGV: me, grace (ms) → 1: send it (marked
# as being sent by me, at Redis's time), 0: not mine, 2: done already (its previous owner sent
# it), -N: wait N ms (another replica began sending it less than the grace ago and may still
# record that it did).
BEGIN_SEND = """
local h = redis.call('hmget', KEYS[1], 'owner', 'state', 'sending_by', 'sending_at')
if h[2] == 'done' then return 2 end
if h[1] ~= ARGV[1] then return 0 end
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if h[3] and h[3] ~= ARGV[1] then
  local left = tonumber(h[4]) + tonumber(ARGV[2]) - now
  if left > 0 then return -left end
end
redis.call('hset', KEYS[1], 'sending_by', ARGV[1], 'sending_at', now)
return 1
"""
SEND_POLL_S = 0.2
# KEYS: the lease fence → its value, set to Redis's TIME (ms) when missing (as the lease fence
# does): a Redis that lost its data shows a new value to every replica that remembers the old.
GENERATION = """
local v = redis.call('GET', KEYS[1])
if v then return v end
local t = redis.call('TIME')
local now = tostring(tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
redis.call('SET', KEYS[1], now)
return now
"""
# The outcome writes of a replica that may have stalled while another adopted its entry.
GUARDS = {JournalState.ANSWERED: 2, JournalState.DONE: 1}


def open_index(keys: Keys, session: str) -> str:
    """The key of ``session``'s open (journaled, not yet settled) messages, in arrival order:
    a turn of the session waits for the earlier ones before it takes the session's free lock."""
    return keys("journal", "session-open", session)


@dataclass(frozen=True)
class OpenEntry:
    key: str
    owner: str | None  # None: the hash is gone (purged), only its index entry is left
    channel: str
    owner_live: bool


def claimable(
    entries: Sequence[OpenEntry], me: str, *, include_own: bool, channels: Collection[str]
) -> list[OpenEntry]:
    """Which open entries this replica should try to claim, oldest first: its own (on start),
    and those of dead replicas or handed to nobody, only on a channel it can deliver on now (so
    an answer is never claimed by a replica that would hand it off again)."""
    out = []
    for e in entries:
        if e.owner is None:
            continue
        if e.owner == me:
            if include_own:
                out.append(e)
        elif (e.owner == NOBODY or not e.owner_live) and e.channel in channels:
            out.append(e)
    return out


FIELDS = ("stage", "reason", "session", "reply", "delivery", "delivery_ids")


def _entry(key: str, h: dict[str, str]) -> JournalEntry:
    return JournalEntry(
        key=key,
        state=JournalState(h["state"]),
        message=InboundMessage.from_dict(json.loads(h["message"])),
        stage=h.get("stage"),
        reason=h.get("reason"),
        session=h.get("session"),
        reply=json.loads(h["reply"]) if h.get("reply") else None,
        delivery=h.get("delivery"),
        delivery_ids=json.loads(h["delivery_ids"]) if h.get("delivery_ids") else [],
        received_at=float(h["received_at"]),
        updated_at=float(h["updated_at"]),
        handed_at=float(h["handed_at"]) if h.get("handed_at") else None,
    )


async def _nothing() -> None:
    return None


def _subscribed() -> None:
    """Nothing to do once hand-off notices flow (the adoption poll covered the time before)."""


class RedisJournal:
    """Every Redis error surfaces as ``StateUnavailable`` (refuse the message, probe, resume).

    ``join`` runs before the first claim: a daemon announces itself as a live replica only when
    it starts taking work, so an offline CLI that merely reads never shows up as a peer.
    """

    indexes_sessions = True

    def __init__(
        self,
        redis: Redis,
        keys: Keys,
        owner: str,
        join: Callable[[], Awaitable[None]] = _nothing,
        send_grace_s: float = 10.0,
    ) -> None:
        self._redis = redis
        self._keys = keys
        self._owner = owner
        self._join = join
        self._send_grace_ms = int(send_grace_s * 1000)
        self._begin_send = redis.register_script(BEGIN_SEND)
        self._settle = redis.register_script(SETTLE)
        self._record = redis.register_script(RECORD)
        self._restore = redis.register_script(RESTORE)
        self._claim = redis.register_script(CLAIM)
        self._hand_off = redis.register_script(HAND_OFF)
        self._generation = redis.register_script(GENERATION)

    def _e(self, key: str) -> str:
        return self._keys("journal", "e", key)

    def _recording(
        self, msg: InboundMessage, now: float, window_s: float, session: str
    ) -> tuple[list[str], list[str | float | int]]:
        """RECORD's (and RESTORE's) keys and arguments for ``msg`` of ``session`` ('': not
        known, not indexed)."""
        keys = [
            self._e(msg.key),
            self._keys("journal", "open"),
            self._keys("journal", "all"),
            self._keys("journal", "msgid", msg.channel),
            self._keys("journal", "sender", msg.channel, msg.sender_id),
            self._keys("journal", "open", "seq"),
            open_index(self._keys, session),
        ]
        args: list[str | float | int] = [
            msg.key,
            now,
            window_s,
            msg.to_json(),
            self._owner,
            msg.message_id or "",
            SENDER_HISTORY,
            msg.channel,
            "1" if session else "0",
            msg.received_at,
        ]
        return keys, args

    @unavailable("journal")
    async def record(
        self, msg: InboundMessage, now: float, window_s: float, session: str = ""
    ) -> tuple[bool, JournalEntry | None]:
        keys, args = self._recording(msg, now, window_s, session)
        if await self._record(keys=keys, args=args):
            return True, None
        return False, await self.get(msg.key)

    @unavailable("journal")
    async def restore(self, msg: InboundMessage, now: float, session: str = "") -> bool:
        keys, args = self._recording(msg, now, 0.0, session)
        return bool(await self._restore(keys=keys, args=args))

    @unavailable("journal")
    async def settle(self, key: str, mark: JournalMark) -> None:
        ids = mark.delivery_ids
        given: dict[str, str | None] = {
            "stage": mark.stage,
            "reason": mark.reason,
            "session": mark.session,
            "reply": compact_json(mark.reply) if mark.reply is not None else None,
            "delivery": mark.delivery,
            "delivery_ids": json.dumps(list(ids)) if ids is not None else None,
        }
        mapping: dict[str, str | float] = {k: v for k, v in given.items() if v is not None}
        mapping.update(state=mark.state.value, updated_at=mark.now)
        pairs: list[EncodableT] = [x for kv in mapping.items() for x in kv]
        guarded, terminal = GUARDS.get(mark.state, 0), int(mark.state in TERMINAL)
        args: list[EncodableT] = [self._owner, guarded, terminal, key, *pairs]
        await self._settle(keys=[self._e(key), self._keys("journal", "open")], args=args)

    def turn_writer(self) -> None:
        return None  # the session store is a separate set of keys: written side by side

    @unavailable("journal")
    async def generation(self) -> str:
        """The lease fence's value (see `leases`): the Redis TIME at which the data was first
        found missing, so it changes exactly when Redis lost its data."""
        return str(await self._generation(keys=[FENCE_KEY]))

    @unavailable("journal")
    async def owns(self, key: str) -> bool:
        """Whether ``key`` is still this replica's to answer (asked every time: a liveness key
        can expire under a live process, and one round trip per answer is cheap)."""
        return await self._redis.hget(self._e(key), "owner") == self._owner

    async def claim_send(self, key: str) -> bool:
        """Whether this replica may send ``key``'s answer now; marks it as being sent. When
        another replica began sending it (and stalled, and this one adopted the entry), waits
        up to the grace (3 lease TTLs from its mark) for that one to record the send, then sends only if it
        did not: a stall shorter than the grace repeats no reply."""
        while True:
            verdict = int(
                await unavailable("journal")(self._begin_send)(
                    keys=[self._e(key)], args=[self._owner, self._send_grace_ms]
                )
            )
            if verdict >= 0:
                return verdict == 1
            await asyncio.sleep(min(-verdict / 1000, SEND_POLL_S))

    @unavailable("journal")
    async def finish(
        self,
        key: str,
        now: float,
        *,
        stage: str,
        reason: str,
        delivery: str,
        delivery_ids: list[str],
    ) -> None:
        await self.settle(
            key,
            JournalMark(
                JournalState.DONE,
                now,
                stage=stage,
                reason=reason,
                delivery=delivery,
                delivery_ids=delivery_ids,
            ),
        )

    @unavailable("journal")
    async def unfinished(self) -> list[JournalEntry]:
        """This replica's own open entries (a restart with the same replica id); those of dead
        replicas or handed off are `orphaned`, claimed once a channel they need is served."""
        return await self._claimed([], include_own=True)

    @unavailable("journal")
    async def orphaned(self, channels: Collection[str]) -> list[JournalEntry]:
        """Open entries of replicas whose liveness key expired, claimed for this one."""
        if not channels:
            return []
        return await self._claimed(sorted(channels), include_own=False)

    @unavailable("journal")
    async def hand_off(self, key: str) -> bool:
        """Give up ``key`` (answered here, but its channel is no longer served here): the
        replica serving that channel claims it and sends the stored answer."""
        if not await self._hand_off(keys=[self._e(key)], args=[self._owner]):
            return False
        try:  # the serving replica claims it at once; its adoption poll is the fallback
            await self._redis.publish(self._keys("journal", "handoffs"), key)
        except (RedisError, OSError):
            log.debug("hand-off notice not published", extra={"key": key})
        return True

    async def watch_hand_offs(self, wake: Callable[[], None]) -> None:
        """Subscribe to hand-off notices; resubscribe after a Redis error (the adoption poll
        covers the gap). Until cancelled."""
        while True:
            try:
                await listen(
                    self._redis, self._keys("journal", "handoffs"), lambda _: wake(), _subscribed
                )
            except (RedisError, OSError) as exc:
                log.debug("hand-off notices lost; resubscribing", extra={"error": repr(exc)})
                await asyncio.sleep(RESUBSCRIBE_S)

    @unavailable("journal")
    async def unclaimed(self, keys: Collection[str]) -> set[str]:
        """Of ``keys`` (handed off by this replica), those still handed to nobody, or whose
        entry is gone (with Redis's data: the hander journals them again)."""
        ordered = list(keys)
        if not ordered:
            return set()
        async with self._redis.pipeline(transaction=False) as pipe:
            for key in ordered:
                pipe.hget(self._e(key), "owner")
            owners = await pipe.execute()
        return {k for k, o in zip(ordered, owners, strict=True) if o is None or o == NOBODY}

    async def _claimed(self, channels: list[str], *, include_own: bool) -> list[JournalEntry]:
        found = await self._open_entries()
        claimed: dict[str, bool] = {}  # key → handed off (not left by a dead replica)
        for e in claimable(found, self._owner, include_own=include_own, channels=channels):
            previous = e.owner or NOBODY
            if await self._claim(
                keys=[self._e(e.key), self._keys("replica", previous)],
                args=[previous, self._owner],
            ):
                claimed[e.key] = previous == NOBODY
        entries = [await self.get(k) for k in claimed]
        return [replace(e, handed_off=claimed[e.key]) for e in entries if e is not None]

    async def _open_entries(self) -> list[OpenEntry]:
        """The open entries with their owner and whether it is alive; an entry whose hash is
        gone leaves the open set."""
        await self._join()
        open_keys = [str(k) for k in await self._redis.zrange(self._keys("journal", "open"), 0, -1)]
        if not open_keys:
            return []
        async with self._redis.pipeline(transaction=False) as pipe:
            for key in open_keys:
                pipe.hmget(self._e(key), ["owner", "channel"])
            rows = await pipe.execute()
        live = await self._live({str(o) for o, _ in rows if o})
        found = [
            OpenEntry(key, None if o is None else str(o), str(c or ""), live.get(str(o), False))
            for key, (o, c) in zip(open_keys, rows, strict=True)
        ]
        gone = [e.key for e in found if e.owner is None]
        if gone:
            await self._redis.zrem(self._keys("journal", "open"), *gone)
        return found

    async def _live(self, owners: set[str]) -> dict[str, bool]:
        ordered = sorted(owners)
        async with self._redis.pipeline(transaction=False) as pipe:
            for owner in ordered:
                pipe.exists(self._keys("replica", owner))
            return dict(zip(ordered, [bool(n) for n in await pipe.execute()], strict=True))

    @unavailable("journal")
    async def get(self, key: str) -> JournalEntry | None:
        h = await self._redis.hgetall(self._e(key))
        if "message" not in h:  # gone, or only the fields a write after a data loss left
            return None
        return _entry(key, {str(k): str(v) for k, v in h.items()})

    @unavailable("journal")
    async def find(
        self,
        channel: str,
        *,
        message_id: str | None = None,
        sender_id: str | None = None,
        limit: int = 10,
    ) -> list[JournalEntry]:
        if message_id is not None:
            key = await self._redis.hget(self._keys("journal", "msgid", channel), message_id)
            keys = [key] if key else [message_id]
        else:
            keys = await self._redis.lrange(
                self._keys("journal", "sender", channel, sender_id or ""), 0, limit - 1
            )
        entries = [await self.get(str(k)) for k in keys]
        return [e for e in entries if e is not None and e.message.channel == channel]

    @unavailable("journal")
    async def purge(self, older_than: float) -> int:
        """Drop settled entries received before ``older_than`` (open ones stay)."""
        everything = self._keys("journal", "all")
        old = await self._redis.zrangebyscore(everything, "-inf", f"({older_than}")
        dropped = 0
        for key in map(str, old):
            state = await self._redis.hget(self._e(key), "state")
            if state is None or JournalState(str(state)) in TERMINAL:
                await self._redis.delete(self._e(key))
                await self._redis.zrem(everything, key)
                dropped += state is not None
        return dropped
