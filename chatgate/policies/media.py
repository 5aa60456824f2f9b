"""Media decisions: which attachments a turn fetches, how each kind is understood, what the user
and the model are told when a file is refused. Pure: no I/O, no SDK."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from chatgate.model.reasons import MediaReason
from chatgate.model.text_ids import TextId

MB = 1024 * 1024
TEXT_MIMES = frozenset(
    {
        "application/json",
        "application/xml",
        "application/x-yaml",
        "application/yaml",
        "application/javascript",
        "application/x-sh",
        "application/toml",
    }
)
IMAGE_MIMES = frozenset({"image/jpeg", "image/png", "image/webp", "image/gif"})
SPEECH_MIMES = frozenset(
    {
        "audio/ogg",
        "audio/mpeg",
        "audio/mp4",
        "audio/x-m4a",
        "audio/m4a",
        "audio/wav",
        "audio/x-wav",
        "audio/webm",
        "audio/flac",
        "audio/x-flac",
        "audio/aac",
        "video/ogg",  # some sniffers read Opus-in-Ogg voice notes as video/ogg
    }
)


class Treatment(StrEnum):
    """How a fetched file reaches the model, by its sniffed type."""

    IMAGE = "image"
    SPEECH = "speech"
    TEXT = "text"
    PDF = "pdf"
    NOTE = "note"  # name, type and size only


@dataclass(frozen=True, slots=True)
class MediaLimits:
    """Bounds of one turn's media (per agent; the platform cap applies on top)."""

    max_bytes: int = 20 * MB
    max_files: int = 10
    max_total_bytes: int = 50 * MB
    max_audio_s: float = 600.0

    def capped(self, download_cap: int | None) -> MediaLimits:
        """Within the platform's own download cap (its channel's `FileLimits`), if it has one."""
        if download_cap is None or download_cap >= self.max_bytes:
            return self
        return replace(self, max_bytes=download_cap)


@dataclass(frozen=True, slots=True)
class FetchPlan:
    """Per attachment: refused before any download (``refused``) or fetched up to ``max_bytes``."""

    refused: MediaReason | None
    max_bytes: int


def plan_fetches(
    claimed_sizes: Sequence[int | None],
    limits: MediaLimits,
    durations: Sequence[float | None] = (),
) -> tuple[FetchPlan, ...]:
    """Refuse what the platform's claimed sizes (and audio lengths) already rule out; the rest
    is fetched with a cap (a claimed size may lie or be missing: the download enforces it)."""
    plans: list[FetchPlan] = []
    total = 0
    for index, size in enumerate(claimed_sizes):
        seconds = durations[index] if index < len(durations) else None
        if index >= limits.max_files:
            plans.append(FetchPlan(MediaReason.TOO_MANY, 0))
            continue
        if size is not None and size > limits.max_bytes:
            plans.append(FetchPlan(MediaReason.TOO_LARGE, 0))
            continue
        if seconds is not None and seconds > limits.max_audio_s:
            plans.append(FetchPlan(MediaReason.TOO_LONG, 0))
            continue
        room = limits.max_total_bytes - total
        if (size or 0) > room or room <= 0:
            plans.append(FetchPlan(MediaReason.TURN_TOTAL, 0))
            continue
        total += size or 0
        plans.append(FetchPlan(None, min(limits.max_bytes, room)))
    return tuple(plans)


def treatment(mime: str) -> Treatment:
    """How a file of sniffed (or, for plain text, claimed) type ``mime`` is understood."""
    if mime in IMAGE_MIMES:
        return Treatment.IMAGE
    if mime in SPEECH_MIMES:
        return Treatment.SPEECH
    if mime == "application/pdf":
        return Treatment.PDF
    if mime.startswith("text/") or mime in TEXT_MIMES:
        return Treatment.TEXT
    return Treatment.NOTE


def size_text(size: int) -> str:
    """A human size: "812 KB", "21.0 MB"."""
    if size >= MB:
        return f"{size / MB:.1f} MB"
    return f"{max(1, round(size / 1024))} KB"


@dataclass(frozen=True, slots=True)
class MediaNotice:
    """A line above the reply about one file: a catalog text and its facts, worded at the edge
    in the user's language (sizes and durations included)."""

    text_id: TextId
    name: str = ""  # the file's own name; empty: the kind's name in the user's language
    kind: str = ""
    max_bytes: int = 0
    seconds: float = 0.0
    count: int = 0
    text: str = ""  # what was heard (``media.heard``)


# The word for a file without a name of its own, by attachment kind.
KIND_NAMES: dict[str, TextId] = {
    "image": TextId.MEDIA_NAME_IMAGE,
    "voice": TextId.MEDIA_NAME_VOICE,
    "audio": TextId.MEDIA_NAME_AUDIO,
    "video": TextId.MEDIA_NAME_VIDEO,
    "document": TextId.MEDIA_NAME_DOCUMENT,
    "sticker": TextId.MEDIA_NAME_STICKER,
}
_NOTICES: dict[MediaReason, TextId] = {
    MediaReason.TOO_LARGE: TextId.MEDIA_TOO_LARGE,
    MediaReason.TOO_LONG: TextId.MEDIA_TOO_LONG,
    MediaReason.TOO_MANY: TextId.MEDIA_TOO_MANY,
    MediaReason.TURN_TOTAL: TextId.MEDIA_TURN_TOTAL,
    MediaReason.UNSUPPORTED_TYPE: TextId.MEDIA_UNSUPPORTED,
    MediaReason.NO_VISION: TextId.MEDIA_NO_VISION,
    MediaReason.CORRUPT: TextId.MEDIA_CORRUPT,
    MediaReason.NO_TEXT: TextId.MEDIA_NO_TEXT,
    MediaReason.DOWNLOAD_FAILED: TextId.MEDIA_DOWNLOAD_FAILED,
    MediaReason.TRANSCRIPTION_FAILED: TextId.MEDIA_TRANSCRIPTION_FAILED,
    MediaReason.DISABLED: TextId.MEDIA_DISABLED,
}


def user_notice(
    reason: MediaReason,
    name: str,
    download_cap: int | None,
    limits: MediaLimits,
    kind: str = "",
) -> MediaNotice | None:
    """The short visible explanation for a refused or failed attachment (None: nothing to say);
    ``name`` empty means the file has none of its own (the kind's word is used);
    ``download_cap`` is the platform's own cap (only Telegram's Bot API has one)."""
    text_id = _NOTICES.get(reason)
    if text_id is None:
        return None
    platform_cap = download_cap is not None and download_cap <= limits.max_bytes
    if text_id is TextId.MEDIA_TOO_LARGE and platform_cap:  # name the platform's cap
        text_id = TextId.MEDIA_TOO_LARGE_TELEGRAM
    max_bytes = limits.max_total_bytes if reason is MediaReason.TURN_TOTAL else limits.max_bytes
    return MediaNotice(
        text_id, name, kind, max_bytes=max_bytes, seconds=limits.max_audio_s, count=limits.max_files
    )


def model_note(reason: MediaReason, name: str, mime: str, size: int | None) -> str:
    """What the model is told about a file it does not get the content of."""
    facts = f"{name}, {mime or 'unknown type'}" + (f", {size_text(size)}" if size else "")
    if reason in (MediaReason.FILE_NOTED, MediaReason.UNSUPPORTED_TYPE):
        return f"[file received: {facts}; its content is not readable here]"
    return f"[file not available ({reason.value}): {facts}]"
