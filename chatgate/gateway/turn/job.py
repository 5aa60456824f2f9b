"""A job: one unit of work a session's queue holds and a turn runs (a message, an observation,
a fresh session or a redelivery)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from chatgate.model.messages import InboundMessage, Target
from chatgate.model.results import TurnResult


class JobKind(StrEnum):
    TURN = "turn"
    OBSERVE = "observe"
    NEW_SESSION = "new_session"
    REDELIVER = "redeliver"


@dataclass(eq=False)
class Job:
    kind: JobKind
    msg: InboundMessage
    future: asyncio.Future[TurnResult]
    session: str
    agent: str
    target: Target | None
    accepted_at: float
    stored_reply: dict[str, Any] | None = None
    ephemeral: bool = False  # a one-shot session (route hint): no transcript read or kept
    resumed: bool = False  # taken up from the journal (a restart, or a replica that died)
    debounce_s: float = 0.0  # the channel's burst window: wait this long for more from the sender
    observed: str = "observe"  # an OBSERVE job's reason code (e.g. paused: a human took over)
    kept: bool = True  # an OBSERVE job's message joins the transcript (False: journaled only)
    # An album part that is a turn's input, or context only because it did not address the bot:
    # the parts of one album become one turn when one of them addresses it.
    album: str | None = None
    # An album part held only to join its album's turn: ends it (dropped) when none does.
    unjoined: Callable[[], Awaitable[None]] | None = None
