"""Discord attachments: downloaded from Discord's CDN through discord.py's own HTTP client."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from chatgate.channels.base import FetchError
from chatgate.channels.download import write_bytes
from chatgate.channels.types import Attachment
from chatgate.policies.media import MediaReason

CDN_HOSTS = frozenset({"cdn.discordapp.com", "media.discordapp.net"})


def attachment_of(native: Any) -> Attachment:
    """A discord.py ``Attachment`` as ours; the signed CDN URL is the handle."""
    mime = native.content_type or ""
    major = mime.split("/")[0]
    if native.is_voice_message():
        kind = "voice"
    else:
        kind = major if major in ("image", "audio", "video") else "document"
    return Attachment(kind, None, native.filename, mime or None, native.size, native.url)


async def fetch_attachment(client: Any, attachment: Attachment, dest: Path, max_bytes: int) -> int:
    """discord.py reads a CDN file whole; the announced size bounds it beforehand."""
    import discord

    url = attachment.handle
    if not url or urlsplit(url).hostname not in CDN_HOSTS:
        raise FetchError(MediaReason.DOWNLOAD_FAILED, "not a Discord CDN URL")
    if attachment.size is not None and attachment.size > max_bytes:
        raise FetchError(MediaReason.TOO_LARGE, f"{attachment.size} bytes")
    try:
        data: bytes = await client.http.get_from_cdn(url)
    except (discord.HTTPException, aiohttp.ClientError) as exc:
        raise FetchError(MediaReason.DOWNLOAD_FAILED, type(exc).__name__) from None
    if len(data) > max_bytes:
        raise FetchError(MediaReason.TOO_LARGE, f"{len(data)} bytes")
    return await write_bytes(dest, data)
