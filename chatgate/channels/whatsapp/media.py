"""WhatsApp attachments: `GET /{media-id}` for a short-lived URL, then that URL with the same
bearer token (Meta's media URLs require it), streamed to a file."""

from __future__ import annotations

from pathlib import Path

from chatgate.channels.download import stream_to_file
from chatgate.channels.whatsapp.graph import Graph, GraphError
from chatgate.model.errors import FetchError
from chatgate.model.messages import Attachment
from chatgate.model.reasons import MediaReason


async def fetch_media(graph: Graph, attachment: Attachment, dest: Path, max_bytes: int) -> int:
    if not attachment.handle:
        raise FetchError(MediaReason.DOWNLOAD_FAILED, "no media id")
    try:
        info = await graph.get(attachment.handle)
    except GraphError as exc:
        raise FetchError(MediaReason.DOWNLOAD_FAILED, f"media lookup: {exc.code}") from None
    url, size = info.get("url"), info.get("file_size")
    if not isinstance(url, str) or not url:
        raise FetchError(MediaReason.DOWNLOAD_FAILED, "media lookup gave no url")
    if isinstance(size, int) and size > max_bytes:
        raise FetchError(MediaReason.TOO_LARGE, f"{size} bytes")
    # the session sends the Authorization header itself
    return await stream_to_file(graph.session, url, dest, max_bytes)
