"""Values that cross the channel boundary: inbound messages, targets, attachments, send results."""

from __future__ import annotations

import operator
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from enum import StrEnum
from json.encoder import encode_basestring_ascii
from typing import Any, Literal

from chatgate.model.compact import compact_json, scalar_json
from chatgate.model.frozen import record
from chatgate.model.reasons import SendErrorKind

ChatKind = Literal["direct", "group", "channel"]


@record(slots=True)
class Target:
    """Where a reply goes: a channel instance plus a chat (and optionally a thread/message)."""

    channel: str
    chat_id: str
    thread_id: str | None = None
    reply_to: str | None = None

    @classmethod
    def parse(cls, text: str) -> Target:
        """Parse "channel:chat_id[:thread_id]"."""
        parts = text.split(":")
        if len(parts) not in (2, 3) or not all(parts):
            raise ValueError(f"target {text!r} is not channel:chat_id[:thread_id]")
        return cls(parts[0], parts[1], parts[2] if len(parts) == 3 else None)

    @property
    def address(self) -> str:
        """Stable identity of the conversation, ignoring reply_to (used for dead-target tracking)."""
        base = f"{self.channel}:{self.chat_id}"
        return f"{base}:{self.thread_id}" if self.thread_id else base

    def to_dict(self) -> dict[str, Any]:
        return {
            "channel": self.channel,
            "chat_id": self.chat_id,
            "thread_id": self.thread_id,
            "reply_to": self.reply_to,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Target:
        return cls(
            str(data["channel"]), str(data["chat_id"]), data.get("thread_id"), data.get("reply_to")
        )


class AttachmentKind(StrEnum):
    """What a platform says a file is (the bytes are checked again when fetched)."""

    IMAGE = "image"
    VOICE = "voice"
    AUDIO = "audio"
    VIDEO = "video"
    DOCUMENT = "document"
    STICKER = "sticker"


@dataclass(frozen=True, slots=True)
class Attachment:
    """A file a message carries: metadata plus an opaque handle the adapter fetches it by.

    ``handle`` is platform-specific (a Telegram ``file_id``, a WhatsApp media id, a Slack
    ``url_private``, a Discord CDN URL); the journal keeps it, never the bytes, so a resumed
    turn fetches the file again. ``url`` is a link a user may see, never one carrying a token.
    """

    kind: str
    url: str | None = None
    name: str | None = None
    mime: str | None = None
    size: int | None = None
    handle: str | None = None
    duration_s: float | None = None  # voice/audio/video length, when the platform says


USER_LANGUAGE = (
    "language"  # InboundMessage.extra key: the sender's locale tag, as the platform says
)
# `InboundMessage.extra` key: the album (platform group id) whose files a message carries; the
# parts of one album wait for one another to become one turn (`policies.bursts`).
ALBUM_KEY = "media_group"


@record(slots=True)
class InboundMessage:
    """A platform message normalised by its adapter; everything downstream reads only this."""

    channel: str
    platform: str
    chat_id: str
    chat_kind: ChatKind
    sender_id: str
    message_id: str
    text: str
    thread_id: str | None = None
    sender_name: str = ""
    sender_is_bot: bool = False
    is_mention: bool = False
    is_command: bool = False
    reply_to: str | None = None
    attachments: tuple[Attachment, ...] = ()
    received_at: float = 0.0
    choice: str | None = None
    reply_target: Target | None = None
    route: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    # The idempotency key, made once: every step of the path reads it (~19 times a turn).
    key: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """The idempotency key: the same platform message always maps to the same key."""
        object.__setattr__(self, "key", f"{self.channel}:{self.message_id}")

    @property
    def answers_elsewhere(self) -> bool:
        """Whether its answer goes to another chat than its own (a webhook's `deliver.to`)."""
        target = self.reply_target
        return target is not None and (target.channel, target.chat_id) != (
            self.channel,
            self.chat_id,
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (hand-written: dataclasses.asdict deep-copies and is on the hot path)."""
        data = {name: getattr(self, name) for name in _MESSAGE_SCALARS}
        data["reply_target"] = self.reply_target.to_dict() if self.reply_target else None
        data["attachments"] = [asdict(a) for a in self.attachments]
        data["extra"] = dict(self.extra)
        return data

    def with_extra(self, more: Mapping[str, Any]) -> InboundMessage:
        """This message with ``more`` added to its extra (hand-written: `dataclasses.replace`
        costs twice the constructor, once per traced message)."""
        return InboundMessage(
            self.channel,
            self.platform,
            self.chat_id,
            self.chat_kind,
            self.sender_id,
            self.message_id,
            self.text,
            self.thread_id,
            self.sender_name,
            self.sender_is_bot,
            self.is_mention,
            self.is_command,
            self.reply_to,
            self.attachments,
            self.received_at,
            self.choice,
            self.reply_target,
            self.route,
            {**self.extra, **more},
        )

    def stamped(self, now: float) -> InboundMessage:
        """This message with ``now`` as when it came in, where its platform gave no time (a
        session's messages are queued, and waited for across replicas, in that order)."""
        return self if self.received_at > 0 else replace(self, received_at=now)

    def to_json(self) -> str:
        """``to_dict`` as compact JSON (the journal's payload): the same text as the encoder
        writes, built field by field (the encoder's set-up cost more than the fields)."""
        parts = ["{"]
        for key, value in zip(_SCALAR_KEYS, _scalars(self), strict=True):
            kind = type(value)
            encoded: str | None
            if kind is str:
                encoded = encode_basestring_ascii(value)
            elif value is None:
                encoded = "null"
            else:
                encoded = scalar_json(value)
            if encoded is None:
                return compact_json(self.to_dict())
            parts += (key, encoded)
        target, attachments, extra = self.reply_target, self.attachments, self.extra
        parts += (
            ',"reply_target":',
            compact_json(target.to_dict()) if target else "null",
            ',"attachments":',
            compact_json([asdict(a) for a in attachments]) if attachments else "[]",
            ',"extra":',
            compact_json(dict(extra)) if extra else "{}",
            "}",
        )
        return "".join(parts)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> InboundMessage:
        """Inverse of to_dict; keys a newer or older version wrote (journal rows) are ignored."""
        values = {k: v for k, v in data.items() if k in _MESSAGE_FIELDS}
        target = values.get("reply_target")
        values["reply_target"] = Target.from_dict(target) if target else None
        values["attachments"] = tuple(Attachment(**a) for a in values.get("attachments") or ())
        return cls(**values)


_MESSAGE_FIELDS = frozenset(f.name for f in fields(InboundMessage) if f.init)
_MESSAGE_SCALARS = tuple(
    f.name
    for f in fields(InboundMessage)
    if f.init and f.name not in ("reply_target", "attachments", "extra")
)
_SCALAR_KEYS = tuple(
    f'"{name}":' if i == 0 else f',"{name}":' for i, name in enumerate(_MESSAGE_SCALARS)
)
_scalars = operator.attrgetter(*_MESSAGE_SCALARS)


@dataclass(frozen=True, slots=True)
class RouteHint:
    """Routing intent that only operator configuration grants (webhook routes, web chat).

    An adapter names the configured route a message came in on (`InboundMessage.route`); the
    gateway looks the hint up in its own config, so an adapter can never grant itself trust.
    """

    agent: str | None = None
    trusted: bool = False  # skips admission and rate limits: a signed, operator-configured ingress
    ephemeral: bool = False  # a one-shot session: no transcript is read or kept


def default_target(msg: InboundMessage, *, reply_in_groups: bool = True) -> Target:
    """Reply in the same chat and thread; quote the trigger in groups so the answer is attributable."""
    quote = msg.message_id if reply_in_groups and msg.chat_kind != "direct" else None
    return Target(msg.channel, msg.chat_id, msg.thread_id, quote)


@record(slots=True)
class SendResult:
    """Outcome of one native send; failures carry the adapter's classification."""

    ok: bool
    message_ids: tuple[str, ...] = ()
    kind: SendErrorKind | None = None
    retry_after_s: float | None = None
    error: str = ""
    moved_to: Target | None = None
    timed_out: bool = (
        False  # the request timed out: it may have arrived (not safe to repeat an upload)
    )

    @classmethod
    def sent(cls, *message_ids: str) -> SendResult:
        return cls(True, tuple(message_ids))

    @classmethod
    def failed(
        cls, kind: SendErrorKind, error: str = "", retry_after_s: float | None = None
    ) -> SendResult:
        return cls(False, kind=kind, error=error, retry_after_s=retry_after_s)

    @classmethod
    def timeout(cls, error: str = "timed out") -> SendResult:
        """A request that timed out: transient, but its outcome is unknown."""
        return cls(False, kind=SendErrorKind.TRANSIENT, error=error, timed_out=True)
