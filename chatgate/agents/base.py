"""The Agent contract: one async call per turn, optional streaming deltas, typed failures."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import field
from typing import Any, Protocol

from chatgate.agents.tools.types import Approve
from chatgate.model.chat import ChatMessage
from chatgate.model.frozen import record
from chatgate.model.outbound import OutboundMessage
from chatgate.model.reasons import FailureReason


def with_parts(
    message: dict[str, str], parts: Sequence[Mapping[str, Any]] | None
) -> dict[str, Any]:
    """An OpenAI-style message whose content is text plus content parts (images), if any."""
    if not parts:
        return dict(message)
    text = [{"type": "text", "text": message["content"]}] if message["content"] else []
    return {**message, "content": [*text, *(dict(p) for p in parts)]}


DeltaCallback = Callable[[str], Awaitable[None]]
REPLY_TO = "reply_to"  # Turn.metadata: the address the answer goes to ("" when none)
ProgressCallback = Callable[[str], Awaitable[None]]  # what the agent does now (tools it runs)
EventCallback = Callable[[str, Mapping[str, Any]], None]
# Awaited right before each model request; raises `TurnFenced` when the turn may no longer run.
FenceCallback = Callable[[], Awaitable[None]]


COST_NANO = "cost_nano"  # a usage key: the call's cost as reported (audio, priced per second)


class ModelMeter(Protocol):
    """Accounts each model call of a turn (budgets): ``admit`` before the request reserves its
    estimate and raises `AgentError` (budget_exhausted) when a limit would be crossed; ``settle``
    after it charges what the provider reported (an empty ``usage``: nothing reported; with
    ``COST_NANO``, that cost instead of the tokens priced)."""

    async def admit(self, model: str, messages: Sequence[Mapping[str, Any]]) -> object: ...

    async def settle(self, ticket: object, model: str, usage: Mapping[str, int]) -> None: ...


class TurnFenced(Exception):
    """This turn lost its session's lock (its replica stalled past the lock's TTL): another turn
    of the session may be running, so no model request may be made. Not a model failure."""


@record
class Turn:
    """Everything an agent needs for one turn; history excludes the new messages."""

    session: str
    history: Sequence[ChatMessage]
    new: Sequence[ChatMessage]
    channel: str = ""
    sender_id: str = ""
    max_chars: int | None = None
    on_delta: DeltaCallback | None = None
    on_event: EventCallback | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    on_progress: ProgressCallback | None = None
    # Content parts (vision ``image_url`` parts) per new message ``source``: this turn only,
    # never persisted (the transcript keeps a text reference instead).
    parts: Mapping[str, Sequence[Mapping[str, Any]]] = field(default_factory=dict)
    # Asks the chat to approve a tool call whose rule is ``ask`` (None: such calls are denied).
    approve: Approve | None = None
    before_model: FenceCallback | None = None  # the gateway's turn-lock check (see TurnFenced)
    # Every configured secret: masked in what a tool loop shows (approval prompts, the trail).
    secrets: frozenset[str] = frozenset()
    meter: ModelMeter | None = None  # budgets: every model call admitted and charged

    @property
    def text(self) -> str:
        """The new user input as one string."""
        return "\n".join(m.content for m in self.new)


def recent(history: Sequence[ChatMessage], keep: int) -> tuple[ChatMessage, ...]:
    """The last ``keep`` transcript messages (none for 0): what ``max_history`` sends along."""
    return tuple(history[-keep:]) if keep > 0 else ()


@record
class AgentReply:
    text: str
    message: OutboundMessage | None = None
    model: str | None = None
    usage: Mapping[str, int] = field(default_factory=dict)
    meta: Mapping[str, Any] | None = None  # kept with the answer in the transcript


class AgentError(Exception):
    """A classified agent failure; ``detail`` is operator-safe (never contains secrets)."""

    def __init__(
        self,
        reason: FailureReason,
        detail: str = "",
        *,
        retry_after_s: float | None = None,
        provider: str | None = None,
        notice: str | None = None,
    ) -> None:
        super().__init__(f"{reason.value}: {detail}" if detail else reason.value)
        self.reason = reason
        self.detail = detail
        self.retry_after_s = retry_after_s
        self.provider = provider
        # The words the chat reads instead of the reason's catalog text ("": nothing is sent).
        self.notice = notice


class Agent(Protocol):
    """An agent backend. Cancellation arrives as asyncio.CancelledError."""

    name: str

    async def run(self, turn: Turn) -> AgentReply: ...

    async def aclose(self) -> None: ...

    def provider_id(self) -> str | None:
        """The provider this agent depends on (for degraded-owner tracking), if any."""
        ...
