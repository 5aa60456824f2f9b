"""Files in WhatsApp replies: the `/messages` body that sends an uploaded media id.

Pure. A file is first uploaded to `/{phone_number_id}/media` (the adapter does that); its id then
goes out as a message of type image, document, audio or video. A voice note is an audio message
(WhatsApp plays OGG/Opus audio as a voice note, other audio as a file); audio takes no caption,
so an audio file's caption follows as a text message of its own.
"""

from __future__ import annotations

from typing import Any

from chatgate.model.outbound import File

MESSAGE_TYPES = {
    "image": "image",
    "document": "document",
    "audio": "audio",
    "voice": "audio",
    "video": "video",
}
CAPTIONED = frozenset({"image", "document", "video"})


def message_type(file: File) -> str:
    """The `/messages` type of a file's kind (anything unknown goes as a document)."""
    return MESSAGE_TYPES.get(file.kind, "document")


def media_payload(file: File, media_id: str) -> dict[str, Any]:
    """The type-specific part of a `/messages` call that sends the uploaded `media_id`."""
    kind = message_type(file)
    media: dict[str, Any] = {"id": media_id}
    if kind in CAPTIONED and file.caption:
        media["caption"] = file.caption
    if kind == "document":
        media["filename"] = file.name
    return {"type": kind, kind: media}


def caption_after(file: File) -> str:
    """Text to send after the media message: the caption of a kind that cannot carry one."""
    return "" if message_type(file) in CAPTIONED else file.caption
