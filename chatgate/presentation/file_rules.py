"""What a channel can do with a file a reply carries: upload it as is, as another kind, or not.

Pure decisions over `FileLimits` (declared per channel next to its text limits): a file over the
channel's upload limit becomes a notice naming the limit, a voice note where the platform has none
goes as an audio file, a photo over the photo limit goes as a document, a caption too long for the
platform moves to a message of its own. Every change carries a `DegradeReason`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from chatgate.model.outbound import FILE_KINDS, File
from chatgate.model.reasons import DegradeReason

MB = 1024 * 1024


@dataclass(frozen=True)
class FileLimits:
    """Upload rules of one channel; a channel without them cannot receive files."""

    max_bytes: int
    max_caption_chars: int
    max_photo_bytes: int | None = None  # images over this go as documents
    kinds: frozenset[str] = field(default_factory=lambda: FILE_KINDS)  # shown natively
    # audio, voice notes and videos over this go as documents
    max_media_bytes: int | None = None
    # image types shown as pictures (None: any); other images go as documents
    image_mimes: frozenset[str] | None = None
    # the most a bot may download from the platform, whatever the config says (None: no cap)
    max_download_bytes: int | None = None

    def __post_init__(self) -> None:
        if self.max_bytes < 1 or self.max_caption_chars < 0:
            raise ValueError("max_bytes must be >= 1 and max_caption_chars >= 0")
        if not self.kinds <= FILE_KINDS or "document" not in self.kinds:
            raise ValueError(f"kinds must include 'document' and be among {sorted(FILE_KINDS)}")


@dataclass(frozen=True)
class FileFit:
    """The file to upload (None: not uploadable), text to show with it, and why it changed."""

    file: File | None
    text: str = ""
    reasons: tuple[DegradeReason, ...] = ()


def human_size(size: int) -> str:
    """1536 → "1.5 KB"; sizes in binary units, one decimal under 10."""
    value = float(size)
    for unit in ("bytes", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            if unit == "bytes":
                return f"{size} bytes"
            return f"{value:.1f} {unit}" if value < 10 else f"{value:.0f} {unit}"
        value /= 1024
    return f"{size} bytes"  # pragma: no cover - the loop always returns


def _kind_for(kind: str, limits: FileLimits) -> tuple[str, DegradeReason | None]:
    if kind in limits.kinds:
        return kind, None
    if kind == "voice" and "audio" in limits.kinds:
        return "audio", DegradeReason.VOICE_AS_AUDIO
    return "document", DegradeReason.FILE_AS_DOCUMENT


_MEDIA = frozenset({"audio", "voice", "video"})


def _shows_image(file: File, limits: FileLimits) -> bool:
    photo_cap = limits.max_photo_bytes
    if photo_cap is not None and file.size > photo_cap:
        return False
    return limits.image_mimes is None or file.mime in limits.image_mimes


def fit_file(file: File, limits: FileLimits | None) -> FileFit:
    """Decide how `file` reaches a channel with `limits` (None: the channel takes no files)."""
    label = f"{file.name} ({human_size(file.size)})"
    if limits is None:
        text = f"📎 {label} could not be attached: this chat cannot receive files."
        return FileFit(None, text, (DegradeReason.FILE_UNSUPPORTED,))
    if file.size > limits.max_bytes:
        text = f"📎 {label} is over this chat's {human_size(limits.max_bytes)} file limit."
        return FileFit(None, text, (DegradeReason.FILE_TOO_LARGE,))
    reasons: list[DegradeReason] = []
    kind, reason = _kind_for(file.kind, limits)
    if reason is not None:
        reasons.append(reason)
    if kind == "image" and not _shows_image(file, limits):
        kind = "document"
        reasons.append(DegradeReason.IMAGE_AS_DOCUMENT)
    media_cap = limits.max_media_bytes
    if kind in _MEDIA and media_cap is not None and file.size > media_cap:
        kind = "document"
        reasons.append(DegradeReason.FILE_AS_DOCUMENT)
    text = ""
    caption = file.caption
    if len(caption) > limits.max_caption_chars:
        text, caption = caption, ""
        reasons.append(DegradeReason.CAPTION_AS_TEXT)
    if (kind, caption) == (file.kind, file.caption):
        return FileFit(file)
    return FileFit(replace(file, kind=kind, caption=caption), text, tuple(reasons))  # type: ignore[arg-type]
