"""discord.py exceptions → SendErrorKind, and gateway exits → park or restart (table-driven)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import discord
import pytest

from chatgate.channels.discord.errors import classify, gateway_exit, is_unknown_message
from chatgate.model.reasons import SendErrorKind as K
from chatgate.policies.send_errors import DEAD_TARGET_KINDS, is_retryable


@dataclass
class Response:
    """What discord.HTTPException reads from an aiohttp response."""

    status: int
    reason: str = "Error"
    headers: dict[str, str] = field(default_factory=dict)


def http(
    cls: type[discord.HTTPException], status: int, code: int = 0, message: str = "x", **headers: str
) -> discord.HTTPException:
    return cls(Response(status, headers=headers), {"code": code, "message": message})  # type: ignore[arg-type]


class Socket:
    close_code = None


def closed(code: int) -> discord.ConnectionClosed:
    return discord.ConnectionClosed(Socket(), shard_id=0, code=code)  # type: ignore[arg-type]


SEND_CASES: list[tuple[str, Callable[[], BaseException], K, float | None]] = [
    ("ratelimited-long-wait", lambda: discord.RateLimited(42.0), K.RATE_LIMITED, 42.0),
    (
        "429-cloudflare",
        lambda: http(discord.HTTPException, 429, **{"Retry-After": "3"}),
        K.RATE_LIMITED,
        3.0,
    ),
    ("429-no-header", lambda: http(discord.HTTPException, 429), K.RATE_LIMITED, None),
    ("50013-missing-permissions", lambda: http(discord.Forbidden, 403, 50013), K.FORBIDDEN, None),
    ("50001-missing-access", lambda: http(discord.Forbidden, 403, 50001), K.FORBIDDEN, None),
    ("50007-cannot-dm", lambda: http(discord.Forbidden, 403, 50007), K.FORBIDDEN, None),
    ("10003-unknown-channel", lambda: http(discord.NotFound, 404, 10003), K.TARGET_NOT_FOUND, None),
    ("10008-unknown-message", lambda: http(discord.NotFound, 404, 10008), K.TARGET_NOT_FOUND, None),
    (
        "401-unauthorized",
        lambda: http(discord.HTTPException, 401, 0, "401: Unauthorized"),
        K.AUTH_FATAL,
        None,
    ),
    ("500-server", lambda: http(discord.DiscordServerError, 500), K.TRANSIENT, None),
    ("503-server", lambda: http(discord.DiscordServerError, 503), K.TRANSIENT, None),
    (
        "400-invalid-form",
        lambda: http(discord.HTTPException, 400, 50035, "Invalid Form Body"),
        K.INVALID_REQUEST,
        None,
    ),
    ("timeout", lambda: TimeoutError(), K.TRANSIENT, None),
    ("disconnected", lambda: aiohttp.ServerDisconnectedError(), K.TRANSIENT, None),
    ("refused", lambda: ConnectionRefusedError(), K.TRANSIENT, None),
    ("not-connected", lambda: ConnectionError("not connected"), K.TRANSIENT, None),
    ("login-failure", lambda: discord.LoginFailure("Improper token"), K.AUTH_FATAL, None),
    ("bug", lambda: ValueError("boom"), K.UNKNOWN, None),
]


@pytest.mark.parametrize(
    ("name", "make", "kind", "retry_after"), SEND_CASES, ids=[c[0] for c in SEND_CASES]
)
def test_send_errors(
    name: str, make: Callable[[], BaseException], kind: K, retry_after: float | None
) -> None:
    result = classify(make())
    assert (result.ok, result.kind, result.retry_after_s) == (False, kind, retry_after)


def test_dead_targets_and_retries_follow_the_kind() -> None:
    forbidden = classify(http(discord.Forbidden, 403, 50013, "Missing Permissions"))
    assert forbidden.kind in DEAD_TARGET_KINDS and not is_retryable(forbidden.kind)
    assert forbidden.error == "403 (50013): Missing Permissions"
    assert is_retryable(K.RATE_LIMITED) and is_retryable(K.TRANSIENT)


def test_only_an_unknown_message_is_an_unknown_message() -> None:
    assert is_unknown_message(http(discord.NotFound, 404, 10008))
    assert not is_unknown_message(http(discord.NotFound, 404, 10003))


GATEWAY_CASES: list[tuple[str, Callable[[], BaseException], bool, str]] = [
    ("4004", lambda: closed(4004), True, "Reset Token"),
    ("4010", lambda: closed(4010), True, "shards"),
    ("4011", lambda: closed(4011), True, "shards: auto"),
    ("4012", lambda: closed(4012), True, "upgrade"),
    ("4013", lambda: closed(4013), True, "intents"),
    ("4014", lambda: closed(4014), True, "Message Content Intent"),
    (
        "privileged",
        lambda: discord.PrivilegedIntentsRequired(0),
        True,
        "Privileged Gateway Intents",
    ),
    ("login", lambda: discord.LoginFailure("Improper token has been passed."), True, "Reset Token"),
    ("4000", lambda: closed(4000), False, ""),
    ("1006", lambda: closed(1006), False, ""),
    (
        "network",
        lambda: aiohttp.ClientConnectorError(None, OSError(111, "refused")),
        False,
        "gateway.discord.gg",
    ),  # type: ignore[arg-type]
    ("503-on-login", lambda: http(discord.DiscordServerError, 503), False, "discord.com"),
    ("timeout", lambda: TimeoutError(), False, "discord.com"),
]


@pytest.mark.parametrize(
    ("name", "make", "fatal", "hint"), GATEWAY_CASES, ids=[c[0] for c in GATEWAY_CASES]
)
def test_gateway_exits(
    name: str, make: Callable[[], BaseException], fatal: bool, hint: str
) -> None:
    error = gateway_exit(make(), ["message_content"])
    assert error.fatal is fatal
    assert hint in error.hint


def test_intents_hint_names_each_refused_switch() -> None:
    error = gateway_exit(closed(4014), ["message_content", "members"])
    assert "Message Content Intent and Server Members Intent" in error.hint
    assert "channels.discord.intents" in error.hint


def test_errors_never_carry_the_token() -> None:
    token = "MTIz.secret.token"
    messages: list[Any] = [gateway_exit(c[1](), []) for c in GATEWAY_CASES]
    messages += [classify(c[1]()).error for c in SEND_CASES]
    assert all(token not in str(m) for m in messages)
