"""Slack over Socket Mode: slack-bolt's async Socket Mode handler against the fake's /link/
socket; every envelope is acked only once it is journaled."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from tests.channels.slack.support import eventually_state, section, slack_config
from tests.channels.telegram.helpers_b import settled
from tests.fakes.llm import FakeLLM
from tests.fakes.slack import FakeSlack
from tests.gateway.test_state_unwritable import disk_full
from tests.harness import running
from tests.support.waiting import eventually


async def test_a_dm_over_the_socket_is_acked_and_answered(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    async with running(slack_config(tmp_path, fake_slack, fake_llm, mode="socket")) as gw:
        await fake_slack.wait_connected()
        event = fake_slack.message_event("over the socket", channel="D1")
        envelope = await fake_slack.push_event(event)
        await fake_slack.wait_acked(envelope.envelope_id, timeout=10)
        [post] = await fake_slack.wait_posts(1, timeout=15)
        status = section(gw)
    assert post["text"] == "echo: over the socket" and post["channel"] == "D1"
    assert status["state"] == "running" and status["mode"] == "socket"
    assert status["team"] == "Fake Team" and status["bot"] == "chatgate"
    assert "socket connected" in status["summary"]


async def test_an_envelope_that_cannot_be_journaled_is_not_acked_and_comes_back(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    async with running(slack_config(tmp_path, fake_slack, fake_llm, mode="socket")) as gw:
        await fake_slack.wait_connected()
        await disk_full(gw, True)
        text = "disk full " + "y" * 3800  # needs pages of its own
        envelope = await fake_slack.push_event(fake_slack.message_event(text, channel="D1"))
        await eventually(lambda: section(gw)["counters"]["refused"] >= 1, timeout=10)
        assert not fake_slack.acked(envelope.envelope_id)
        await disk_full(gw, False)
        await eventually(lambda: gw.pipeline.guard.current() is None, timeout=10)  # probed
        await fake_slack.redeliver_unacked()  # Slack re-sends what was never acked
        await fake_slack.wait_acked(envelope.envelope_id, timeout=10)
        posts = await fake_slack.wait_posts(1, timeout=15)
    assert posts[0]["text"].startswith("echo: disk full")
    assert [r.last_user_text for r in fake_llm.requests] == [text]


async def test_a_socket_dropped_mid_burst_reconnects_losing_and_doubling_nothing(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM, caplog: pytest.LogCaptureFixture
) -> None:
    n = 30
    async with running(slack_config(tmp_path, fake_slack, fake_llm, mode="socket")) as gw:
        await fake_slack.wait_connected()
        caplog.set_level(logging.INFO)
        events = [
            fake_slack.message_event(f"m{i}", user=f"U{i}", channel=f"D{i % 5}") for i in range(n)
        ]
        for i, event in enumerate(events):
            await fake_slack.push_event(event)
            if i == n // 2:
                fake_slack.drop_socket()  # no close frame: a network failure
        await fake_slack.wait_connected(2, timeout=15)
        await fake_slack.wait_posts(n, timeout=30)
        for event in events:
            await settled(gw, f"slack:{event['channel']}:{event['ts']}", timeout=15)
        assert await gw.pipeline.scheduler.wait_idle(10)  # every turn, and any duplicate, has run
        assert section(gw)["counters"]["hello"] >= 2
        redelivered = [e for e in fake_slack.envelopes if e.deliveries > 1]
    texts = sorted(p["text"] for p in fake_slack.posted())
    assert texts == sorted(f"echo: m{i}" for i in range(n))
    assert len(fake_llm.requests) == n
    assert redelivered, "the drop should have left envelopes unacked, redelivered on reconnect"
    # The drop is one line, not a traceback per lost ack and a warning per send (it was 11 + 12).
    sdk = [r for r in caplog.records if r.name == "slack_bolt" and r.levelno >= logging.WARNING]
    assert [r.getMessage() for r in sdk if r.exc_info] == []
    assert len(sdk) <= 2, [r.getMessage() for r in sdk]


async def test_a_refresh_disconnect_reconnects_and_keeps_serving(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    async with running(slack_config(tmp_path, fake_slack, fake_llm, mode="socket")) as gw:
        await fake_slack.wait_connected()
        await fake_slack.disconnect("refresh_requested")
        await fake_slack.wait_connected(2, timeout=15)
        await fake_slack.push_event(fake_slack.message_event("after refresh", channel="D1"))
        [post] = await fake_slack.wait_posts(1, timeout=15)
        assert section(gw)["state"] == "running"
    assert post["text"] == "echo: after refresh"


async def test_a_rejected_app_token_parks_the_channel_with_the_fix(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    async with (
        FakeSlack(app_token="xapp-1-A1-another-token") as fake,
        running(slack_config(tmp_path, fake, fake_llm, mode="socket")) as gw,
    ):
        status = await eventually_state(gw, "parked")
    assert "app-level token" in status["error"]
    assert "connections:write" in status["hint"]


async def test_a_connected_but_deaf_socket_is_restarted_by_the_watchdog(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    config = slack_config(
        tmp_path,
        fake_slack,
        fake_llm,
        mode="socket",
        gateway="  supervision: {stall_check_s: 0.2, backoff_initial_s: 0.1}\n",
        channel="    dm_policy: open\n    stale_after_s: 0.5\n",
    )
    async with running(config) as gw:
        await fake_slack.wait_connected()
        fake_slack.fail("auth.test", "fatal_error", status=500, times=2)  # deaf and unreachable
        await fake_slack.wait_connected(2, timeout=15)
        await eventually_state(gw, "running")
        await fake_slack.push_event(fake_slack.message_event("are you there?", channel="D1"))
        [post] = await fake_slack.wait_posts(1, timeout=15)
        restarts = section(gw)["restarts"]
    assert post["text"] == "echo: are you there?"
    assert restarts >= 1


async def test_a_quiet_socket_whose_probe_answers_is_left_alone(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    config = slack_config(
        tmp_path,
        fake_slack,
        fake_llm,
        mode="socket",
        gateway="  supervision: {stall_check_s: 0.2}\n",
        channel="    dm_policy: open\n    stale_after_s: 0.3\n",
    )
    async with running(config) as gw:
        await fake_slack.wait_connected()
        await fake_slack.wait_calls("auth.test", 3, timeout=10)  # probed, found alive
        assert section(gw)["restarts"] == 0
    assert len(fake_slack.all_connections) == 1


async def test_a_button_press_over_the_socket_is_acked_after_it_is_journaled(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    async with running(slack_config(tmp_path, fake_slack, fake_llm, mode="socket")) as gw:
        await fake_slack.wait_connected()
        await fake_slack.push_event(fake_slack.message_event("hello", channel="D1"))
        [answer] = await fake_slack.wait_posts(1, timeout=15)
        press = fake_slack.block_actions_payload("b0", "option two", channel="D1")
        envelope = await fake_slack.push_interactive(press)
        await fake_slack.wait_acked(envelope.envelope_id, timeout=10)
        entries = await gw.rt.journal.find("slack", sender_id="U42", limit=5)
        posts = await fake_slack.wait_posts(2, timeout=15)
    assert any(e.message.choice == "option two" for e in entries)  # journaled by the ack
    assert posts[1]["text"] == "echo: option two" and posts[1]["channel"] == "D1"
    assert answer["ts"] == press["container"]["message_ts"]


async def test_slash_commands_reach_the_gateway_commands(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    fake_llm.script("first answer", "after the reset")
    async with running(slack_config(tmp_path, fake_slack, fake_llm, mode="socket")):
        await fake_slack.wait_connected()
        await fake_slack.push_event(fake_slack.message_event("remember apples", channel="D1"))
        await fake_slack.wait_posts(1, timeout=15)
        for text in ("help", "new"):
            envelope = await fake_slack.push_slash_command("/chatgate", text, channel="D1")
            await fake_slack.wait_acked(envelope.envelope_id, timeout=10)
        posts = await fake_slack.wait_posts(3, timeout=15)
        await fake_slack.push_event(fake_slack.message_event("what did I say?", channel="D1"))
        await fake_slack.wait_posts(4, timeout=15)
    help_text = posts[1]["text"]  # names the commands as Slack lets a user type them
    assert "/chatgate new" in help_text and "/chatgate stop" in help_text
    assert "\n/new" not in help_text
    history = [m["content"] for m in fake_llm.requests[-1].messages if m["role"] != "system"]
    assert history == ["what did I say?"]  # /chatgate new started a fresh conversation
