"""In a Slack channel the refusal goes to the sender alone (chat.postEphemeral), at most once an
hour; nothing about the budget is posted to the channel."""

from __future__ import annotations

from pathlib import Path

from chatgate.state import admin
from tests.channels.slack.support import events_url, slack_config
from tests.fakes.llm import FakeLLM
from tests.fakes.slack import FakeSlack
from tests.harness import running
from tests.support.waiting import eventually

TIMEOUT = 30
BUDGET = """budgets:
  - name: once-a-day
    scope: user
    limit_turns: 1
    warn_at: null
"""


async def test_group_refusal_is_ephemeral_and_once_an_hour(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    config = slack_config(tmp_path, fake_slack, fake_llm)
    config.write_text(config.read_text().replace("channels:\n", BUDGET + "channels:\n", 1))
    async with running(config) as gw:
        url = events_url(gw)
        await fake_slack.post_event(url, fake_slack.app_mention_event("first"))
        await fake_slack.wait_posts(1, timeout=TIMEOUT)
        await fake_slack.post_event(url, fake_slack.app_mention_event("second"))
        await eventually(lambda: bool(fake_slack.ephemerals), TIMEOUT, "the private refusal")
        await fake_slack.post_event(url, fake_slack.app_mention_event("third"))

        async def three_refusals_settled() -> bool:
            trails = (await admin.why(gw.rt.state, "slack", None, "U42"))["trails"]
            refused = [t for t in trails if t["reason"] == "budget_exhausted"]
            return len(refused) == 2 and all(t["state"] == "done" for t in refused)

        await eventually(three_refusals_settled, TIMEOUT, "both refusals journaled")
    [told] = fake_slack.ephemerals
    assert told["user"] == "U42" and "used up your allowance" in told["text"]
    assert len(fake_slack.posted()) == 1  # only the first answer reached the channel
