"""SIGTERM in the middle of a burst: every turn finishes or is answered once after a restart."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.daemon import Daemon
from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import FakeTelegram
from tests.reliability.killloop import config

USERS = range(301, 313)


@pytest.mark.slow
async def test_sigterm_during_a_burst_answers_each_message_once(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    path = config(tmp_path, fake_tg, fake_llm)
    fake_llm.latency_s = 0.5
    first = await Daemon(path).start(timeout=60)
    await fake_tg.wait_for("getUpdates", timeout=20)
    for user in USERS:
        for n in range(3):
            fake_tg.dm(user, f"burst {user}-{n}")
    await fake_llm.wait_for_requests(3, timeout=20)  # turns are in flight
    assert await first.terminate(timeout=60) == 0, first.logs()[-3000:]

    second = await Daemon(path, log_name="daemon2.log").start(timeout=60)
    try:
        wanted = {f"echo: burst {u}-{n}" for u in USERS for n in range(3)}
        await fake_tg.wait_for(
            "sendMessage",
            count=len(wanted),
            timeout=60,
            where=lambda c: c.params.get("text") in wanted,
        )
    finally:
        assert await second.terminate() == 0
    sent = Counter(c.params.get("text") for c in fake_tg.calls_of("sendMessage"))
    assert {text: sent[text] for text in wanted} == dict.fromkeys(wanted, 1)
    asked = Counter(r.last_user_text for r in fake_llm.requests)
    assert all(count == 1 for count in asked.values()), asked
