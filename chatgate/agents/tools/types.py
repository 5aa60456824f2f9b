"""What the tool loop works with: tool specs, a source that lists and calls them, the trail."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from chatgate.model.reasons import ToolCallStatus
from chatgate.policies.taint import ToolHints

TOOL_CALL_EVENT = "tool_call"  # one finished call: a ``ToolCallRecord.to_dict()``
TOOL_STARTED_EVENT = "tool_started"  # a call begins: ``{"agent", "tool"}`` (progress)


@dataclass(frozen=True)
class ToolSpec:
    """One tool as the model is shown it; ``name`` is namespaced ``server.tool``."""

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )
    hints: ToolHints = field(
        default_factory=ToolHints
    )  # the server's annotations (effect, open world)


@dataclass(frozen=True)
class ToolOutcome:
    """A tool's answer as text (untrusted input for the model); ``is_error`` when it failed."""

    text: str
    is_error: bool = False


class ToolUnavailable(Exception):
    """The tool's server is down or broke mid-call (the turn ends ``tool_failed``).

    The message is operator-safe: it names the server and the cause, never a secret.
    """


class ToolSource(Protocol):
    """Tools one agent may use right now (filtered by its allow/deny lists)."""

    async def tools(self) -> Sequence[ToolSpec]: ...

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolOutcome: ...


@dataclass(frozen=True)
class ApprovalAsk:
    """A call whose rule is ``ask``: the tool, its masked arguments, and which identical call of
    the turn this is (the same call asked twice in one turn is two prompts)."""

    agent: str
    tool: str
    arguments: Any
    occurrence: int = 0
    taint: tuple[str, ...] = ()  # a write tool asked for because the turn is tainted


@dataclass(frozen=True)
class ApprovalAnswer:
    """How a prompt ended: ``status`` OK (approved), DENIED or APPROVAL_TIMEOUT, and by whom."""

    status: ToolCallStatus
    decision: str  # an ApprovalReason value: approved, denied, timed_out, approval_no_approver
    by: str = ""  # channel:user of who answered; empty for a timeout
    waited_s: float = 0.0

    @property
    def approved(self) -> bool:
        return self.status is ToolCallStatus.OK


Approve = Callable[[ApprovalAsk], Awaitable[ApprovalAnswer]]


@dataclass(frozen=True)
class ToolCallRecord:
    """One call in a turn's trail: arguments already masked, result size not content."""

    tool: str
    arguments: Any
    status: ToolCallStatus
    duration_s: float
    result_chars: int
    step: int
    detail: str = ""
    approval: str = ""  # for a call that was asked: approved, denied, timed_out
    approver: str = ""  # who answered (channel:user)
    taint: tuple[str, ...] = ()  # a write call of a tainted turn: what tainted it

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "arguments": self.arguments,
            "status": self.status.value,
            "duration_ms": round(self.duration_s * 1000, 1),
            "result_chars": self.result_chars,
            "step": self.step,
            **({"detail": self.detail} if self.detail else {}),
            **({"approval": self.approval} if self.approval else {}),
            **({"approver": self.approver} if self.approver else {}),
            **({"taint": list(self.taint)} if self.taint else {}),
        }


@dataclass(frozen=True)
class ToolContext:
    """Whose turn a tool call runs in: what the gateway's built-in tools are bound to.

    ``chat`` is the address the turn's answer goes to (``channel:chat_id[:thread_id]``; empty
    when it goes nowhere, e.g. a webhook answered in its HTTP response).
    """

    agent: str
    channel: str = ""
    sender_id: str = ""
    chat: str = ""
