"""Correctly signed Events API bodies in shapes Bolt does not expect are a 400, never a 500."""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path

from tests.channels.slack.support import events_url, slack_config
from tests.fakes.llm import FakeLLM
from tests.fakes.slack import FakeSlack
from tests.harness import running


def form(payload: object) -> str:
    return urllib.parse.urlencode({"payload": json.dumps(payload)})


FORM = "application/x-www-form-urlencoded"
CASES = [
    ("reaction item channel a number", json.dumps({"type": "event_callback", "team_id": "T1",
     "event": {"type": "reaction_added", "user": "U1", "reaction": "x",
               "item": {"type": "message", "channel": 5, "ts": "1.2"}}}), "application/json"),
    ("event type an object", json.dumps({"type": "event_callback", "team_id": "T1",
     "event": {"type": {"a": 1}}}), "application/json"),
    ("no actions", form({"type": "block_actions", "user": {"id": "U1"}, "actions": []}), FORM),
    ("a null action", form({"type": "block_actions", "user": {"id": "U1"}, "actions": [None]}),
     FORM),
    ("actions an object", form({"type": "block_actions", "user": {"id": "U1"}, "actions": {}}),
     FORM),
]  # fmt: skip


async def test_odd_shapes_are_refused_with_a_400(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    async with running(slack_config(tmp_path, fake_slack, fake_llm)) as gw:
        answers = {
            what: await fake_slack.post_signed(events_url(gw), body, kind)
            for what, body, kind in CASES
        }
    assert {what: status for what, (status, _) in answers.items()} == {
        what: 400 for what, _, _ in CASES
    }, answers
