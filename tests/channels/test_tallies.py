"""The status tallies chat adapters share: ignored input by reason, counters, the last error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chatgate.channels.base import ChannelContext, InboundSink
from chatgate.channels.capabilities import Capabilities
from chatgate.channels.tallies import TallyingAdapter
from chatgate.model.messages import InboundMessage
from chatgate.model.reasons import DropReason
from chatgate.model.results import Submission
from chatgate.presentation.limits import PLAIN


class Sink:
    def __init__(self) -> None:
        self.told: list[tuple[str, DropReason, str]] = []

    async def submit(self, msg: InboundMessage) -> Submission:
        raise AssertionError("nothing is submitted here")

    def ignored(self, channel: str, reason: DropReason, *, chat_id: str = "") -> None:
        self.told.append((channel, reason, chat_id))

    async def in_conversation(self, msg: InboundMessage) -> bool:
        return False


class Counted(TallyingAdapter):
    platform = "counted"
    COUNTERS = ("events", "refused")

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(limits=PLAIN)

    async def start(self, sink: InboundSink) -> None: ...

    async def stop(self) -> None: ...


class NoRoutes:
    def add(self, *args: Any, **kwargs: Any) -> None: ...

    def remove(self, path: str) -> None: ...


class NoEvents:
    def count(self, metric: str, **labels: str) -> None: ...


def adapter(tmp_path: Path) -> Counted:
    return Counted(ChannelContext("c1", None, NoRoutes(), tmp_path, NoEvents()))


def test_a_fresh_adapter_shows_its_named_counters_at_zero_and_no_tallies(tmp_path: Path) -> None:
    a = adapter(tmp_path)
    assert a.counters == {"events": 0, "refused": 0}
    assert a.tallies() == {}


def test_ignored_input_is_counted_by_reason_and_told_to_the_gateway(tmp_path: Path) -> None:
    a, sink = adapter(tmp_path), Sink()
    sinks: list[InboundSink | None] = [sink, sink, None]  # before start: counted, nobody told
    for s in sinks:
        a.note_ignored(DropReason.SELF_MESSAGE, "chat-9", s)
    a.count("events")
    a.count("reconnects")  # not named: starts on its first count
    a.note_error("send failed: forbidden", "give the bot access")
    shown = a.tallies()
    assert shown["ignored"] == {DropReason.SELF_MESSAGE.value: 3}
    assert shown["last_error"]["hint"] == "give the bot access"
    assert sink.told == [("c1", DropReason.SELF_MESSAGE, "chat-9")] * 2
    assert a.counters == {"events": 1, "refused": 0, "reconnects": 1}
