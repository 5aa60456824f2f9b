"""discord.py's two "voice will NOT be supported" warnings are dropped (chatgate never joins
voice); its other warnings still come through."""

from __future__ import annotations

import logging

import pytest

from chatgate.channels.discord.client import GatewayClient
from chatgate.channels.discord.config import DiscordChannelConfig


class _Listener:
    def heard(self) -> None: ...
    def ready(self) -> None: ...
    def shard_event(self, kind: str, shard_id: int) -> None: ...
    async def on_message(self, message: object) -> None: ...
    async def on_edit(self, payload: object) -> None: ...
    async def on_reaction(self, payload: object) -> None: ...
    async def on_interaction(self, interaction: object) -> None: ...


async def test_voice_warnings_are_dropped_and_others_kept(caplog: pytest.LogCaptureFixture) -> None:
    GatewayClient(_Listener(), DiscordChannelConfig(token="a"))  # type: ignore[arg-type]  # filter added
    sdk = logging.getLogger("discord.client")
    with caplog.at_level(logging.WARNING, logger="discord.client"):
        sdk.warning("PyNaCl is not installed, voice will NOT be supported")
        sdk.warning("davey is not installed, voice will NOT be supported")
        sdk.warning("Shard ID 0 heartbeat blocked for more than 10 seconds.")
    assert [r.getMessage() for r in caplog.records] == [
        "Shard ID 0 heartbeat blocked for more than 10 seconds."
    ]
