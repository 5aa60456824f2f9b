"""Reading a request body for HTTP ingress routes (webhooks, Slack's Events API)."""

from __future__ import annotations

from aiohttp import StreamReader


async def read_body(content: StreamReader, limit: int) -> bytes | None:
    """The whole body up to EOF, or None once it grows past ``limit`` bytes.

    One ``read(n)`` returns only what has arrived so far; the signature must be checked over
    everything the sender wrote, so keep reading until EOF.
    """
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = await content.read(limit + 1 - size)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
