"""Map python-telegram-bot exceptions to SendErrorKind (subclasses are checked before parents)."""

from __future__ import annotations

import datetime as dt
import warnings

from chatgate.model.messages import SendResult
from chatgate.model.reasons import SendErrorKind
from telegram import error as tg

_TARGET_GONE = (
    "chat not found",
    "user not found",
    "peer_id_invalid",
    "group chat was deleted",
    "chat_id is empty",
)
_PARSE_ERROR = "can't parse entities"


def retry_after_seconds(exc: tg.RetryAfter) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = exc.retry_after
    return value.total_seconds() if isinstance(value, dt.timedelta) else float(value)


def is_parse_error(exc: BaseException) -> bool:
    return isinstance(exc, tg.BadRequest) and _PARSE_ERROR in exc.message.lower()


def is_not_modified(exc: BaseException) -> bool:
    return isinstance(exc, tg.BadRequest) and "message is not modified" in exc.message.lower()


def classify(exc: BaseException) -> SendResult:
    """One SendResult per native failure; the order of checks matters (BadRequest is a NetworkError)."""
    name = type(exc).__name__
    if isinstance(exc, tg.RetryAfter):
        return SendResult.failed(
            SendErrorKind.RATE_LIMITED, name, retry_after_s=retry_after_seconds(exc)
        )
    if isinstance(exc, tg.InvalidToken):
        return SendResult.failed(SendErrorKind.AUTH_FATAL, "the bot token was rejected")
    if isinstance(exc, tg.Forbidden):
        return SendResult.failed(SendErrorKind.FORBIDDEN, exc.message)
    if isinstance(exc, tg.BadRequest):
        text = exc.message.lower()
        kind = (
            SendErrorKind.TARGET_NOT_FOUND
            if any(t in text for t in _TARGET_GONE)
            else SendErrorKind.INVALID_REQUEST
        )
        return SendResult.failed(kind, exc.message)
    if isinstance(exc, tg.TimedOut):
        return SendResult.timeout()
    if isinstance(exc, tg.NetworkError):
        return SendResult.failed(SendErrorKind.TRANSIENT, name)
    if isinstance(exc, tg.Conflict):
        return SendResult.failed(SendErrorKind.INVALID_REQUEST, "conflict")
    if isinstance(exc, tg.TelegramError):
        return SendResult.failed(SendErrorKind.UNKNOWN, exc.message)
    if isinstance(exc, TimeoutError):
        return SendResult.timeout(name)
    if isinstance(exc, ConnectionError | OSError):
        return SendResult.failed(SendErrorKind.TRANSIENT, name)
    return SendResult.failed(SendErrorKind.UNKNOWN, name)
