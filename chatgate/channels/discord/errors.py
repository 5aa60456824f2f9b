"""Map discord.py failures to SendErrorKind (sends) and to ChannelErrors (the gateway's exit).

Send errors: 429 → rate_limited with Discord's wait; 403 (50013 Missing Permissions, 50001
Missing Access, 50007 cannot DM the user) → forbidden; 404 (10003 Unknown Channel, 10008 Unknown
Message, 10013 Unknown User) → target_not_found; 401 → auth_fatal; 5xx, timeouts and dropped
connections → transient; other 4xx → invalid_request. Gateway close codes 4004 and 4010–4014
cannot be fixed by reconnecting: they park the channel with a hint naming the portal setting.
"""

from __future__ import annotations

from dataclasses import dataclass

import aiohttp

import discord
from chatgate.channels.base import ChannelError
from chatgate.model.messages import SendResult
from chatgate.model.reasons import SendErrorKind

PORTAL = "https://discord.com/developers/applications"
REJECTED_TOKEN = "Discord rejected the bot token (401 Unauthorized)"
TOKEN_HINT = (
    f"the bot token was rejected (reset or revoked?): in the Developer Portal ({PORTAL}) open your "
    "application → Bot → Reset Token, and put the new token in channels.discord.token"
)
INTENTS_HINT = (
    f"Discord refused the privileged intents ({{intents}}): in the Developer Portal ({PORTAL}) open "
    "your application → Bot → Privileged Gateway Intents and switch on {switches}, or turn them off "
    "under channels.discord.intents (without message_content the bot only reads DMs and mentions)"
)
NETWORK_HINT = "check network access to discord.com and gateway.discord.gg (443/tcp)"
SWITCHES = {
    "message_content": "Message Content Intent",
    "members": "Server Members Intent",
    "presences": "Presence Intent",
}
TARGET_GONE_CODES = frozenset({10003, 10008, 10013})
FORBIDDEN_CODES = frozenset({50001, 50007, 50013})


@dataclass(frozen=True)
class CloseCode:
    """A gateway close code that reconnecting cannot fix."""

    what: str
    hint: str
    kind: SendErrorKind = SendErrorKind.INVALID_REQUEST


FATAL_CLOSE_CODES: dict[int, CloseCode] = {
    4004: CloseCode("authentication failed (close 4004)", TOKEN_HINT, SendErrorKind.AUTH_FATAL),
    4010: CloseCode(
        "invalid shard (close 4010)", "set channels.discord.shards to auto or to a count ≥ 1"
    ),
    4011: CloseCode(
        "sharding required (close 4011)",
        "the bot is in too many guilds for one shard: set channels.discord.shards: auto",
    ),
    4012: CloseCode(
        "invalid gateway API version (close 4012)", "upgrade chatgate (it ships discord.py)"
    ),
    4013: CloseCode(
        "invalid intents (close 4013)", "check channels.discord.intents against the docs"
    ),
}


def intents_hint(privileged: list[str]) -> str:
    names = privileged or ["message_content"]
    switches = " and ".join(SWITCHES.get(n, n) for n in names)
    return INTENTS_HINT.format(intents=", ".join(names), switches=switches)


def gateway_exit(exc: BaseException, privileged: list[str]) -> ChannelError:
    """Why the gateway connection ended, as the supervisor needs it (fatal ones park)."""
    if isinstance(exc, ChannelError):
        return exc
    if isinstance(exc, discord.PrivilegedIntentsRequired) or (
        isinstance(exc, discord.ConnectionClosed) and exc.code == 4014
    ):
        return ChannelError(
            "disallowed privileged intents (close 4014)", fatal=True, hint=intents_hint(privileged)
        )
    if isinstance(exc, discord.LoginFailure):
        return ChannelError(REJECTED_TOKEN, kind=SendErrorKind.AUTH_FATAL, hint=TOKEN_HINT)
    if isinstance(exc, discord.ConnectionClosed):
        fatal = FATAL_CLOSE_CODES.get(exc.code)
        if fatal is not None:
            return ChannelError(
                f"gateway {fatal.what}", kind=fatal.kind, fatal=True, hint=fatal.hint
            )
        return ChannelError(f"gateway closed with {exc.code}", kind=SendErrorKind.TRANSIENT)
    if isinstance(exc, discord.HTTPException) and exc.status == 401:
        return ChannelError(REJECTED_TOKEN, kind=SendErrorKind.AUTH_FATAL, hint=TOKEN_HINT)
    if isinstance(exc, discord.HTTPException | discord.GatewayNotFound):
        return ChannelError(
            f"Discord error: {exc}", kind=SendErrorKind.TRANSIENT, hint=NETWORK_HINT
        )
    if isinstance(exc, aiohttp.ClientError | OSError | TimeoutError):
        return ChannelError(
            f"Discord is unreachable: {type(exc).__name__}",
            kind=SendErrorKind.TRANSIENT,
            hint=NETWORK_HINT,
        )
    return ChannelError(f"{type(exc).__name__}: {exc}", kind=SendErrorKind.TRANSIENT)


def retry_after_s(exc: discord.HTTPException) -> float | None:
    """Discord's wait for a 429 that reached us (Cloudflare, or over max_ratelimit_timeout)."""
    headers = getattr(exc.response, "headers", None) or {}
    for name in ("Retry-After", "X-RateLimit-Reset-After"):
        try:
            return float(headers[name])
        except (KeyError, TypeError, ValueError):
            continue
    return None


def classify(exc: BaseException) -> SendResult:
    """One SendResult per native failure (subclasses are checked before their parents)."""
    name = type(exc).__name__
    if isinstance(exc, discord.RateLimited):
        return SendResult.failed(SendErrorKind.RATE_LIMITED, name, retry_after_s=exc.retry_after)
    if isinstance(exc, discord.HTTPException):
        return SendResult.failed(
            _http_kind(exc),
            _describe(exc),
            retry_after_s=retry_after_s(exc) if exc.status == 429 else None,
        )
    if isinstance(exc, discord.LoginFailure):
        return SendResult.failed(SendErrorKind.AUTH_FATAL, "the bot token was rejected")
    if isinstance(exc, TimeoutError):
        return SendResult.timeout(name)
    if isinstance(exc, discord.ConnectionClosed | aiohttp.ClientError | OSError):
        return SendResult.failed(SendErrorKind.TRANSIENT, name)
    return SendResult.failed(SendErrorKind.UNKNOWN, name)


def _http_kind(exc: discord.HTTPException) -> SendErrorKind:
    status, code = exc.status, exc.code
    if status == 429:
        return SendErrorKind.RATE_LIMITED
    if status == 401:
        return SendErrorKind.AUTH_FATAL
    if code in FORBIDDEN_CODES or status == 403:
        return SendErrorKind.FORBIDDEN
    if code in TARGET_GONE_CODES or status == 404:
        return SendErrorKind.TARGET_NOT_FOUND
    if status >= 500 or status == 408:
        return SendErrorKind.TRANSIENT
    return SendErrorKind.INVALID_REQUEST


def _describe(exc: discord.HTTPException) -> str:
    """ "403 (50013): Missing Permissions" — status, Discord's code and its first line."""
    first = exc.text.split("\n", 1)[0] if exc.text else ""
    return f"{exc.status} ({exc.code}): {first}" if first else f"{exc.status} ({exc.code})"


def is_unknown_message(exc: BaseException) -> bool:
    return isinstance(exc, discord.NotFound) and exc.code == 10008
