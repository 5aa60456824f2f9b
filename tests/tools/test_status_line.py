"""The status line of a reply that is not streamed: edits at most once per interval (the newest
line wins, the tool loop never waits), nothing stale after the answer takes over."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from chatgate.channels.base import ChannelAdapter, ChannelContext, Rendered
from chatgate.channels.capabilities import Capabilities
from chatgate.gateway.delivery.status_line import StatusLine
from chatgate.model.messages import SendResult, Target
from chatgate.presentation.limits import PresentationLimits
from tests.fakes.clock import ManualClock


class EditingChat(ChannelAdapter):
    """A platform that sends and edits messages, recording both."""

    platform = "editing"

    def __init__(self) -> None:
        super().__init__(ChannelContext("chat", None, None, Path("."), None))  # type: ignore[arg-type]
        self.calls: list[tuple[str, str]] = []

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(limits=PresentationLimits(max_text_length=4000), edits=True)

    async def start(self, sink: Any) -> None:
        return None

    async def stop(self) -> None:
        return None

    async def send(self, target: Target, rendered: Rendered) -> SendResult:
        self.calls.append(("send", rendered.text))
        return SendResult.sent("7")

    async def edit(self, target: Target, message_id: str, rendered: Rendered) -> SendResult:
        self.calls.append((f"edit {message_id}", rendered.text))
        return SendResult.sent(message_id)


async def settled() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_edits_are_coalesced_within_the_interval_and_dropped_for_the_answer() -> None:
    chat, clock = EditingChat(), ManualClock()
    line = StatusLine(chat, Target("chat", "c1"), None, clock, 1.0)  # type: ignore[arg-type]
    await line.progress("using a…")
    await line.progress("using b…")  # inside the interval: waits for its slot, in the background
    await line.progress("using c…")  # the newest line wins the slot
    assert chat.calls == [("send", "using a…")]
    clock.advance(1.0)
    await settled()
    assert chat.calls[1:] == [("edit 7", "using c…")]
    assert line.started and line.message_ids == ["7"] and line.text == ""

    await line.progress("using d…")  # pending when the answer comes: never shown
    answer = asyncio.ensure_future(line.settle())
    await settled()
    assert not answer.done()  # the answer's edit waits out the interval too
    clock.advance(1.0)
    await answer
    await settled()
    assert [text for _, text in chat.calls] == ["using a…", "using c…"]


async def test_a_failed_status_line_stops_trying() -> None:
    class Refusing(EditingChat):
        async def send(self, target: Target, rendered: Rendered) -> SendResult:
            raise RuntimeError("platform down")

    chat, clock = Refusing(), ManualClock()
    line = StatusLine(chat, Target("chat", "c1"), None, clock, 1.0)  # type: ignore[arg-type]
    await line.progress("using a…")  # never raises into the tool loop
    clock.advance(5)
    await line.progress("using b…")
    assert not line.started and chat.calls == []
