"""Faults around the intake and the send: Redis dying right after a reply went out (the resume
records it, and sends nothing twice), and an intake cut anywhere by its stopping adapter."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from redis.asyncio import Redis

from chatgate.model.errors import StateUnavailable
from chatgate.model.reasons import DeliveryStatus
from chatgate.state.records import JournalState
from tests.fakes.clock import ManualClock
from tests.fakes.llm import FakeLLM
from tests.harness import memory, running
from tests.redis.conftest import PrivateRedis
from tests.redis.test_gateway_redis import config, on_redis
from tests.reliability.test_cut_intake import answered_once_wherever_cut
from tests.support.waiting import eventually

pytestmark = pytest.mark.redis


async def test_a_reply_sent_just_before_redis_died_is_recorded_on_resume_not_sent_again(
    tmp_path: Path, fake_llm: FakeLLM, private_redis: PrivateRedis
) -> None:
    fake_llm.script("the one answer")
    clock = ManualClock()
    async with running(
        config(tmp_path, fake_llm, on_redis(private_redis.url, "a")), clock=clock
    ) as gw:
        chat = memory(gw)
        chat.after_send = private_redis.kill  # the DONE mark after this send cannot be written
        submission = await chat.inject("hi", message_id="m1")
        await chat.wait_sent(1, timeout=30)
        chat.after_send = None
        await eventually(lambda: gw.pipeline.guard.current() is not None, what="state refused")
        with pytest.raises(StateUnavailable):  # the caller is told to retry later
            await asyncio.wait_for(submission.result, 10)
        private_redis.start()
        admin = Redis.from_url(private_redis.url, decode_responses=True)
        try:
            async with asyncio.timeout(30):
                while await admin.hget("cg:journal:e:memory:m1", "state") != "done":
                    clock.advance(2.0)  # the state probe's interval, on the injected clock
                    await asyncio.sleep(0.05)
            entry = await gw.rt.journal.get(submission.key)
            assert entry is not None and entry.state is JournalState.DONE
            assert entry.delivery == DeliveryStatus.SENT.value
        finally:
            await admin.aclose()
        assert chat.texts() == ["the one answer"], "the resume sent the reply again"
        assert len(fake_llm.requests) == 1
        assert await gw.rt.dead_letters.count() == 0


async def test_an_intake_cut_anywhere_answers_the_message_once_on_redis(
    tmp_path: Path, fake_llm: FakeLLM, redis_db: str
) -> None:
    async with running(config(tmp_path, fake_llm, on_redis(redis_db, "a"))) as gw:
        await answered_once_wherever_cut(gw, fake_llm)
