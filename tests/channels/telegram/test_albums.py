"""Album parts in a group: a part is addressed when its album's caption addressed the bot, for a
while after; other albums and plain messages are left as they are. Through the gateway, parts
before the addressed one join its turn instead of staying context (observe) or being dropped
(mention_only); an album nobody addressed is context, or dropped, as before."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest

from chatgate.channels.telegram.albums import AddressedAlbums
from chatgate.gateway.app import Gateway
from chatgate.model.messages import ALBUM_KEY, Attachment, InboundMessage
from chatgate.policies.bursts import ALBUM_WINDOW_S
from tests.channels.telegram.support import telegram_config
from tests.fakes.clock import ManualClock
from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import FakeTelegram
from tests.harness import running
from tests.media.samples import png

GROUP, USER = -1001, 7


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


def _photo(tg: FakeTelegram, file_id: str, color: tuple[int, int, int]) -> list[dict[str, object]]:
    data = png(color=color)
    tg.files.add(file_id, data, ext="png")
    size = {"width": 32, "height": 24, "file_size": len(data)}
    return [{"file_id": file_id, "file_unique_id": file_id, **size}]


async def _journaled(gw: Gateway, count: int) -> None:
    for _ in range(3000):
        if len(await gw.rt.journal.find("telegram", sender_id=str(USER), limit=10)) >= count:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{count} messages not journaled")


async def _send_parts(gw: Gateway, tg: FakeTelegram, captions: list[tuple[str, bool]]) -> None:
    """The parts of one album (caption, mentions the bot), each in a poll of its own."""
    for n, (caption, mention) in enumerate(captions):
        photo = _photo(tg, f"part-{n}", (80 * n, 0, 255 - 80 * n))
        tg.group_media_message(
            GROUP, USER, "photo", photo, caption=caption, mention=mention, album="album-9"
        )
        await _journaled(gw, n + 1)


async def _album_turn(
    tmp_path: Path, tg: FakeTelegram, llm: FakeLLM, policy: str, captions: list[tuple[str, bool]]
) -> list[list[str]]:
    """Send one album's parts (caption, mentions the bot) in separate polls; the part types of
    each user message of the one model request it makes."""
    media = "    media:\n      vision: true"
    channel = f"    group_policy: {policy}"
    clock = ManualClock()
    config = telegram_config(tmp_path, tg, llm, agent=media, channel=channel)
    async with running(config, clock=clock) as gw:
        await tg.wait_for("getUpdates")
        await _send_parts(gw, tg, captions)
        clock.advance(ALBUM_WINDOW_S)
        await tg.wait_for("sendMessage", timeout=30)
        await llm.wait_for_requests(1)
        await asyncio.sleep(0.2)
    [request] = llm.requests
    assert len(tg.calls_of("sendMessage")) == 1
    users = [m["content"] for m in request.messages if m["role"] == "user"]
    return [[p["type"] for p in u] if isinstance(u, list) else ["text"] for u in users]


@pytest.mark.parametrize("policy", ["observe", "mention_only"])
async def test_parts_before_the_addressed_caption_are_in_its_turn(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM, policy: str
) -> None:
    parts = await _album_turn(
        tmp_path, fake_tg, fake_llm, policy, [("", False), ("", False), ("compare these", True)]
    )
    assert parts == [["text", "image_url"]] * 3  # every photo reaches the model, none as context


@pytest.mark.parametrize(
    ("policy", "state", "context"), [("observe", "done", 2), ("mention_only", "dropped", 0)]
)
async def test_an_album_addressing_nobody_is_context_or_dropped_as_before(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM, policy: str, state: str, context: int
) -> None:
    clock = ManualClock()
    config = telegram_config(tmp_path, fake_tg, fake_llm, channel=f"    group_policy: {policy}")
    async with running(config, clock=clock) as gw:
        await fake_tg.wait_for("getUpdates")
        await _send_parts(gw, fake_tg, [("", False)] * 2)
        clock.advance(ALBUM_WINDOW_S)
        asked = fake_tg.group_message(GROUP, USER, "what did I send?", mention=True)
        await fake_tg.wait_for("sendMessage", timeout=30)
        await fake_llm.wait_for_requests(1)
        entries = await gw.rt.journal.find("telegram", sender_id=str(USER), limit=10)
    question = f":{asked['message']['message_id']}"
    parts = [e for e in entries if not e.key.endswith(question)]
    assert [e.state for e in parts] == [state] * 2, entries
    [request] = fake_llm.requests
    users = [m["content"] for m in request.messages if m["role"] == "user"]
    assert len(users) == context + 1 and all(isinstance(u, str) for u in users)  # no images
    assert len(fake_tg.calls_of("sendMessage")) == 1
