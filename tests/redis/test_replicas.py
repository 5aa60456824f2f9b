"""Three real `chatgate run` replicas on one Redis, one fake Telegram token, one fake model.

Exactly one replica polls the token; kill -9 of that owner mid-burst hands the connection and its
unfinished messages to another replica; every message is answered exactly once, nothing is
dead-lettered, and no session ever has two turns at the model at once. The lease TTL is short
(2 s) so that a replica stalled by the load loses leases: answers then move to the holder.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import pytest
from redis.asyncio import Redis

from tests.channels.telegram.support import telegram_config
from tests.daemon import Daemon
from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import FakeTelegram
from tests.harness import over_http
from tests.redis.replicas_support import PREFIX, owner, session_of
from tests.support.waiting import eventually

pytestmark = [pytest.mark.slow, pytest.mark.redis]
LEASE_TTL_S = 2.0
USERS, PER_USER = 30, 10  # 300 messages across 30 sessions


async def test_kill_the_telegram_owner_mid_burst_loses_nothing_and_repeats_only_unmarked_sends(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM, redis_db: str
) -> None:
    fake_llm.latency_s = 0.05
    fake_llm.default_reply = lambda r: f"re: {r.last_user_text}"
    fake_llm.group_of = session_of
    client = Redis.from_url(redis_db, decode_responses=True)
    daemons: dict[str, Daemon] = {}
    for name in ("r1", "r2", "r3"):
        gateway = (
            f"  store: {{backend: redis, url: '{redis_db}', key_prefix: '{PREFIX}'}}\n"
            f"  turn_lock: {{backend: redis, ttl_s: 3}}\n"
            f"  redis: {{replica_id: {name}, lease_ttl_s: {LEASE_TTL_S}}}\n"
            "  rate_limits: {per_sender: null, per_chat: null}\n"
        )
        path = telegram_config(
            tmp_path / name,
            fake_tg,
            over_http(fake_llm),
            gateway=gateway,
            channel="    dm_policy: open",
        )
        daemons[name] = await Daemon(path).start(timeout=60)
    try:
        await eventually(lambda: owner(client), 20, "a telegram owner")
        first = await owner(client)
        assert first in daemons
        for i in range(PER_USER):
            for user in range(1, USERS + 1):
                fake_tg.dm(user, f"u{user} m{i}")
        await fake_tg.wait_for("sendMessage", count=USERS, timeout=60)
        await asyncio.sleep(0.3)  # mid-burst: turns at the model, others being sent
        daemons[first].kill9()
        # Requests the dead owner had already written land a moment later; no other replica can
        # send before the lease (LEASE_TTL_S) runs out.
        await asyncio.sleep(LEASE_TTL_S / 4)
        sent_before = {c.params["text"] for c in fake_tg.calls_of("sendMessage")}

        async def moved() -> bool:
            return (await owner(client)) not in (None, first)

        await eventually(moved, LEASE_TTL_S * 5, "another replica polling")
        total = USERS * PER_USER
        await fake_tg.wait_for("sendMessage", count=total, timeout=90)
        await asyncio.sleep(LEASE_TTL_S)  # a late duplicate would show up here
        texts = Counter(c.params["text"] for c in fake_tg.calls_of("sendMessage"))
        expected = {f"re: u{u} m{i}" for u in range(1, USERS + 1) for i in range(PER_USER)}
        assert set(texts) == expected, f"lost: {sorted(expected - set(texts))}"
        # The one window left: a reply the owner sent right before it died, whose DONE mark was
        # not written yet, is sent again (Telegram has no idempotency key). Nothing else repeats.
        again = [t for t, n in texts.items() if n > 1]
        assert all(texts[t] == 2 and t in sent_before for t in again), f"duplicated: {again}"
        assert len(again) <= USERS
        assert await client.hlen(PREFIX + "dlq") == 0, "answers dead-lettered"
        assert max(fake_llm.max_in_flight_by.values()) == 1, "two turns of one session at once"
        assert fake_tg.max_in_flight["getupdates"] == 1, "two pollers on one token"
    finally:
        for daemon in daemons.values():
            if daemon.proc is not None and daemon.proc.returncode is None:
                await daemon.terminate()
        await client.aclose()
