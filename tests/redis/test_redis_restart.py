"""A private redis-server (own port, append-only file in tmp) killed and restarted under a gateway:
intake refuses while it is down (the platform keeps the message), nothing is lost after."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from chatgate.clock import SystemClock
from chatgate.model.errors import StateUnavailable
from chatgate.state import admin
from chatgate.state.factory import build_state
from tests.fakes.llm import FakeLLM
from tests.harness import load, memory, running
from tests.redis.conftest import PrivateRedis
from tests.redis.test_gateway_redis import config, on_redis

pytestmark = pytest.mark.redis


async def test_redis_restart_refuses_intake_meanwhile_and_loses_nothing(
    tmp_path: Path, fake_llm: FakeLLM, private_redis: PrivateRedis
) -> None:
    fake_llm.default_reply = lambda r: f"re: {r.last_user_text}"
    path = config(tmp_path / "a", fake_llm, on_redis(private_redis.url, "a"))
    async with running(path) as gw:
        chat = memory(gw)
        await (await chat.inject("before", message_id="m1")).result
        private_redis.kill()
        refused = 0
        # not journaled: refused as the state being unavailable (503 at HTTP ingresses), so the
        # platform keeps the message
        with pytest.raises(StateUnavailable):
            await chat.inject("during", message_id="m2")
        refused += 1
        assert gw.pipeline.guard.current() is not None
        private_redis.start()
        for _ in range(200):  # the platform re-delivers until it is accepted (probe: every 2 s)
            try:
                sub = await chat.inject("during", message_id="m2")
                break
            except StateUnavailable:
                refused += 1
                await asyncio.sleep(0.05)
        else:
            raise AssertionError("the gateway did not recover after Redis came back")
        await sub.result
    assert refused >= 1
    assert chat.texts() == ["re: before", "re: during"]
    # the turn after the restart saw the transcript written before it
    assert [len(r.messages) for r in fake_llm.requests] == [1, 3]
    loaded = load(path)
    state = build_state(loaded.config.gateway, loaded.state_dir, SystemClock())
    await state.open()
    try:
        [session] = (await admin.sessions_list(state))["sessions"]
        assert session["message_count"] == 4
    finally:
        await state.close()
