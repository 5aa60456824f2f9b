"""Map Slack Web API failures to SendErrorKind, with the fix an operator needs for each.

Slack answers most failures with HTTP 200 and `{"ok": false, "error": "<code>"}`; slack_sdk
raises `SlackApiError` for those and for non-200 answers. The decision (`classify_api`) is
pure over (status, error code, Retry-After); `classify` reads the exception and calls it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chatgate.channels.base import ChannelError
from chatgate.model.messages import SendResult
from chatgate.model.reasons import SendErrorKind

APPS = "https://api.slack.com/apps"
AUTH_ERRORS = frozenset(
    {
        "invalid_auth",
        "not_authed",
        "account_inactive",
        "token_revoked",
        "token_expired",
        "no_permission",
        "org_login_required",
        "team_access_not_granted",
    }
)
TARGET_GONE = frozenset(
    {"channel_not_found", "user_not_found", "thread_not_found", "message_not_found"}
)
FORBIDDEN = frozenset(
    {
        "not_in_channel",
        "is_archived",
        "restricted_action",
        "restricted_action_read_only_channel",
        "restricted_action_thread_only_channel",
        "restricted_action_non_threadable_channel",
        "cannot_dm_bot",
        "ekm_access_denied",
        "missing_scope",
        "channel_is_archived",
        "team_not_found",
    }
)
TRANSIENT = frozenset(
    {"fatal_error", "internal_error", "service_unavailable", "request_timeout", "ratelimited"}
)
MSG_TOO_LONG = "msg_too_long"
DEFAULT_RETRY_AFTER_S = 1.0

TOKEN_HINT = (
    f"Slack rejected the bot token (revoked, app uninstalled or deactivated?): open {APPS} → "
    "your app → OAuth & Permissions, reinstall to the workspace and put the new Bot User OAuth "
    "Token (xoxb-…) in channels.slack.bot_token"
)
APP_TOKEN_HINT = (
    f"Slack rejected the app-level token: open {APPS} → your app → Basic Information → "
    "App-Level Tokens, generate one with the connections:write scope and put it in "
    "channels.slack.app_token; Socket Mode must be switched on (Settings → Socket Mode)"
)
NETWORK_HINT = "check network access to slack.com and wss-primary.slack.com (443/tcp)"
HINTS: dict[str, str] = {
    "not_in_channel": "invite the bot to that channel (/invite @yourbot); the reply is in "
    "`chatgate dlq list`",
    "is_archived": "the channel is archived: unarchive it or talk to the bot elsewhere; the reply "
    "is in `chatgate dlq list`",
    "channel_not_found": "the channel was deleted or the bot cannot see it (private channel: "
    "/invite @yourbot); the reply is in `chatgate dlq list`",
    "missing_scope": f"add the missing scope in {APPS} → OAuth & Permissions and reinstall "
    "the app; the reply is in `chatgate dlq list`",
    "cannot_dm_bot": "bots cannot DM other bots; the reply is in `chatgate dlq list`",
}
KIND_HINTS: dict[SendErrorKind, str] = {
    SendErrorKind.RATE_LIMITED: "Slack asked chatgate to slow down; replies wait and retry",
    SendErrorKind.AUTH_FATAL: TOKEN_HINT,
    SendErrorKind.TRANSIENT: NETWORK_HINT,
    SendErrorKind.TARGET_NOT_FOUND: HINTS["channel_not_found"],
    SendErrorKind.FORBIDDEN: HINTS["not_in_channel"],
}


# Slack's error codes and HTTP statuses, by the kind they mean; where they disagree, the kind
# listed first in `_PRECEDENCE` wins (and a code in two sets takes the later, stronger entry).
_BY_CODE: dict[str, SendErrorKind] = {
    **dict.fromkeys(TRANSIENT, SendErrorKind.TRANSIENT),
    **dict.fromkeys(FORBIDDEN, SendErrorKind.FORBIDDEN),
    **dict.fromkeys(TARGET_GONE, SendErrorKind.TARGET_NOT_FOUND),
    **dict.fromkeys(AUTH_ERRORS, SendErrorKind.AUTH_FATAL),
    "ratelimited": SendErrorKind.RATE_LIMITED,
}
_BY_STATUS: dict[int, SendErrorKind] = {
    429: SendErrorKind.RATE_LIMITED,
    401: SendErrorKind.AUTH_FATAL,
    404: SendErrorKind.TARGET_NOT_FOUND,
    403: SendErrorKind.FORBIDDEN,
    408: SendErrorKind.TRANSIENT,
}
_PRECEDENCE = (
    SendErrorKind.RATE_LIMITED,
    SendErrorKind.AUTH_FATAL,
    SendErrorKind.TARGET_NOT_FOUND,
    SendErrorKind.FORBIDDEN,
    SendErrorKind.TRANSIENT,
)


def _status_kind(status: int | None) -> SendErrorKind | None:
    if status is None:
        return None
    return _BY_STATUS.get(status) or (SendErrorKind.TRANSIENT if status >= 500 else None)


def classify_api(status: int | None, error: str, retry_after: str | None = None) -> SendResult:
    """One SendResult per Slack answer (status and `error` code as Slack sent them)."""
    found = {_BY_CODE.get(error), _status_kind(status)}
    kind = next((k for k in _PRECEDENCE if k in found), SendErrorKind.INVALID_REQUEST)
    if kind is SendErrorKind.RATE_LIMITED:
        return SendResult.failed(kind, error or "429", retry_after_s=_seconds(retry_after))
    if kind is SendErrorKind.INVALID_REQUEST:
        return SendResult.failed(kind, error or f"HTTP {status}")
    return SendResult.failed(kind, error or str(status))


def hint_for(result: SendResult) -> str:
    return HINTS.get(result.error) or KIND_HINTS.get(result.kind or SendErrorKind.UNKNOWN, "")


def api_error(exc: BaseException) -> tuple[int | None, str, str | None] | None:
    """(status, error code, Retry-After) of a SlackApiError, or None for anything else."""
    from slack_sdk.errors import SlackApiError

    if not isinstance(exc, SlackApiError):
        return None
    response: Any = exc.response
    data = getattr(response, "data", None)
    error = str(data.get("error") or "") if isinstance(data, Mapping) else ""
    headers = getattr(response, "headers", None) or {}
    retry = _header(headers, "Retry-After")
    return getattr(response, "status_code", None), error, retry


def classify(exc: BaseException) -> SendResult:
    found = api_error(exc)
    if found is not None:
        return classify_api(*found)
    import aiohttp

    if isinstance(exc, TimeoutError):
        return SendResult.timeout(type(exc).__name__)
    if isinstance(exc, ConnectionError | OSError | aiohttp.ClientError):
        return SendResult.failed(SendErrorKind.TRANSIENT, type(exc).__name__)
    return SendResult.failed(SendErrorKind.UNKNOWN, type(exc).__name__)


def is_error(exc: BaseException, *codes: str) -> bool:
    found = api_error(exc)
    return found is not None and found[1] in codes


def _header(headers: Mapping[str, Any], name: str) -> str | None:
    for key, value in headers.items():
        if str(key).lower() == name.lower():
            return str(value[0] if isinstance(value, list | tuple) and value else value)
    return None


def _seconds(value: str | None) -> float:
    try:
        seconds = float(value) if value is not None else DEFAULT_RETRY_AFTER_S
    except ValueError:
        return DEFAULT_RETRY_AFTER_S
    return seconds if 0 <= seconds < 3600 else DEFAULT_RETRY_AFTER_S


def start_error(exc: BaseException) -> ChannelError:
    """Why connecting failed, as the supervisor needs it (a rejected token parks the channel)."""
    if isinstance(exc, ChannelError):
        return exc
    found = api_error(exc)
    if found is not None:
        status, code, _ = found
        if code in AUTH_ERRORS:
            return ChannelError(
                f"Slack rejected the bot token ({code})",
                kind=SendErrorKind.AUTH_FATAL,
                hint=TOKEN_HINT,
            )
        return ChannelError(
            f"Slack error: {code or status}", kind=SendErrorKind.TRANSIENT, hint=NETWORK_HINT
        )
    import aiohttp

    if isinstance(exc, TimeoutError | OSError | aiohttp.ClientError):
        return ChannelError(
            f"Slack is unreachable: {type(exc).__name__}",
            kind=SendErrorKind.TRANSIENT,
            hint=NETWORK_HINT,
        )
    return ChannelError(f"{type(exc).__name__}: {exc}", kind=SendErrorKind.TRANSIENT)
