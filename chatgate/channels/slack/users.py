"""What Slack tells about a user that the messages themselves do not: their locale (the
language texts are written in) and whether the account is a bot (reactions from bots are never
input). Fetched lazily with `users.info` (`include_locale=true`), cached per user in a bounded
map; a failed lookup is retried after a short while and means "default language, a person".
Concurrent messages of one user share one lookup (a burst costs one call per user, not per message)."""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from chatgate.clock import Clock
from chatgate.model.messages import USER_LANGUAGE, InboundMessage

log = logging.getLogger("chatgate.slack")
USERS_KEPT = 10_000
KNOWN_FOR_S = 24 * 3600.0  # a user changes their language rarely; a day-old answer is fine
UNKNOWN_FOR_S = 300.0  # a failed lookup is tried again after this
LOOKUP_TIMEOUT_S = 2.0  # the event waits for it before it is journaled (Slack allows 3 s)


@dataclass(frozen=True)
class SlackUser:
    locale: str | None = None
    is_bot: bool = False


UNKNOWN = SlackUser()
Fetch = Callable[[str], Awaitable[Any]]  # user id -> the users.info answer


class SlackUsers:
    def __init__(self, clock: Clock, kept: int = USERS_KEPT) -> None:
        self._clock = clock
        self._kept = kept
        self._known: OrderedDict[str, tuple[SlackUser, float]] = OrderedDict()
        self._lookups: dict[str, asyncio.Future[SlackUser]] = {}

    def __len__(self) -> int:
        return len(self._known)

    async def get(self, user: str, fetch: Fetch) -> SlackUser:
        """The cached facts about ``user``, looked up when missing or expired."""
        found = self._known.get(user)
        if found is not None and found[1] > self._clock.monotonic():
            self._known.move_to_end(user)
            return found[0]
        lookup = self._lookups.get(user)
        if lookup is None:
            lookup = asyncio.ensure_future(self._lookup(user, fetch))
            self._lookups[user] = lookup
            lookup.add_done_callback(lambda _: self._lookups.pop(user, None))
        return await asyncio.shield(lookup)  # one waiter cancelled does not cancel the others'

    async def _lookup(self, user: str, fetch: Fetch) -> SlackUser:
        try:
            answer = await asyncio.wait_for(fetch(user), LOOKUP_TIMEOUT_S)
            info = answer.get("user") or {}
            facts = SlackUser(str(info.get("locale") or "") or None, bool(info.get("is_bot")))
            expires = self._clock.monotonic() + KNOWN_FOR_S
        except Exception as exc:  # the default language, and another try later
            log.info("slack users.info failed", extra={"error": type(exc).__name__})
            facts, expires = UNKNOWN, self._clock.monotonic() + UNKNOWN_FOR_S
        self._known[user] = (facts, expires)
        self._known.move_to_end(user)
        while len(self._known) > self._kept:
            self._known.popitem(last=False)
        return facts


def with_language(msg: InboundMessage, user: SlackUser) -> InboundMessage:
    """The message tagged with the sender's locale (texts are picked from it), when known."""
    if not user.locale:
        return msg
    return msg.with_extra({USER_LANGUAGE: user.locale})
