"""The Slack app manifest in the manual asks for exactly what the adapter uses."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

README = Path(__file__).resolve().parents[3] / "docs" / "channels" / "slack.md"


def manifest() -> dict[str, object]:
    [block] = re.findall(r"```yaml manifest\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    data = yaml.safe_load(block)
    assert isinstance(data, dict)
    return data


def test_the_manifest_subscribes_to_what_the_adapter_handles() -> None:
    data = manifest()
    scopes = set(data["oauth_config"]["scopes"]["bot"])  # type: ignore[index]
    events = set(data["settings"]["event_subscriptions"]["bot_events"])  # type: ignore[index]
    # chat.postMessage/update, reactions.add/remove, and reading what the bot is sent
    assert {"chat:write", "reactions:write", "app_mentions:read", "im:history"} <= scopes
    assert {"channels:history", "groups:history", "mpim:history", "commands"} <= scopes
    assert "files:read" in scopes  # url_private downloads of the files users share
    assert {"reactions:read", "users:read"} <= scopes  # reactions as input; users' locale
    commands = [c["command"] for c in data["features"]["slash_commands"]]  # type: ignore[index]
    assert commands == ["/chatgate"]  # SlackChannelConfig.slash_command's default
    assert {"app_mention", "message.im", "message.channels", "reaction_added"} <= events
    settings = data["settings"]
    assert settings["interactivity"]["is_enabled"] is True  # type: ignore[index]
    assert settings["socket_mode_enabled"] is True  # type: ignore[index]
