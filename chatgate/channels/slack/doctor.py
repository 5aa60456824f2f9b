"""`chatgate doctor` for Slack: `auth.test` with the bot token and, in Socket Mode,
`apps.connections.open` with the app-level token (the same calls the adapter makes to start)."""

from __future__ import annotations

import asyncio
from typing import Any

from chatgate.channels.slack import errors
from chatgate.channels.slack.config import SlackChannelConfig
from chatgate.config.base import secret_value
from chatgate.config.findings import Finding, Level

PROBE_TIMEOUT_S = 20.0


async def check(name: str, config: SlackChannelConfig, offline: bool) -> list[Finding]:
    token = secret_value(config.bot_token)
    check_id, key = f"{name}.token", f"channels.{name}.bot_token"
    if token is None:
        from chatgate.channels.slack.adapter import NO_TOKEN_HINT

        return [Finding(check_id, Level.WARN, "not configured: no bot token", NO_TOKEN_HINT, key)]
    if offline:
        return [Finding(check_id, Level.SKIP, "token set; not contacted (--offline)", key=key)]
    try:
        return await asyncio.wait_for(_probe(name, config, token), PROBE_TIMEOUT_S)
    except TimeoutError:
        return [
            Finding(
                check_id,
                Level.FAIL,
                f"no answer from {config.api_base} within {PROBE_TIMEOUT_S:.0f} s",
                errors.NETWORK_HINT,
                key,
            )
        ]


async def _probe(name: str, config: SlackChannelConfig, token: str) -> list[Finding]:
    import aiohttp
    from slack_sdk.web.async_client import AsyncWebClient

    async with aiohttp.ClientSession() as http:
        client = AsyncWebClient(token=token, base_url=config.api_base, session=http)
        findings = [await _auth(name, client)]
        if config.mode == "socket" and findings[0].level is Level.OK:
            findings.append(await _socket(name, client, config))
        elif config.mode == "events":
            findings.append(
                Finding(
                    f"{name}.events",
                    Level.OK,
                    f"Events API on {config.events_path}: set the app's Request URL (Event "
                    f"Subscriptions and Interactivity) to https://<your host>{config.events_path}",
                    key=f"channels.{name}.events_path",
                )
            )
        return findings


async def _auth(name: str, client: Any) -> Finding:
    check_id, key = f"{name}.token", f"channels.{name}.bot_token"
    try:
        auth = await client.auth_test()
    except Exception as exc:
        error = errors.start_error(exc)
        return Finding(check_id, Level.FAIL, str(error), error.hint, key)
    return Finding(
        check_id,
        Level.OK,
        f"@{auth.get('user')} (user {auth.get('user_id')}, bot {auth.get('bot_id')}) in "
        f"{auth.get('team')} ({auth.get('team_id')})",
        key=key,
    )


async def _socket(name: str, client: Any, config: SlackChannelConfig) -> Finding:
    check_id, key = f"{name}.app_token", f"channels.{name}.app_token"
    try:
        await client.apps_connections_open(app_token=secret_value(config.app_token))
    except Exception as exc:
        if errors.is_error(exc, *errors.AUTH_ERRORS):
            return Finding(
                check_id,
                Level.FAIL,
                "Slack rejected the app-level token",
                errors.APP_TOKEN_HINT,
                key,
            )
        error = errors.start_error(exc)
        return Finding(check_id, Level.FAIL, f"Socket Mode: {error}", error.hint, key)
    return Finding(check_id, Level.OK, "Socket Mode: apps.connections.open answered", key=key)
