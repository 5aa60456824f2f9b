"""Slack answers as a user sees them: threads, long answers, buttons, reactions, streaming."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.channels.discord.support import python_agent
from tests.channels.slack.support import events_url, slack_config
from tests.channels.telegram.helpers_b import settled
from tests.fakes.llm import FakeLLM
from tests.fakes.slack import FakeSlack
from tests.harness import running
from tests.support.spacing import assert_spaced


def _fences_balanced(text: str) -> bool:
    return text.count("```") % 2 == 0


async def test_a_10k_answer_arrives_in_chunks_within_limits_with_intact_code(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    code = "\n".join(f"    print('line {i} a<b & c')" for i in range(150))
    prose = " ".join(f"Sentence {i} with some words." for i in range(200))
    answer = f"{prose}\n\n```python\n{code}\n```\n\n{prose}"
    assert len(answer) >= 10_000
    fake_llm.script(answer)
    async with running(slack_config(tmp_path, fake_slack, fake_llm)) as gw:
        mention = fake_slack.app_mention_event("write it all")
        await fake_slack.post_event(events_url(gw), mention)
        posts = await fake_slack.wait_posts(4, timeout=20)
    assert all(len(p["text"]) <= 3000 and _fences_balanced(p["text"]) for p in posts)
    assert {p["thread_ts"] for p in posts} == {mention["ts"]}
    joined = "\n".join(p["text"] for p in posts)
    for i in (0, 75, 149):
        assert f"print('line {i} a&lt;b &amp; c')" in joined
    assert "```python" not in joined  # mrkdwn fences carry no language


BUTTON_AGENT = f"""
def agent(turn):
    if turn.text == "menu":
        return {{"blocks": [
            {{"type": "text", "text": "Pick"}},
            {{"type": "buttons", "buttons": [
                {{"label": "Yes", "value": "yes"}},
                {{"label": "Long", "value": "{"x" * 300}"}},
            ]}},
            {{"type": "select", "action_id": "size", "options": [
                {{"label": "Small", "value": "s"}}, {{"label": "Large", "value": "l"}}]}},
        ]}}
    return "got " + str(len(turn.text)) + ": " + turn.text[:20]
"""


async def test_buttons_and_selects_are_block_kit_and_presses_reach_the_agent_in_the_thread(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    agents = python_agent(tmp_path, monkeypatch, "slack_button_agent", BUTTON_AGENT)
    channel = "    dm_policy: open\n    agent: scripted\n"
    config = slack_config(tmp_path, fake_slack, fake_llm, channel=channel, agents=agents)
    async with running(config) as gw:
        url = events_url(gw)
        mention = fake_slack.app_mention_event("menu")
        await fake_slack.post_event(url, mention)
        [menu] = await fake_slack.wait_posts(1, timeout=15)
        elements = [e for b in menu["blocks"] if b["type"] == "actions" for e in b["elements"]]
        yes, long, select = elements
        assert yes["value"] == "yes" and long["value"].startswith("ref:")
        assert select["type"] == "static_select"
        for element, value in ((yes, "yes"), (long, long["value"])):
            press = fake_slack.block_actions_payload(
                element["action_id"], value, message_ts=menu["ts"]
            )
            assert (await fake_slack.post_interactive(url, press))[0] == 200
        chosen = fake_slack.block_actions_payload(select["action_id"], "", message_ts=menu["ts"])
        chosen["actions"] = [
            {
                "type": "static_select",
                "action_id": select["action_id"],
                "block_id": "b",
                "selected_option": {"text": {"type": "plain_text", "text": "Large"}, "value": "l"},
                "action_ts": "1700000001.000001",
            }
        ]
        assert (await fake_slack.post_interactive(url, chosen))[0] == 200
        replies = await fake_slack.wait_posts(4, timeout=15)
        entry = await settled(gw, f"slack:C1:{mention['ts']}")
    assert {r["text"] for r in replies[1:]} == {"got 3: yes", "got 300: " + "x" * 20, "got 1: l"}
    assert {r["thread_ts"] for r in replies} == {mention["ts"]}
    assert entry.session == f"scripted:slack:C1:{mention['ts']}"


async def test_the_ack_reaction_shows_while_the_turn_runs_and_becomes_the_done_mark(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    channel = "    dm_policy: open\n    ack_reaction: ':eyes:'\n"
    async with running(slack_config(tmp_path, fake_slack, fake_llm, channel=channel)) as gw:
        event = fake_slack.message_event("hi", channel="D1")
        await fake_slack.post_event(events_url(gw), event)
        await fake_slack.wait_posts(1, timeout=15)
        await fake_slack.wait_calls("reactions.add", 2, timeout=10)
    calls = [
        (c.method, c.params["name"])
        for c in fake_slack.calls()
        if c.method.startswith("reactions.")
    ]
    assert calls == [
        ("reactions.add", "eyes"),
        ("reactions.remove", "eyes"),
        ("reactions.add", "white_check_mark"),
    ]
    assert {c.params["timestamp"] for c in fake_slack.calls("reactions.add")} == {event["ts"]}
    post = fake_slack.calls("chat.postMessage")[0]
    reacted = fake_slack.calls("reactions.add")[0]
    assert reacted.at < post.at


async def test_streaming_edits_a_draft_no_faster_than_the_interval(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    reply = " ".join(f"word{i}" for i in range(24))
    fake_llm.script(reply)
    fake_llm.stream_chunk_delay_s = 0.05
    channel = "    dm_policy: open\n    stream: {enabled: true, min_edit_interval_s: 0.3}\n"
    config = slack_config(tmp_path, fake_slack, fake_llm, channel=channel)
    config.write_text(
        config.read_text().replace("    timeout_s: 10\n", "    timeout_s: 10\n    stream: true\n")
    )
    async with running(config) as gw:
        await fake_slack.post_event(events_url(gw), fake_slack.message_event("story", channel="D1"))
        await fake_slack.wait_calls(
            "chat.update", where=lambda c: c.params.get("text") == reply, timeout=20
        )
    [draft] = fake_slack.calls("chat.postMessage")
    edits = fake_slack.calls("chat.update")
    assert draft.params["text"].endswith("…") and len(edits) >= 2
    assert_spaced([c.at for c in [draft, *edits]], 0.3)
    assert fake_slack.message("D1", fake_slack.posted()[0]["ts"])["text"] == reply  # type: ignore[index]
