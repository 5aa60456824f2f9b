"""A Redis outage under traffic on two real `chatgate run` replicas: coded one-line logs, never a
traceback, an orphaned future or a dropped coroutine, and every DM answered once Redis is back."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from redis.asyncio import Redis

from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import FakeTelegram
from tests.redis.conftest import PrivateRedis
from tests.redis.replicas_support import (
    echo_replies,
    owner,
    sent_texts,
    start_telegram_replicas,
    stop_all,
)
from tests.support.waiting import eventually

pytestmark = [pytest.mark.slow, pytest.mark.redis]
LEASE_TTL_S = 3.0
USERS = 5
OUTAGE_S = 2.5
# What asyncio and Python print for work dropped on the floor, and a logged traceback.
LITTER = (
    "Traceback (most recent call last)",
    "never retrieved",
    "was never awaited",
    '"exc_info"',
)


def litter(text: str) -> list[str]:
    """The lines of a replica's log that are a traceback, or a multi-line record's body."""
    out = []
    for line in text.splitlines():
        if any(mark in line for mark in LITTER):
            out.append(line[:300])
        elif line.strip() and not line.startswith("{"):
            out.append(line[:300])  # a traceback's frames, printed outside the JSON log
        elif line.startswith("{") and "traceback" in json.loads(line):
            out.append(line[:300])
    return out


async def test_a_redis_outage_under_traffic_leaves_no_traceback_and_loses_nothing(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM, private_redis: PrivateRedis
) -> None:
    fake_llm.latency_s = 0.4  # turns are at the model when Redis goes
    echo_replies(fake_llm)
    client = Redis.from_url(private_redis.url, decode_responses=True)
    urls = dict.fromkeys(("r1", "r2"), private_redis.url)
    daemons = await start_telegram_replicas(  # litellm: its calls cut short must leave no coroutine behind
        tmp_path, fake_tg, fake_llm, urls, lease_ttl_s=LEASE_TTL_S, lock_ttl_s=4.0, litellm=True
    )
    expected: set[str] = set()
    try:
        await eventually(lambda: owner(client), 20, "a telegram owner")
        for user in range(1, USERS + 1):
            for i in range(3):
                fake_tg.dm(user, f"u{user} m{i}")
                expected.add(f"re: u{user} m{i}")
        await fake_llm.wait_for_requests(2, timeout=90)  # turns at the model
        private_redis.kill()
        for user in range(1, USERS + 1):  # traffic while Redis is away: Telegram keeps it
            fake_tg.dm(user, f"u{user} down")
            expected.add(f"re: u{user} down")
        await asyncio.sleep(OUTAGE_S)
        private_redis.start()

        async def answered() -> bool:
            return expected <= set(sent_texts(fake_tg))

        await eventually(answered, 40, "every answer after the outage")
        await asyncio.sleep(0.5)
    finally:
        await stop_all(daemons)
        await client.aclose()
    found = {name: litter(d.logs()) for name, d in daemons.items()}
    assert not any(found.values()), "\n".join(line for lines in found.values() for line in lines)
