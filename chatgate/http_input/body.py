"""Reading a request body within a limit that also holds for the decompressed size."""

from __future__ import annotations

import logging

from aiohttp import StreamReader, web
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.web_protocol import RequestPayloadError

from chatgate.http_input.answers import BadInput, InputReason

log = logging.getLogger("chatgate.http")
# What aiohttp decodes for us, chunk by chunk and within the reader's limit.
ENCODINGS = frozenset({"", "identity", "gzip", "x-gzip", "deflate"})
CHARSETS = frozenset({"utf-8", "utf8", "us-ascii", "ascii"})


def check_headers(request: web.Request) -> None:
    """Refuse a Content-Encoding or charset outside the allow-lists before reading the body."""
    encoding = request.headers.get("Content-Encoding", "").strip().lower()
    if encoding not in ENCODINGS:
        raise BadInput(415, InputReason.BAD_CONTENT_ENCODING, "unsupported Content-Encoding")
    charset = (request.charset or "").strip().lower()
    if charset and charset not in CHARSETS:
        raise BadInput(415, InputReason.CHARSET_REFUSED, "charset must be utf-8")


async def _read_capped(content: StreamReader, limit: int) -> bytes | None:
    """Everything up to EOF, or None once more than ``limit`` (decompressed) bytes arrived.

    One ``read(n)`` returns only what has arrived so far; a signature covers everything the
    sender wrote, so keep reading until EOF.
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
        if content.at_eof():  # all of it arrived: no second read just to learn that
            return b"".join(chunks)


async def read_body(request: web.Request, limit: int) -> bytes:
    """The whole body, decompressed, of at most ``limit`` bytes; else `BadInput` (413, 415 or
    400 for a body that is not what its headers say or stops half-way)."""
    check_headers(request)
    if request.content_length is not None and request.content_length > limit:
        raise _too_big(limit)
    try:
        body = await _read_capped(request.content, limit)
    except (RequestPayloadError, HttpProcessingError) as exc:
        raise BadInput(
            400, InputReason.BODY_INCOMPLETE, "body could not be read (encoding or framing)"
        ) from exc
    except ConnectionError as exc:  # the sender went away; nobody reads the answer
        log.debug("client left mid-body", extra={"peer": request.remote})
        raise BadInput(400, InputReason.BODY_INCOMPLETE, "connection lost mid-body") from exc
    if body is None:
        raise _too_big(limit)
    return body


def _too_big(limit: int) -> BadInput:
    return BadInput(413, InputReason.BODY_TOO_LARGE, f"body larger than {limit} bytes")
