"""What one agent turn carries from step to step (the turn side's `Inbound`)."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from enum import Enum

from chatgate.agents.base import Agent, AgentError, AgentReply
from chatgate.agents.tools.runtime import TurnTools
from chatgate.channels.base import ChannelAdapter
from chatgate.feature.turns import CancelReason, MeteredTurn, TurnControl
from chatgate.feature.voices import Voices
from chatgate.gateway.delivery.status_line import StatusLine
from chatgate.gateway.delivery.streaming import StreamingReply
from chatgate.gateway.session_cache import WarmSession
from chatgate.gateway.turn.conclusion import Outcome
from chatgate.gateway.turn.job import Job
from chatgate.media.prepare import NO_MEDIA, PreparedInput
from chatgate.model.chat import ChatMessage
from chatgate.model.results import DeliveryReport
from chatgate.state.records import LeaseToken
from chatgate.texts.voice import Voice


class TurnExit(Enum):
    """Why a turn stopped before its last step; a step returns one of these or None (go on)."""

    RETRY = "retry"  # interrupted mid-agent, or fenced (the turn lock was lost before a model
    # request): the batch runs again with the messages that came, from the open step
    LEFT_PENDING = "left_pending"  # shutting down: the journal keeps it, the next start resumes it
    SETTLED = "settled"  # answered without an agent call (lock unavailable, or nothing still open)

    @property
    def ran(self) -> bool:
        """What the session queue is told: False only when the batch must be run again."""
        return self is not TurnExit.RETRY


CANCEL_EXITS: dict[CancelReason, TurnExit] = {
    CancelReason.INTERRUPT: TurnExit.RETRY,
    CancelReason.SHUTDOWN: TurnExit.LEFT_PENDING,
    CancelReason.HOLD: TurnExit.RETRY,  # the session queue keeps the batch as held jobs
}
"""Where a cancelled agent call leaves the turn; a reason not here (/stop) is a failure reply."""


@dataclass(eq=False, slots=True)
class TurnRecord:
    """One batch on its way through the turn steps; each step fills in what it decided."""

    batch: list[Job]
    control: TurnControl
    held: contextlib.AsyncExitStack
    new: list[ChatMessage] = field(default_factory=list)
    session: WarmSession | None = None
    lease: LeaseToken | None = None  # the session's turn lock, confirmed before model requests
    history_len: int = 0  # transcript messages the turn started from (an unsaved answer's key)
    agent: Agent | None = None
    deadline_s: float = 0.0  # bound of the agent call: timeout_s + 5 s, or the whole tool loop
    deadline: asyncio.Timeout | None = None  # that bound while the agent runs (approvals extend it)
    tools: TurnTools | None = None  # the turn's tool hook (trail, metrics, progress)
    adapter: ChannelAdapter | None = None
    stream: StreamingReply | None = None
    status: StatusLine | None = None  # the tools' status line when the reply is not streamed
    reacts: bool = False  # the adapter acknowledges with a reaction (and marks it done after)
    ack: asyncio.Future[None] | None = None
    agent_s: float = 0.0
    reply: AgentReply | None = None
    failure: AgentError | None = None
    media: PreparedInput = NO_MEDIA  # the media step's result
    voice: Voice | None = None  # the answer's Voice (`TurnSteps.voice`: looked up once)
    outcome: Outcome | None = None
    report: DeliveryReport | None = None
    metered: MeteredTurn | None = None  # how the spend budgets let the turn run

    @property
    def last(self) -> Job:
        """The batch's newest message: its target, agent and session stand for the batch."""
        return self.batch[-1]

    def voice_in(self, voices: Voices) -> Voice:
        """The Voice of the turn's answer (channel, sender's language, agent), looked up once."""
        if self.voice is None:
            self.voice = voices.for_message(self.batch[-1].msg, self.batch[-1].agent)
        return self.voice

    @property
    def one_shot(self) -> bool:
        """A session never read again (e.g. a webhook without a session template)."""
        return self.batch[-1].ephemeral
