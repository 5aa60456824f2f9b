"""Homeserver errors (mautrix exceptions) as SendErrorKinds, with the fix for each fatal one."""

from __future__ import annotations

import asyncio

import aiohttp
from mautrix import errors as mx

from chatgate.channels.base import ChannelError
from chatgate.model.messages import SendResult
from chatgate.model.reasons import SendErrorKind

TOKEN_HINT = (
    "the homeserver no longer accepts the access token (logged out or revoked): log in again "
    "and set a new channels.matrix.access_token, or use password/password_file"
)
FORBIDDEN_HINT = "the bot is not in the room or may not post there: invite it again"


def kind_of(exc: BaseException) -> SendErrorKind:
    if isinstance(exc, mx.MatrixInvalidToken | mx.MUserDeactivated):
        return SendErrorKind.AUTH_FATAL
    if isinstance(exc, mx.MLimitExceeded):
        return SendErrorKind.RATE_LIMITED
    if isinstance(exc, mx.MForbidden):
        return SendErrorKind.FORBIDDEN
    if isinstance(exc, mx.MNotFound):
        return SendErrorKind.TARGET_NOT_FOUND
    if isinstance(exc, mx.MatrixBadRequest | mx.MTooLarge):
        return SendErrorKind.INVALID_REQUEST
    if isinstance(exc, mx.MatrixRequestError):
        status = getattr(exc, "http_status", 0) or 0
        if status == 429:
            return SendErrorKind.RATE_LIMITED
        if status >= 500 or status == 0:
            return SendErrorKind.TRANSIENT
        return SendErrorKind.INVALID_REQUEST if status < 500 else SendErrorKind.TRANSIENT
    if isinstance(exc, mx.MatrixConnectionError | aiohttp.ClientError | OSError | TimeoutError):
        return SendErrorKind.TRANSIENT
    return SendErrorKind.UNKNOWN


def describe(exc: BaseException) -> str:
    """The error code and the server's words; never the request (it may carry the token)."""
    code = getattr(exc, "errcode", None)
    message = getattr(exc, "message", None) or ""
    return f"{code}: {message}".strip(": ") if code else type(exc).__name__


def result(exc: BaseException, retry_after_s: float | None = None) -> SendResult:
    if isinstance(exc, asyncio.TimeoutError | aiohttp.ServerTimeoutError):
        return SendResult.timeout(type(exc).__name__)
    kind = kind_of(exc)
    wait = retry_after_s if kind is SendErrorKind.RATE_LIMITED else None
    if kind is SendErrorKind.RATE_LIMITED and wait is None:
        wait = 1.0
    return SendResult.failed(kind, describe(exc), wait)


def fatal(exc: BaseException) -> ChannelError:
    """A refused token: parks the channel with the fix; the other channels keep serving."""
    return ChannelError(
        f"the homeserver refused the access token ({describe(exc)})",
        kind=SendErrorKind.AUTH_FATAL,
        hint=TOKEN_HINT,
    )
