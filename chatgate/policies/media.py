"""Media decisions: which attachments a turn fetches, how each kind is understood, what the user
and the model are told when a file is refused. Pure: no I/O, no SDK."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

MB = 1024 * 1024
# Platform caps that no configuration can lift (Telegram's Bot API serves bots files of ≤ 20 MB).
PLATFORM_MAX_BYTES = {"telegram": 20 * MB}
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


class MediaReason(StrEnum):
    """What became of one attachment (journal, metrics, logs, the user's notice)."""

    IMAGE_SENT = "image_sent"  # passed to the model as an image part
    IMAGE_DESCRIBED = "image_described"  # described in words by the configured vision_model
    TRANSCRIBED = "transcribed"  # voice/audio became text
    DOCUMENT_TEXT = "document_text"  # text extracted (possibly truncated)
    FILE_NOTED = "file_noted"  # the model got name, type and size only
    TOO_LARGE = "media_too_large"
    TOO_LONG = "media_too_long"  # a voice note/audio longer than max_audio_s
    TOO_MANY = "media_too_many"
    TURN_TOTAL = "media_turn_total"  # the turn's files together exceed max_total_bytes
    UNSUPPORTED_TYPE = "media_unsupported_type"
    NO_VISION = "media_no_vision"  # the model cannot see images
    CORRUPT = "media_corrupt"  # unreadable image/PDF, or a decompression bomb
    NO_TEXT = "media_no_text"  # a PDF without a text layer
    DOWNLOAD_FAILED = "media_download_failed"
    TRANSCRIPTION_FAILED = "media_transcription_failed"
    DISABLED = "media_disabled"  # the agent has media understanding turned off


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

    def for_platform(self, platform: str) -> MediaLimits:
        cap = PLATFORM_MAX_BYTES.get(platform)
        if cap is None or cap >= self.max_bytes:
            return self
        return replace(self, max_bytes=cap)


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


def user_notice(reason: MediaReason, name: str, platform: str, limits: MediaLimits) -> str | None:
    """The short visible explanation for a refused or failed attachment (None: nothing to say)."""
    cap = size_text(limits.max_bytes)
    platform_cap = PLATFORM_MAX_BYTES.get(platform)
    texts = {
        MediaReason.TOO_LARGE: (
            f"{name} is larger than {cap}, the most this bot accepts"
            + (
                " (Telegram lets bots download files of up to 20 MB)"
                if platform_cap is not None and platform_cap <= limits.max_bytes
                else ""
            )
            + "; send a smaller file."
        ),
        MediaReason.TOO_LONG: (
            f"{name} is longer than {limits.max_audio_s / 60:g} minutes, the most this bot "
            "transcribes."
        ),
        MediaReason.TOO_MANY: (
            f"{name} was skipped: at most {limits.max_files} files per message are read."
        ),
        MediaReason.TURN_TOTAL: (
            f"{name} was skipped: the files of one message may total "
            f"{size_text(limits.max_total_bytes)}."
        ),
        MediaReason.UNSUPPORTED_TYPE: f"{name}: this file type can't be read; only its name was passed on.",
        MediaReason.NO_VISION: f"{name}: this assistant can't see images.",
        MediaReason.CORRUPT: f"{name} could not be opened (damaged or not what it claims to be).",
        MediaReason.NO_TEXT: f"{name} has no text layer (a scan?); only its name was passed on.",
        MediaReason.DOWNLOAD_FAILED: f"{name} could not be downloaded; please send it again.",
        MediaReason.TRANSCRIPTION_FAILED: (
            f"{name}: the voice message could not be transcribed; please type it or try again."
        ),
        MediaReason.DISABLED: f"{name}: this assistant does not read files.",
    }
    return texts.get(reason)


def model_note(reason: MediaReason, name: str, mime: str, size: int | None) -> str:
    """What the model is told about a file it does not get the content of."""
    facts = f"{name}, {mime or 'unknown type'}" + (f", {size_text(size)}" if size else "")
    if reason in (MediaReason.FILE_NOTED, MediaReason.UNSUPPORTED_TYPE):
        return f"[file received: {facts}; its content is not readable here]"
    return f"[file not available ({reason.value}): {facts}]"
