"""`chatgate doctor` for Slack against the fake: auth.test, and apps.connections.open in socket
mode; a refused token is named with its fix and never shown."""

from __future__ import annotations

from pathlib import Path

from chatgate.channels.slack.config import SlackChannelConfig
from chatgate.channels.slack.doctor import check
from chatgate.config.findings import Level
from tests.channels.slack.support import slack_config
from tests.fakes.llm import FakeLLM
from tests.fakes.slack import APP_TOKEN, BOT_TOKEN, FakeSlack
from tests.harness import load


def section(tmp_path: Path, fake: FakeSlack, llm: FakeLLM, mode: str) -> SlackChannelConfig:
    config = load(slack_config(tmp_path, fake, llm, mode=mode)).channels["slack"].config
    assert isinstance(config, SlackChannelConfig)
    return config


async def test_doctor_checks_both_tokens_in_socket_mode(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    findings = await check("slack", section(tmp_path, fake_slack, fake_llm, "socket"), False)
    assert [(f.check, f.level) for f in findings] == [
        ("slack.token", Level.OK),
        ("slack.app_token", Level.OK),
    ]
    assert findings[0].detail == "@chatgate (user UBOT, bot BBOT) in Fake Team (T1)"
    assert [c.method for c in fake_slack.calls()] == ["auth.test", "apps.connections.open"]


async def test_doctor_in_events_mode_names_the_request_url(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    findings = await check("slack", section(tmp_path, fake_slack, fake_llm, "events"), False)
    assert [f.level for f in findings] == [Level.OK, Level.OK]
    assert "https://<your host>/slack/events" in findings[1].detail


async def test_doctor_reports_refused_tokens_with_the_fix_and_without_the_token(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    config = section(tmp_path, fake_slack, fake_llm, "socket")
    fake_slack.app_token = "xapp-1-A1-another"
    token, app = await check("slack", config, False)
    assert token.level is Level.OK and app.level is Level.FAIL
    assert app.fix is not None and "connections:write" in app.fix
    fake_slack.revoke_token(error="invalid_auth")
    [refused] = await check("slack", config, False)
    assert refused.level is Level.FAIL and refused.key == "channels.slack.bot_token"
    assert refused.fix is not None and "OAuth & Permissions" in refused.fix
    for finding in (app, refused):
        assert BOT_TOKEN not in f"{finding}" and APP_TOKEN not in f"{finding}"


async def test_doctor_offline_and_unconfigured(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    config = section(tmp_path, fake_slack, fake_llm, "socket")
    [offline] = await check("slack", config, True)
    assert offline.level is Level.SKIP and fake_slack.calls() == []
    [missing] = await check("slack", config.model_copy(update={"bot_token": None}), False)
    assert missing.level is Level.WARN and "xoxb-" in (missing.fix or "")


async def test_chatgate_doctor_reports_slack_with_stable_ids(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: FakeLLM
) -> None:
    import json

    from tests.daemon import run_cli

    config = slack_config(tmp_path, fake_slack, fake_llm, mode="socket")
    code, out, err = await run_cli("doctor", "--json", "--config", str(config))
    checks = {c["id"]: c for c in json.loads(out)["checks"]}
    assert checks["slack.token"]["severity"] == "ok"
    assert checks["slack.app_token"]["severity"] == "ok"
    assert checks["slack.token"]["key"] == "channels.slack.bot_token"
    assert BOT_TOKEN not in out + err and APP_TOKEN not in out + err
    assert code == 0, err
