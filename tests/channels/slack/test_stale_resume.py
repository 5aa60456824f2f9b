"""A Slack message (its time is its `ts`) left open in the journal by a stop and taken up by the
next start after downtime longer than the channel's stale age is judged stale, as a Telegram
backlog is: the user gets the offline notice and the model is not asked again. Taken up soon, it is
answered."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from chatgate.model.text_ids import TextId
from chatgate.texts import LANGUAGES
from tests.channels.slack.support import events_url, slack_config
from tests.fakes.clock import ManualClock
from tests.fakes.llm import FakeLLM
from tests.fakes.slack import FakeSlack
from tests.harness import running

DOWNTIME_S = 7200.0
STALE = "    dm_policy: open\n    stale: {after_s: 3600, action: notice}\n"


def _quick_drain(path: Path) -> Path:
    """The stop cancels the held turn at once instead of draining for the harness's 5 s."""
    path.write_text(path.read_text().replace("drain_timeout_s: 5", "drain_timeout_s: 0.2"))
    return path


async def _leave_open(config: Path, slack: FakeSlack, llm: FakeLLM) -> None:
    """One DM acked and journaled whose turn is still at the model when the daemon stops."""
    llm.held = asyncio.Event()
    async with running(config) as gw:
        event = slack.message_event("are you there?", user="U1", channel="D1")
        status, _ = await slack.post_event(events_url(gw), event)
        assert status == 200
        await llm.wait_for_requests(1, timeout=15)
    assert slack.posted() == []
    llm.held.set()


async def test_a_slack_message_taken_up_after_downtime_gets_the_stale_notice(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    config = _quick_drain(slack_config(tmp_path, fake_slack, fake_llm, channel=STALE))
    await _leave_open(config, fake_slack, fake_llm)
    asked = len(fake_llm.requests)
    later = ManualClock(wall_start=time.time() + DOWNTIME_S)
    async with running(config, clock=later) as gw:
        [post] = await fake_slack.wait_posts(1, timeout=15)
        [entry] = await gw.rt.journal.find("slack", sender_id="U1", limit=5)
    assert post["text"] == LANGUAGES["en"][TextId.STALE_NOTICE]
    assert (entry.stage, entry.reason) == ("stale", "stale")
    assert len(fake_llm.requests) == asked  # judged stale before any turn


async def test_a_slack_message_taken_up_soon_is_answered(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    config = _quick_drain(slack_config(tmp_path, fake_slack, fake_llm, channel=STALE))
    await _leave_open(config, fake_slack, fake_llm)
    async with running(config):
        [post] = await fake_slack.wait_posts(1, timeout=15)
    assert post["text"] == "echo: are you there?"
