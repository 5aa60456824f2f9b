"""`chatgate doctor` for Discord against the fake: login, portal intents, gateway HELLO, invite."""

from __future__ import annotations

from pathlib import Path

from chatgate.channels.discord.doctor import INVITE_PERMISSIONS, check
from chatgate.config.findings import Level
from tests.channels.discord.support import discord_config
from tests.fakes.discord_lite import APP_ID, TOKEN, FakeDiscord
from tests.fakes.llm import FakeLLM
from tests.harness import load


def section(tmp_path: Path, fake: FakeDiscord, llm: FakeLLM, extra: str = "") -> object:
    return load(discord_config(tmp_path, fake, llm, extra=extra)).channels["discord"].config


async def test_doctor_logs_in_checks_the_gateway_and_prints_the_invite(
    tmp_path: Path, fake_discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    findings = await check("discord", section(tmp_path, fake_discord, fake_llm), False)
    assert [f.level for f in findings] == [Level.OK] * 3
    assert findings[0].detail.startswith(
        "@fakebot (id 2000), in ~1 guilds, 999/1000 session starts"
    )
    assert findings[1].detail == "gateway wss://gateway.discord.gg/ answered HELLO"
    assert f"client_id={APP_ID}" in findings[2].detail
    assert f"permissions={INVITE_PERMISSIONS}" in findings[2].detail
    routes = [c.route for c in fake_discord.calls]
    assert routes[:3] == ["GET /users/@me", "GET /oauth2/applications/@me", "GET /gateway/bot"]


async def test_doctor_names_the_portal_switch_that_is_off(
    tmp_path: Path, fake_discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    fake_discord.app_flags = 0
    extra = "    intents: {message_content: true, members: true}\n"
    findings = await check("discord", section(tmp_path, fake_discord, fake_llm, extra), False)
    [failed] = [f for f in findings if f.level is Level.FAIL]
    assert failed.detail == "intents off in the portal: message_content, members"
    assert (
        failed.fix is not None and "Message Content Intent and Server Members Intent" in failed.fix
    )


async def test_doctor_reports_a_rejected_token_without_showing_it(
    tmp_path: Path, fake_discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    config = section(tmp_path, fake_discord, fake_llm)
    fake_discord.token = "another"
    [finding] = await check("discord", config, False)
    assert finding.level is Level.FAIL and finding.fix is not None and "Reset Token" in finding.fix
    assert TOKEN not in finding.detail + finding.fix


async def test_doctor_offline_and_unconfigured(
    tmp_path: Path, fake_discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    [offline] = await check("discord", section(tmp_path, fake_discord, fake_llm), True)
    assert offline.level is Level.SKIP and fake_discord.calls == []
    config = load(discord_config(tmp_path, fake_discord, fake_llm)).channels["discord"].config
    [missing] = await check("discord", config.model_copy(update={"token": None}), False)
    assert missing.level is Level.WARN and "Reset Token" in (missing.fix or "")
