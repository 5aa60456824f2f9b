"""The order across a stall: a replica that resumes after another adopted the message its turn
was answering does not free the session's lock (its own later message would take it before the
adopter sends that answer); it passes the lock on to the adopted message."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from redis.asyncio import Redis

from tests.fakes.llm import FakeLLM, Fault
from tests.harness import memory, running
from tests.redis.test_gateway_redis import config, on_redis
from tests.support.waiting import eventually

pytestmark = pytest.mark.redis
SLOW_BEATS = "  redis: {replica_id: %s, lease_ttl_s: 120}\n"  # no heartbeat during the test


def replica(directory: Path, fake: FakeLLM, url: str, name: str) -> Path:
    gateway = on_redis(url, name).replace(f"  redis: {{replica_id: {name}}}\n", SLOW_BEATS % name)
    return config(directory, fake, gateway)


async def test_a_resumed_replica_passes_its_lock_on_to_the_adopter_of_its_message(
    tmp_path: Path, fake_llm: FakeLLM, redis_db: str
) -> None:
    """a's turn for m1 is at the model when a stalls (its liveness key lapses) and b adopts m1;
    b's turn for m1 waits for a's lock. a resumes, answers, must not send (b owns m1) and leaves
    the lock passed on to m1, which b's turn takes. Behind the wipe gate (a free lock is not
    taken, a passed-on one is) b sends only when a passed the lock on rather than freeing it."""
    fake_llm.fail_next(Fault.hang())
    client = Redis.from_url(redis_db, decode_responses=True)
    one, two = (replica(tmp_path / n, fake_llm, redis_db, n) for n in ("a", "b"))
    try:
        async with running(one) as gw_a, running(two) as gw_b:
            first = await memory(gw_a).inject("hello", message_id="m1")
            await fake_llm.wait_for_requests(1, timeout=30)
            await client.delete("cg:replica:a")  # as if a had stalled past its liveness TTL
            assert await gw_b.pipeline.adopt() == 1
            await client.set("cg:turn-gate", "test", px=120_000)  # no free lock is taken now
            fake_llm.release()
            answered = await first.result
            assert answered.delivery == "handed_off"  # not sent by a
            await eventually(lambda: memory(gw_b).texts(), 30, "b sending the adopted answer")
            await gw_b.pipeline.drain(30)
            assert memory(gw_a).texts() == [] and len(memory(gw_b).texts()) == 1
            assert len(fake_llm.requests) == 1, "the adopted message was run again"
    finally:
        await client.delete("cg:turn-gate")
        await client.aclose()


async def test_a_message_delivered_again_after_a_wipe_is_answered_only_by_its_holder(
    tmp_path: Path, fake_llm: FakeLLM, redis_db: str
) -> None:
    """a's turn for m1 is at the model when Redis loses its data; the platform delivers m1 again
    (its update not yet confirmed), to b, whose intake finds no dedupe entry and runs it too. a
    re-journals what it holds as its own, taking m1's entry over from b's fresh intake: only a
    sends m1's answer (b's turn, one extra model call, finds m1 not its own)."""
    fake_llm.fail_next(Fault.hang(), times=2)
    client = Redis.from_url(redis_db, decode_responses=True)
    one, two = (replica(tmp_path / n, fake_llm, redis_db, n) for n in ("a", "b"))
    try:
        async with running(one) as gw_a, running(two) as gw_b:
            assert await gw_a.pipeline.held.check() == 0  # a learns the store's generation
            first = await memory(gw_a).inject("hello", message_id="m1")
            await fake_llm.wait_for_requests(1, timeout=30)
            await client.flushdb()  # Redis restarted without its data
            again = await memory(gw_b).inject("hello", message_id="m1")  # delivered again
            assert again.key == first.key
            await fake_llm.wait_for_requests(2, timeout=30)
            assert await gw_a.pipeline.held.check() == 1  # a notices the loss, re-journals m1
            fake_llm.release()
            await asyncio.wait_for(asyncio.gather(first.result, again.result), 30)
            await gw_a.pipeline.drain(30)
            await gw_b.pipeline.drain(30)
            sent = memory(gw_a).texts() + memory(gw_b).texts()
            assert len(sent) == 1 and memory(gw_a).texts() == sent, (sent, memory(gw_b).texts())
    finally:
        await client.delete("cg:turn-gate")
        await client.aclose()
