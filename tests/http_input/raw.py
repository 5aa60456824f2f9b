"""Raw HTTP/1.1 over a socket: bytes no client library would send."""

from __future__ import annotations

import asyncio


async def raw_request(port: int, head: bytes, body: bytes = b"") -> tuple[int, bytes]:
    """Send ``head`` (request line and headers, without the blank line) and ``body``; the
    answer's status and body (the connection is closed after one request)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(head.rstrip(b"\r\n") + b"\r\nConnection: close\r\n\r\n" + body)
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(), 30)
    finally:
        writer.close()
    status_line, _, rest = answer.partition(b"\r\n")
    parts = status_line.split(b" ")
    status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
    return status, rest.partition(b"\r\n\r\n")[2]
