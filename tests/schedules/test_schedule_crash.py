"""kill -9 of the daemon while a scheduled run is at the agent: the next start resumes that run
from the journal and delivers it once."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.channels.telegram.support import api_base
from tests.daemon import ROOT, Daemon
from tests.fakes.telegram import TOKEN, FakeTelegram
from tests.harness import write_config
from tests.support.waiting import eventually

pytestmark = pytest.mark.slow


async def test_kill9_during_a_run_runs_it_once_after_restart(
    tmp_path: Path, fake_tg: FakeTelegram
) -> None:
    path = write_config(
        tmp_path,
        f"""
agents:
  default: {{backend: python, function: "tests.schedules.agents:ledger"}}
channels:
  telegram:
    token: "{TOKEN}"
    api_base: {api_base(fake_tg)}
    poll_timeout_s: 1
schedules:
  beat:
    every_s: 2
    prompt: "run {{scheduled_at}}"
    session: none
    deliver: {{to: "telegram:42"}}
""",
    )
    ledger = tmp_path / "ledger.txt"
    (tmp_path / "hang").touch()  # the first run hangs at the agent
    env = {"SCHEDULE_TEST_LEDGER": str(ledger), "PYTHONPATH": str(ROOT)}
    daemon = await Daemon(path, env=env).start()
    await eventually(ledger.exists, 30, "the first run at the agent")
    first = ledger.read_text().splitlines()[0]
    daemon.kill9()
    await daemon.wait()
    assert not fake_tg.calls_of("sendMessage")
    daemon = await Daemon(path, env=env, log_name="daemon2.log").start()
    try:
        await fake_tg.wait_for("sendMessage", 2, timeout=30)
    finally:
        await daemon.terminate()
    sent = Counter(c.params["text"] for c in fake_tg.calls_of("sendMessage"))
    assert sent[f"re: {first}"] == 1, sent
    assert max(sent.values()) == 1, sent  # no instant delivered twice
    asked = Counter(ledger.read_text().splitlines())
    assert asked[first] == 2  # once before the crash (hung), once resumed
