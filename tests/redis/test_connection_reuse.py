"""A replica on Redis opens a handful of connections at start and reuses them: turns do not dial.

One real `chatgate run` replica talks to a private redis-server through the TCP proxy, which
counts every connection accepted and names the command each one was opened for. After a warm-up
(the pools fill to what the load needs), 100 turns may open only a few more connections.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import pytest
from redis.asyncio import Redis

from chatgate.state.redis.client import DATA_CONNECTIONS, HEARTBEAT_CONNECTIONS
from tests.fakes.llm import FakeLLM
from tests.fakes.tcp_proxy import TcpProxy
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
USERS = 10
TURNS = 100
# Dialled after warm-up while 100 turns run: a spare for a burst wider than the warm-up's.
MAX_NEW_CONNECTIONS = 3


async def turns(tg: FakeTelegram, tag: str, count: int) -> set[str]:
    """``count`` DMs spread over USERS users, sent in waves of one per user; their answers."""
    texts = set()
    for i in range(count):
        user = i % USERS + 1
        tg.dm(user, f"u{user} {tag}{i}")
        texts.add(f"re: u{user} {tag}{i}")
    return texts


async def answered(tg: FakeTelegram, expected: set[str], what: str) -> None:
    async def done() -> bool:
        return expected <= set(sent_texts(tg))

    await eventually(done, 60, what)


async def test_a_hundred_turns_reuse_the_connections_opened_at_start(
    tmp_path: Path,
    fake_tg: FakeTelegram,
    fake_llm: FakeLLM,
    private_redis: PrivateRedis,
) -> None:
    fake_llm.latency_s = 0.02
    echo_replies(fake_llm)
    client = Redis.from_url(private_redis.url, decode_responses=True)
    async with TcpProxy(private_redis.port) as proxy:
        daemons = await start_telegram_replicas(
            tmp_path, fake_tg, fake_llm, {"r1": proxy.url()}, lease_ttl_s=2.0, lock_ttl_s=10.0
        )
        try:
            await eventually(lambda: owner(client), 20, "a telegram owner")
            await answered(fake_tg, await turns(fake_tg, "w", 2 * USERS), "the warm-up answers")
            at_start = proxy.accepted
            await answered(fake_tg, await turns(fake_tg, "m", TURNS), f"{TURNS} answers")
            await asyncio.sleep(0.5)  # a connection dialled as the last turns end shows here
            new = proxy.opened_for[at_start:]
            print(
                f"\nconnections: {at_start} at start and warm-up, {len(new)} new over {TURNS} "
                f"turns: {Counter(new).most_common(8)}"
            )
            closed = Counter(proxy.last_sent[i] for i in proxy.closed).most_common(8)
            print(f"dropped by the client after: {closed}")
            assert len(new) <= MAX_NEW_CONNECTIONS, Counter(new).most_common(8)
            # The pools' sizes bound what a replica ever opens, however wide the burst.
            assert proxy.accepted <= DATA_CONNECTIONS + HEARTBEAT_CONNECTIONS
            assert len(closed) <= MAX_NEW_CONNECTIONS, f"connections dropped: {closed}"
        finally:
            await stop_all(daemons, kill=True)
            await client.aclose()
