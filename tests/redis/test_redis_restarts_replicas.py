"""Redis restarts under two real `chatgate run` replicas, first keeping its data (append-only
file), then losing it. DMs sent while Redis is down stay with Telegram and are answered after;
with persistence nothing accepted is lost; after a wipe the lease fence keeps the old holder's
successor out until the old holder has stopped polling: never two pollers on one token."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from redis.asyncio import Redis

from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import FakeTelegram
from tests.redis.conftest import PrivateRedis
from tests.redis.replicas_support import (
    PREFIX,
    echo_replies,
    owner,
    sent_texts,
    start_telegram_replicas,
    stop_all,
    warnings,
)
from tests.support.waiting import eventually

pytestmark = [pytest.mark.slow, pytest.mark.redis]
LEASE_TTL_S = 1.2
USERS = 4


def dms(tg: FakeTelegram, tag: str) -> set[str]:
    for user in range(1, USERS + 1):
        tg.dm(user, f"u{user} {tag}")
    return {f"re: u{user} {tag}" for user in range(1, USERS + 1)}


async def test_redis_restarts_with_and_without_its_data_lose_nothing_accepted_and_never_two_pollers(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM, private_redis: PrivateRedis
) -> None:
    fake_llm.latency_s = 0.05
    echo_replies(fake_llm)
    client = Redis.from_url(private_redis.url, decode_responses=True)
    urls = dict.fromkeys(("r1", "r2"), private_redis.url)
    daemons = await start_telegram_replicas(
        tmp_path, fake_tg, fake_llm, urls, lease_ttl_s=LEASE_TTL_S, lock_ttl_s=4.0
    )
    expected: set[str] = set()

    async def all_answered() -> bool:
        return expected <= set(sent_texts(fake_tg))

    try:
        await eventually(lambda: owner(client), 20, "a telegram owner")
        expected |= dms(fake_tg, "before")
        await eventually(all_answered, 90, "the answers before the restarts")
        started = time.monotonic()
        for wipe in (False, True):
            private_redis.kill()
            if wipe:
                for leftover in private_redis.directory.rglob("*.aof*"):
                    if leftover.is_file():
                        leftover.unlink()
            expected |= dms(fake_tg, f"down-wipe{wipe}")  # Telegram keeps them meanwhile
            private_redis.start()  # wiped: no fence key, so a free lease waits out the fence
            await client.aclose()
            client = Redis.from_url(private_redis.url, decode_responses=True)
            await eventually(lambda c=client: owner(c), LEASE_TTL_S * 10, "a telegram owner again")
            expected |= dms(fake_tg, f"after-wipe{wipe}")
            await eventually(all_answered, 40, f"every answer (wipe: {wipe})")
        elapsed = time.monotonic() - started
        assert set(sent_texts(fake_tg)) == expected, warnings(daemons)
        assert max(sent_texts(fake_tg).values()) == 1, f"repeated\n{warnings(daemons)}"
        assert await client.hlen(PREFIX + "dlq") == 0, f"dead-lettered\n{warnings(daemons)}"
        assert fake_tg.max_in_flight["getupdates"] == 1, "two pollers on one token"
        assert max(fake_llm.max_in_flight_by.values()) == 1, "two turns of one session at once"
        print(f"\ntwo Redis restarts (kept, wiped): every answer within {elapsed:.1f}s")
    finally:
        await stop_all(daemons, kill=True)
        await client.aclose()
