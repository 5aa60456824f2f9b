"""The turn's "prepare input" step: fetch each attachment through its channel, check its real
type, and turn it into what the model understands (image parts, transcripts, document text, or an
honest note), with a coded outcome per file and short notices for the user."""

from __future__ import annotations

import asyncio
import logging
import os
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, Protocol

from chatgate import tracing
from chatgate.config.media_models import AgentMediaConfig
from chatgate.media.describe import Describer, DescriptionFailed, describe
from chatgate.media.documents import DocumentText, UnreadableDocument, pdf_text, text_file
from chatgate.media.files import TurnFiles
from chatgate.media.sniff import sniff
from chatgate.media.transcribe import SpeechEndpoint, TranscriptionFailed, transcribe
from chatgate.model.chat import ChatMessage
from chatgate.model.errors import FetchError
from chatgate.model.messages import Attachment, AttachmentKind, InboundMessage
from chatgate.model.outbound import Context, OutboundMessage
from chatgate.model.reasons import MediaReason
from chatgate.model.text_ids import TextId
from chatgate.policies.media import (
    MediaLimits,
    MediaNotice,
    Treatment,
    model_note,
    plan_fetches,
    treatment,
    user_notice,
)
from chatgate.texts.voice import Voice

log = logging.getLogger("chatgate.media")
FETCH_ATTEMPTS = 2
MAX_DECODES_AT_ONCE = 2
_TIMED = frozenset({AttachmentKind.VOICE, AttachmentKind.AUDIO})  # max_audio_s applies
_DEFAULT_NAMES: dict[str, str] = {
    AttachmentKind.IMAGE: "photo",
    AttachmentKind.VOICE: "voice message",
    AttachmentKind.AUDIO: "audio",
    AttachmentKind.VIDEO: "video",
    AttachmentKind.DOCUMENT: "document",
    AttachmentKind.STICKER: "sticker",
}


class Fetcher(Protocol):
    async def fetch(self, attachment: Attachment, dest: Path, max_bytes: int) -> int: ...


# What became of one attachment: its outcome, the text block and the model part (if any).
Understood = tuple["MediaOutcome", str, Mapping[str, Any] | None]


@dataclass(frozen=True, slots=True)
class MediaOutcome:
    """What became of one attachment (journal, logs, the transcript line's ``meta``)."""

    message: str  # the inbound key it came with
    name: str
    kind: str
    reason: MediaReason
    mime: str = ""
    size: int | None = None
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "kind": self.kind, "reason": self.reason.value}
        if self.mime:
            out["mime"] = self.mime
        if self.size is not None:
            out["size"] = self.size
        if self.detail:
            out["detail"] = self.detail
        return out


@dataclass(frozen=True)
class PreparedInput:
    """The turn's input after media: text to add and image parts per inbound key."""

    blocks: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    parts: Mapping[str, tuple[Mapping[str, Any], ...]] = field(default_factory=dict)
    outcomes: tuple[MediaOutcome, ...] = ()
    notices: tuple[MediaNotice, ...] = ()
    placeholders: Mapping[str, str] = field(default_factory=dict)

    def apply(self, new: Sequence[ChatMessage]) -> list[ChatMessage]:
        """The turn's user messages with the derived text appended (a bare ``[photo]``-style
        placeholder replaced) and the media outcomes in ``meta``; never bytes."""
        out = []
        for message in new:
            key = message.source or ""
            blocks = self.blocks.get(key)
            if not blocks:
                out.append(message)
                continue
            own = message.content
            if own == self.placeholders.get(key):
                own = ""
            text = "\n\n".join(b for b in (own, *blocks) if b)
            media = [o.to_dict() for o in self.outcomes if o.message == key]
            meta = {**(message.meta or {}), "media": media}
            out.append(replace(message, content=text, meta=meta))
        return out

    def annotate(self, message: OutboundMessage | None, voice: Voice) -> OutboundMessage | None:
        """The reply with the media notices above it, in the chat's language (a refused file
        is never silent)."""
        if message is None or not self.notices:
            return message
        lines = "\n".join(voice.media(n) for n in self.notices)
        return OutboundMessage((Context(lines), *message.blocks))

    def journal_fields(self) -> dict[str, Any]:
        """Every attachment and what became of it, for the journaled reply (`chatgate why`)."""
        if not self.outcomes:
            return {}
        return {"media": [{"message": o.message, **o.to_dict()} for o in self.outcomes]}


# A turn without attachments: one shared for all, its mappings read-only (an agent gets `parts`).
NO_MEDIA = PreparedInput(MappingProxyType({}), MappingProxyType({}), (), (), MappingProxyType({}))


@dataclass(frozen=True)
class MediaContext:
    """What the step needs besides the messages: the agent's media settings and capabilities."""

    config: AgentMediaConfig
    download_cap: int | None  # the platform's own cap on what a bot downloads (channel FileLimits)
    state_dir: Path
    vision: bool
    speech: SpeechEndpoint | None
    describer: Describer | None = None


_GATES: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[tuple[str, int], asyncio.Semaphore]
] = weakref.WeakKeyDictionary()
_DECODES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
    weakref.WeakKeyDictionary()
)


def _gate(kind: str, limit: int) -> asyncio.Semaphore:
    gates = _GATES.setdefault(asyncio.get_running_loop(), {})
    gate = gates.get((kind, limit))
    if gate is None:
        gate = gates[(kind, limit)] = asyncio.Semaphore(limit)
    return gate


def download_gate(limit: int) -> asyncio.Semaphore:
    """The bound on files downloading at once across all turns of this event loop (turns of
    agents with the same `max_concurrent_downloads` share it): SDKs that read a file whole keep
    at most ``limit × max_bytes`` in memory."""
    return _gate("download", limit)


def transcription_gate(limit: int) -> asyncio.Semaphore:
    """The bound on voice notes at the transcriber at once, all turns of this event loop: the
    SDK posts each file whole from memory."""
    return _gate("transcription", limit)


def decodes_at_once(cores: int | None = None) -> int:
    """Images decoded at once: one per core the event loop leaves free, one to two. Each holds
    a decoded bitmap (~28 MB for a 12 MP photo) in a worker thread; on two cores a second one
    competes with the event loop and only adds memory, not speed."""
    if cores is None:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    return max(1, min(MAX_DECODES_AT_ONCE, cores - 1))


def decode_gate() -> asyncio.Semaphore:
    """The bound on images decoding at once on this event loop (`decodes_at_once`)."""
    loop = asyncio.get_running_loop()
    gate = _DECODES.get(loop)
    if gate is None:
        gate = _DECODES[loop] = asyncio.Semaphore(decodes_at_once())
    return gate


def display_name(att: Attachment) -> str:
    """The file's name, or what it is ("voice message") when the platform gives none."""
    if att.name:
        return att.name
    return _DEFAULT_NAMES.get(att.kind, att.kind)


def placeholder(msg: InboundMessage) -> str | None:
    """The text an adapter put in for a message with only a file (``[image]``)."""
    if not msg.attachments:
        return None
    return f"[{msg.attachments[0].kind}]"


async def prepare_attachments(
    messages: Sequence[InboundMessage], fetcher: Fetcher | None, ctx: MediaContext
) -> PreparedInput:
    """Fetch and understand every attachment of the turn; temporary files are gone on return."""
    items = [(msg.key, att) for msg in messages for att in msg.attachments]
    if not items:
        return PreparedInput()
    holders = {m.key: p for m in messages if (p := placeholder(m)) is not None}
    limits = ctx.config.limits().capped(ctx.download_cap)
    if not ctx.config.enabled:
        outcomes = [_outcome(k, a, MediaReason.DISABLED) for k, a in items]
        return _assemble(outcomes, {}, {}, ctx, limits, holders)
    durations = [a.duration_s if a.kind in _TIMED else None for _, a in items]
    plans = plan_fetches([a.size for _, a in items], limits, durations)
    gate = download_gate(ctx.config.max_concurrent_downloads)
    async with TurnFiles(ctx.state_dir) as files:
        results = await asyncio.gather(
            *(
                _guarded(key, att, plan.refused, plan.max_bytes, fetcher, files, gate, ctx)
                for (key, att), plan in zip(items, plans, strict=True)
            )
        )
    blocks, parts, heard = _collate(results, echo=ctx.config.echo_transcript)
    return _assemble([r[0] for r in results], blocks, parts, ctx, limits, holders, heard)


def _collate(
    results: Sequence[Understood], *, echo: bool
) -> tuple[dict[str, list[str]], dict[str, list[Mapping[str, Any]]], list[MediaNotice]]:
    """Each message's text blocks and model parts, and the transcripts to echo to the user."""
    blocks: dict[str, list[str]] = {}
    parts: dict[str, list[Mapping[str, Any]]] = {}
    heard: list[MediaNotice] = []
    for outcome, block, part in results:
        if outcome.reason is MediaReason.TRANSCRIBED and echo:
            heard.append(MediaNotice(TextId.MEDIA_HEARD, text=block.split("] ", 1)[-1]))
        if block:
            blocks.setdefault(outcome.message, []).append(block)
        if part is not None:
            parts.setdefault(outcome.message, []).append(part)
    return blocks, parts, heard


def _assemble(
    outcomes: Sequence[MediaOutcome],
    blocks: Mapping[str, list[str]],
    parts: Mapping[str, list[Mapping[str, Any]]],
    ctx: MediaContext,
    limits: MediaLimits,
    placeholders: Mapping[str, str],
    heard: Sequence[MediaNotice] = (),
) -> PreparedInput:
    notices = list(heard)
    all_blocks = {k: list(v) for k, v in blocks.items()}
    for o in outcomes:
        if o.reason is MediaReason.DISABLED:
            all_blocks.setdefault(o.message, []).append(
                model_note(o.reason, o.name, o.mime, o.size)
            )
        own_name = "" if o.name == _DEFAULT_NAMES.get(o.kind) else o.name
        notice = user_notice(o.reason, own_name, ctx.download_cap, limits, o.kind)
        if notice is not None:
            notices.append(notice)
        log.info("attachment", extra={"key": o.message, "kind": o.kind, "reason": o.reason.value})
    return PreparedInput(
        {k: tuple(v) for k, v in all_blocks.items()},
        {k: tuple(v) for k, v in parts.items()},
        tuple(outcomes),
        tuple(notices),
        placeholders,
    )


async def _guarded(
    key: str,
    att: Attachment,
    refused: MediaReason | None,
    max_bytes: int,
    fetcher: Fetcher | None,
    files: TurnFiles,
    gate: asyncio.Semaphore,
    ctx: MediaContext,
) -> Understood:
    """One attachment; a fault in reading it costs that file, never the turn."""
    try:
        return await _one(key, att, refused, max_bytes, fetcher, files, gate, ctx)
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        log.exception("attachment could not be read", extra={"key": key, "kind": att.kind})
        name = display_name(att)
        outcome = _outcome(key, att, MediaReason.CORRUPT, name=name, detail=type(exc).__name__)
        return outcome, model_note(outcome.reason, name, att.mime or "", att.size), None


async def _one(
    key: str,
    att: Attachment,
    refused: MediaReason | None,
    max_bytes: int,
    fetcher: Fetcher | None,
    files: TurnFiles,
    gate: asyncio.Semaphore,
    ctx: MediaContext,
) -> Understood:
    name = display_name(att)
    if refused is not None:
        outcome = _outcome(key, att, refused, name=name)
        return outcome, model_note(refused, name, att.mime or "", att.size), None
    if fetcher is None:
        outcome = _outcome(key, att, MediaReason.DOWNLOAD_FAILED, name=name, detail="no channel")
        return outcome, model_note(outcome.reason, name, att.mime or "", att.size), None
    path = files.path_for(Path(att.name or "").suffix)
    # the file's kind and size, never its name
    with tracing.span("chatgate.media.download", chatgate__media__kind=str(att.kind)) as span:
        async with gate:
            failure = await _fetch(fetcher, att, path, max_bytes, ctx.config.download_timeout_s)
        if failure is not None:
            span.fail(failure.reason.value)
            outcome = _outcome(key, att, failure.reason, name=name, detail=failure.detail)
            return outcome, model_note(failure.reason, name, att.mime or "", att.size), None
        size = (await asyncio.to_thread(path.stat)).st_size
        span.set(chatgate__media__size=size)
    mime = await asyncio.to_thread(sniff, path, att.mime)
    return await _understand(key, att, name, path, mime, size, ctx)


async def _fetch(
    fetcher: Fetcher, att: Attachment, path: Path, max_bytes: int, timeout_s: float
) -> FetchError | None:
    error = FetchError(MediaReason.DOWNLOAD_FAILED)
    for _ in range(FETCH_ATTEMPTS):
        try:
            async with asyncio.timeout(timeout_s):
                await fetcher.fetch(att, path, max_bytes)
            return None
        except FetchError as exc:
            error = exc
            if exc.reason is not MediaReason.DOWNLOAD_FAILED:
                return exc  # too large, unsupported: a second try cannot help
        except TimeoutError:
            error = FetchError(MediaReason.DOWNLOAD_FAILED, "timeout")
        except Exception as exc:  # an SDK error the adapter did not classify
            log.warning("attachment fetch raised", extra={"error": type(exc).__name__})
            error = FetchError(MediaReason.DOWNLOAD_FAILED, type(exc).__name__)
    return error


@dataclass(frozen=True)
class _Fetched:
    """A downloaded attachment being understood, and how its outcome is worded."""

    key: str
    att: Attachment
    name: str
    path: Path
    mime: str
    size: int

    def done(
        self,
        reason: MediaReason,
        block: str,
        part: Mapping[str, Any] | None = None,
        detail: str = "",
    ) -> Understood:
        outcome = MediaOutcome(
            self.key, self.name, self.att.kind, reason, self.mime, self.size, detail
        )
        return outcome, block, part

    def noted(self, reason: MediaReason, detail: str = "") -> Understood:
        block = model_note(reason, self.name, self.mime, self.size)
        return self.done(reason, block, detail=detail)


async def _understand(
    key: str, att: Attachment, name: str, path: Path, mime: str, size: int, ctx: MediaContext
) -> Understood:
    got = _Fetched(key, att, name, path, mime, size)
    how = treatment(mime)
    if how is Treatment.IMAGE:
        return await _image(got, ctx)
    if how is Treatment.SPEECH:
        return await _speech(got, ctx)
    if how is Treatment.NOTE:  # an animated sticker is noted without a notice to the user
        sticker = att.kind == AttachmentKind.STICKER
        return got.noted(MediaReason.FILE_NOTED if sticker else MediaReason.UNSUPPORTED_TYPE)
    return await _document(got, pdf_text if how is Treatment.PDF else text_file, ctx)


async def _image(got: _Fetched, ctx: MediaContext) -> Understood:
    """An image for a vision model, or described by the vision model for one without."""
    if not ctx.vision and ctx.describer is None:
        return got.noted(MediaReason.NO_VISION)
    from chatgate.media.images import UnreadableImage, image_part  # Pillow: on first use

    try:
        async with decode_gate():
            image = await asyncio.to_thread(
                image_part, got.path, got.mime, ctx.config.max_image_side
            )
    except UnreadableImage as exc:
        return got.noted(MediaReason.CORRUPT, str(exc))
    if not ctx.vision and ctx.describer is not None:
        try:
            seen = await describe(image.part, ctx.describer)
        except DescriptionFailed as exc:
            return got.noted(MediaReason.NO_VISION, f"vision_model: {exc}")
        return got.done(MediaReason.IMAGE_DESCRIBED, f"[image: {got.name}, described] {seen}")
    shown = f"[image: {got.name}, {image.width}x{image.height}]"
    return got.done(MediaReason.IMAGE_SENT, shown, image.part)


async def _speech(got: _Fetched, ctx: MediaContext) -> Understood:
    if ctx.speech is None:
        return got.noted(MediaReason.TRANSCRIPTION_FAILED, "no endpoint")
    upload = got.att.name or f"{got.att.kind}.{got.mime.rsplit('/', 1)[-1]}"
    try:
        async with transcription_gate(ctx.config.max_concurrent_transcriptions):
            heard = await transcribe(got.path, upload, ctx.speech)
    except TranscriptionFailed as exc:
        return got.noted(MediaReason.TRANSCRIPTION_FAILED, str(exc))
    return got.done(MediaReason.TRANSCRIBED, f"[{got.name} transcript] {heard}")


async def _document(
    got: _Fetched, reader: Callable[[Path, int], DocumentText], ctx: MediaContext
) -> Understood:
    limit = ctx.config.max_document_chars
    try:
        doc = await asyncio.to_thread(reader, got.path, limit)
    except UnreadableDocument as exc:
        return got.noted(MediaReason.CORRUPT, str(exc))
    if not doc.text.strip():
        return got.noted(MediaReason.NO_TEXT)
    cut = f"\n[… cut at {limit} characters]" if doc.truncated else ""
    detail = "truncated" if doc.truncated else ""
    body = doc.text.rstrip()
    return got.done(
        MediaReason.DOCUMENT_TEXT, f"[document: {got.name}]\n{body}{cut}", detail=detail
    )


def _outcome(
    key: str, att: Attachment, reason: MediaReason, *, name: str | None = None, detail: str = ""
) -> MediaOutcome:
    return MediaOutcome(
        key, name or display_name(att), att.kind, reason, att.mime or "", att.size, detail
    )
