"""A running turn as a feature sees it: the handle that cancels its agent call and why, and
the approver a turn asks before a tool call runs."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from chatgate.agents.base import AgentError, ModelMeter
from chatgate.agents.tools.loop import Stretch
from chatgate.agents.tools.types import ApprovalAnswer, ApprovalAsk
from chatgate.model.frozen import record
from chatgate.model.messages import InboundMessage, Target


class CancelReason(StrEnum):
    STOP = "stop"
    INTERRUPT = "interrupt"
    SHUTDOWN = "shutdown"
    HOLD = "hold"  # the chat was paused (a human took over): the batch is kept, not answered


@dataclass(eq=False)
class TurnControl:
    """Lets /stop and the interrupt policy cancel the agent call of the running turn.

    The agent runs inline in the session worker, not in a task of its own: between
    `enter_agent` and `leave_agent` the worker is suspended only inside the agent call, so
    cancelling the worker then lands there and nowhere else (never in persistence or delivery).
    """

    worker: asyncio.Task[Any] | None = None
    reason: CancelReason | None = None
    _cancelled: bool = False
    _pending: CancelReason | None = None  # asked before the agent call began: lands there
    _over: bool = False  # the agent call ended: nothing left to cancel in this turn
    giving_way: bool = False  # an earlier message of the session came in line: it goes first

    def give_way(self) -> None:
        """An earlier message of this session came in line while this turn waits for the
        session's lock: the turn steps back behind it (never once it runs)."""
        self.giving_way = True

    def enter_agent(self) -> None:
        self.worker = asyncio.current_task()
        if self._pending is not None:
            self.cancel(self._pending)

    def leave_agent(self) -> None:
        """Called as soon as the agent call ended, before the worker awaits anything else."""
        worker, self.worker = self.worker, None
        self._over = True
        if self._cancelled and worker is not None:
            worker.uncancel()  # our cancel is handled here; the worker itself goes on
            self._cancelled = False

    def cancel(self, reason: CancelReason, *, pending: bool = False) -> bool:
        """Cancel the agent call now; with ``pending``, also one that has not begun yet."""
        if self.worker is None:
            if pending and not self._over:
                self._pending = reason
                return True
            return False
        self.reason = reason
        if not self._cancelled:
            self._cancelled = True
            self.worker.cancel()
        return True


@dataclass
class AskContext:
    """The turn a prompt belongs to: its message, session, chat and sender, and its bounds."""

    key: str
    session: str
    agent: str
    channel: str
    chat_id: str
    sender_id: str
    target: Target | None
    language: str | None
    timeout_s: float
    approver: str | None
    control: TurnControl | None = None
    deadline: Stretch = field(default_factory=Stretch)  # the turn's bound, paused while waiting


class ToolApprover(Protocol):
    """Asks a person before a tool call runs (the turn waits for the answer)."""

    tasks: set[asyncio.Task[None]]  # background work a drain waits for

    async def ask(self, ctx: AskContext, ask: ApprovalAsk) -> ApprovalAnswer: ...

    def release(self) -> int:
        """Shutdown: turns waiting for an answer stop now; returns how many were waiting."""
        ...


@record
class MeteredTurn:
    """How a turn may run under the spend budgets: on ``agent`` (a cheaper one when a budget
    degrades it), each model call admitted and charged by ``meter``; with ``refusal`` no model
    call is made and the turn fails with it. ``summary`` is the turn's usage for the journal;
    ``release``, awaited as the turn ends, returns what was reserved and not used."""

    agent: str
    meter: ModelMeter | None = None
    refusal: AgentError | None = None
    summary: Callable[[], Mapping[str, Any]] | None = None
    release: Callable[[], Awaitable[None]] | None = None


class TurnMeters(Protocol):
    """Decides, as a turn's agent call begins, how the budgets let it run (one feature at
    most offers it)."""

    async def begin(
        self, msg: InboundMessage, agent: str, session: str, target: Target | None
    ) -> MeteredTurn: ...
