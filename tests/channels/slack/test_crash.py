"""kill -9 after Slack got its ack: every event is answered exactly once by the next daemon."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.channels.slack.support import EVENTS_PATH, slack_config
from tests.daemon import Daemon
from tests.fakes.llm import FakeLLM
from tests.fakes.slack import FakeSlack
from tests.harness import over_http


@pytest.mark.slow
async def test_kill9_after_the_ack_answers_each_event_exactly_once_after_restart(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    config = slack_config(tmp_path, fake_slack, over_http(fake_llm))
    fake_llm.latency_s = 60
    first = await Daemon(config).start()
    events = [
        fake_slack.message_event(f"question from U{n}", user=f"U{n}", channel=f"D{n}")
        for n in range(3)
    ]
    for event in events:
        status, _ = await fake_slack.post_event(first.base + EVENTS_PATH, event)
        assert status == 200  # acked: Slack will not send it again
    await fake_llm.wait_for_requests(len(events), timeout=60)  # turns running
    first.kill9()
    await first.wait()
    fake_llm.latency_s = 0
    assert fake_slack.posted() == []
    second = await Daemon(config, log_name="daemon2.log").start()
    try:
        await fake_slack.wait_posts(len(events), timeout=60)
        # a late Slack retry of an event answered across the crash is still one answer
        retry = await fake_slack.post_event(second.base + EVENTS_PATH, events[0], retry_num=1)
        assert retry[0] == 200
    finally:
        assert await second.terminate() == 0
    texts = sorted(p["text"] for p in fake_slack.posted())
    assert texts == sorted(f"echo: question from U{n}" for n in range(3))
    assert sorted(p["channel"] for p in fake_slack.posted()) == ["D0", "D1", "D2"]
