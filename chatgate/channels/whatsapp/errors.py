"""Map Graph API failures to SendErrorKind, with the fix an operator needs for each.

Meta answers a refused call with an HTTP status and `{"error": {"code": …}}`; the code decides:
rate limits (130429 throughput, 131048 spam, 131056 per-user pair, 4 and 80007 app and account)
wait and retry, 131047 means the 24-hour window is closed, 190 (and the permission codes) park
the channel until the token is fixed. `classify_graph` is pure over (status, code, message).
"""

from __future__ import annotations

from urllib.parse import urlsplit

import aiohttp

from chatgate.channels.base import ChannelError
from chatgate.channels.whatsapp.graph import GraphError
from chatgate.model.messages import SendResult
from chatgate.model.reasons import SendErrorKind

MANAGER = "https://business.facebook.com/settings/system-users"
TOKEN_HINT = (
    "the WhatsApp access token expired or was revoked: generate a new system-user token "
    f"({MANAGER} → your system user → Generate new token, with whatsapp_business_messaging and "
    "whatsapp_business_management, expiry Never) and put it in channels.whatsapp.access_token"
)
PERMISSION_HINT = (
    "the access token lacks a permission or the asset: give the system user the WhatsApp "
    f"account and the whatsapp_business_messaging permission ({MANAGER}), then generate a new "
    "token and put it in channels.whatsapp.access_token"
)
ACCOUNT_HINT = (
    "Meta restricted the WhatsApp account or number (policy, payment or registration): see "
    "WhatsApp Manager → Account tools / Phone numbers for the reason and the fix"
)
WINDOW_HINT = (
    "the user last wrote over 24 hours ago, so WhatsApp allows only an approved template: set "
    "channels.whatsapp.templates.outside_window, or replay the reply (`chatgate dlq replay`) "
    "after the user writes again"
)
TEST_NUMBER_HINT = (
    "a test number can only message numbers on its recipient list: add this number under "
    "WhatsApp → API Setup → To, or use a registered business number"
)
TEMPLATE_HINT = (
    "WhatsApp refused the template: check its name, language and parameter count in WhatsApp "
    "Manager → Message templates against channels.whatsapp.templates"
)
MEDIA_HINT = (
    "WhatsApp refused the file (type or size): it takes JPEG/PNG images to 5 MB, audio and "
    "MP4/3GP video to 16 MB, documents to 100 MB; the reply is in `chatgate dlq list`"
)
NETWORK_HINT = "check network access to graph.facebook.com (443/tcp)"


def network_hint(api_base: str | None = None) -> str:
    """The network fix naming the host chatgate really calls (a relay when `api_base` says so)."""
    if not api_base:
        return NETWORK_HINT
    parts = urlsplit(api_base)
    port = parts.port or (80 if parts.scheme == "http" else 443)
    return f"check network access to {parts.hostname or api_base} ({port}/tcp, channels.whatsapp.api_base)"


PHONE_ID_HINT = (
    "check channels.whatsapp.phone_number_id (WhatsApp → API Setup → Phone number ID, not the "
    "phone number itself) and that the token's system user was given that WhatsApp account"
)

# Meta sends no Retry-After: how long each rate limit asks for, in seconds.
RATE_LIMITS: dict[int, float] = {
    4: 60.0,  # app-level call limit
    80007: 60.0,  # WhatsApp Business Account call limit
    130429: 1.0,  # throughput (messages per second of the number)
    131048: 60.0,  # spam rate limit: too many messages were blocked or reported
    131056: 6.0,  # pair rate limit: one message per ~6 s to the same user
}
AUTH_CODES = frozenset({0, 190})
PERMISSION_CODES = frozenset({3, 10, 131005, *range(200, 300)})
ACCOUNT_CODES = frozenset({368, 131031, 131042, 133010})
WINDOW_CODES = frozenset({131047})
GONE_CODES = frozenset({131026})  # not on WhatsApp (or an app too old to receive it)
TEST_NUMBER_CODES = frozenset({131030})
TRANSIENT_CODES = frozenset({1, 2, 131000, 131016, 133004})
MEDIA_CODES = frozenset({131051, 131052, 131053})  # unsupported type, download, upload errors
TEMPLATE_CODES = frozenset({132000, 132001, 132005, 132007, 132012, 132015, 132016, 132018})
PARKING = AUTH_CODES | PERMISSION_CODES | ACCOUNT_CODES


# Meta's error codes and HTTP statuses, by the kind they mean; where they disagree, the kind
# listed first in `_PRECEDENCE` wins (a code in two sets takes the later, stronger entry).
_BY_CODE: dict[int, SendErrorKind] = {
    **dict.fromkeys(TRANSIENT_CODES, SendErrorKind.TRANSIENT),
    **dict.fromkeys(TEST_NUMBER_CODES, SendErrorKind.FORBIDDEN),
    **dict.fromkeys(GONE_CODES, SendErrorKind.TARGET_NOT_FOUND),
    **dict.fromkeys(WINDOW_CODES, SendErrorKind.OUTSIDE_WINDOW),
    **dict.fromkeys(PARKING, SendErrorKind.AUTH_FATAL),
    **dict.fromkeys(RATE_LIMITS, SendErrorKind.RATE_LIMITED),
}
_BY_STATUS: dict[int, SendErrorKind] = {
    429: SendErrorKind.RATE_LIMITED,
    401: SendErrorKind.AUTH_FATAL,
    408: SendErrorKind.TRANSIENT,
}
_PRECEDENCE = (
    SendErrorKind.RATE_LIMITED,
    SendErrorKind.AUTH_FATAL,
    SendErrorKind.OUTSIDE_WINDOW,
    SendErrorKind.TARGET_NOT_FOUND,
    SendErrorKind.FORBIDDEN,
    SendErrorKind.TRANSIENT,
)


def _status_kind(status: int | None, code: int | None) -> SendErrorKind | None:
    if status is None:
        return None
    if status == 403 and code is None:  # with a code, the code says more than the status
        return SendErrorKind.FORBIDDEN
    return _BY_STATUS.get(status) or (SendErrorKind.TRANSIENT if status >= 500 else None)


def classify_graph(status: int | None, code: int | None, message: str = "") -> SendResult:
    """One SendResult per Graph answer (status and error code as Meta sent them)."""
    error = f"{code}: {message}" if code is not None else message or f"HTTP {status}"
    found = {_BY_CODE.get(code) if code is not None else None, _status_kind(status, code)}
    kind = next((k for k in _PRECEDENCE if k in found), SendErrorKind.INVALID_REQUEST)
    if kind is SendErrorKind.RATE_LIMITED:
        wait = RATE_LIMITS.get(code, 1.0) if code is not None else 1.0
        return SendResult.failed(kind, error, retry_after_s=wait)
    return SendResult.failed(kind, error)


def hint(code: int | None, kind: SendErrorKind | None, api_base: str | None = None) -> str:
    """The fix for a failure, by Meta's code first, else by its kind (`api_base`: the Graph URL
    configured, named by the network hint)."""
    for codes, text in (
        (AUTH_CODES, TOKEN_HINT),
        (PERMISSION_CODES, PERMISSION_HINT),
        (ACCOUNT_CODES, ACCOUNT_HINT),
        (WINDOW_CODES, WINDOW_HINT),
        (TEST_NUMBER_CODES, TEST_NUMBER_HINT),
        (TEMPLATE_CODES, TEMPLATE_HINT),
        (MEDIA_CODES, MEDIA_HINT),
    ):
        if code in codes:
            return text
    return {
        SendErrorKind.AUTH_FATAL: TOKEN_HINT,
        SendErrorKind.TRANSIENT: network_hint(api_base),
        SendErrorKind.RATE_LIMITED: "WhatsApp asked chatgate to slow down; replies wait and retry",
        SendErrorKind.TARGET_NOT_FOUND: "that number is not on WhatsApp (or its app is too old); "
        "the reply is in `chatgate dlq list`",
        SendErrorKind.OUTSIDE_WINDOW: WINDOW_HINT,
    }.get(kind or SendErrorKind.UNKNOWN, "")


def classify(exc: BaseException) -> SendResult:
    if isinstance(exc, GraphError):
        return classify_graph(exc.status, exc.code, exc.message)
    if isinstance(exc, TimeoutError):
        return SendResult.timeout()
    if isinstance(exc, aiohttp.ClientError | ConnectionError | OSError):
        return SendResult.failed(SendErrorKind.TRANSIENT, type(exc).__name__)
    return SendResult.failed(SendErrorKind.UNKNOWN, type(exc).__name__)


def start_error(
    exc: BaseException, phone_number_id: str | None, api_base: str | None = None
) -> ChannelError:
    """Why the channel could not start, with its fix; only network trouble is worth retrying."""
    if isinstance(exc, GraphError):
        result = classify_graph(exc.status, exc.code, exc.message)
        if result.kind is SendErrorKind.AUTH_FATAL:
            return ChannelError(
                f"WhatsApp refused the access token ({result.error})",
                kind=SendErrorKind.AUTH_FATAL,
                hint=hint(exc.code, result.kind),
            )
        if exc.code == 100:  # "Unsupported get request": no such object for this token
            return ChannelError(
                f"phone number id {phone_number_id} is unknown to this token ({exc.message})",
                kind=SendErrorKind.INVALID_REQUEST,
                fatal=True,
                hint=PHONE_ID_HINT,
            )
        if result.kind is not SendErrorKind.TRANSIENT:
            return ChannelError(
                str(exc), kind=result.kind, fatal=True, hint=hint(exc.code, result.kind, api_base)
            )
    return ChannelError(
        f"cannot reach the Graph API ({type(exc).__name__})",
        kind=SendErrorKind.TRANSIENT,
        hint=network_hint(api_base),
    )
