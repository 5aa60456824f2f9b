"""Telegram albums: the photos/files of one `media_group_id` arrive as separate messages; those
that come in one batch of updates become one message (one turn) with all their files."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from chatgate.channels.types import InboundMessage

GROUP_KEY = "media_group"


def album_of(msg: InboundMessage) -> str | None:
    group = msg.extra.get(GROUP_KEY)
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
