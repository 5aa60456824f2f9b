"""What the supervisor keeps per channel: its status (what `chatgate status` shows) and the
running instance under supervision."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from chatgate.channels.base import ChannelAdapter
from chatgate.gateway.supervision.lease import LeaseHold
from chatgate.policies.channel_states import ChannelState
from chatgate.policies.supervision import RestartBudget


@dataclass
class ChannelStatus:
    """What `chatgate status` shows of one channel."""

    name: str
    platform: str
    state: ChannelState
    since: float
    error: str = ""
    hint: str = ""
    restarts: int = 0
    next_retry_at: float | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "platform": self.platform,
            "state": self.state.value,
            "since": self.since,
            "error": self.error,
            "hint": self.hint,
            "restarts": self.restarts,
            "next_retry_at": self.next_retry_at,
            **self.detail,
        }


@dataclass(eq=False)
class Supervised:
    """One channel instance under supervision. Its state (in ``status``) is all there is to wait
    on: a waiter names the states it waits for and `enter` wakes it when one is entered."""

    adapter: ChannelAdapter
    status: ChannelStatus
    budget: RestartBudget
    task: asyncio.Task[None] | None = None
    backoff_step: int = 0
    running_since: float | None = None
    lease: str | None = None  # exclusive connection: run only while this replica holds it
    hold: LeaseHold | None = None  # the lease's time left, as the adapter sees it
    _waiters: list[tuple[frozenset[ChannelState], asyncio.Future[None]]] = field(
        default_factory=list, repr=False
    )

    @property
    def state(self) -> ChannelState:
        return self.status.state

    def enter(self, state: ChannelState) -> None:
        """Set the state (`RestartLadder.move` applies the table) and wake who waits for it."""
        self.status.state = state
        waiting, self._waiters = self._waiters, []
        for entry in waiting:
            states, future = entry
            if state not in states:
                self._waiters.append(entry)
            elif not future.done():
                future.set_result(None)

    async def until(self, states: Collection[ChannelState]) -> None:
        """Return once the channel is in one of ``states`` (at once when it is now)."""
        if self.status.state in states:
            return
        entry = (frozenset(states), asyncio.get_running_loop().create_future())
        self._waiters.append(entry)
        try:
            await entry[1]
        finally:
            with contextlib.suppress(ValueError):
                self._waiters.remove(entry)

    async def left(self, *states: ChannelState) -> None:
        """Return once the channel is in none of ``states``."""
        await self.until(frozenset(ChannelState).difference(states))
