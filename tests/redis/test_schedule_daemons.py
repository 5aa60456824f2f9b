"""Three real `chatgate run` replicas on one Redis run a 1-second job while one of them is killed
with SIGKILL: every instant is asked of the agent and delivered once, none is missed.

The victim is a replica that does not hold the Telegram connection (its answers are handed to
the holder): killing the holder itself also repeats the sends it made but had not marked done,
which is the journal's hand-off behaviour for any message, not the scheduler's.

Figures (instants, runs, duplicates, misses) are printed for the closing note (pytest -s).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest
from redis.asyncio import Redis

from tests.channels.telegram.support import api_base
from tests.daemon import ROOT, Daemon
from tests.fakes.telegram import TOKEN, FakeTelegram
from tests.harness import write_config
from tests.support.waiting import eventually

pytestmark = [pytest.mark.slow, pytest.mark.redis]
PREFIX = "sd:"
LEASE_TTL_S = 2.0
CONFIG = """
  store: {{backend: redis, url: '{url}', key_prefix: '{prefix}'}}
  turn_lock: {{backend: redis, ttl_s: 3}}
  redis: {{replica_id: {name}, lease_ttl_s: {ttl}}}
agents:
  default: {{backend: python, function: "tests.schedules.agents:ledger"}}
channels:
  telegram: {{token: "{token}", api_base: {api}, poll_timeout_s: 1}}
schedules:
  beat:
    every_s: 1
    prompt: "run {{scheduled_at}}"
    session: none
    deliver: {{to: "telegram:42"}}
"""


async def owner(client: Redis) -> str | None:
    keys = await client.keys(PREFIX + "lease:telegram:*")
    value = await client.get(keys[0]) if keys else None
    return None if value is None else str(value)


def instant_of(text: str) -> float:
    return datetime.fromisoformat(text.rsplit(" ", 1)[-1]).timestamp()


async def test_three_replicas_kill9_each_instant_delivered_exactly_once(
    tmp_path: Path, fake_tg: FakeTelegram, redis_db: str
) -> None:
    client = Redis.from_url(redis_db, decode_responses=True)
    ledger = tmp_path / "ledger.txt"  # the agent of every replica writes each prompt here
    env = {"SCHEDULE_TEST_LEDGER": str(ledger), "PYTHONPATH": str(ROOT)}
    daemons: dict[str, Daemon] = {}
    for name in ("r1", "r2", "r3"):
        body = CONFIG.format(
            url=redis_db,
            prefix=PREFIX,
            name=name,
            ttl=LEASE_TTL_S,
            token=TOKEN,
            api=api_base(fake_tg),
        )
        daemons[name] = await Daemon(write_config(tmp_path / name, body), env=env).start(60)
    try:
        await eventually(lambda: owner(client), 20, "a telegram owner")
        await fake_tg.wait_for("sendMessage", 3, timeout=30)
        holder = await owner(client)
        victim = next(name for name in daemons if name != holder)
        daemons[victim].kill9()
        killed_at = asyncio.get_running_loop().time()
        before = len(fake_tg.calls_of("sendMessage"))
        await fake_tg.wait_for("sendMessage", before + 4, timeout=40)
        await asyncio.sleep(1.5)  # let in-flight runs land
        for name, daemon in daemons.items():
            if name != victim:
                await daemon.terminate()
        survived_s = asyncio.get_running_loop().time() - killed_at
    finally:
        await client.aclose()
    sent = Counter(c.params["text"] for c in fake_tg.calls_of("sendMessage"))
    asked = Counter(ledger.read_text().splitlines())
    delivered = sorted(instant_of(t) for t in sent)
    grid = round(delivered[-1] - delivered[0]) + 1
    duplicates = sum(n - 1 for n in sent.values())
    misses = grid - len(delivered)
    print(
        f"\nschedule replicas: instants={grid} delivered={len(sent)} duplicates={duplicates}"
        f" misses={misses} agent_calls={sum(asked.values())}"
        f" asked_twice={sum(1 for n in asked.values() if n > 1)}"
        f" after_kill_s={survived_s:.1f} victim={victim}"
    )
    assert duplicates == 0, sent
    assert misses == 0, delivered
    # A run at the agent when its replica died is asked again by its adopter (at most once more).
    assert all(n <= 2 for n in asked.values()) and sum(n > 1 for n in asked.values()) <= 1
