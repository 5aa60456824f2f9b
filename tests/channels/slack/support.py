"""Gateway + fake Slack + fake model wiring for the Slack end-to-end tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chatgate.gateway.app import Gateway
from tests.fakes.llm import FakeLLM
from tests.fakes.slack import APP_TOKEN, BOT_TOKEN, SIGNING_SECRET, FakeSlack
from tests.harness import (
    channel_status,
    eventually_channel_state,
    fake_model_config,
    url,
)

EVENTS_PATH = "/slack/events"


def slack_config(
    tmp_path: Path,
    slack: FakeSlack,
    llm: FakeLLM,
    *,
    mode: str = "events",
    channel: str = "    dm_policy: open\n",
    gateway: str = "",
    extra_channels: str = "",
    agents: str = "",
) -> Path:
    return fake_model_config(
        tmp_path,
        llm,
        f"""  slack:
    bot_token: "{BOT_TOKEN}"
    app_token: "{APP_TOKEN}"
    signing_secret: "{SIGNING_SECRET}"
    mode: {mode}
    api_base: {slack.api_url}
    ping_interval_s: 0.3
    request_timeout_s: 5
{channel}{extra_channels}""",
        head=gateway,
        agents=agents,
        api_key="sk-slack-test",
    )


def events_url(gw: Gateway) -> str:
    return url(gw, EVENTS_PATH)


def section(gw: Gateway, name: str = "slack") -> dict[str, Any]:
    return channel_status(gw, name)


async def eventually_state(
    gw: Gateway, state: str, name: str = "slack", timeout: float = 20
) -> dict[str, Any]:
    return await eventually_channel_state(gw, name, state, timeout)
