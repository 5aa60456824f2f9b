"""Redis losing data or answers: the lease fence after a wipe, every store's errors as
StateUnavailable, and a sync webhook whose turn loses Redis mid-way (503 + Retry-After, then one
answer)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from chatgate.clock import SystemClock
from chatgate.model.errors import StateUnavailable
from chatgate.model.messages import Target
from chatgate.model.reasons import SendErrorKind
from chatgate.state import admin
from chatgate.state.factory import Stores, build_state
from chatgate.state.redis import build_stores
from chatgate.state.redis.client import Keys
from chatgate.state.redis.leases import FENCE_KEY, RedisLeases
from chatgate.state.redis.lock import RedisTurnLock
from tests.fakes.clock import ManualClock
from tests.fakes.llm import FakeLLM
from tests.gateway.test_webhook_e2e import gh_config, gh_headers, issue_body
from tests.harness import http, load, memory, running, url
from tests.redis.conftest import PrivateRedis
from tests.redis.test_gateway_redis import config, on_redis
from tests.redis.test_redis_faults import gateway

pytestmark = pytest.mark.redis
LEASE = "telegram:bot"
NOW = 1_800_000_000.0


async def redis_ms(redis: Redis) -> int:
    seconds, micros = await redis.time()
    return int(seconds) * 1000 + int(micros) // 1000


async def test_a_wiped_redis_fences_free_leases_for_the_validity(client: Redis) -> None:
    a, b = (RedisLeases(client, Keys("fe:"), name) for name in "ab")
    await client.flushdb()  # the data is gone: no lease, no fence
    assert not await b.acquire(LEASE, 2.0, fence=5.0)  # a may still trust its old grant
    first_seen = int(await client.get(FENCE_KEY))
    assert abs(first_seen - await redis_ms(client)) < 60_000  # Redis TIME, kept without TTL
    assert await client.ttl(FENCE_KEY) == -1
    assert not await b.acquire(LEASE, 2.0, fence=5.0)  # still inside the fence
    assert int(await client.get(FENCE_KEY)) == first_seen  # set once, when found missing
    await client.set(FENCE_KEY, await redis_ms(client) - 5_100)  # the fence has passed
    assert await b.acquire(LEASE, 2.0, fence=5.0)
    assert not await a.acquire(LEASE, 2.0, fence=5.0)  # held by b now
    assert not await a.renew(LEASE, 2.0)  # the old holder cannot extend it either
    assert await b.acquire(LEASE, 2.0, fence=5.0)  # its own: kept, fence or not
    assert 0 < await client.pttl(Keys("fe:")("lease", LEASE)) <= 2000


async def test_without_a_fence_a_free_lease_is_taken_at_once(client: Redis) -> None:
    a = RedisLeases(client, Keys("fe:"), "a")
    await client.delete(FENCE_KEY)
    assert await a.acquire(LEASE, 2.0)  # fence 0: the old behaviour, for callers that want it
    assert await client.exists(FENCE_KEY) == 1  # the wipe was still noted


TARGET = Target("tg", "c1")
STORE_CALLS: dict[str, Callable[[Stores], Awaitable[Any]]] = {
    "dead_targets.kind": lambda s: s.dead_targets.kind(TARGET),
    "dead_targets.mark": lambda s: s.dead_targets.mark(TARGET, SendErrorKind.TRANSIENT, "x", NOW),
    "dead_letters.count": lambda s: s.dead_letters.count(),
    "pairing.is_approved": lambda s: s.pairing.is_approved("tg", "u1"),
    "sessions.load": lambda s: s.sessions.load("s1", 10),
    "facts.get_many": lambda s: s.facts.get_many("tg", ["c1"], NOW),
}


@pytest.mark.parametrize("call", sorted(STORE_CALLS))
async def test_every_redis_store_fails_as_state_unavailable(
    call: str, tmp_path: Path, private_redis: PrivateRedis
) -> None:
    stores = build_stores(gateway(private_redis.url, "r1"), tmp_path)
    await stores.open()
    private_redis.kill()
    try:
        with pytest.raises(StateUnavailable, match="redis unreachable"):
            await STORE_CALLS[call](stores)
    finally:
        await stores.close()


async def test_redis_lost_mid_turn_answers_503_with_retry_after_then_one_answer(
    tmp_path: Path, private_redis: PrivateRedis
) -> None:
    async with FakeLLM(latency_s=0.5) as fake_llm:
        fake_llm.script("Triage: startup crash.", "Triage: startup crash.")
        path = gh_config(tmp_path, fake_llm)
        text = path.read_text().replace(
            "\nagents:", "\n" + on_redis(private_redis.url, "a") + "agents:"
        )
        path.write_text(text)
        body = issue_body(title="Crash on start")
        headers = gh_headers(body, delivery="d-1")
        async with running(path) as gw, http() as web:
            posted = asyncio.ensure_future(
                web.post(url(gw, "/hooks/gh"), data=body, headers=headers)
            )
            await fake_llm.wait_for_requests(1, timeout=60)  # the turn is at the model
            private_redis.kill()
            async with await posted as resp:
                assert resp.status == 503, await resp.text()
                assert resp.headers["Retry-After"].isdigit()
            private_redis.start()
            async with asyncio.timeout(30):
                while True:
                    async with web.post(url(gw, "/hooks/gh"), data=body, headers=headers) as r:
                        if r.status == 200:
                            assert (await r.json())["reply"] == "Triage: startup crash."
                            break
                        assert r.status == 503 and r.headers["Retry-After"].isdigit()
                    await asyncio.sleep(0.2)
            assert len(fake_llm.requests) == 1  # the unsaved answer is kept for the retry
            later = issue_body(title="Crash again")
            hook = url(gw, "/hooks/gh")
            async with web.post(hook, data=later, headers=gh_headers(later, delivery="d-2")) as r:
                assert r.status == 200
        # the next turn's history holds the first question and answer once
        asked = [(m["role"], m["content"]) for m in fake_llm.requests[-1].messages[1:]]
        assert asked == [
            ("user", "New issue: Crash on start"),
            ("assistant", "Triage: startup crash."),
            ("user", "New issue: Crash again"),
        ]
    loaded = load(path)
    state = build_state(loaded.config.gateway, loaded.state_dir, SystemClock())
    await state.open()
    try:
        [session] = (await admin.sessions_list(state))["sessions"]
        assert session["message_count"] == 4, "each question and answer once"
    finally:
        await state.close()


async def test_a_restarted_replica_frees_only_its_own_leftover_turn_locks(client: Redis) -> None:
    before, other = (
        RedisTurnLock(client, "fe:", replica="r1"),
        RedisTurnLock(client, "fe:", replica="r2"),
    )
    await before.acquire("s1", owner="o", ttl=60)  # killed mid-turn: never released
    await before.acquire("s2", owner="o", ttl=60)
    theirs = await other.acquire("s3", owner="o", ttl=60)
    again = RedisTurnLock(client, "fe:", replica="r1")  # the same replica id, started anew
    assert await again.release_leftovers() == 2
    assert await client.get("fe:lock:s3") == theirs.token  # another live replica's turn
    taken = await asyncio.wait_for(again.acquire("s1", owner="o", ttl=60), 5)
    assert taken.token.startswith("r1/")


async def test_a_stage_failing_after_the_journal_write_leaves_nothing_stranded(
    tmp_path: Path, fake_llm: FakeLLM, private_redis: PrivateRedis
) -> None:
    """Redis answers the journal write, then refuses the admission stage's pairing lookup (an
    ACL on the pairing keys): the message is refused and not left marked in flight, so once
    Redis answers again it is resumed, and the platform's re-delivery gets its result."""
    admin = Redis.from_url(private_redis.url, decode_responses=True)
    await admin.execute_command(
        "ACL", "SETUSER", "gw", "on", ">pw", "~cg:[^p]*", "~chatgate:*", "+@all"
    )
    url = private_redis.url.replace("redis://", "redis://gw:pw@")
    path = config(tmp_path, fake_llm, on_redis(url, "a")).read_text()
    path_file = tmp_path / "gateway.yaml"
    path_file.write_text(path.replace("memory: {dm_policy: open}", "memory: {dm_policy: pairing}"))
    clock = ManualClock()
    async with running(path_file, clock=clock) as gw:
        chat = memory(gw)
        with pytest.raises(StateUnavailable):
            await chat.inject("hi", message_id="m1")
        assert await admin.hget("cg:journal:e:memory:m1", "state") == "pending"  # journaled
        await admin.execute_command("ACL", "SETUSER", "gw", "allkeys")
        async with asyncio.timeout(20):
            while gw.pipeline.guard.current() is not None or not chat.sent:
                clock.advance(2.0)  # the state probe's interval, on the injected clock
                await asyncio.sleep(0.05)
        again = await chat.inject("hi", message_id="m1")  # the platform delivers it again
        assert again.duplicate
        await asyncio.wait_for(again.result, 10)
        assert len(chat.sent) == 1  # the pairing notice, once
    await admin.aclose()
