"""`chatgate doctor` for Telegram: the token is set and getMe answers with the bot's identity."""

from __future__ import annotations

import asyncio
import dataclasses

from chatgate.channels.base import ChannelError, NotConfigured
from chatgate.channels.telegram.config import TelegramChannelConfig
from chatgate.config.findings import Finding, Level

PROBE_TIMEOUT_S = 20.0


async def check(name: str, config: TelegramChannelConfig, offline: bool) -> list[Finding]:
    findings = await _check(name, config, offline)
    key = f"channels.{name}.token"
    return [dataclasses.replace(f, check=f"{name}.token", key=key) for f in findings]


async def _check(name: str, config: TelegramChannelConfig, offline: bool) -> list[Finding]:
    from chatgate.channels.telegram.adapter import connect_bot, make_bot

    try:
        if offline:
            make_bot(config)  # the token is present
            return [Finding(name, Level.SKIP, "token set; not contacted (--offline)")]
        bot = await asyncio.wait_for(connect_bot(config), PROBE_TIMEOUT_S)
    except NotConfigured as exc:
        return [Finding(name, Level.WARN, f"not configured: {exc}", exc.hint)]
    except ChannelError as exc:
        return [Finding(name, Level.FAIL, str(exc), exc.hint)]
    except TimeoutError:
        return [
            Finding(
                name,
                Level.FAIL,
                f"no answer from {config.api_base} within {PROBE_TIMEOUT_S:.0f} s",
                f"check network access to {config.api_base}",
            )
        ]
    try:
        me = bot.bot
    finally:
        await bot.shutdown()
    if config.mode == "webhook" and not config.webhook.public_url:
        return [
            Finding(
                name,
                Level.FAIL,
                f"@{me.username}: webhook mode needs a public URL",
                f"set channels.{name}.webhook.public_url (HTTPS, proxied to chatgate's port)",
            )
        ]
    return [Finding(name, Level.OK, f"@{me.username} (id {me.id}), {config.mode} mode")]
