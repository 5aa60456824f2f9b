"""RedisTurnLock against a real redis-server: exclusive, identity-checked, renewed, fail-closed."""

from __future__ import annotations

import asyncio

import pytest
from redis.asyncio import Redis

from chatgate.model.errors import GaveWay, StateUnavailable
from chatgate.state.redis.lock import KEEP_TTLS, RedisTurnLock
from tests.fakes.clock import ManualClock
from tests.fakes.tcp_proxy import TcpProxy
from tests.support.waiting import eventually

pytestmark = pytest.mark.redis
PREFIX = "t:"


async def test_second_holder_waits_until_release(client: Redis) -> None:
    lock = RedisTurnLock(client, PREFIX)
    other = RedisTurnLock(client, PREFIX)  # another replica
    first = await lock.acquire("s1", owner="a", ttl=30)
    waiting = asyncio.ensure_future(other.acquire("s1", owner="b", ttl=30))
    unrelated = await other.acquire("s2", owner="b", ttl=30)  # other sessions stay concurrent
    for _ in range(5):
        await asyncio.sleep(0.05)
        assert not waiting.done(), "two holders of one session's lock"
    await lock.release(first)
    second = await asyncio.wait_for(waiting, 10)
    assert second.owner == "b" and second.token != first.token
    assert await client.get(PREFIX + "lock:s1") == second.token
    await other.release(unrelated)


async def test_a_dead_holders_lease_expires_and_its_stale_token_frees_nothing(
    client: Redis,
) -> None:
    lock = RedisTurnLock(client, PREFIX)
    dead = await lock.acquire("s1", owner="dead", ttl=0.1)  # never renewed nor released
    live = await asyncio.wait_for(lock.acquire("s1", owner="live", ttl=30), 10)
    await lock.release(dead)
    assert not await lock.renew(dead, 30)
    assert await client.get(PREFIX + "lock:s1") == live.token
    assert await lock.renew(live, 30)
    await lock.release(live)
    assert await client.exists(PREFIX + "lock:s1") == 0


async def test_hold_renews_the_lease_while_the_turn_runs(client: Redis) -> None:
    clock = ManualClock()
    lock = RedisTurnLock(client, PREFIX, clock)
    key = PREFIX + "lock:s1"
    async with lock.hold("s1", owner="a", ttl=30) as lease:
        await client.pexpire(key, 2000)  # as if most of the lease had run out
        clock.advance(10)  # a third of the TTL: the keeper renews
        await eventually(lambda: True)
        for _ in range(100):
            if await client.pttl(key) > 20_000:
                break
            await asyncio.sleep(0.01)
        assert await client.pttl(key) > 20_000, "the lease was not renewed"
        assert await client.get(key) == lease.token
    assert await client.exists(key) == 0


async def test_unreachable_redis_fails_closed() -> None:
    down = Redis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=0.5)
    lock = RedisTurnLock(down, PREFIX)
    with pytest.raises(StateUnavailable, match="redis unreachable"):
        await lock.acquire("s1", owner="a", ttl=30)
    with pytest.raises(StateUnavailable):
        async with lock.hold("s1", owner="a", ttl=30):
            pytest.fail("a turn ran without the lock")
    await down.aclose()


async def test_a_turn_ending_during_a_renewal_keeps_the_connection(redis_db: str) -> None:
    """Cancelling a command mid-reply makes redis-py drop its connection (and the pool dial a new
    one): a turn that ends while its lock's renewal is under way lets the renewal finish."""
    entered, release = asyncio.Event(), asyncio.Event()

    async def held(_: float) -> None:  # the proxy's delay: a chunk waits here until released
        entered.set()
        await release.wait()

    async with TcpProxy(6379, sleep=held) as proxy:
        redis = Redis.from_url(proxy.url(int(redis_db.rsplit("/", 1)[1])), decode_responses=True)
        clock = ManualClock()
        lock = RedisTurnLock(redis, PREFIX, clock)
        try:
            async with lock.hold("s1", owner="a", ttl=30):
                dialled = proxy.accepted
                await eventually(lambda: bool(clock.pending()), what="the keeper waiting")
                proxy.delay_s = 1.0
                clock.advance(10)  # the keeper renews; its command waits in the proxy
                await asyncio.wait_for(entered.wait(), 10)
                proxy.delay_s = 0.0
                asyncio.get_running_loop().call_soon(release.set)  # answered as the turn ends
            assert await redis.exists(PREFIX + "lock:s1") == 0
            assert proxy.closed == [], "the renewal's connection was dropped"
            assert proxy.accepted == dialled, "a connection was dialled anew"
        finally:
            await redis.aclose()


async def test_a_lock_passed_on_with_a_handed_off_answer_waits_for_its_sender(
    client: Redis,
) -> None:
    """The holder that handed the answer of m1 off passes the lock on: the session's next turn
    waits, the replica sending m1 takes it over at once, then the next turn runs."""
    a = RedisTurnLock(client, PREFIX, replica="a")
    b = RedisTurnLock(client, PREFIX, replica="b")
    await client.set(PREFIX + "replica:a", "1")
    async with a.hold("s1", owner="a", ttl=30) as lease:
        a.pass_on(lease, "m1")
    assert await client.get(PREFIX + "lock:s1") == "handoff:m1"
    later = asyncio.ensure_future(b.acquire("s1", owner="b", ttl=30))  # m2's turn
    other = asyncio.ensure_future(b.acquire("s1", owner="b", ttl=30, after="m0"))
    await asyncio.sleep(0.2)
    assert not later.done() and not other.done(), "the lock went to a turn not m1's"
    other.cancel()
    async with b.hold("s1", owner="b", ttl=30, after="m1") as sending:  # at once
        assert await client.get(PREFIX + "lock:s1") == sending.token
        assert not later.done()
    assert (await asyncio.wait_for(later, 10)).owner == "b"


async def test_the_sender_of_a_dead_replicas_answer_takes_its_lock_over(client: Redis) -> None:
    a = RedisTurnLock(client, PREFIX, replica="a")
    b = RedisTurnLock(client, PREFIX, replica="b")
    await client.set(PREFIX + "replica:a", "1")
    await a.acquire("s1", owner="a", ttl=30)  # a runs the session's turn
    taking = asyncio.ensure_future(b.acquire("s1", owner="b", ttl=30, after="m1", from_dead=True))
    await asyncio.sleep(0.2)
    assert not taking.done(), "took a live replica's lock"
    await client.delete(PREFIX + "replica:a")  # a died: its liveness key expired
    assert (await asyncio.wait_for(taking, 10)).owner == "b"


async def test_behind_the_wipe_gate_a_free_lock_is_waited_for_and_a_passed_on_one_taken(
    client: Redis,
) -> None:
    """After a replica noticed Redis lost its data, a free lock waits (a live turn, a resumed
    one, the sender of a dead replica's answer) while one passed on with a message is taken."""
    lock = RedisTurnLock(client, PREFIX, replica="a", gate_s=60)
    await lock.restore({"s3": "m3"}, 30)  # the gate stands; s3's lock waits for m3
    for after, from_dead in ((None, False), ("m1", False), ("m1", True)):
        with pytest.raises(GaveWay):
            await lock.acquire("s1", owner="a", ttl=30, after=after, from_dead=from_dead,
                               give_way=lambda: True)  # fmt: skip
    taken = await lock.acquire("s3", owner="a", ttl=30, after="m3")
    assert await client.get(PREFIX + "lock:s3") == taken.token
    await lock.release(taken)
    await client.delete(PREFIX + "turn-gate")


async def test_a_lock_passed_on_to_a_turn_cut_short_here_lasts_while_this_replica_keeps_it(
    client: Redis,
) -> None:
    """Redis restarting every few seconds: the lock passed on to m1's resumed turn must not run
    out before that turn takes it while m1 is still this replica's and open (a later message
    elsewhere would go first); once m1 is done (or another replica's) it is no longer kept."""
    clock = ManualClock()
    lock = RedisTurnLock(client, PREFIX, clock, replica="a")
    key, entry = PREFIX + "lock:s1", PREFIX + "journal:e:m1"
    await client.hset(entry, mapping={"owner": "a", "state": "pending"})
    lock.strand("s1", "m1", None, 3)  # m1's turn could not take the lock: passed on when free
    try:
        await eventually(lambda: client.get(key), what="the lock passed on", every=0.05)
        assert await client.get(key) == "handoff:m1"
        for _ in range(3):  # past the TTL, a third of it at a time
            await client.pexpire(key, 300)  # as if most of it had run out
            clock.advance(1)

            async def kept() -> bool:
                return await client.pttl(key) > 1000

            await eventually(kept, what="the passed-on lock kept", every=0.05)
        await client.hset(entry, "state", "done")  # m1 answered: nothing left to wait for
        await client.pexpire(key, 300)
        clock.advance(1)

        async def let_go() -> bool:
            return await client.exists(key) == 0

        await eventually(let_go, what="the lock let go")
    finally:
        await lock.aclose()


async def test_a_lock_passed_on_for_a_message_another_replica_adopted_goes_to_that_replica(
    client: Redis,
) -> None:
    """a resumed after b adopted m1 (a's answer is b's to send): the lock goes on to b, whose
    next turn of the session takes it whichever message leads its batch (its oldest adopted one,
    m0 here); a's own later message waits for it."""
    a = RedisTurnLock(client, PREFIX, replica="a")
    b = RedisTurnLock(client, PREFIX, replica="b")
    await client.hset(PREFIX + "journal:e:m1", mapping={"owner": "b", "state": "answered"})
    async with a.hold("s1", owner="a", ttl=30) as lease:
        a.pass_on(lease, "m1")
    assert await client.get(PREFIX + "lock:s1") == "handoff:@b"
    later = asyncio.ensure_future(a.acquire("s1", owner="a", ttl=30, after="m2"))
    await asyncio.sleep(0.2)
    assert not later.done(), "a's later message took the lock passed on to b"
    taken = await asyncio.wait_for(b.acquire("s1", owner="b", ttl=30, after="m0"), 5)
    await b.release(taken)
    await a.release(await asyncio.wait_for(later, 10))


async def test_a_lock_not_passed_on_with_a_handed_off_answer_is_passed_on_when_redis_answers(
    redis_db: str, client: Redis
) -> None:
    """Redis failed the pass-on as m1's turn left (its answer handed off): the lock is passed on
    as soon as Redis answers again, not left to run out (the session's later messages elsewhere
    took the free lock before m1's sender did)."""
    async with TcpProxy(6379) as proxy:
        redis = Redis.from_url(proxy.url(int(redis_db.rsplit("/", 1)[1])), decode_responses=True)
        lock = RedisTurnLock(redis, PREFIX, replica="a")
        try:
            async with lock.hold("s1", owner="a", ttl=30) as lease:
                lock.pass_on(lease, "m1")
                proxy.fail_on("EVALSHA", contains=b"handoff:m1")  # the pass-on fails, once

            async def passed_on() -> bool:
                return await client.get(PREFIX + "lock:s1") == "handoff:m1"

            await eventually(passed_on, 5, "the lock passed on once Redis answered")
        finally:
            await lock.aclose()
            await redis.aclose()


async def test_a_lock_passed_on_to_a_message_held_here_is_kept_at_most_a_few_ttls(
    client: Redis,
) -> None:
    """A turn that never takes the lock passed on to m1 (its batch led by another message) must
    not hold the session for as long as the replica lives: kept at most KEEP_TTLS TTLs."""
    clock = ManualClock()
    lock = RedisTurnLock(client, PREFIX, clock, replica="a")
    key = PREFIX + "lock:s1"
    await client.hset(PREFIX + "journal:e:m1", mapping={"owner": "a", "state": "pending"})
    lock.strand("s1", "m1", None, 3)
    try:
        await eventually(lambda: client.get(key), what="the lock passed on", every=0.05)
        clock.advance(KEEP_TTLS * 3)  # past the cap: the keeper lets it go at its next round
        await asyncio.sleep(1.0)  # its rounds run every 0.25 s of real time
        await client.pexpire(key, 2000)
        clock.advance(1)  # another extension would be due now
        await asyncio.sleep(1.0)
        assert await client.pttl(key) < 2000, "still kept past KEEP_TTLS TTLs"
    finally:
        await lock.aclose()
