"""Files both ways: inbound through the authenticated media endpoints (Synapse refuses the
legacy path for new media), encrypted attachments decrypted; outbound uploaded to the media
repository and sent as the msgtype that fits (voice notes as `m.audio` with the voice flag)."""

from __future__ import annotations

import mimetypes
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import aiohttp

from chatgate.channels.download import stream_to_file, write_bytes
from chatgate.model.errors import FetchError
from chatgate.model.messages import Attachment
from chatgate.model.reasons import MediaReason

if TYPE_CHECKING:
    from chatgate.channels.matrix.client import Session

DOWNLOAD_PATH = "/_matrix/client/v1/media/download/"
CONFIG_PATH = "/_matrix/client/v1/media/config"
VOICE_FLAG = "org.matrix.msc3245.voice"


def download_url(homeserver: str, mxc: str) -> str:
    """The authenticated download URL of an `mxc://server/id` URI."""
    if not mxc.startswith("mxc://"):
        raise FetchError(MediaReason.DOWNLOAD_FAILED, "not an mxc:// URI")
    server, _, media_id = mxc.removeprefix("mxc://").partition("/")
    if not server or not media_id or "/" in media_id:
        raise FetchError(MediaReason.DOWNLOAD_FAILED, "malformed mxc:// URI")
    return f"{homeserver}{DOWNLOAD_PATH}{quote(server, safe='')}/{quote(media_id, safe='')}"


def _headers(session: Session) -> dict[str, str]:
    return {"Authorization": f"Bearer {session.client.api.token}"}


async def fetch(
    session: Session, homeserver: str, attachment: Attachment, dest: Path, max_bytes: int
) -> int:
    """Download `attachment` into `dest`: a plain `mxc://` handle streams to disk; an encrypted
    one (`event:<room>:<event>`) reads its key from the event again and decrypts in memory."""
    handle = attachment.handle or ""
    if handle.startswith("mxc://"):
        url = download_url(homeserver, handle)
        return await stream_to_file(session.http, url, dest, max_bytes, headers=_headers(session))
    if handle.startswith("event:"):
        return await _fetch_encrypted(session, homeserver, handle, dest, max_bytes)
    raise FetchError(MediaReason.DOWNLOAD_FAILED, "unknown attachment handle")


async def _fetch_encrypted(
    session: Session, homeserver: str, handle: str, dest: Path, max_bytes: int
) -> int:
    from mautrix.api import Method
    from mautrix.crypto.attachments import decrypt_attachment
    from mautrix.types import EncryptedEvent

    room_id, _, event_id = handle.removeprefix("event:").rpartition(":$")
    event_id = "$" + event_id
    client = session.client
    if client.crypto is None:
        raise FetchError(MediaReason.DOWNLOAD_FAILED, "encrypted file without e2ee")
    try:
        raw = await client.api.request(
            Method.GET, f"/_matrix/client/v3/rooms/{quote(room_id)}/event/{quote(event_id)}"
        )
        plain = await client.crypto.decrypt_megolm_event(EncryptedEvent.deserialize(raw))
    except Exception as exc:
        raise FetchError(MediaReason.DOWNLOAD_FAILED, type(exc).__name__) from None
    file = plain.content.serialize().get("file") or {}
    url = download_url(homeserver, str(file.get("url") or ""))
    data = await _read(session, url, max_bytes)
    try:
        clear = decrypt_attachment(data, file["key"]["k"], file["hashes"]["sha256"], file["iv"])
    except Exception as exc:
        raise FetchError(MediaReason.DOWNLOAD_FAILED, f"decrypt: {type(exc).__name__}") from None
    return await write_bytes(dest, clear)


async def _read(session: Session, url: str, max_bytes: int) -> bytes:
    try:
        async with session.http.get(url, headers=_headers(session)) as resp:
            if resp.status >= 300:
                raise FetchError(MediaReason.DOWNLOAD_FAILED, f"HTTP {resp.status}")
            if (resp.content_length or 0) > max_bytes:
                raise FetchError(MediaReason.TOO_LARGE, f"{resp.content_length} bytes")
            data = await resp.content.read(max_bytes + 1)
    except (aiohttp.ClientError, TimeoutError) as exc:
        raise FetchError(MediaReason.DOWNLOAD_FAILED, type(exc).__name__) from None
    if len(data) > max_bytes:
        raise FetchError(MediaReason.TOO_LARGE, f"more than {max_bytes} bytes")
    return data


def msgtype_for(mime: str, voice: bool) -> str:
    if voice or mime.startswith("audio/"):
        return "m.audio"
    if mime.startswith("image/"):
        return "m.image"
    if mime.startswith("video/"):
        return "m.video"
    return "m.file"


async def upload_content(
    session: Session, data: bytes, name: str, mime: str | None, voice: bool, encrypt: bool
) -> dict[str, Any]:
    """Upload a file (encrypted first when the room is) and the content of its message."""
    mime = mime or mimetypes.guess_type(name)[0] or "application/octet-stream"
    info: dict[str, Any] = {"mimetype": mime, "size": len(data)}
    content: dict[str, Any] = {"msgtype": msgtype_for(mime, voice), "body": name, "info": info}
    content["filename"] = name
    if voice:
        content[VOICE_FLAG] = {}
    if encrypt:
        from mautrix.crypto.attachments import encrypt_attachment

        cipher, file = encrypt_attachment(data)
        mxc = await session.client.upload_media(
            cipher, mime_type="application/octet-stream", filename=None
        )
        encrypted = file.serialize()
        encrypted["url"] = str(mxc)
        content["file"] = encrypted
    else:
        mxc = await session.client.upload_media(data, mime_type=mime, filename=name)
        content["url"] = str(mxc)
    return content


async def upload_limit(session: Session) -> int | None:
    """The server's `m.upload.size` (bytes), None when it sets none."""
    from mautrix.api import Method

    config = await session.client.api.request(Method.GET, CONFIG_PATH)
    size = config.get("m.upload.size")
    return size if isinstance(size, int) else None
