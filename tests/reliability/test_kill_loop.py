"""kill -9 at random points under load: every accepted message is answered exactly once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.daemon import run_cli
from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import FakeTelegram
from tests.reliability.killloop import kill_loop

KILLS = 4  # `make soak` runs the long version


@pytest.mark.slow
async def test_kill9_loop_under_load_loses_and_duplicates_nothing(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    figures = await kill_loop(tmp_path, fake_tg, fake_llm, kills=KILLS)
    print(figures.summary())

    assert figures.kills == KILLS
    assert figures.telegram_sent > 0 and figures.webhooks_accepted > 0
    assert figures.lost == []
    assert figures.duplicated == {}
    assert figures.reruns_after_answer == []
    # `chatgate why` explains a message from each side, read from the journal on disk.
    config = str(tmp_path / "gateway.yaml")
    for channel, message in (("webhook", "jobs:id-wh-1"), ("telegram", None)):
        args = ["why", channel, *([message] if message else ["--user", "201"])]
        args += ["--config", config, "--json"]
        code, out, err = await run_cli(*args)
        assert code == 0, err
        trails = json.loads(out)
        assert trails, out
        assert all("answered" in t["summary"] and "delivered" in t["summary"] for t in trails), out
