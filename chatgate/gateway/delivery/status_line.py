"""The tool status line of a reply that is not streamed: "using github.search_issues…".

On a channel that edits messages but does not stream answers as drafts, the first tool step
sends a status message; later steps edit it, never faster than the channel's edit interval (a
change inside the interval waits in the background for its slot, the newest one wins; the tool
loop never waits for it). The answer replaces the status message in place (Delivery edits it, as
it finishes a streamed draft), so nothing is left behind. Typing continues meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from chatgate.agents.base import ProgressCallback
from chatgate.gateway.delivery.streaming import StreamingReply
from chatgate.model.text_ids import TextId
from chatgate.texts.voice import Voice

log = logging.getLogger("chatgate.streaming")


class StatusLine(StreamingReply):
    """A draft that only ever shows a status line; ``text`` stays empty (no answer text)."""

    _pending: str | None = None
    _waiting: asyncio.Task[None] | None = None

    async def progress(self, line: str) -> None:
        if self._broken:
            return
        remaining = self._last_edit + self.min_interval_s - self.clock.monotonic()
        if not self.started or remaining <= 0:
            await self._edit(line)
            return
        self._pending = line
        if self._waiting is None or self._waiting.done():
            self._waiting = asyncio.ensure_future(self._later())

    async def _later(self) -> None:
        await self.clock.sleep(self._last_edit + self.min_interval_s - self.clock.monotonic())
        line, self._pending = self._pending, None
        if line is not None and not self._broken:
            await self._edit(line)

    async def _edit(self, line: str) -> None:
        self._last_edit = self.clock.monotonic()
        try:
            await self._show(line)
        except Exception as exc:  # a status line must never cost the answer
            log.warning(
                "tool status line failed; the answer will be sent normally",
                extra={"target": self.target.address, "error": type(exc).__name__},
            )
            self._broken = True

    async def settle(self) -> None:
        """Drop a status edit still waiting (the answer comes now), then wait out the interval
        so the answer's edit is not too fast either."""
        waiting, self._waiting = self._waiting, None
        if waiting is not None and not waiting.done():
            waiting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await waiting
        self._pending = None
        await super().settle()


def worded(show: ProgressCallback, voice: Callable[[], Voice]) -> ProgressCallback:
    """The tool loop's progress (tool names) as the catalog's text in the chat's language (the
    voice is looked up only when a tool runs)."""

    async def progress(tools: str) -> None:
        await show(voice().text(TextId.TOOL_PROGRESS, tools=tools))

    return progress
