"""Album parts in a group: a part is addressed when its album's caption addressed the bot, for a
while after; other albums and plain messages are left as they are."""

from __future__ import annotations

from dataclasses import replace

import pytest

from chatgate.channels.telegram.albums import AddressedAlbums
from chatgate.channels.types import ALBUM_KEY, Attachment, InboundMessage
from tests.fakes.clock import ManualClock


def part(album: str | None, *, mention: bool = False, chat: str = "-100") -> InboundMessage:
    return InboundMessage(
        channel="telegram",
        platform="telegram",
        chat_id=chat,
        chat_kind="group",
        sender_id="7",
        message_id="m",
        text="[image]",
        is_mention=mention,
        attachments=(Attachment("image", handle="f"),),
        extra={ALBUM_KEY: album} if album else {},
    )


@pytest.mark.parametrize(
    ("later", "after_s", "addressed"),
    [
        (part("a1"), 0.5, True),  # a later part of the addressed album
        (part("a1"), 11.0, False),  # long after: not remembered
        (part("a2"), 0.5, False),  # another album
        (part("a1", chat="-200"), 0.5, False),  # the same album id in another chat
        (part(None), 0.5, False),  # not an album part
    ],
)
def test_later_parts_of_an_addressed_album_are_addressed(
    later: InboundMessage, after_s: float, addressed: bool
) -> None:
    clock = ManualClock()
    albums = AddressedAlbums(clock)
    first = part("a1", mention=True)
    assert albums.mark(first) is first
    clock.advance(after_s)
    assert albums.mark(later).is_mention is addressed


def test_an_album_nobody_addressed_stays_unaddressed() -> None:
    albums = AddressedAlbums(ManualClock())
    quiet = part("a1")
    assert albums.mark(quiet) is quiet
    assert not albums.mark(replace(quiet, message_id="m2")).is_mention
