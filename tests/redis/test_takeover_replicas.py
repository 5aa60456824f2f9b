"""Paused chats on Redis: a pause taken through one store instance (one replica) is what every
other instance reads, and a pause taken on replica A silences the chat on replica B."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from chatgate.gateway.app import Gateway
from chatgate.policies.takeover import Pause
from chatgate.state.redis.client import Keys
from chatgate.state.redis.pauses import RedisPauses
from chatgate.takeover.feature import TakeoverFeature
from tests.fakes.clock import ManualClock
from tests.fakes.llm import FakeLLM, Fault
from tests.harness import http, memory, operator, running, url
from tests.redis.conftest import PrivateRedis
from tests.redis.test_gateway_redis import config, on_redis

pytestmark = pytest.mark.redis
KEYS = Keys("cg:")
NOW = 1_800_000_000.0


async def test_a_pause_put_by_one_instance_is_read_by_another(client: Redis) -> None:
    a, b = RedisPauses(client, KEYS), RedisPauses(client, KEYS)
    pause = Pause("telegram:42", NOW, NOW + 60, "cli")
    await a.put(pause)
    await a.put(Pause("slack:C1", NOW - 5, None, "slack:U0OPS"))
    assert await b.get("telegram:42") == pause
    assert [p.chat for p in await b.all()] == ["slack:C1", "telegram:42"]  # oldest first
    assert not await b.delete("telegram:42", since=NOW - 1)  # a newer pause stays
    assert await b.delete("telegram:42", since=NOW)  # the one that ran out
    assert not await a.delete("telegram:42")
    assert await a.get("telegram:42") is None
    assert await a.delete("slack:C1") and await b.all() == []


async def post(gw: Gateway, path: str, body: dict[str, Any]) -> dict[str, Any]:
    async with (
        http() as session,
        session.post(url(gw, path), json=body, headers=operator(gw)) as resp,
    ):
        assert resp.status == 200, await resp.text()
        return dict(await resp.json())


async def test_a_pause_on_replica_a_stops_answers_on_replica_b(
    tmp_path: Path, fake_llm: FakeLLM, redis_db: str
) -> None:
    one = config(tmp_path / "a", fake_llm, on_redis(redis_db, "a"))
    two = config(tmp_path / "b", fake_llm, on_redis(redis_db, "b"))
    async with running(one) as gw_a, running(two) as gw_b:
        await post(gw_a, "/api/chats/pause", {"chat": "memory:c1"})
        result = await (await memory(gw_b).inject("are you there?", message_id="m1")).result
        assert (result.stage, result.reason) == ("observe", "paused")
        assert fake_llm.requests == [] and memory(gw_b).texts() == []

        sent = await post(gw_b, "/api/chats/reply", {"chat": "memory:c1", "text": "Ann here."})
        assert sent["delivered"] and memory(gw_b).texts() == ["Ann here."]
        assert (await post(gw_b, "/api/chats/resume", {"chat": "memory:c1"}))["resumed"]

        result = await (await memory(gw_a).inject("thanks", message_id="m2")).result
        assert result.reason == "text"
    said = [(m["role"], m["content"]) for m in fake_llm.requests[0].messages]
    assert said == [("user", "are you there?"), ("assistant", "Ann here."), ("user", "thanks")]


async def test_with_redis_away_chat_changes_say_retry_later(
    tmp_path: Path, fake_llm: FakeLLM, private_redis: PrivateRedis
) -> None:
    async with running(config(tmp_path, fake_llm, on_redis(private_redis.url, "a"))) as gw:
        private_redis.kill()
        assert (await gw.feature(TakeoverFeature).service.status())[
            "unavailable"
        ] is True  # the dashboard's part
        async with http() as session:
            for path, body in (
                ("/api/chats/pause", {"chat": "memory:c1"}),
                ("/api/chats/reply", {"chat": "memory:c1", "text": "hi"}),
            ):
                async with session.post(url(gw, path), json=body, headers=operator(gw)) as resp:
                    assert resp.status == 503, path
                    assert resp.headers["Retry-After"] == "5"
                    assert (await resp.json())["reason_code"] == "state_unavailable"
            async with session.get(url(gw, "/api/chats"), headers=operator(gw)) as resp:
                assert resp.status == 503


async def test_a_pause_on_replica_a_holds_the_turns_queued_on_replica_b(
    tmp_path: Path, fake_llm: FakeLLM, redis_db: str
) -> None:
    fake_llm.fail_next(Fault.hang())  # B's first turn runs until released
    clock_b = ManualClock()
    one = config(tmp_path / "a", fake_llm, on_redis(redis_db, "a"))
    two = config(tmp_path / "b", fake_llm, on_redis(redis_db, "b"))
    async with running(one) as gw_a, running(two, clock=clock_b) as gw_b:
        chat = memory(gw_b)
        first = await chat.inject("first", message_id="q1")
        await fake_llm.wait_for_requests(1, timeout=60)
        second = await chat.inject("second", message_id="q2")  # queued on B
        await post(gw_a, "/api/chats/pause", {"chat": "memory:c1", "for_s": 0})
        for _ in range(200):  # B reads the store every 15 s of its clock
            if second.result.done():
                break
            clock_b.advance(15)
            await asyncio.sleep(0.02)
        held = await second.result
        assert (held.stage, held.reason) == ("observe", "paused")
        fake_llm.release()
        await first.result  # not interrupted (the default): it finishes as it would have
        assert len(fake_llm.requests) == 1
