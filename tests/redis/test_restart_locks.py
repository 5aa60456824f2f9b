"""A replica killed mid-turn and restarted under the same `replica_id` frees the turn lock its
last run left, so the user's message is answered at once rather than after the lock's TTL."""

from __future__ import annotations

from pathlib import Path

import pytest
from redis.asyncio import Redis

from tests.fakes.llm import FakeLLM, Fault
from tests.fakes.telegram import FakeTelegram
from tests.redis.replicas_support import (
    PREFIX,
    echo_replies,
    owner,
    sent_texts,
    start_telegram_replicas,
    stop_all,
)
from tests.support.waiting import eventually

pytestmark = [pytest.mark.slow, pytest.mark.redis]
LOCK_TTL_S = 120.0  # far longer than the test may take: only freeing the lock lets it finish


async def test_a_replica_restarted_after_a_kill_frees_its_leftover_turn_lock(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM, redis_db: str
) -> None:
    echo_replies(fake_llm)
    fake_llm.script(Fault.hang())  # the first turn stays at the model until the kill
    client = Redis.from_url(redis_db, decode_responses=True)
    daemons = await start_telegram_replicas(
        tmp_path, fake_tg, fake_llm, {"r1": redis_db}, lease_ttl_s=2.0, lock_ttl_s=LOCK_TTL_S
    )
    replica = daemons["r1"]
    try:
        await eventually(lambda: owner(client), 20, "a telegram owner")
        fake_tg.dm(1, "u1 first")
        await fake_llm.wait_for_requests(1, timeout=30)
        replica.kill9()
        await replica.wait()
        fake_llm.release()
        [lock] = await client.keys(PREFIX + "lock:*")
        assert str(await client.get(lock)).startswith("r1/"), "the killed turn's lock is held"
        assert await client.pttl(lock) > (LOCK_TTL_S - 30) * 1000

        await replica.start(timeout=60)
        await eventually(
            lambda: _answered(fake_tg, "re: u1 first"), 40, "the resumed turn's answer (lock freed)"
        )
        assert "freed turn locks left by this replica's last run" in replica.logs()

        async def freed() -> bool:  # held until the answer is sent, then released
            return await client.exists(lock) == 0

        await eventually(freed, 10, "the lock released after the send")
        assert sent_texts(fake_tg)["re: u1 first"] == 1
    finally:
        await stop_all(daemons, kill=True)
        await client.aclose()


async def _answered(tg: FakeTelegram, text: str) -> bool:
    return text in sent_texts(tg)
