"""Telegram albums: the photos/files of one `media_group_id` arrive as separate messages; those
that come in one batch of updates become one message with all their files. Parts that come in a
later batch or webhook request are journaled as they come and join the same turn through the
album window (`policies.bursts`); in a group they are addressed when their album's caption was."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from chatgate.clock import Clock
from chatgate.model.messages import ALBUM_KEY, InboundMessage
from chatgate.policies.bursts import ALBUM_WINDOW_S


def album_of(msg: InboundMessage) -> str | None:
    group = msg.extra.get(ALBUM_KEY)
    return f"{msg.chat_id}:{group}" if group else None


def merge_album(parts: Sequence[InboundMessage]) -> InboundMessage:
    """The first part carrying every part's files and the captions (usually only one has one);
    its key is the first part's, so a redelivered album is still deduplicated."""
    first = parts[0]
    if len(parts) == 1:
        return first
    attachments = tuple(a for p in parts for a in p.attachments)
    captions = [p.text for p in parts if p.text and p.text != _placeholder(p)]
    return replace(
        first,
        text="\n".join(captions) or f"[{attachments[0].kind}]",
        attachments=attachments,
        is_mention=any(p.is_mention for p in parts),
        extra={**first.extra, "album": [p.message_id for p in parts]},
    )


def _placeholder(msg: InboundMessage) -> str | None:
    return f"[{msg.attachments[0].kind}]" if msg.attachments else None


class AddressedAlbums:
    """Albums whose caption addressed the bot (a mention in a group), remembered a while so
    their later parts are addressed too, not just kept as context."""

    def __init__(self, clock: Clock, keep_s: float = 10 * ALBUM_WINDOW_S) -> None:
        self.clock = clock
        self.keep_s = keep_s
        self._seen: dict[str, float] = {}

    def mark(self, msg: InboundMessage) -> InboundMessage:
        album = album_of(msg)
        if album is None:
            return msg
        now = self.clock.monotonic()
        self._seen = {a: t for a, t in self._seen.items() if now - t < self.keep_s}
        if msg.is_mention:
            self._seen[album] = now
            return msg
        if album in self._seen:
            return replace(msg, is_mention=True)
        return msg
