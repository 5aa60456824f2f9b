"""Bounded streaming downloads for adapters that fetch attachments over plain HTTP."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO

import aiohttp

from chatgate.model.errors import FetchError
from chatgate.model.reasons import MediaReason

CHUNK = 64 * 1024


async def stream_to_file(
    session: aiohttp.ClientSession,
    url: str,
    dest: Path,
    max_bytes: int,
    *,
    headers: Mapping[str, str] | None = None,
    redirects: bool = True,
    proxy: str | None = None,
) -> int:
    """GET ``url`` into ``dest`` chunk by chunk, stopping past ``max_bytes`` (the whole file is
    never in memory). Errors carry a media reason and no URL (it may carry a token).
    ``redirects=False`` for URLs a sender chose: a redirect could lead past a host check."""
    try:
        async with session.get(
            url, headers=dict(headers or {}), allow_redirects=redirects, proxy=proxy
        ) as resp:
            if resp.status >= 300:
                raise FetchError(MediaReason.DOWNLOAD_FAILED, f"HTTP {resp.status}")
            claimed = resp.content_length
            if claimed is not None and claimed > max_bytes:
                raise FetchError(MediaReason.TOO_LARGE, f"{claimed} bytes")
            fh: IO[bytes] = await asyncio.to_thread(dest.open, "wb")
            written = 0
            try:
                async for chunk in resp.content.iter_chunked(CHUNK):
                    written += len(chunk)
                    if written > max_bytes:
                        raise FetchError(MediaReason.TOO_LARGE, f"more than {max_bytes} bytes")
                    await asyncio.to_thread(fh.write, chunk)
            finally:
                await asyncio.to_thread(fh.close)
            return written
    except (aiohttp.ClientError, TimeoutError) as exc:
        raise FetchError(MediaReason.DOWNLOAD_FAILED, type(exc).__name__) from None


async def write_bytes(dest: Path, data: bytes | bytearray) -> int:
    """Write an SDK's in-memory download to ``dest`` off the event loop."""
    await asyncio.to_thread(dest.write_bytes, data)
    return len(data)


class FilesSession:
    """A fetch-only aiohttp session, opened on first use and closed by ``close()``: files are
    fetchable on any replica with the bot's credentials, also while another replica holds the
    channel's connection (nothing is polled or listened to through it)."""

    def __init__(self, factory: Callable[[], aiohttp.ClientSession]) -> None:
        self._factory = factory
        self._session: aiohttp.ClientSession | None = None

    def get(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = self._factory()
        return self._session

    async def close(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()


def files_timeout(read_s: float) -> aiohttp.ClientTimeout:
    """No total: the media step bounds a whole download (`download_timeout_s`)."""
    return aiohttp.ClientTimeout(total=None, sock_connect=min(read_s, 10.0), sock_read=read_s)
