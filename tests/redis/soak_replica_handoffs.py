"""Long fault loops on two real `chatgate run` replicas (one fake Telegram token, a private
redis-server): each round every user sends a DM, and while those turns are at the model the
Telegram lease holder is killed (kill -9, then started again), frozen for twice the lease TTL
(SIGSTOP), or Redis restarts keeping its data (append-only file) or losing it. Answers made by
the holder's turns are handed off, adopted or re-sent; whatever the fault, every DM is answered
and each user's answers arrive in the order of the DMs. Duplicates are printed, not asserted
(a kill or a freeze right after a send, before its mark, may repeat that reply: see
docs/replicas.md).

Not collected by `make test` (the name does not match test_*.py): minutes per fault.
`make soak` runs it by path; SOAK_HANDOFF_ROUNDS sets the rounds per fault, SOAK_HANDOFF_USERS
the users (each sends one DM a round).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections import Counter
from pathlib import Path

import pytest
from redis.asyncio import Redis

from tests.daemon import Daemon
from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import FakeTelegram
from tests.redis.conftest import PrivateRedis
from tests.redis.replicas_support import (
    STATE_AWAY,
    echo_replies,
    owner,
    start_telegram_replicas,
    stop_all,
    warnings,
)
from tests.support.waiting import eventually

pytestmark = [pytest.mark.slow, pytest.mark.redis]
LEASE_TTL_S = 2.0
LOCK_TTL_S = 8.0
USERS = int(os.environ.get("SOAK_HANDOFF_USERS", "4"))
ROUNDS = int(os.environ.get("SOAK_HANDOFF_ROUNDS", "6"))
FAULTS = ("kill", "stall", "redis-kept", "redis-wiped")


def first_answers(tg: FakeTelegram) -> list[str]:
    """The answers sent, each at its first sending (a repeat is counted apart; the notice that
    an answer waits for the state is not one)."""
    seen: set[str] = set()
    out = []
    for call in tg.calls_of("sendMessage"):
        text = str(call.params["text"])
        if text not in seen and text != STATE_AWAY:
            seen.add(text)
            out.append(text)
    return out


def order_violations(texts: list[str]) -> list[str]:
    """An answer ("re: u2 m3") first sent after an answer to a later DM of the same user."""
    last: dict[str, int] = {}
    out = []
    for text in texts:
        user, index = text.split()[1], int(text.split()[2].removeprefix("m"))
        if index < last.get(user, -1):
            out.append(f"{text} after m{last[user]}")
        last[user] = max(index, last.get(user, -1))
    return out


async def fault(kind: str, daemons: dict[str, Daemon], holder: str, redis: PrivateRedis) -> None:
    """One fault while the holder's turns are at the model; returns once it is over."""
    daemon = daemons[holder]
    assert daemon.proc is not None
    if kind == "kill":
        daemon.kill9()
        await daemon.wait()
        await asyncio.sleep(LEASE_TTL_S)
        daemon.port = None
        await daemon.start(timeout=60)
    elif kind == "stall":
        daemon.proc.send_signal(signal.SIGSTOP)
        try:
            await asyncio.sleep(LEASE_TTL_S * 2)
        finally:
            daemon.proc.send_signal(signal.SIGCONT)
    else:
        redis.kill()
        if kind == "redis-wiped":
            for leftover in redis.directory.rglob("*.aof*"):
                if leftover.is_file():
                    leftover.unlink()
        await asyncio.sleep(LEASE_TTL_S / 2)
        redis.start()


@pytest.mark.parametrize("kind", FAULTS)
async def test_every_users_answers_arrive_once_in_order_through_repeated_faults(
    kind: str,
    tmp_path: Path,
    fake_tg: FakeTelegram,
    fake_llm: FakeLLM,
    private_redis: PrivateRedis,
) -> None:
    print("\n" + await faults_in_order(kind, ROUNDS, tmp_path, fake_tg, fake_llm, private_redis))


async def faults_in_order(
    kind: str,
    rounds: int,
    tmp_path: Path,
    fake_tg: FakeTelegram,
    fake_llm: FakeLLM,
    private_redis: PrivateRedis,
) -> str:
    """``rounds`` rounds of the fault ``kind``: every DM answered, each user's answers in order
    (asserted); the summary line, with the repeats and the notices, is returned."""
    fake_llm.latency_s = 1.0
    echo_replies(fake_llm)
    client = Redis.from_url(private_redis.url, decode_responses=True)
    daemons = await start_telegram_replicas(
        tmp_path,
        fake_tg,
        fake_llm,
        dict.fromkeys(("r1", "r2"), private_redis.url),
        lease_ttl_s=LEASE_TTL_S,
        lock_ttl_s=LOCK_TTL_S,
    )
    expected: set[str] = set()
    try:
        for r in range(rounds):
            holder = await eventually(lambda: owner(client), LEASE_TTL_S * 15, "a holder")
            asked = len(fake_llm.requests)
            for user in range(1, USERS + 1):
                fake_tg.dm(user, f"u{user} m{r}")
                expected.add(f"re: u{user} m{r}")
            await fake_llm.wait_for_requests(asked + 1, timeout=60)  # a turn at the model
            await fault(kind, daemons, str(holder), private_redis)

        async def answered() -> bool:
            return expected <= set(first_answers(fake_tg))

        with contextlib.suppress(AssertionError):  # the check below names what is missing
            await eventually(answered, 120, f"all {len(expected)} answers")
        await asyncio.sleep(LEASE_TTL_S)  # a late repeat shows here
        log = warnings(daemons)
        sent = first_answers(fake_tg)
        assert set(sent) == expected, f"unanswered: {sorted(expected - set(sent))}\n{log}"
        late = order_violations(sent)
        assert late == [], f"{len(late)} of {len(expected)} out of order: {late}\n{log}"
        texts = Counter(str(c.params["text"]) for c in fake_tg.calls_of("sendMessage"))
        repeats = sum(n - 1 for text, n in texts.items() if text in expected)
        notices = sum(n for text, n in texts.items() if text not in expected)
        return (
            f"{kind}: {rounds} rounds, {len(expected)} answers, 0 lost, in order, "
            f"{repeats} repeated, {notices} told to wait for the state"
        )
    finally:
        await stop_all(daemons, kill=True)
        await client.aclose()
