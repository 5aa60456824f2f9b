"""The status tallies chat adapters keep alike: input ignored by reason, named event counters and
the latest failure with its fix (what `chatgate status` shows under a channel)."""

from __future__ import annotations

import time
from typing import Any, ClassVar

from chatgate.channels.base import ChannelAdapter, ChannelContext, InboundSink
from chatgate.model.reasons import DropReason


class TallyingAdapter(ChannelAdapter):
    """A channel adapter with the shared tallies; ``COUNTERS`` names the counters it starts
    at zero (a counter not named starts on its first `count`)."""

    COUNTERS: ClassVar[tuple[str, ...]] = ()

    def __init__(self, ctx: ChannelContext) -> None:
        super().__init__(ctx)
        self.ignored: dict[str, int] = {}
        self.counters: dict[str, int] = dict.fromkeys(self.COUNTERS, 0)
        self.last_error: dict[str, Any] | None = None

    def count(self, kind: str) -> None:
        self.counters[kind] = self.counters.get(kind, 0) + 1

    def note_error(self, error: str, hint: str) -> None:
        """The latest failure while running, with its fix (status ``last_error``)."""
        self.last_error = {"error": error, "hint": hint, "at": time.time()}

    def note_ignored(self, reason: DropReason, chat_id: str, sink: InboundSink | None) -> None:
        """Count input dropped before the gateway (a bot's own message, an unsupported kind)
        and tell the gateway, so it shows in the metrics and the log alike."""
        self.ignored[reason.value] = self.ignored.get(reason.value, 0) + 1
        if sink is not None:
            sink.ignored(self.name, reason, chat_id=chat_id)

    def tallies(self) -> dict[str, Any]:
        """The ``ignored`` and ``last_error`` status keys, where there is something to show."""
        detail: dict[str, Any] = {}
        if self.ignored:
            detail["ignored"] = dict(self.ignored)
        if self.last_error is not None:
            detail["last_error"] = dict(self.last_error)
        return detail
