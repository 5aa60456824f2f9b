"""What the supervisor keeps per channel: its status (what `chatgate status` shows) and the
running instance under supervision."""

from __future__ import annotations

import asyncio
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
    """One channel instance under supervision."""

    adapter: ChannelAdapter
    status: ChannelStatus
    budget: RestartBudget
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    first_attempt: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None
    backoff_step: int = 0
    running_since: float | None = None
    restart_requested: bool = False
    lease: str | None = None  # exclusive connection: run only while this replica holds it
    hold: LeaseHold | None = None  # the lease's time left, as the adapter sees it
    lease_lost: bool = False
