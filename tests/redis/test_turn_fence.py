"""A turn confirms its session's turn lock right before each model request: when another
replica took the lock over meanwhile (this one stalled past its TTL), the turn makes no request
and its batch runs again once the lock is free, answered once."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest
from redis.asyncio import Redis

from tests.fakes.llm import FakeLLM, Fault
from tests.harness import memory, running
from tests.redis.test_gateway_redis import config, on_redis
from tests.support.waiting import eventually

pytestmark = pytest.mark.redis
FENCED = "turn lock lost before a model request"


async def test_a_turn_whose_lock_was_taken_over_asks_the_model_nothing_more(
    tmp_path: Path, fake_llm: FakeLLM, redis_db: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="chatgate.turn")
    fake_llm.script(Fault.hang())  # the first request waits, then fails over to the fallback
    fake_llm.default_reply = "the answer"
    path = config(tmp_path, fake_llm, on_redis(redis_db, "a"))
    text = path.read_text().replace(
        "    timeout_s: 5\n", "    timeout_s: 5\n    fallbacks: [openai/fake-model-2]\n"
    )
    path.write_text(text)
    client = Redis.from_url(redis_db, decode_responses=True)
    try:
        async with running(path) as gw:
            chat = memory(gw)
            submitted = await chat.inject("hi", message_id="m1")
            await fake_llm.wait_for_requests(1, timeout=10)
            [lock] = await client.keys("cg:lock:*")
            # this replica stalled past the TTL; another one took the session's lock over
            await client.set(lock, "b/other-turn", px=60_000)
            fake_llm.release()
            await eventually(lambda: FENCED in caplog.text, 10, "the fenced model request")
            assert [r.model for r in fake_llm.requests] == ["fake-model"], "fallback asked"
            assert not submitted.result.done() and chat.sent == []
            await client.delete(lock)  # the other turn ends: the batch runs again
            result = await asyncio.wait_for(submitted.result, 20)
        assert result.reason == "text"
        assert chat.texts() == ["the answer"]
        assert [r.model for r in fake_llm.requests] == ["fake-model", "fake-model"]
        assert caplog.text.count(FENCED) == 1
    finally:
        await client.aclose()
