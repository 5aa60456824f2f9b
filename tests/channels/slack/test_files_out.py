"""Replies with files on Slack: files_upload_v2 into the thread, through the real slack_sdk."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatgate.model.reasons import DeliveryStatus
from tests.channels.discord.support import python_agent
from tests.channels.slack.support import events_url, slack_config
from tests.channels.telegram.helpers_b import settled
from tests.fakes.llm import FakeLLM
from tests.fakes.slack import FakeSlack
from tests.harness import running

AGENT = """
from chatgate.model.outbound import File, OutboundMessage, Text

def agent(turn):
    return OutboundMessage((
        Text("Two files:"),
        File("report.csv", "text/csv", caption="The Q3 export", data=b"a,b\\n1,2\\n"),
        File("hello.ogg", "audio/ogg", "voice", data=b"OggS0000"),
    ))
"""


async def test_files_are_uploaded_into_the_thread_with_their_comment(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    agents = python_agent(tmp_path, monkeypatch, "slack_files_agent", AGENT)
    channel = "    dm_policy: open\n    agent: scripted\n"
    config = slack_config(tmp_path, fake_slack, fake_llm, channel=channel, agents=agents)
    async with running(config) as gw:
        mention = fake_slack.app_mention_event("files please")
        await fake_slack.post_event(events_url(gw), mention)
        key = f"slack:C1:{mention['ts']}"
        entry = await settled(gw, key, timeout=20)
        [post] = await fake_slack.wait_posts(1, timeout=5)
    assert entry.delivery == DeliveryStatus.SENT
    assert post["text"].startswith("Two files:")
    assert "1 voice note sent as audio" in post["text"]  # the note rides on the text
    csv, ogg = fake_slack.shared_files
    assert (csv["filename"], csv["data"], csv["initial_comment"]) == (
        "report.csv",
        b"a,b\n1,2\n",
        "The Q3 export",
    )
    assert ogg["filename"] == "hello.ogg" and ogg["data"] == b"OggS0000"
    assert {csv["thread_ts"], ogg["thread_ts"]} == {mention["ts"]}
    assert {csv["channel"], ogg["channel"]} == {"C1"}
