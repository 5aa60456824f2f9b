"""Map Bot Connector and token failures to SendErrorKind, with the fix an operator needs.

The SDK's HTTP client raises httpx's `HTTPStatusError` for a refused call: 429 waits as long
as `Retry-After` asks; 401 means the token was refused (wrong app password or app id) and 403
that the app may not act there (not installed in the team, or blocked by the tenant): both park
the channel with the fix, and the reply waits for the operator; 404 is a conversation that is
gone (a dead target, the channel keeps serving the others); 5xx, 408 and timeouts are retried.
"""

from __future__ import annotations

import httpx

from chatgate.model.messages import SendResult
from chatgate.model.reasons import SendErrorKind

PASSWORD_HINT = (
    "the Bot Framework refused the bot's credentials: check channels.teams.app_id and "
    "app_password (Azure portal → the bot → Configuration → Manage Password → a new client "
    "secret) and, for a single-tenant bot, tenant_id"
)
FORBIDDEN_HINT = (
    "the Bot Connector refused the bot (HTTP 403): install the app in the team or chat (Teams → "
    "Apps → Manage your apps, or the admin center's app setup policy), check that the tenant "
    "allows the app and that channels.teams.tenant_id is the bot's; then `chatgate channels "
    "restart teams`"
)
GONE_HINT = "that Teams conversation no longer exists; the reply is in `chatgate dlq list`"
NO_REFERENCE_HINT = (
    "the bot has no address for this chat yet: the user must message the bot once (Teams gives "
    "the bot a conversation's service URL only with an incoming message), then "
    "`chatgate dlq replay`"
)
UPLOAD_HINT = (
    "a file the user accepted could not be uploaded to their OneDrive (the upload session "
    "refused it or is unreachable); they can ask for it again"
)
NETWORK_HINT = "check network access to the Bot Connector service (smba.trafficmanager.net, 443)"


PARKING = {401: PASSWORD_HINT, 403: FORBIDDEN_HINT}  # statuses that park the channel


class TokenError(Exception):
    """The login endpoint refused the client-credentials request (or could not be reached)."""

    def __init__(self, message: str, *, refused: bool) -> None:
        super().__init__(message)
        self.refused = refused


def retry_after(response: httpx.Response) -> float | None:
    raw = response.headers.get("Retry-After")
    try:
        return max(float(raw), 0.0) if raw is not None else None
    except ValueError:
        return None


def classify(exc: BaseException) -> SendResult:
    if isinstance(exc, TokenError):
        kind = SendErrorKind.AUTH_FATAL if exc.refused else SendErrorKind.TRANSIENT
        return SendResult.failed(kind, str(exc))
    if isinstance(exc, httpx.HTTPStatusError):
        return classify_status(exc.response.status_code, retry_after(exc.response))
    if isinstance(exc, httpx.TimeoutException | TimeoutError):
        return SendResult.timeout(type(exc).__name__)
    if isinstance(exc, httpx.TransportError | ConnectionError | OSError):
        return SendResult.failed(SendErrorKind.TRANSIENT, type(exc).__name__)
    return SendResult.failed(SendErrorKind.UNKNOWN, type(exc).__name__)


def classify_status(status: int, wait: float | None = None) -> SendResult:
    error = f"HTTP {status} from the Bot Connector"
    if status == 429:
        return SendResult.failed(SendErrorKind.RATE_LIMITED, error, retry_after_s=wait or 1.0)
    if status in PARKING:
        return SendResult.failed(SendErrorKind.AUTH_FATAL, error)
    if status in (404, 410):
        return SendResult.failed(SendErrorKind.TARGET_NOT_FOUND, error)
    if status == 408 or status >= 500:
        return SendResult.failed(SendErrorKind.TRANSIENT, error)
    return SendResult.failed(SendErrorKind.INVALID_REQUEST, error)


def status_of(exc: BaseException) -> int | None:
    return exc.response.status_code if isinstance(exc, httpx.HTTPStatusError) else None


def hint(kind: SendErrorKind | None, status: int | None = None) -> str:
    """The fix for a failure (by the HTTP status when it tells more than the kind)."""
    if status in PARKING:
        return PARKING[status]
    return {
        SendErrorKind.AUTH_FATAL: PASSWORD_HINT,
        SendErrorKind.FORBIDDEN: FORBIDDEN_HINT,
        SendErrorKind.TARGET_NOT_FOUND: GONE_HINT,
        SendErrorKind.NO_REFERENCE: NO_REFERENCE_HINT,
        SendErrorKind.TRANSIENT: NETWORK_HINT,
        SendErrorKind.RATE_LIMITED: "Teams asked chatgate to slow down; replies wait and retry",
    }.get(kind or SendErrorKind.UNKNOWN, "")
