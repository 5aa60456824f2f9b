"""Which of the bot's activities are Adaptive Cards. Teams replaces a card properly only with a
card, so an edit of one (an answered approval, a closed menu) goes as a card holding the new
text and no actions: its buttons are gone.

Each activity this process posted is remembered here (a bounded LRU: streamed drafts are edited
without a store read); a card also in the channel facts, so another replica or the next start
closes it the same way.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from chatgate.channels.teams import ids
from chatgate.channels.teams.render import CARD_TYPE, card_activity
from chatgate.clock import Clock
from chatgate.state.protocols import ChannelFacts

CARD_TTL_S = 30 * 86_400.0  # past any approval's timeout: an edit of an older card is text
KNOWN = 1024  # activities remembered in memory
CARD_FACT = {"card": True}
log = logging.getLogger("chatgate.teams")


def is_card(activity: Mapping[str, Any]) -> bool:
    return any(
        isinstance(a, Mapping) and a.get("contentType") == CARD_TYPE
        for a in activity.get("attachments") or ()
    )


class CardMemory:
    def __init__(
        self, facts: ChannelFacts | None, channel: str, clock: Clock, known: int = KNOWN
    ) -> None:
        self.facts, self.channel, self.clock, self.known = facts, channel, clock, known
        self._kinds: OrderedDict[str, bool] = OrderedDict()

    async def sent(self, chat: str, activity_id: str, activity: Mapping[str, Any]) -> None:
        """Remember what was posted as ``activity_id`` in ``chat``."""
        card, key = is_card(activity), ids.card_key(chat, activity_id)
        self._remember(key, card)
        if card and self.facts is not None:
            try:  # it was posted: a store outage must not make it look unsent
                await self.facts.put(self.channel, key, CARD_FACT, self.clock.time(), CARD_TTL_S)
            except Exception as exc:
                log.warning("teams card not remembered", extra={"error": type(exc).__name__})

    async def update_of(
        self, chat: str, activity_id: str, activity: dict[str, Any]
    ) -> dict[str, Any]:
        """``activity`` as the update of ``activity_id``: a card when that one was a card."""
        if is_card(activity) or not await self._was_card(chat, activity_id):
            return activity
        return card_activity(str(activity.get("text") or ""))

    async def _was_card(self, chat: str, activity_id: str) -> bool:
        key = ids.card_key(chat, activity_id)
        known = self._kinds.get(key)
        if known is not None or self.facts is None:
            return bool(known)
        try:
            found = await self.facts.get_many(self.channel, [key], self.clock.time())
        except Exception as exc:  # the edit still goes, as text
            log.warning("teams card lookup failed", extra={"error": type(exc).__name__})
            return False
        card = bool(found.get(key))
        self._remember(key, card)
        return card

    def _remember(self, key: str, card: bool) -> None:
        self._kinds[key] = card
        self._kinds.move_to_end(key)
        while len(self._kinds) > self.known:
            self._kinds.popitem(last=False)
