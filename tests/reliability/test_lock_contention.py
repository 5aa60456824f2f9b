"""Another process holds the state database's write lock for a while (a stalled writer / slow
disk): the daemon keeps answering /healthz, and every message is answered once afterwards."""

from __future__ import annotations

import asyncio
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from tests.daemon import Daemon
from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import FakeTelegram
from tests.reliability.killloop import config

HOLD_S = 3.0  # well under the store's 10 s busy timeout


@pytest.mark.slow
async def test_a_held_write_lock_stalls_but_loses_nothing(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    daemon = await Daemon(config(tmp_path, fake_tg, fake_llm)).start(timeout=60)
    try:
        fake_tg.dm(401, "before")
        await fake_tg.wait_for("sendMessage", timeout=30)
        databases = sorted((tmp_path / "state").glob("*.db"))
        assert databases, list((tmp_path / "state").iterdir())
        holders = [sqlite3.connect(db, timeout=5, isolation_level=None) for db in databases]
        for conn in holders:
            conn.execute("BEGIN EXCLUSIVE")
        try:
            for n in range(8):
                fake_tg.dm(402 + n, f"during {n}")
            health = []
            for _ in range(int(HOLD_S / 0.5)):
                health.append((await daemon.get("/healthz"))[0])
                await asyncio.sleep(0.5)
        finally:
            for conn in holders:
                conn.execute("COMMIT")
                conn.close()
        wanted = {f"echo: during {n}" for n in range(8)}
        await fake_tg.wait_for(
            "sendMessage", count=9, timeout=60, where=lambda c: c.params.get("text") != ""
        )
        await asyncio.sleep(1.0)
    finally:
        assert await daemon.terminate() == 0
    print(f"/healthz during a {HOLD_S:.0f} s write lock: {health}")
    assert all(status in (200, 503) for status in health)  # it answers, whatever it says
    sent = Counter(c.params.get("text") for c in fake_tg.calls_of("sendMessage"))
    assert {t: sent[t] for t in wanted} == dict.fromkeys(wanted, 1)
