"""A turn whose session lock cannot be taken because Redis is away: the chat is told it will be
answered once the state is back, the message stays in the journal and is answered then (one
model call), and the session's lock waits for it, so a later message of the session taken in by
another replica is answered after it (also while the lock stays free: the message is still open
in the journal). After Redis lost its data, a free lock waits until every replica took its own
back (the wipe gate)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from redis.asyncio import Redis

from chatgate.model.errors import StateUnavailable
from chatgate.model.text_ids import TextId
from chatgate.state.records import JournalState
from chatgate.texts.voice import Voice
from tests.fakes.clock import ManualClock
from tests.fakes.llm import FakeLLM, Fault
from tests.fakes.tcp_proxy import TcpProxy
from tests.harness import memory, running
from tests.redis.replicas_support import echo_replies
from tests.redis.test_gateway_redis import config
from tests.support.waiting import eventually

pytestmark = [pytest.mark.slow, pytest.mark.redis]
LEASE_TTL_S = 3.0  # the adoption check every 1.5 s of the test's clock; the state probe every 2 s
AWAY = Voice().text(TextId.STATE_AWAY)


def on_redis(url: str, replica: str) -> str:
    return (
        f"  store: {{backend: redis, url: '{url}', key_prefix: 'cg:'}}\n"
        f"  turn_lock: {{backend: redis}}\n"
        f"  redis: {{replica_id: {replica}, lease_ttl_s: {LEASE_TTL_S}}}\n"
    )


def proxied(proxy: TcpProxy, redis_db: str) -> str:
    return proxy.url(int(redis_db.rsplit("/", 1)[1]))


async def test_a_message_whose_turn_lock_could_not_be_taken_is_answered_when_the_state_is_back(
    tmp_path: Path, fake_llm: FakeLLM, redis_db: str
) -> None:
    echo_replies(fake_llm)
    clock = ManualClock()  # the state probe runs when the test says
    async with TcpProxy(6379) as proxy:
        url = proxied(proxy, redis_db)
        async with running(config(tmp_path, fake_llm, on_redis(url, "a")), clock=clock) as gw:
            chat = memory(gw)
            proxy.fail_on("EVALSHA", contains=b"cg:lock:")  # the turn lock cannot be taken, once
            submission = await chat.inject("hi")
            with pytest.raises(StateUnavailable):
                await asyncio.wait_for(submission.result, 30)
            assert chat.texts() == [AWAY]
            entry = await gw.rt.journal.get(submission.key)
            assert entry is not None and entry.state is JournalState.PENDING, "given up"

            def answered() -> bool:
                clock.advance(2.0)  # the state probe resumes what the journal keeps
                return len(chat.sent) >= 2

            await eventually(answered, 30, "the message answered after the probe")
            assert chat.texts() == [AWAY, "re: hi"]
            assert len(fake_llm.requests) == 1
            entry = await gw.rt.journal.get(submission.key)
            assert entry is not None and entry.state is JournalState.DONE


async def test_a_later_message_elsewhere_waits_for_one_whose_turn_lock_could_not_be_taken(
    tmp_path: Path, fake_llm: FakeLLM, redis_db: str
) -> None:
    """a cannot take the session's lock for m1 (Redis away for it): once a reaches Redis again
    (its adoption check, before its probe resumes m1) the lock waits for m1's resumed turn, so
    m2 of the same session, taken in by b meanwhile, is answered after m1."""
    echo_replies(fake_llm)
    clock = ManualClock()  # a's adoption check and state probe run when the test says
    admin = Redis.from_url(redis_db, decode_responses=True)
    try:
        async with TcpProxy(6379) as proxy:
            url = proxied(proxy, redis_db)
            one = config(tmp_path / "a", fake_llm, on_redis(url, "a"))
            two = config(tmp_path / "b", fake_llm, on_redis(redis_db, "b"))
            async with running(one, clock=clock) as a, running(two) as b:
                proxy.fail_on("EVALSHA", contains=b"cg:lock:")
                first = await memory(a).inject("m1", message_id="m1")
                with pytest.raises(StateUnavailable):
                    await asyncio.wait_for(first.result, 30)
                clock.advance(LEASE_TTL_S / 2)  # a's adoption check: Redis answers a again

                async def waits_for_m1() -> bool:
                    return f"handoff:{first.key}" in [
                        await admin.get(k) for k in await admin.keys("cg:lock:*")
                    ]

                await eventually(waits_for_m1, 30, "the session's lock waiting for m1")
                second = await memory(b).inject("m2", message_id="m2")
                clock.advance(LEASE_TTL_S / 2)  # a's state probe: m1 resumed
                await asyncio.wait_for(second.result, 30)
                await eventually(lambda: memory(a).texts()[-1:] == ["re: m1"], 30, "m1 sent")
                asked = [r.last_user_text for r in fake_llm.requests]
                assert asked == ["m1", "m2"], asked
                assert memory(b).texts() == ["re: m2"]
    finally:
        await admin.aclose()


async def test_a_later_message_waits_through_a_wipe_for_the_replica_that_notices_it_last(
    tmp_path: Path, fake_llm: FakeLLM, redis_db: str
) -> None:
    """a's turn for m1 is at the model when Redis loses its data (its lock with it); b notices
    the loss first and takes in m2 of the session. m2's turn does not take the free lock before
    a has taken its own back, so m2 is answered after m1."""
    echo_replies(fake_llm)
    fake_llm.fail_next(Fault.hang())
    clock = ManualClock()  # a notices the wipe when the test says
    admin = Redis.from_url(redis_db, decode_responses=True)
    try:
        async with TcpProxy(6379) as proxy:  # b's commands, watched
            one = config(tmp_path / "a", fake_llm, on_redis(redis_db, "a"))
            two = config(tmp_path / "b", fake_llm, on_redis(proxied(proxy, redis_db), "b"))
            async with running(one, clock=clock) as a, running(two) as b:
                first = await memory(a).inject("m1", message_id="m1")
                await fake_llm.wait_for_requests(1, timeout=30)
                [lock] = await admin.keys("cg:lock:*")
                await admin.flushdb()  # Redis restarted without its data

                async def b_noticed() -> bool:
                    fence = await admin.get("chatgate:lease-fence")
                    return fence is not None and b.pipeline.held._generation == fence

                await eventually(b_noticed, 30, "b noticed the wipe")
                second = await memory(b).inject("m2", message_id="m2")

                def b_asked_for_the_lock() -> bool:
                    return proxy.count("SET", lock.encode()) + proxy.count("EVALSHA", lock.encode())

                await eventually(b_asked_for_the_lock, 30, "m2's turn asked for the lock")
                clock.advance(LEASE_TTL_S / 2)  # a's adoption check: a notices, takes its lock back

                async def a_holds_it() -> bool:
                    return str(await admin.get(lock)).startswith("a/")

                await eventually(a_holds_it, 30, "a's turn holding its lock again")
                fake_llm.release()
                await asyncio.wait_for(asyncio.gather(first.result, second.result), 30)
                asked = [r.last_user_text for r in fake_llm.requests]
                assert asked == ["m1", "m2"], asked
                assert len(memory(a).texts()) == 1  # m1's (the released call's reply), then m2's
                assert memory(b).texts() == ["re: m2"]
    finally:
        await admin.aclose()


async def test_a_later_message_elsewhere_waits_for_one_cut_short_while_its_lock_stays_free(
    tmp_path: Path, fake_llm: FakeLLM, redis_db: str
) -> None:
    """a cannot reach the session's lock for m1 at all (its turn cut short, the lock not passed
    on: free), while b takes in m2 of the same session: m1 is still open in the journal, so
    m2's turn waits for it instead of taking the free lock; m1 is answered first once a reaches
    the lock again."""
    echo_replies(fake_llm)
    clock = ManualClock()  # a's adoption check and state probe run when the test says
    async with TcpProxy(6379) as cut, TcpProxy(6379) as seen:
        one = config(tmp_path / "a", fake_llm, on_redis(proxied(cut, redis_db), "a"))
        two = config(tmp_path / "b", fake_llm, on_redis(proxied(seen, redis_db), "b"))
        async with running(one, clock=clock) as a, running(two) as b:
            cut.fail_on("EVALSHA", contains=b"cg:lock:", count=10**6)
            first = await memory(a).inject("m1", message_id="m1")
            with pytest.raises(StateUnavailable):
                await asyncio.wait_for(first.result, 30)
            tried = seen.count("EVALSHA", b"cg:lock:")
            second = await memory(b).inject("m2", message_id="m2")

            def waits_or_ran() -> bool:
                return bool(fake_llm.requests) or seen.count("EVALSHA", b"cg:lock:") > tried + 3

            await eventually(waits_or_ran, 30, "m2's turn at the session's lock")
            assert not fake_llm.requests, "m2's turn took the free lock before m1"
            cut.fault = None  # a reaches the lock again

            def probed() -> bool:
                clock.advance(LEASE_TTL_S / 2)  # a's adoption check and state probe: m1 resumed
                return memory(a).texts()[-1:] == ["re: m1"]

            await eventually(probed, 30, "m1 sent")
            await asyncio.wait_for(second.result, 30)
            asked = [r.last_user_text for r in fake_llm.requests]
            assert asked == ["m1", "m2"], asked
            assert memory(b).texts() == ["re: m2"]
