"""`chatgate doctor` for web chat: the sign-in is configured and the page is packaged."""

from __future__ import annotations

import dataclasses

from chatgate.channels.webchat.config import WebChatChannelConfig
from chatgate.config.base import secret_value
from chatgate.config.findings import Finding, Level

PAGE_FILES = ("index.html", "chat.js", "chat.css")


async def check(name: str, config: WebChatChannelConfig, offline: bool) -> list[Finding]:
    return [dataclasses.replace(f, check=f"{name}.signin") for f in await _check(name, config)]


async def _check(name: str, config: WebChatChannelConfig) -> list[Finding]:
    from chatgate.channels.webchat.adapter import assets

    missing = [f for f in PAGE_FILES if f not in assets().names()]
    if missing:
        return [
            Finding(
                name,
                Level.FAIL,
                f"the page is not packaged (missing {', '.join(missing)})",
                "reinstall chatgate; the static files ship inside the package",
            )
        ]
    if config.auth == "token" and secret_value(config.token) is None:
        return [
            Finding(
                name,
                Level.WARN,
                f"not configured: {config.path} needs a token to sign in",
                f"set channels.{name}.token (or token_file), or auth: open on loopback",
            )
        ]
    how = "open (loopback)" if config.auth == "open" else "token"
    return [Finding(name, Level.OK, f"{config.path}, sign-in: {how}, dm_policy {config.dm_policy}")]
