"""A channel from another package: one entry point, no line of chatgate changed.

The in-memory test channel is installed as a `chatgate.channels` plugin whose entry point names
its descriptor; config validation, the gateway, hot reload and doctor all find it there.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from chatgate.channels.registry import ChannelRegistry
from chatgate.cli.doctor_cmd import diagnose
from chatgate.config import ConfigError, load_config
from chatgate.config.findings import Level
from chatgate.gateway.builder import GatewayBuilder
from tests.fakes.memory_channel import DESCRIPTOR, MemoryChannel, MemoryChannelConfig
from tests.harness import write_config


def install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    dist = site / "chatgate_memory_channel-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: chatgate-memory-channel\nVersion: 1.0\n"
    )
    (dist / "entry_points.txt").write_text(
        "[chatgate.channels]\nmemory = tests.fakes.memory_channel:DESCRIPTOR\n"
    )
    monkeypatch.syspath_prepend(str(site))


def config(tmp_path: Path, channel: str = "{dm_policy: open}") -> Path:
    return write_config(
        tmp_path,
        textwrap.dedent(f"""\
        agents:
          default: {{backend: echo}}
        channels:
          memory: {channel}
        """),
    )


def test_the_registry_finds_the_plugin_descriptor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(tmp_path, monkeypatch)
    registry = ChannelRegistry()
    assert "memory" in registry.names()
    assert registry.descriptor("memory") is DESCRIPTOR
    assert registry.get("memory") is MemoryChannel
    assert registry.config_models()["memory"] is MemoryChannelConfig


def test_config_validates_the_plugin_section_with_its_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(tmp_path, monkeypatch)
    loaded = load_config(config(tmp_path), env={}, catalog=ChannelRegistry())
    section = loaded.channels["memory"]
    assert section.platform == "memory" and isinstance(section.config, MemoryChannelConfig)
    with pytest.raises(ConfigError) as info:
        load_config(
            config(tmp_path, "{dm_policy: open, max_text_lenght: 10}"),
            env={},
            catalog=ChannelRegistry(),
        )
    assert "channels.memory.max_text_lenght" in str(info.value)
    assert "gateway.yaml:" in str(info.value)


async def test_the_gateway_runs_reloads_and_checks_the_plugin_channel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(tmp_path, monkeypatch)
    path = config(tmp_path)
    gateway = GatewayBuilder(load_config(path, env={}, catalog=ChannelRegistry())).env({}).build()
    await gateway.start()
    try:
        channel = gateway.channels.adapters["memory"]
        assert isinstance(channel, MemoryChannel)
        result = await (await channel.inject("hello plugin")).result
        assert result.reply == "hello plugin" and result.delivery == "sent"

        path.write_text(path.read_text().replace("dm_policy: open", "dm_policy: disabled"))
        applied = await gateway.reload()  # a hot key: applied live, the adapter kept
        assert applied["reconfigured_channels"] == ["memory"]
        assert gateway.channels.adapters["memory"] is channel

        path.write_text(path.read_text().replace("memory: {", "memory: {max_text_length: 100, "))
        applied = await gateway.reload()  # not a hot key for this channel: rebuilt alone
        assert applied["restarted_channels"] == ["memory"]
        assert gateway.channels.adapters["memory"] is not channel
    finally:
        await gateway.stop()
    findings = await diagnose(path, offline=True)
    [plugin] = [f for f in findings if f.check == "memory"]
    assert plugin.level is Level.SKIP and "no doctor check" in plugin.detail
