"""The web chat's cookie key and outbox on Redis, so every replica serves one conversation.

A browser may reach any replica at any moment: the install key that signs its cookie is one Redis
string (the first replica to start creates it), and its messages live in a hash plus a sorted set
by sequence number, written by one Lua script that also publishes the change. Every replica
subscribes to the channel's publications and feeds its own open event streams, so a message sent
on replica A streams to the browser whose event stream is held by replica B. After a lost
subscription the streams are closed: the browsers reconnect and replay what they missed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import secrets
from collections.abc import Callable
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError

from chatgate.channels.webchat.outbox import Entry, Publish, Typing
from chatgate.state.redis.client import Keys, listen
from chatgate.tasks import cancel_and_wait

log = logging.getLogger("chatgate.webchat")
KEY_BYTES = 32
RESUBSCRIBE_S = 1.0
CLOSE_S = 5.0  # the relay's stop, bounded (its reads can absorb a cancellation)

# KEYS: cursor, messages (id → "pos|record"), order (id scored by seq)
# ARGV: id ('' = new), record json, keep, ttl_ms, channel, sid. The oldest rows go once there
# are 20 more than `keep` (one ZPOPMIN per 20 puts, not one per put).
_PUT = """
local seq = redis.call('INCR', KEYS[1])
local id = ARGV[1]
if id == '' then id = 'm' .. seq end
local pos = seq
local old = redis.call('HGET', KEYS[2], id)
if old then pos = tonumber(string.match(old, '^(%d+)|')) end
redis.call('HSET', KEYS[2], id, pos .. '|' .. ARGV[2])
redis.call('ZADD', KEYS[3], seq, id)
local keep = tonumber(ARGV[3])
if redis.call('ZCARD', KEYS[3]) > keep + 20 then
  local gone = redis.call('ZPOPMIN', KEYS[3], redis.call('ZCARD', KEYS[3]) - keep)
  for i = 1, #gone, 2 do redis.call('HDEL', KEYS[2], gone[i]) end
end
for i = 1, 3 do redis.call('PEXPIRE', KEYS[i], ARGV[4]) end
redis.call('PUBLISH', ARGV[5], 'm\\n' .. ARGV[6] .. '\\n' .. id .. '\\n' .. seq .. '\\n' .. pos
  .. '\\n' .. ARGV[2])
return {id, seq, pos}
"""
# KEYS: messages, order; ARGV: after → {id, seq, value, ...}
_SINCE = """
local ids = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. ARGV[1], '+inf', 'WITHSCORES')
local out = {}
for i = 1, #ids, 2 do
  local value = redis.call('HGET', KEYS[1], ids[i])
  if value then
    out[#out + 1] = ids[i]; out[#out + 1] = ids[i + 1]; out[#out + 1] = value
  end
end
return out
"""


class RedisWebChat:
    """What a web chat channel keeps in Redis: the install key and one outbox per channel."""

    def __init__(self, redis: Redis, keys: Keys) -> None:
        self._redis = redis
        self._keys = keys

    async def install_key(self) -> bytes:
        """The cookie secret shared by every replica, created on first use."""
        key = self._keys("webchat", "key")
        await self._redis.set(key, secrets.token_hex(KEY_BYTES), nx=True)
        value = await self._redis.get(key)
        if not isinstance(value, str):
            raise RedisError("the web chat key vanished")
        return bytes.fromhex(value)

    def outbox(
        self,
        channel: str,
        *,
        keep: int,
        max_age_s: float,
        publish: Publish,
        typing: Typing,
        resync: Callable[[], None],
    ) -> RedisOutbox:
        return RedisOutbox(
            self._redis, self._keys, channel,
            keep=keep, max_age_s=max_age_s, publish=publish, typing=typing, resync=resync,
        )  # fmt: skip


class RedisOutbox:
    """The outbox of one web chat channel (same interface as the SQLite ``Outbox``)."""

    def __init__(
        self,
        redis: Redis,
        keys: Keys,
        channel: str,
        *,
        keep: int,
        max_age_s: float,
        publish: Publish,
        typing: Typing,
        resync: Callable[[], None],
    ) -> None:
        self._redis = redis
        self._keys = keys
        self._channel = channel
        self.keep = keep
        self._ttl_ms = max(1, math.ceil(max_age_s * 1000))
        self._publish = publish
        self._typing = typing
        self._resync = resync
        db = redis.connection_pool.connection_kwargs.get("db", 0)
        # Publications are not per database: the db number keeps two installs apart.
        self._topic = keys("webchat", str(db), channel, "events")
        self._task: asyncio.Task[None] | None = None
        self._put = redis.register_script(_PUT)
        self._since = redis.register_script(_SINCE)

    def _key(self, kind: str, sid: str) -> str:
        return self._keys("webchat", self._channel, kind, sid)

    async def open(self, now: float) -> None:
        subscribed = asyncio.Event()
        self._task = asyncio.ensure_future(self._listen(subscribed))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(subscribed.wait(), 5.0)

    async def close(self) -> None:
        task, self._task = self._task, None
        if task is not None and (await cancel_and_wait([task], CLOSE_S))[1]:
            log.warning("web chat relay did not stop in time", extra={"channel": self._channel})

    async def put(
        self,
        sid: str,
        role: str,
        body: dict[str, Any],
        now: float,
        *,
        message_id: str | None = None,
    ) -> Entry:
        """Write a message and publish it to every replica; ``RuntimeError`` when Redis is
        unreachable (the caller retries, like a restarting SQLite outbox)."""
        record = json.dumps({"role": role, "at": now, "body": body}, ensure_ascii=False,
                            separators=(",", ":"))  # fmt: skip
        keys = [self._key("cursor", sid), self._key("messages", sid), self._key("order", sid)]
        args: list[str | int] = [message_id or "", record, self.keep, self._ttl_ms]
        args += [self._topic, sid]
        try:
            mid, seq, pos = await self._put(keys=keys, args=args)
        except RedisError as exc:
            raise RuntimeError(f"web chat store unreachable ({type(exc).__name__})") from exc
        return Entry(sid, str(mid), int(seq), int(pos), role, body, now)

    async def since(self, sid: str, after: int) -> list[Entry]:
        """Every message of ``sid`` changed after sequence number ``after``, in change order."""
        keys = [self._key("messages", sid), self._key("order", sid)]
        try:
            flat = await self._since(keys=keys, args=[after])
        except RedisError as exc:
            raise RuntimeError(f"web chat store unreachable ({type(exc).__name__})") from exc
        out: list[Entry] = []
        for i in range(0, len(flat), 3):
            pos, _, record = str(flat[i + 2]).partition("|")
            out.append(_entry(sid, str(flat[i]), int(float(flat[i + 1])), int(pos), record))
        return out

    async def forget(self, sid: str) -> int:
        try:
            removed = int(await self._redis.hlen(self._key("messages", sid)))
            await self._redis.delete(*(self._key(k, sid) for k in ("cursor", "messages", "order")))
        except RedisError as exc:
            raise RuntimeError(f"web chat store unreachable ({type(exc).__name__})") from exc
        return removed

    async def typing(self, sid: str, ttl_s: float) -> None:
        with contextlib.suppress(RedisError):
            await self._redis.publish(self._topic, f"t\n{sid}\n{ttl_s}")

    async def _listen(self, subscribed: asyncio.Event) -> None:
        broken = False

        def restored() -> None:
            nonlocal broken
            subscribed.set()
            if broken:
                log.info("web chat relay restored", extra={"channel": self._channel})
                broken = False
                self._resync()  # browsers reconnect and replay what they missed

        while True:
            try:
                await listen(self._redis, self._topic, self._receive, restored)
            except (RedisError, OSError) as exc:
                if not broken:
                    log.warning(
                        "web chat relay lost; retrying",
                        extra={"channel": self._channel, "error": type(exc).__name__},
                    )
                broken = True
                await asyncio.sleep(RESUBSCRIBE_S)

    def _receive(self, data: str) -> None:
        try:
            self._deliver(data)
        except (ValueError, KeyError, TypeError):  # not ours (a foreign writer)
            log.warning("web chat relay: unreadable message skipped")

    def _deliver(self, data: str) -> None:
        kind, _, rest = data.partition("\n")
        if kind == "t":
            sid, _, ttl = rest.partition("\n")
            self._typing(sid, float(ttl))
            return
        sid, mid, seq, pos, record = rest.split("\n", 4)
        self._publish(_entry(sid, mid, int(seq), int(pos), record))


def _entry(sid: str, mid: str, seq: int, pos: int, record: str) -> Entry:
    data = json.loads(record)
    return Entry(sid, mid, seq, pos, data["role"], data["body"], data["at"])
