"""Reason codes for refused input, and the one way every surface answers a refusal."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from aiohttp import web


class InputReason(StrEnum):
    """Why an HTTP surface refused what it was sent (shared by answers, logs and metrics)."""

    BODY_TOO_LARGE = "body_too_large"
    BODY_INCOMPLETE = "body_incomplete"  # the sender stopped or reset mid-body
    BAD_CONTENT_ENCODING = "bad_content_encoding"
    CHARSET_REFUSED = "charset_refused"
    NOT_UTF8 = "not_utf8"
    NOT_JSON = "not_json"
    JSON_TOO_DEEP = "json_too_deep"
    LONE_SURROGATE = "lone_surrogate"
    MISSING_PARAMETER = "missing_parameter"
    BAD_PARAMETER = "bad_parameter"


class BadInput(Exception):
    """Input a surface must refuse with a 4xx; ``answer()`` is that refusal."""

    def __init__(self, status: int, reason: InputReason, message: str) -> None:
        super().__init__(message)
        self.status, self.reason, self.message = status, reason, message

    def answer(self, **fields: Any) -> web.Response:
        # A refused body may still be arriving (a compressed bomb): close instead of draining it.
        return refuse(self.status, self.message, self.reason, close=True, **fields)


def refuse(
    status: int,
    error: str,
    reason: str | None = None,
    *,
    retry_after_s: int | None = None,
    close: bool = False,
    **fields: Any,
) -> web.Response:
    """The JSON refusal every surface sends: ``error`` for people, ``reason_code`` for machines,
    Retry-After when trying again later will help."""
    body: dict[str, Any] = {"error": error}
    if reason is not None:
        body["reason_code"] = str(reason)
    body.update(fields)
    headers = {"Retry-After": str(retry_after_s)} if retry_after_s is not None else None
    response = web.json_response(body, status=status, headers=headers)
    if close:
        response.force_close()
    return response
