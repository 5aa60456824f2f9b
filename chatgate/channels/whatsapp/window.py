"""The 24-hour customer-service window: when each user last wrote, and the template that
stands in for a free-form message once it has closed.

The last inbound time lives in the state backend (`ChannelFacts`), so it holds across restarts
and replicas; a local copy answers the common case (a reply to a message just heard) without a
read. A user's next messages within STORE_EVERY_S of the time stored are not written again (a
burst costs one write, not one per message): the store may be that much behind the local copy,
so another replica or the next start can only find the window closing early, never late.
"""

from __future__ import annotations

import logging
import re
from collections import OrderedDict
from typing import Any

from chatgate.channels.whatsapp.config import TemplateConfig
from chatgate.clock import Clock
from chatgate.state.protocols import ChannelFacts

log = logging.getLogger("chatgate.whatsapp")
WINDOW_S = 24 * 3600.0
MARGIN_S = 60.0  # closed a minute early: a free-form send racing the deadline would be refused
STORE_EVERY_S = 60.0  # the stored time may lag the last message by this much (closes early)
LOCAL_MAX = 50_000  # users remembered in memory (the store keeps them all)
PARAMETER_MAX = 1024
_SPACES = re.compile(r"[ \t\r\n\u00a0]+")


def window_key(user: str) -> str:
    return f"window:{user}"


def is_open(last_inbound: float | None, now: float) -> bool:
    return last_inbound is not None and now - last_inbound < WINDOW_S - MARGIN_S


class Windows:
    def __init__(self, channel: str, facts: ChannelFacts | None, clock: Clock) -> None:
        self._channel = channel
        self._facts = facts
        self._clock = clock
        self._last: OrderedDict[str, float] = OrderedDict()
        self._stored: OrderedDict[str, float] = OrderedDict()  # what this process wrote

    @staticmethod
    def _keep(times: OrderedDict[str, float], user: str, at: float) -> None:
        times[user] = at
        times.move_to_end(user)
        while len(times) > LOCAL_MAX:
            times.popitem(last=False)

    def _remember(self, user: str, at: float) -> None:
        if at > self._last.get(user, 0.0):
            self._keep(self._last, user, at)

    async def heard(self, user: str, at: float) -> None:
        """``user`` wrote at ``at`` (Meta's timestamp, never later than now)."""
        now = self._clock.time()
        at = min(at, now) if at > 0 else now
        self._remember(user, at)
        stored = self._stored.get(user)
        if self._facts is None or (stored is not None and at - stored < STORE_EVERY_S):
            return  # the store holds a time at most STORE_EVERY_S older (or a later one)
        await self._facts.put(self._channel, window_key(user), {"at": at}, now, WINDOW_S)
        self._keep(self._stored, user, at)

    async def is_open(self, user: str) -> bool:
        now = self._clock.time()
        if is_open(self._last.get(user), now):
            return True
        if self._facts is None:
            return False
        found = await self._facts.get_many(self._channel, [window_key(user)], now)
        at = found.get(window_key(user), {}).get("at")
        if not isinstance(at, int | float):
            return False
        self._remember(user, float(at))
        return is_open(float(at), now)

    def closed(self, user: str) -> None:
        """WhatsApp said the window is closed (131047): forget the local copy."""
        self._last.pop(user, None)


def template_payload(template: TemplateConfig, text: str) -> dict[str, Any]:
    """The `/messages` part of a template message carrying ``text`` in its parameters: one line
    (WhatsApp refuses newlines, tabs and runs of spaces in a parameter), clipped."""
    line = _SPACES.sub(" ", text).strip() or "…"
    if len(line) > PARAMETER_MAX:
        line = line[: PARAMETER_MAX - 1].rstrip() + "…"
    body: dict[str, Any] = {"name": template.name, "language": {"code": template.language}}
    if template.parameters:
        parameters = [
            {"type": "text", "text": p.format(text=line)[:PARAMETER_MAX] or "…"}
            for p in template.parameters
        ]
        body["components"] = [{"type": "body", "parameters": parameters}]
    return {"type": "template", "template": body}
