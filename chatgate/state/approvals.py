"""Pending tool approvals: the record each backend keeps, and the store contract.

A prompt is journaled before it is posted, so a restart (or another replica) finds it: a press
after a restart decides it, and the turn that runs again finds the decision instead of asking
twice. ``decide`` is the one atomic step: the first decision wins, every later one sees it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from chatgate.policies.approvals import ApprovalState, Deciders

KV_NAME = "approvals"  # the store's name in `Stores.kv`
KEEP_S = 7 * 86_400  # a decided or expired record is kept this long after it expired


@dataclass(frozen=True)
class ApprovalRecord:
    """One approval prompt: which call of which message, who may answer, where it was posted."""

    id: str
    key: str  # the inbound message whose turn asked
    session: str
    agent: str
    tool: str
    arguments: Any  # masked, as the prompt shows them
    deciders: Deciders
    prompt: tuple[str, str, str | None]  # (channel, chat_id, thread_id) the prompt went to
    created_at: float
    expires_at: float
    language: str | None = None  # the asking user's language (the prompt's texts)
    state: ApprovalState = ApprovalState.PENDING
    decided_by: str = ""
    decided_at: float | None = None
    prompt_ids: Sequence[str] = field(default_factory=tuple)
    taint: tuple[str, ...] = ()  # asked because untrusted content was in the turn's context

    def static(self) -> dict[str, Any]:
        """The part that never changes after creation, JSON-ready."""
        return {
            "key": self.key,
            "session": self.session,
            "agent": self.agent,
            "tool": self.tool,
            "arguments": self.arguments,
            "deciders": self.deciders.to_dict(),
            "prompt": list(self.prompt),
            "created_at": self.created_at,
            "expires_at": self.expires_at,
            "language": self.language,
            **({"taint": list(self.taint)} if self.taint else {}),
        }

    @classmethod
    def from_static(
        cls,
        ident: str,
        data: dict[str, Any],
        state: str,
        decided_by: str = "",
        decided_at: float | None = None,
        prompt_ids: Sequence[str] = (),
    ) -> ApprovalRecord:
        channel, chat, thread = data["prompt"]
        return cls(
            id=ident,
            key=str(data["key"]),
            session=str(data["session"]),
            agent=str(data["agent"]),
            tool=str(data["tool"]),
            arguments=data.get("arguments"),
            deciders=Deciders.from_dict(data["deciders"]),
            prompt=(str(channel), str(chat), str(thread) if thread else None),
            created_at=float(data["created_at"]),
            expires_at=float(data["expires_at"]),
            language=data.get("language"),
            taint=tuple(str(t) for t in data.get("taint") or ()),
            state=ApprovalState(state),
            decided_by=decided_by,
            decided_at=decided_at,
            prompt_ids=tuple(prompt_ids),
        )

    def decided(self, state: ApprovalState, by: str, now: float) -> ApprovalRecord:
        return replace(self, state=state, decided_by=by, decided_at=now)

    def to_dict(self) -> dict[str, Any]:
        """What `chatgate why` shows of a prompt."""
        channel, chat, thread = self.prompt
        where = f"{channel}:{chat}:{thread}" if thread else f"{channel}:{chat}"
        return {
            "id": self.id,
            "tool": self.tool,
            "arguments": self.arguments,
            "state": self.state.value,
            "asked_in": where,
            "expires_at": self.expires_at,
            "decided_by": self.decided_by or None,
        }


@runtime_checkable
class ApprovalStore(Protocol):
    async def create(self, record: ApprovalRecord) -> ApprovalRecord:
        """Store ``record`` unless one with its id exists; the stored one either way."""
        ...

    async def get(self, ident: str) -> ApprovalRecord | None: ...

    async def set_prompt(self, ident: str, message_ids: Sequence[str]) -> None:
        """The ids of the posted prompt (edited in place once decided)."""
        ...

    async def decide(
        self, ident: str, state: ApprovalState, by: str, now: float
    ) -> tuple[ApprovalRecord | None, bool]:
        """Move a pending record to ``state`` atomically: (the record now, whether this call
        decided it). A decided record is left as it is."""
        ...

    async def pending_in(self, channel: str, chat_id: str, now: float) -> list[ApprovalRecord]:
        """Pending, unexpired prompts posted in a chat, newest first (yes/no replies)."""
        ...

    async def for_message(self, key: str) -> list[ApprovalRecord]:
        """Every prompt a message's turn posted, oldest first (`chatgate why`)."""
        ...
