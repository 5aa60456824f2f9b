"""What a Slack user and operator see when Slack refuses a send (real slack_sdk ↔ fake)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import aiohttp
import pytest

from tests.channels.slack.support import events_url, eventually_state, section, slack_config
from tests.channels.telegram.helpers_b import settled
from tests.channels.telegram.support import api_base
from tests.daemon import run_cli
from tests.fakes.llm import FakeLLM
from tests.fakes.slack import APP_TOKEN, BOT_TOKEN, SIGNING_SECRET, FakeSlack
from tests.fakes.telegram import TOKEN as TG_TOKEN
from tests.fakes.telegram import FakeTelegram
from tests.harness import running, url
from tests.support.waiting import eventually


async def test_a_429_is_waited_out_and_the_reply_delivered_once(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    fake_slack.rate_limit("chat.postMessage", retry_after=1)
    async with running(slack_config(tmp_path, fake_slack, fake_llm)) as gw:
        await fake_slack.post_event(events_url(gw), fake_slack.message_event("hi", channel="D1"))
        [post] = await fake_slack.wait_posts(1, timeout=15)
    first, second = fake_slack.calls("chat.postMessage")
    assert first.status == 429 and second.status == 200
    assert second.at - first.at >= 1.0 - 0.05  # Slack's Retry-After was honoured
    assert post["text"] == "echo: hi"


@pytest.mark.parametrize(
    ("error", "hint"),
    [("channel_not_found", "deleted"), ("not_in_channel", "/invite"), ("is_archived", "archived")],
)
async def test_a_dead_channel_goes_to_the_dlq_once_with_its_fix_in_status(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM, error: str, hint: str
) -> None:
    fake_slack.fail("chat.postMessage", error, times=10)
    async with running(slack_config(tmp_path, fake_slack, fake_llm)) as gw:
        event = fake_slack.app_mention_event("anyone?")
        await fake_slack.post_event(events_url(gw), event)
        entry = await settled(gw, f"slack:C1:{event['ts']}", timeout=15)
        dlq = await gw.rt.dead_letters.list()
        status = section(gw)
        assert await gw.pipeline.scheduler.wait_idle(10)  # every turn, and any duplicate, has run
    assert len(fake_slack.calls("chat.postMessage")) == 1  # no retries against a dead target
    assert [d.kind for d in dlq] == [
        ("target_not_found" if error == "channel_not_found" else "forbidden")
    ]
    assert entry.state == "done"
    assert error in status["last_error"]["error"] and hint in status["last_error"]["hint"]
    assert status["state"] == "running"


async def test_a_5xx_is_retried_and_a_msg_too_long_is_split(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    fake_slack.fail("chat.postMessage", "fatal_error", status=500)
    fake_slack.fail("chat.postMessage", "msg_too_long")
    fake_llm.script("first paragraph here.\n\nsecond paragraph there.")
    async with running(slack_config(tmp_path, fake_slack, fake_llm)) as gw:
        await fake_slack.post_event(events_url(gw), fake_slack.message_event("hi", channel="D1"))
        posts = await fake_slack.wait_posts(2, timeout=20)
    statuses = [c.status for c in fake_slack.calls("chat.postMessage")]
    assert statuses[:2] == [500, 200] and len(statuses) == 4  # 500, too long, two halves
    assert [p["text"] for p in posts] == ["first paragraph here.", "second paragraph there."]


WEBHOOK = """  webhook:
    routes:
      ping:
        path: /hooks/ping
        signature: none
        prompt: "{payload.text}"
"""


async def test_a_revoked_token_parks_slack_while_webhook_and_telegram_keep_serving(
    tmp_path: Path,
    fake_slack: FakeSlack,
    fake_llm: FakeLLM,
    fake_tg: FakeTelegram,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)  # slack_sdk logs every request at debug
    telegram = (
        f'  telegram:\n    token: "{TG_TOKEN}"\n    api_base: {api_base(fake_tg)}\n'
        "    dm_policy: open\n    poll_timeout_s: 1\n"
    )
    config = slack_config(tmp_path, fake_slack, fake_llm, extra_channels=telegram + WEBHOOK)
    async with running(config) as gw, aiohttp.ClientSession() as http:
        fake_slack.revoke_token(error="token_revoked")
        await fake_slack.post_event(events_url(gw), fake_slack.message_event("hi", channel="D1"))
        parked = await eventually_state(gw, "parked")
        async with http.post(url(gw, "/hooks/ping"), json={"text": "still there?"}) as resp:
            assert (await resp.json())["reply"] == "echo: still there?"
        fake_tg.dm(42, "and telegram?")
        [tg_reply] = await fake_tg.wait_for("sendMessage", timeout=30)
        dlq = await eventually(gw.rt.dead_letters.list, timeout=10)
        code, out, err = await run_cli("status", "--config", str(config), "--url", url(gw, ""))
    assert "token_revoked" in parked["error"] and "reinstall" in parked["hint"]
    assert tg_reply.params["text"] == "echo: and telegram?"
    assert [d.kind for d in dlq] == ["auth_fatal"]
    assert code == 0 and "slack" in out and "parked" in out and "fix: Slack rejected" in out
    shown = json.dumps(parked) + out + err + caplog.text
    assert BOT_TOKEN not in shown and APP_TOKEN not in shown and SIGNING_SECRET not in shown
