"""Streamed replies: a draft on the first delta, throttled edits, then the final text.

Edits never come faster than the channel's `min_edit_interval_s` (platforms rate-limit edits);
text that outgrows one message continues in new messages. The final, fully rendered reply is
handed to Delivery with the draft ids, so it is retried and dead-lettered like any other send.
"""

from __future__ import annotations

import logging

from chatgate.channels.base import ChannelAdapter
from chatgate.clock import Clock
from chatgate.gateway.delivery.sender import Delivery
from chatgate.model.messages import Target
from chatgate.model.outbound import OutboundMessage

log = logging.getLogger("chatgate.streaming")
DRAFT_SUFFIX = " …"


class StreamingReply:
    def __init__(
        self,
        adapter: ChannelAdapter,
        target: Target,
        delivery: Delivery,
        clock: Clock,
        min_interval_s: float,
    ) -> None:
        self.adapter = adapter
        self.target = target
        self.delivery = delivery
        self.clock = clock
        self.min_interval_s = min_interval_s
        self.message_ids: list[str] = []
        self.edits = 0
        self._text = ""
        self._last_edit = 0.0
        self._broken = False

    @property
    def started(self) -> bool:
        return bool(self.message_ids)

    @property
    def text(self) -> str:
        return self._text

    async def settle(self) -> None:
        """Wait out the edit interval so the final edit does not come too fast either."""
        remaining = self._last_edit + self.min_interval_s - self.clock.monotonic()
        if self.started and remaining > 0:
            await self.clock.sleep(remaining)

    async def delta(self, text: str) -> None:
        self._text += text
        if self._broken:
            return
        now = self.clock.monotonic()
        if self.started and now - self._last_edit < self.min_interval_s:
            return
        self._last_edit = now
        try:
            await self._show(self._text + DRAFT_SUFFIX)
        except Exception as exc:  # a failed draft only loses the live preview, never the answer
            log.warning(
                "streaming preview failed; the final answer will be sent normally",
                extra={"target": self.target.address, "error": type(exc).__name__},
            )
            self._broken = True

    async def progress(self, line: str) -> None:
        """Show ``line`` under the text so far (what the agent is doing; not part of the answer),
        after waiting out the edit interval (nothing else edits the draft while tools run)."""
        if self._broken:
            return
        await self.settle()
        self._last_edit = self.clock.monotonic()
        try:
            await self._show(f"{self._text}\n\n{line}" if self._text.strip() else line)
        except Exception as exc:
            log.warning(
                "streaming progress failed; the final answer will be sent normally",
                extra={"target": self.target.address, "error": type(exc).__name__},
            )
            self._broken = True

    async def _show(self, text: str) -> None:
        chunks = self.adapter.render(OutboundMessage.from_text(text))
        for index, chunk in enumerate(chunks):
            if index < len(self.message_ids):
                if index == len(self.message_ids) - 1:  # earlier messages are already final
                    result = await self.adapter.edit(self.target, self.message_ids[index], chunk)
                    self.edits += 1
                    if not result.ok:
                        return
                continue
            result = await self.adapter.send(self.target, chunk)
            if not result.ok or not result.message_ids:
                self._broken = not self.message_ids
                return
            self.message_ids.append(result.message_ids[0])
