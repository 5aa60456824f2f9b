"""Per-session order on two real `chatgate run` replicas: the Telegram lease holder is frozen
(SIGSTOP) while each user's turn is at the model and more DMs wait behind it; the other replica
takes the channel over and gets each user's next DMs. The frozen replica then either resumes
(its answers are handed off with the session's turn lock) or is killed (kill -9: its messages
are adopted, sent or run again ahead of the later ones). Either way every user's answers arrive
in the order of the DMs, each once."""

from __future__ import annotations

import asyncio
import json
import signal
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
    warnings,
)
from tests.support.waiting import eventually

pytestmark = [pytest.mark.slow, pytest.mark.redis]
LEASE_TTL_S = 2.0
LOCK_TTL_S = 20.0  # longer than the stall: the frozen replica keeps its sessions' locks
USERS, BEFORE, AFTER = 3, 2, 2


def order_violations(tg: FakeTelegram) -> list[str]:
    """Answers sent before an answer to an earlier DM of the same user ("re: u1 m3" before
    "re: u1 m2")."""
    last: dict[str, int] = {}
    out = []
    for call in tg.calls_of("sendMessage"):
        text = str(call.params["text"])
        user, index = text.split()[1], int(text.split()[2].removeprefix("m"))
        if index < last.get(user, -1):
            out.append(f"{text} after m{last[user]}")
        last[user] = max(index, last.get(user, -1))
    return out


def handoff_ms(text: str) -> list[int]:
    """How long each answer a replica sent for another took from its hand-off (its log)."""
    return [
        int(json.loads(line)["handoff_ms"])
        for line in text.splitlines()
        if line.startswith("{") and '"handoff_ms"' in line
    ]


@pytest.mark.parametrize("then", ["resume", "kill"])
async def test_a_frozen_lease_holder_keeps_every_sessions_answers_in_order(
    then: str,
    tmp_path: Path,
    fake_tg: FakeTelegram,
    fake_llm: FakeLLM,
    private_redis: PrivateRedis,
) -> None:
    fake_llm.latency_s = 1.0
    echo_replies(fake_llm)
    client = Redis.from_url(private_redis.url, decode_responses=True)
    urls = dict.fromkeys(("r1", "r2"), private_redis.url)
    daemons = await start_telegram_replicas(
        tmp_path, fake_tg, fake_llm, urls, lease_ttl_s=LEASE_TTL_S, lock_ttl_s=LOCK_TTL_S
    )
    expected = {f"re: u{u} m{i}" for u in range(1, USERS + 1) for i in range(BEFORE + AFTER)}
    frozen = None
    try:
        await eventually(lambda: owner(client), 30, "a telegram owner")
        for i in range(BEFORE):
            for user in range(1, USERS + 1):
                fake_tg.dm(user, f"u{user} m{i}")
        await fake_llm.wait_for_requests(USERS, timeout=90)  # each user's first turn runs
        first = await owner(client)
        assert first in daemons
        frozen = daemons[first]
        assert frozen.proc is not None
        frozen.proc.send_signal(signal.SIGSTOP)

        async def moved() -> bool:
            return (await owner(client)) not in (None, first)

        await eventually(moved, LEASE_TTL_S * 10, "the other replica polling")
        for i in range(BEFORE, BEFORE + AFTER):
            for user in range(1, USERS + 1):
                fake_tg.dm(user, f"u{user} m{i}")
        await asyncio.sleep(LEASE_TTL_S)
        if then == "kill":
            frozen.kill9()
        frozen.proc.send_signal(signal.SIGCONT)
        frozen = None

        async def answered() -> bool:
            return expected <= set(sent_texts(fake_tg))

        await eventually(answered, 90, f"all {len(expected)} answers")
        await asyncio.sleep(LEASE_TTL_S)  # a late answer shows here
        log = warnings(daemons)
        assert set(sent_texts(fake_tg)) == expected, log
        assert order_violations(fake_tg) == [], log
        ms = sorted(n for d in daemons.values() for n in handoff_ms(d.logs()))
        if ms:
            p50, p99 = ms[len(ms) // 2], ms[min(len(ms) - 1, int(len(ms) * 0.99))]
            print(f"\n{then}: {len(ms)} answers handed off, hand-off p50 {p50} ms, p99 {p99} ms")
    finally:
        if frozen is not None and frozen.proc is not None:
            frozen.proc.send_signal(signal.SIGCONT)
        await stop_all(daemons, kill=True)
        await client.aclose()
