"""Pieces HTTP ingress routes share (webhooks, Telegram webhook mode, Slack's Events API, web
chat): reading the body, and refusing a request the state cannot store right now."""

from __future__ import annotations

from typing import Any

from aiohttp import StreamReader, web

# Seconds an HTTP ingress tells the sender to wait (Retry-After) after a StateUnavailable refusal.
STATE_RETRY_AFTER_S = 5


def refuse(error: str, **fields: Any) -> web.Response:
    """503 with Retry-After: nothing was stored, so the sender should deliver it again later."""
    return web.json_response(
        {"error": error, **fields}, status=503, headers={"Retry-After": str(STATE_RETRY_AFTER_S)}
    )


async def read_body(content: StreamReader, limit: int) -> bytes | None:
    """The whole body up to EOF, or None once it grows past ``limit`` bytes.

    One ``read(n)`` returns only what has arrived so far; the signature must be checked over
    everything the sender wrote, so keep reading until EOF.
    """
    first = await content.read(limit + 1)
    if len(first) > limit:
        return None
    if content.at_eof():  # the usual case: the whole body had arrived
        return first
    chunks: list[bytes] = [first]
    size = len(first)
    while True:
        chunk = await content.read(limit + 1 - size)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)


async def read_request(request: web.Request, limit: int) -> bytes | web.Response:
    """The request's whole body, or the 413 answer when it is (or grows) larger than ``limit``."""
    too_big = web.json_response({"error": f"body larger than {limit} bytes"}, status=413)
    if request.content_length is not None and request.content_length > limit:
        return too_big
    body = await read_body(request.content, limit)
    return too_big if body is None else body
