"""Map litellm/openai exceptions to FailureReason without importing litellm (by class name)."""

from __future__ import annotations

import time

from chatgate.agents.base import AgentError
from chatgate.model.reasons import FailureReason
from chatgate.policies.failure import parse_retry_after, reason_from_status

# Most specific first is implied: the exception's MRO is walked from its own class upward.
_BY_CLASS: dict[str, FailureReason] = {
    "ContextWindowExceededError": FailureReason.CONTEXT_OVERFLOW,
    "ContentPolicyViolationError": FailureReason.FORMAT_ERROR,
    "PaymentRequiredError": FailureReason.PROVIDER_QUOTA,
    "BudgetExceededError": FailureReason.PROVIDER_QUOTA,
    "LiteLLMUnknownProvider": FailureReason.MODEL_NOT_FOUND,
    "AuthenticationError": FailureReason.AUTH_PERMANENT,
    "PermissionDeniedError": FailureReason.AUTH_PERMANENT,
    "NotFoundError": FailureReason.MODEL_NOT_FOUND,
    "RateLimitError": FailureReason.RATE_LIMIT,
    "Timeout": FailureReason.TIMEOUT,
    "APITimeoutError": FailureReason.TIMEOUT,
    "APIConnectionError": FailureReason.UNAVAILABLE,
    "ServiceUnavailableError": FailureReason.OVERLOADED,
    "BadGatewayError": FailureReason.OVERLOADED,
    "InternalServerError": FailureReason.OVERLOADED,
    "UnprocessableEntityError": FailureReason.FORMAT_ERROR,
    "BadRequestError": FailureReason.FORMAT_ERROR,
}
_CONNECTION_CAUSES = (
    "APIConnectionError",
    "ConnectError",
    "ConnectTimeout",
    "ClientConnectorError",
)


def classify_model_error(exc: BaseException, provider: str | None = None) -> AgentError:
    """Turn a model-client exception into an operator-safe AgentError."""
    if isinstance(exc, AgentError):
        return exc
    status = getattr(exc, "status_code", None)
    message = str(getattr(exc, "message", "") or exc).lower()
    reason = _refined(_by_class(exc), exc, message)
    if reason is None:
        if isinstance(exc, TimeoutError):
            reason = FailureReason.TIMEOUT
        elif isinstance(status, int):
            reason = reason_from_status(status, message)
        else:
            reason = FailureReason.UNKNOWN
    detail = type(exc).__name__ + (f" (HTTP {status})" if isinstance(status, int) else "")
    return AgentError(reason, detail, retry_after_s=_retry_after(exc), provider=provider)


def _refined(
    reason: FailureReason | None, exc: BaseException, message: str
) -> FailureReason | None:
    """The class's reason, corrected by what the message and the causes say."""
    if reason is FailureReason.AUTH_PERMANENT and "expired" in message:
        return FailureReason.AUTH_EXPIRED
    if reason is FailureReason.FORMAT_ERROR and "context length" in message:
        return FailureReason.CONTEXT_OVERFLOW
    if reason is FailureReason.RATE_LIMIT:  # out of credit rather than too fast: waiting can't help
        code = str(getattr(exc, "code", "") or "")
        return reason_from_status(429, f"{message} {code}")
    if reason is FailureReason.OVERLOADED and _caused_by_connection(exc):
        return FailureReason.UNAVAILABLE
    if reason is FailureReason.TIMEOUT and _refused(exc):
        return FailureReason.UNAVAILABLE
    return reason


def _by_class(exc: BaseException) -> FailureReason | None:
    for cls in type(exc).__mro__:
        found = _BY_CLASS.get(cls.__name__)
        if found is not None:
            return found
    return None


def _caused_by_connection(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    depth = 0
    while seen is not None and depth < 8:
        if any(c.__name__ in _CONNECTION_CAUSES for c in type(seen).__mro__):
            return True
        seen = seen.__cause__ or seen.__context__
        depth += 1
    return "connection error" in str(exc).lower()


def _refused(exc: BaseException) -> bool:
    """A connection that failed (refused, unreachable) rather than timed out. The openai SDK's
    aiohttp transport reports every aiohttp connection error as ``ConnectTimeout``, hence an
    ``APITimeoutError``; the aiohttp error it wraps says which it was."""
    seen: BaseException | None = exc
    depth = 0
    while seen is not None and depth < 8:
        names = {c.__name__ for c in type(seen).__mro__}
        if "ClientConnectorError" in names and not isinstance(seen, TimeoutError):
            return True
        seen = seen.__cause__ or seen.__context__
        depth += 1
    return False


def _retry_after(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    try:
        value = headers.get("retry-after")
    except (TypeError, AttributeError):
        return None
    return parse_retry_after(None if value is None else str(value), time.time())
