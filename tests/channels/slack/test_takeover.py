"""A human takes over a Slack chat with the app's slash command (`/chatgate bot off`), through
slack-bolt's Socket Mode against the fake Slack: the confirmation names the Slack form."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from chatgate.model.text_ids import TextId
from chatgate.texts import LANGUAGES
from tests.channels.slack.support import slack_config
from tests.fakes.llm import FakeLLM
from tests.fakes.slack import FakeSlack
from tests.harness import running

EN = LANGUAGES["en"]
ANSWER_S = 60  # the first model turn of a worker pays litellm's import


async def test_chatgate_bot_off_and_on_from_an_operator_in_slack(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    path = slack_config(
        tmp_path,
        fake_slack,
        fake_llm,
        mode="socket",
        gateway="  operators: ['slack:U0OPS']\n  takeover: {auto_resume_s: 0}\n",
    )
    async with running(path) as gw:
        await fake_slack.wait_connected()
        off = await fake_slack.push_slash_command("/chatgate", "bot off", "U0OPS", "D1")
        await fake_slack.wait_acked(off.envelope_id, timeout=10)
        [told] = await fake_slack.wait_posts(1, timeout=ANSWER_S)
        assert told["text"] == EN[TextId.TAKEOVER_PAUSED].format(on="/chatgate bot on")

        await fake_slack.push_event(fake_slack.message_event("my invoice is wrong", channel="D1"))
        deadline = time.monotonic() + ANSWER_S
        while not [e for e in await gw.rt.journal.find("slack", sender_id="U42") if e.reason]:
            assert time.monotonic() < deadline, "the paused message was never settled"
            await asyncio.sleep(0.02)
        [entry] = await gw.rt.journal.find("slack", sender_id="U42")
        assert (entry.stage, entry.reason) == ("observe", "paused")

        on = await fake_slack.push_slash_command("/chatgate", "bot on", "U0OPS", "D1")
        await fake_slack.wait_acked(on.envelope_id, timeout=10)
        posts = await fake_slack.wait_posts(2, timeout=ANSWER_S)
        assert posts[1]["text"] == EN[TextId.TAKEOVER_RESUMED]
        await fake_slack.push_event(fake_slack.message_event("hello again", channel="D1"))
        posts = await fake_slack.wait_posts(3, timeout=ANSWER_S)
    assert posts[2]["text"] == "echo: hello again"
    said = [m["content"] for m in fake_llm.requests[-1].messages if m["role"] == "user"]
    assert said == ["my invoice is wrong", "hello again"]
