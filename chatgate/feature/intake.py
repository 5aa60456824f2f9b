"""The message path as a feature's gate sees it: one message on its way through the stages
(`Inbound`), how a stage ends it (`Verdict`), and where a feature's gate stands (`GateSlot`).

A gate answers at once (None: go on, or a Verdict) or, when it must wait for a store, with an
awaitable answer; one that waits only sometimes returns a coroutine only then.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum

from chatgate.model.messages import InboundMessage, RouteHint
from chatgate.model.results import Stage, TurnResult
from chatgate.policies.admission import AdmissionPolicy
from chatgate.policies.staleness import StalePolicy
from chatgate.state.records import JournalState


class Command(StrEnum):
    NEW = "new"
    STOP = "stop"
    STATUS = "status"
    HELP = "help"


class GateSlot(StrEnum):
    """Where a feature's gate runs among the built-in stages."""

    BEFORE_ADMISSION = "before_admission"  # answers the bot itself asked for (approval prompts)
    AFTER_ADMISSION = "after_admission"  # admitted messages a feature may keep from a turn


@dataclass(frozen=True)
class ChannelPolicy:
    admission: AdmissionPolicy
    agent: str
    stale: StalePolicy = field(default_factory=StalePolicy)
    debounce_s: float = 0.0


@dataclass(eq=False)
class Inbound:
    """One message on its way through the stages."""

    msg: InboundMessage
    future: asyncio.Future[TurnResult]
    accepted: float
    hint: RouteHint
    policy: ChannelPolicy
    command: str | None  # a built-in Command, or the name of a command a feature answers
    principal: str = ""
    observe: bool = False
    agent: str = ""
    session: str = ""
    resumed: bool = False
    observed: str = "observe"  # the reason code an observed message is journaled with
    unaddressed: bool = False  # observed only because it did not address the bot (group policy)
    held: Verdict | None = None  # an album part that ends so unless it joins its album's turn
    replaces: str | None = None  # the key of the waiting message this edit takes the place of
    at: int = 0  # the index of the stage it is in


@dataclass(frozen=True)
class Verdict:
    """The message ends at ``stage`` for ``reason``; ``notice`` is what the user is told.

    ``state`` is the journal state (DROPPED, or DONE for an answered command); ``counted`` says
    whether it counts in chatgate_dropped_total; ``reply`` is the text for a caller that has no
    reply target (a webhook), when the notice cannot be delivered anywhere else.
    """

    stage: Stage
    reason: str
    notice: str | None = None
    state: JournalState = JournalState.DROPPED
    counted: bool = True
    reply: str | None = None

    @classmethod
    def answered(cls, stage: Stage, reason: str, notice: str) -> Verdict:
        return cls(stage, reason, notice, JournalState.DONE, counted=False)


StageFn = Callable[[Inbound], Verdict | Awaitable[Verdict | None] | None]
"""A stage answers at once, or (when it must wait for a store) with an awaitable answer: a stage
that waits only sometimes returns a coroutine only then (creating and awaiting one costs)."""

CommandHandler = Callable[[InboundMessage, str], Awaitable[str]]
"""Answers a chat command: (message, principal) → the reply text."""

HintSource = Callable[[InboundMessage], RouteHint | None]
"""Route hints for messages a feature submitted itself (None: not one of its messages)."""
