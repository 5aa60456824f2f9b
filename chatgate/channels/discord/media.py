"""Discord attachments: streamed from Discord's CDN over a session built like discord.py's own
(the same connector settings: `resolve`, `ca`); discord.py's `get_from_cdn` reads a file whole."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from chatgate.channels.download import stream_to_file
from chatgate.model.errors import FetchError
from chatgate.model.messages import Attachment
from chatgate.model.reasons import MediaReason

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


async def fetch_attachment(
    http: aiohttp.ClientSession, attachment: Attachment, dest: Path, max_bytes: int
) -> int:
    """The signed CDN URL (no token needed), streamed to ``dest`` in chunks; only Discord's CDN
    hosts are fetched."""
    url = attachment.handle
    if not url or urlsplit(url).hostname not in CDN_HOSTS:
        raise FetchError(MediaReason.DOWNLOAD_FAILED, "not a Discord CDN URL")
    if attachment.size is not None and attachment.size > max_bytes:
        raise FetchError(MediaReason.TOO_LARGE, f"{attachment.size} bytes")
    return await stream_to_file(http, url, dest, max_bytes)
