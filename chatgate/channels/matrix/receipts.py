"""Read receipts, at most one call in flight per room: a receipt asked for meanwhile waits and
only the newest is sent (a receipt marks everything before it read), so a burst of messages in
a room costs the homeserver a few receipts instead of one per message."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger("chatgate.matrix")
Send = Callable[[str, str], Awaitable[object]]  # (room, event id)


class Receipts:
    def __init__(self, send: Send) -> None:
        self._send = send
        self._newest: dict[str, str] = {}
        self._sending: set[str] = set()
        self.calls = 0

    async def mark(self, room: str, event_id: str) -> None:
        """Marks ``event_id`` read (now, or with the room's call after the one in flight)."""
        if room in self._sending:
            self._newest[room] = event_id
            return
        self._sending.add(room)
        try:
            while True:
                self.calls += 1
                try:
                    await self._send(room, event_id)
                except Exception as exc:  # a receipt is a courtesy: never fails the turn
                    log.debug("matrix receipt failed: %s", type(exc).__name__)
                waiting = self._newest.pop(room, None)
                if waiting is None:
                    return
                event_id = waiting
        finally:
            self._sending.discard(room)
