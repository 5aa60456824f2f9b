"""`channels.discord` validation: defaults, Discord's names, and errors with key path and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatgate.channels.discord import DESCRIPTOR
from chatgate.channels.discord.config import DiscordChannelConfig, parse_address
from chatgate.config import EX_CONFIG
from chatgate.config.redact import redacted_dict
from tests.config.support import assert_issue, load, load_error
from tests.daemon import run_cli

ERRORS = [
    ("group_policy: mentions", "channels.discord.group_policy", "'mentions' is not one of"),
    ("shards: 0", "channels.discord.shards", "shards must be auto or between 1 and 1024"),
    ("shards: many", "channels.discord.shards", "auto"),
    ("intents: {message_content: maybe}", "channels.discord.intents.message_content", "boolean"),
    ("intents: {voice: true}", "channels.discord.intents.voice", "unknown key"),
    ("allowed_channels: 123", "channels.discord.allowed_channels", "expected a list"),
    ("allowed_guilds: 5000", "channels.discord.allowed_guilds", "expected a list"),
    ('resolve: {"discord.com": "127.0.0.1:99999"}', "channels.discord.resolve", "out of range"),
    ('resolve: {"not a host": "127.0.0.1"}', "channels.discord.resolve", "not a host name"),
    ("ca: hello", "channels.discord.ca", "expected PEM certificates"),
    ("max_lines: -1", "channels.discord.max_lines", "greater than or equal to 0"),
]


@pytest.mark.parametrize(("line", "path", "fragment"), ERRORS)
def test_bad_values_name_the_key_and_line(
    tmp_path: Path, line: str, path: str, fragment: str
) -> None:
    error = load_error(tmp_path, f"channels:\n  discord:\n    token: t\n    {line}\n")
    assert_issue(error, path, 4, fragment)


def test_defaults_match_the_docs(tmp_path: Path) -> None:
    section = load(tmp_path, "channels:\n  discord:\n    token: t\n").channels["discord"].config
    assert isinstance(section, DiscordChannelConfig)
    assert section.intents.message_content and not section.intents.members
    assert (section.dm_policy, section.group_policy, section.shards) == (
        "pairing",
        "mention_only",
        "auto",
    )
    assert section.resolve == {} and section.ca is None  # system DNS and system CAs


def test_discord_names_map_onto_the_shared_admission_keys(tmp_path: Path) -> None:
    loaded = load(
        tmp_path,
        """
        channels:
          discord:
            token: t
            allowed_channels: [4000, "4001"]
            allowed_guilds: [5000]
            shards: 2
        """,
    )
    section = loaded.channels["discord"]
    assert section.chat is not None and section.chat.allowed_chats == ["4000", "4001"]
    assert section.config.allowed_guilds == ["5000"]
    shown = redacted_dict(loaded)["channels"]["discord"]
    assert shown["allowed_channels"] == ["4000", "4001"] and shown["token"] == "**********"


def test_token_file_and_ca_file_are_read_relative_to_the_config(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("file-token\n")
    pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
    (tmp_path / "ca.pem").write_text(pem)
    loaded = load(
        tmp_path,
        """
        channels:
          discord:
            token_file: token
            ca_file: ca.pem
            resolve: {Discord.com: "127.0.0.1:8443", gateway.discord.gg: "[::1]"}
        """,
    )
    config = loaded.channels["discord"].config
    assert config.token.get_secret_value() == "file-token"
    assert config.ca == pem.strip()
    assert config.resolve == {"discord.com": "127.0.0.1:8443", "gateway.discord.gg": "[::1]"}
    assert "file-token" in loaded.secrets


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("127.0.0.1:8443", ("127.0.0.1", 8443)),
        ("relay.internal", ("relay.internal", 443)),
        ("[::1]:9", ("::1", 9)),
    ],
)
def test_addresses(text: str, expected: tuple[str, int]) -> None:
    assert parse_address(text) == expected


def test_hot_keys_apply_live_and_connection_keys_rebuild() -> None:
    old = DiscordChannelConfig(token="a")
    new = DiscordChannelConfig(
        token="a", allowed_guilds=["1"], group_policy="respond_all", shards=2
    )
    live, rebuild = DESCRIPTOR.hot_change(old, new)
    assert sorted(live) == ["allowed_guilds", "group_policy"] and rebuild == ["shards"]


def test_descriptor_import_does_not_import_discord() -> None:
    import subprocess
    import sys

    code = "import sys, chatgate.channels.discord; print('discord' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


async def test_config_check_exits_78_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "gateway.yaml"
    path.write_text(
        "config_version: 1\nchannels:\n  discord:\n    token: t\n    dm_policy: everyone\n"
    )
    code, out, err = await run_cli("config", "check", "--config", str(path))
    assert code == EX_CONFIG
    assert "channels.discord.dm_policy: 'everyone' is not one of" in out + err
    assert "(gateway.yaml:5)" in out + err
