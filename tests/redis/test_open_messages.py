"""The session's open messages (journaled, not yet settled) on a real redis-server: a turn
waits for an earlier open message of its session held by another replica before it takes the
session's free lock (a Redis outage cut that one short there, or a killed replica held it
queued), at most a lock TTL; settled messages leave the index, and a wipe's restore writes
it again."""

from __future__ import annotations

import asyncio

import pytest
from redis.asyncio import Redis

from chatgate.model.errors import GaveWay
from chatgate.model.messages import InboundMessage
from chatgate.state.redis.client import Keys
from chatgate.state.redis.journal import RedisJournal, open_index
from chatgate.state.redis.lock import RedisTurnLock
from tests.fakes.clock import ManualClock

pytestmark = pytest.mark.redis
PREFIX = "om:"
KEYS = Keys(PREFIX)
NOW = 1_800_000_000.0
DAY = 86_400.0
TTL = 30.0


def message(message_id: str) -> InboundMessage:
    """``m<n>`` came in at NOW + n."""
    at = NOW + int(message_id.removeprefix("m"))
    return InboundMessage("tg", "telegram", "c1", "direct", "u1", message_id, "hi", received_at=at)


async def finish(journal: RedisJournal, key: str) -> None:
    await journal.finish(key, NOW, stage="turn", reason="text", delivery="sent", delivery_ids=[])


async def still_waiting(task: asyncio.Future[object]) -> bool:
    for _ in range(5):
        await asyncio.sleep(0.05)
        if task.done():
            return False
    return True


async def test_a_turn_waits_for_an_earlier_open_message_held_by_another_replica(
    client: Redis,
) -> None:
    """m1 was taken in by r2 (its turn cut short there by the outage, not resumed yet); m2,
    taken in by r1 after, finds the session's lock free: it waits until m1 is answered, not for
    another session's message nor a later one."""
    r1, r2 = RedisJournal(client, KEYS, "r1"), RedisJournal(client, KEYS, "r2")
    await r2.record(message("m0"), NOW, DAY, "s2")
    await r2.record(message("m1"), NOW, DAY, "s1")
    await r1.record(message("m2"), NOW, DAY, "s1")
    await r2.record(message("m3"), NOW, DAY, "s1")
    lock = RedisTurnLock(client, PREFIX, replica="r1")
    later = asyncio.ensure_future(lock.acquire("s1", owner="r1", ttl=TTL, after="tg:m2"))
    assert await still_waiting(later), "m2's turn went before m1"
    await finish(r2, "tg:m1")
    lease = await asyncio.wait_for(later, 10)
    assert await client.get(PREFIX + "lock:s1") == lease.token
    assert await client.zrange(open_index(KEYS, "s1"), 0, -1) == ["tg:m2", "tg:m3"]
    await finish(r1, "tg:m2")
    assert await client.zrange(open_index(KEYS, "s1"), 0, -1) == ["tg:m3"]


async def test_an_earlier_message_left_open_is_waited_for_at_most_a_lock_ttl(
    client: Redis,
) -> None:
    clock = ManualClock()
    r1, r2 = RedisJournal(client, KEYS, "r1"), RedisJournal(client, KEYS, "r2")
    await r2.record(message("m1"), NOW, DAY, "s1")
    await r1.record(message("m2"), NOW, DAY, "s1")
    await r1.record(message("m3"), NOW, DAY, "s1")
    lock = RedisTurnLock(client, PREFIX, clock, replica="r1")
    later = asyncio.ensure_future(lock.acquire("s1", owner="r1", ttl=TTL, after="tg:m2"))
    assert await still_waiting(later)
    clock.advance(TTL)  # m1 never settles: given up
    lease = await asyncio.wait_for(later, 10)
    await finish(r1, "tg:m2")
    await lock.release(lease)
    # given up once for the session: m3's turn does not wait for it again
    lease = await asyncio.wait_for(lock.acquire("s1", owner="r1", ttl=TTL, after="tg:m3"), 10)
    await lock.release(lease)


async def test_a_restore_after_a_wipe_writes_the_index_again(client: Redis) -> None:
    r1, r2 = RedisJournal(client, KEYS, "r1"), RedisJournal(client, KEYS, "r2")
    await r2.record(message("m1"), NOW, DAY, "s1")
    await r1.record(message("m2"), NOW, DAY, "s1")
    await client.delete(*await client.keys(PREFIX + "*"))  # the data lost
    assert await r1.restore(message("m2"), NOW, "s1")  # each replica restores its own: r1 first
    assert await r2.restore(message("m1"), NOW, "s1")
    lock = RedisTurnLock(client, PREFIX, replica="r1")
    later = asyncio.ensure_future(lock.acquire("s1", owner="r1", ttl=TTL, after="tg:m2"))
    assert await still_waiting(later), "m2's turn went before m1 after the restore"
    await finish(r2, "tg:m1")
    await lock.release(await asyncio.wait_for(later, 10))


async def test_an_earlier_message_taken_up_here_goes_first_but_not_one_of_the_same_batch(
    client: Redis,
) -> None:
    """m1, handed off to r1 behind an answer, is r1's own now: m2's live turn waiting for the
    free lock gives way to it (m1 is queued first); a turn whose batch holds m1 takes it."""
    r1 = RedisJournal(client, KEYS, "r1")
    await r1.record(message("m1"), NOW, DAY, "s1")
    await r1.record(message("m2"), NOW, DAY, "s1")
    lock = RedisTurnLock(client, PREFIX, replica="r1")
    queued = asyncio.Event()
    later = asyncio.ensure_future(
        lock.acquire("s1", owner="r1", ttl=TTL, after="tg:m2", give_way=queued.is_set)
    )
    assert await still_waiting(later), "m2's turn went before m1"
    queued.set()
    with pytest.raises(GaveWay):
        await asyncio.wait_for(later, 10)
    both = ["tg:m2", "tg:m1"]
    lease = await asyncio.wait_for(
        lock.acquire("s1", owner="r1", ttl=TTL, after="tg:m2", batch=both), 10
    )
    await lock.release(lease)


async def test_a_lock_passed_on_to_a_later_message_goes_to_an_earlier_open_one_first(
    client: Redis,
) -> None:
    """r1's turn of m2 was cut short: the session's lock waits for it (`handoff:m2`). m1, which
    came in before on r2 and is still open there, takes that lock; m2's turn waits for it."""
    r1, r2 = RedisJournal(client, KEYS, "r1"), RedisJournal(client, KEYS, "r2")
    await r2.record(message("m1"), NOW, DAY, "s1")
    await r1.record(message("m2"), NOW, DAY, "s1")
    here, there = (RedisTurnLock(client, PREFIX, replica=r) for r in ("r1", "r2"))
    here.strand("s1", "tg:m2", None, TTL)
    await here.retry_pending()
    assert await client.get(PREFIX + "lock:s1") == "handoff:tg:m2"
    later = asyncio.ensure_future(here.acquire("s1", owner="r1", ttl=TTL, after="tg:m2"))
    assert await still_waiting(later), "m2's turn went before m1"
    earlier = await asyncio.wait_for(there.acquire("s1", owner="r2", ttl=TTL, after="tg:m1"), 10)
    await finish(r2, "tg:m1")
    await there.release(earlier)
    await here.release(await asyncio.wait_for(later, 10))
    await here.aclose()
