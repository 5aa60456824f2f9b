"""Who claims which open journal entry: the pure decision, the hand-off of an answered entry to
the replica holding its channel, and every Lua script declaring the keys it touches."""

from __future__ import annotations

import asyncio
import re

import pytest
from redis.asyncio import Redis

from chatgate.model.messages import InboundMessage
from chatgate.state.records import JournalMark, JournalState
from chatgate.state.redis import journal, lock, lock_scripts, sessions
from chatgate.state.redis.client import Keys
from chatgate.state.redis.journal import NOBODY, OpenEntry, RedisJournal, claimable
from chatgate.state.redis.lock import RedisTurnLock

KEYS = Keys("cl:")
NOW = 1_800_000_000.0


def entry(owner: str | None, live: bool = True, channel: str = "tg") -> OpenEntry:
    return OpenEntry(f"k-{owner}-{live}-{channel}", owner, channel, live)


@pytest.mark.parametrize(
    ("found", "include_own", "channels", "claimed"),
    [
        ([entry("me")], True, (), [0]),  # a restart takes its own back
        ([entry("me")], False, ("tg",), []),  # adoption never re-takes its own
        ([entry("a", live=True)], True, (), []),  # a live replica's work is its own
        ([entry("a", live=False)], False, ("tg",), [0]),  # a dead one's is adopted
        ([entry("a", live=False, channel="dc")], False, ("tg",), []),  # not on my channels
        ([entry(NOBODY)], False, ("tg",), [0]),  # handed off: whoever serves tg
        ([entry(NOBODY, channel="dc")], False, ("tg",), []),
        ([entry(None, live=False)], True, (), []),  # the hash is gone
        ([entry("a", live=False), entry("me"), entry("b")], True, (), [1]),  # start: own only
        ([entry(NOBODY), entry("a", live=False)], True, (), []),  # nothing it cannot deliver
        ([entry("a", live=False), entry(NOBODY), entry("b")], False, ("tg",), [0, 1]),  # oldest
    ],
)
def test_claimable(
    found: list[OpenEntry], include_own: bool, channels: tuple[str, ...], claimed: list[int]
) -> None:
    picked = claimable(found, "me", include_own=include_own, channels=channels)
    assert picked == [found[i] for i in claimed]


SCRIPTS = {
    "journal.RECORD": journal.RECORD,
    "journal.CLAIM": journal.CLAIM,
    "journal.HAND_OFF": journal.HAND_OFF,
    "journal.RESTORE": journal.RESTORE,
    "lock.RELEASE": lock.RELEASE,
    "lock.RENEW": lock.RENEW,
    "lock_scripts.KEEP_PASSED": lock_scripts.KEEP_PASSED,
    "sessions.APPEND": sessions.APPEND,
    "sessions.RESET": sessions.RESET,
}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_every_key_a_script_touches_is_declared_in_keys(name: str) -> None:
    """What Redis Cluster (and a proxy routing by key) needs: no key built inside the script."""
    source = SCRIPTS[name]
    aliases: set[str] = set()
    for names, _values in re.findall(r"local ([\w, ]+) = (KEYS\[\d+\](?:, KEYS\[\d+\])*)", source):
        aliases.update(n.strip() for n in names.split(","))
    for command, first in re.findall(r"redis\.call\('(\w+)', ([^,)]+)", source):
        first = first.strip()
        assert re.fullmatch(r"KEYS\[\d+\]", first) or first in aliases, (
            f"{name}: {command} on {first!r}, not a declared key"
        )


def message(message_id: str) -> InboundMessage:
    return InboundMessage("tg", "telegram", "c1", "direct", "u1", message_id, "hi")


@pytest.mark.redis
async def test_an_answer_handed_off_goes_to_exactly_one_replica_serving_its_channel(
    client: Redis,
) -> None:
    a, b, c, d = (RedisJournal(client, KEYS, name) for name in "abcd")
    for name in "abcd":
        await client.set(KEYS("replica", name), "{}")  # all four alive
    msg = message("m1")
    await a.record(msg, NOW, 60)
    await a.settle(
        msg.key, JournalMark(JournalState.ANSWERED, NOW, session="s", reply={"message": None})
    )
    assert not await b.hand_off(msg.key), "only the owner can give an entry away"
    assert await a.hand_off(msg.key)
    assert not await a.hand_off(msg.key)
    assert await d.orphaned(["discord"]) == []  # cannot answer on tg
    claims = await asyncio.gather(b.orphaned(["tg"]), c.orphaned(["tg"]))
    [taken] = [e for got in claims for e in got]
    assert taken.key == msg.key and taken.state is JournalState.ANSWERED
    assert taken.reply == {"message": None}
    assert await client.hget(KEYS("journal", "e", msg.key), "owner") in ("b", "c")
    assert await b.orphaned(["tg"]) == [] and await c.orphaned(["tg"]) == []


@pytest.mark.redis
async def test_the_turn_lock_token_names_the_replica(client: Redis) -> None:
    turn_lock = RedisTurnLock(client, "cl:", replica="replica-7")
    lease = await turn_lock.acquire("s1", owner="host:123:abc", ttl=30)
    token = await client.get("cl:lock:s1")
    assert isinstance(token, str) and token.startswith("replica-7/")
    await turn_lock.release(lease)
