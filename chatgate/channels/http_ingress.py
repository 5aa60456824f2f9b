"""Pieces HTTP ingress routes share (webhooks, Telegram webhook mode, Slack's Events API, web
chat): reading the body, the signed-webhook intake, and refusing a request the state cannot
store right now."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aiohttp import web

from chatgate.channels.signatures import SignatureKind, verify
from chatgate.http_input import BadInput, read_body
from chatgate.http_input import refuse as refuse_input

# Seconds an HTTP ingress tells the sender to wait (Retry-After) after a StateUnavailable refusal.
STATE_RETRY_AFTER_S = 5


def refuse(error: str, **fields: Any) -> web.Response:
    """503 with Retry-After: nothing was stored, so the sender should deliver it again later."""
    return refuse_input(503, error, retry_after_s=STATE_RETRY_AFTER_S, **fields)


async def read_request(request: web.Request, limit: int) -> bytes | web.Response:
    """The request's whole body, or the 4xx answer (413 when it is or grows larger than
    ``limit``, also decompressed; 415 for an encoding or charset outside the allow-list; 400
    when it stops half-way or is not what its encoding says)."""
    try:
        return await read_body(request, limit)
    except BadInput as bad:
        return bad.answer()


async def signed_ingress(
    request: web.Request,
    *,
    limit: int,
    kind: SignatureKind,
    secret: str | None,
    now: Callable[[], float],
    refused: Callable[[str], None],
    accepting: Callable[[], bool] | None = None,
    error: str = "invalid signature",
) -> bytes | web.Response:
    """The intake every signed webhook shares: the body within ``limit`` (else its 4xx), its
    signature checked at ``now()`` (else 401 with ``error``; ``refused`` hears why, for the
    log line and the metric; the sender never does), then, when given, whether the channel still
    takes input (else 503 with Retry-After). The body, or the answer to send."""
    body = await read_request(request, limit)
    if isinstance(body, web.Response):
        return body
    problem = verify(kind, secret, body, request.headers, now())
    if problem is not None:
        refused(problem)
        return web.json_response({"error": error}, status=401)
    if accepting is not None and not accepting():
        return refuse("shutting down")
    return body
