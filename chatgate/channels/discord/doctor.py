"""`chatgate doctor` for Discord: the token logs in (users/@me), the portal switches match the
configured intents, /gateway/bot answers and the gateway URL says HELLO; prints the invite URL."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp

from chatgate.channels.base import ChannelError
from chatgate.channels.discord import errors
from chatgate.channels.discord.config import DiscordChannelConfig
from chatgate.channels.discord.net import GATEWAY_URL, build_connector
from chatgate.config.base import secret_value
from chatgate.config.findings import Finding, Level

PROBE_TIMEOUT_S = 20.0
# View Channels, Send Messages, Send Messages in Threads, Embed Links, Read Message History,
# Add Reactions: what chatgate uses, nothing more.
INVITE_PERMISSIONS = 274_877_992_000
# Intent → the application flags (full, under-100-guilds) that mean the portal switch is on.
_PORTAL_FLAGS = {
    "message_content": ("gateway_message_content", "gateway_message_content_limited"),
    "members": ("gateway_guild_members", "gateway_guild_members_limited"),
    "presences": ("gateway_presence", "gateway_presence_limited"),
}


def invite_url(application_id: int) -> str:
    return (
        f"https://discord.com/oauth2/authorize?client_id={application_id}"
        f"&scope=bot+applications.commands&permissions={INVITE_PERMISSIONS}"
    )


async def check(name: str, config: DiscordChannelConfig, offline: bool) -> list[Finding]:
    token = secret_value(config.token)
    if token is None:
        from chatgate.channels.discord.adapter import NO_TOKEN_HINT

        return [Finding(name, Level.WARN, "not configured: no bot token", NO_TOKEN_HINT)]
    if offline:
        return [Finding(name, Level.SKIP, "token set; not contacted (--offline)")]
    try:
        return await asyncio.wait_for(_probe(name, config, token), PROBE_TIMEOUT_S)
    except TimeoutError:
        return [
            Finding(
                name,
                Level.FAIL,
                f"no answer from Discord within {PROBE_TIMEOUT_S:.0f} s",
                errors.NETWORK_HINT,
            )
        ]


async def _probe(name: str, config: DiscordChannelConfig, token: str) -> list[Finding]:
    import discord
    from chatgate.channels.discord.client import intents, privileged

    client = discord.AutoShardedClient(intents=intents(config), connector=build_connector(config))
    try:
        try:
            await client.login(token)
            limits = await client.fetch_session_start_limits()
        except Exception as exc:
            error: ChannelError = errors.gateway_exit(exc, privileged(config))
            return [Finding(name, Level.FAIL, str(error), error.hint)]
        assert client.user is not None and client.application is not None
        app = client.application
        findings = [
            Finding(
                name,
                Level.OK,
                f"@{client.user.name} (id {client.user.id}), in ~{app.approximate_guild_count} "
                f"guilds, {limits.remaining}/{limits.total} session starts left today",
            )
        ]
        off = [
            i
            for i in privileged(config)
            if not any(getattr(app.flags, f) for f in _PORTAL_FLAGS[i])
        ]
        if off:
            findings.append(
                Finding(
                    name,
                    Level.FAIL,
                    f"intents off in the portal: {', '.join(off)}",
                    errors.intents_hint(off),
                )
            )
        findings.append(await _gateway(name, config))
        findings.append(Finding(name, Level.OK, f"invite: {invite_url(app.id)}"))
        return findings
    finally:
        await client.close()


async def _gateway(name: str, config: DiscordChannelConfig) -> Finding:
    """Open the gateway WebSocket and wait for its HELLO (op 10), then leave."""
    url = f"{GATEWAY_URL}?v=10&encoding=json"
    try:
        async with (
            aiohttp.ClientSession(connector=build_connector(config)) as http,
            http.ws_connect(url) as ws,
        ):
            message = await ws.receive(timeout=10)
            hello: Any = json.loads(message.data) if message.type is aiohttp.WSMsgType.TEXT else {}
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        return Finding(
            name,
            Level.FAIL,
            f"gateway {GATEWAY_URL} unreachable: {type(exc).__name__}",
            errors.NETWORK_HINT,
        )
    if not isinstance(hello, dict) or hello.get("op") != 10:
        return Finding(
            name, Level.FAIL, f"gateway {GATEWAY_URL} did not say HELLO", errors.NETWORK_HINT
        )
    return Finding(name, Level.OK, f"gateway {GATEWAY_URL} answered HELLO")
