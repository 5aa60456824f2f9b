"""Values the state stores hand out: journal entries, dead letters, sessions, pairing, leases.

Plain data shared by every backend (SQLite, Redis) and by the operator API, so a CLI command
reads the same shapes whether it asks the daemon or opens the store itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from chatgate.model.chat import ChatMessage
from chatgate.model.frozen import record
from chatgate.model.messages import InboundMessage, Target


class JournalState(StrEnum):
    PENDING = "pending"
    ANSWERED = "answered"
    DONE = "done"
    DROPPED = "dropped"


TERMINAL = frozenset({JournalState.DONE, JournalState.DROPPED})


@record(slots=True)  # built twice a turn: frozen by type (model/frozen.py)
class JournalMark:
    """One write to a journal entry: the state it moves to, when, and whichever trail fields
    it records (None leaves a field as it was)."""

    state: JournalState
    now: float
    stage: str | None = None
    reason: str | None = None
    session: str | None = None
    reply: dict[str, Any] | None = None
    delivery: str | None = None
    delivery_ids: Sequence[str] | None = None


@dataclass(frozen=True)
class JournalEntry:
    """One inbound message and its decision trail (stage, reason, reply, delivery)."""

    key: str
    state: JournalState
    message: InboundMessage
    stage: str | None
    reason: str | None
    session: str | None
    reply: dict[str, Any] | None
    delivery: str | None
    delivery_ids: list[str]
    received_at: float
    updated_at: float
    handed_off: bool = False  # claimed from a live replica that handed it over (not a dead one)
    handed_at: float | None = None  # when it was handed off (the shared store's clock, epoch s)


RECEIPT_PREFIX = "receipt:"  # ChannelFacts key of a sent message's delivery receipt


def receipt_key(message_id: str) -> str:
    return RECEIPT_PREFIX + message_id


@dataclass(frozen=True)
class DeadLetter:
    """A reply that could not be delivered, kept for `chatgate dlq replay`."""

    id: int
    created_at: float
    target: Target
    message: dict[str, Any]
    kind: str
    error: str
    attempts: int
    inbound_key: str | None
    session: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "created_at": self.created_at,
            "target": self.target.address,
            "kind": self.kind,
            "error": self.error,
            "attempts": self.attempts,
            "inbound_key": self.inbound_key,
            "session": self.session,
            "preview": _preview(self.message),
        }


def _preview(message: dict[str, Any]) -> str:
    for block in message.get("blocks", []):
        if isinstance(block, dict) and isinstance(block.get("text"), str):
            text: str = block["text"]
            return text[:80] + ("…" if len(text) > 80 else "")
    return ""


@dataclass
class StoredSession:
    key: str
    epoch: int
    messages: list[ChatMessage]
    revision: int | None = None  # see SessionStore.revision


@dataclass(frozen=True)
class SessionInfo:
    key: str
    epoch: int
    message_count: int
    updated_at: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "epoch": self.epoch,
            "message_count": self.message_count,
            "updated_at": self.updated_at,
        }


@dataclass(frozen=True)
class TranscriptLine:
    """One transcript message with the time it was written (for `chatgate sessions show`)."""

    role: str
    content: str
    name: str | None
    at: float
    human: str | None = None  # an operator wrote this assistant line (who), not the model
    source: str | None = None  # the inbound key that produced it (not shown)

    def to_dict(self) -> dict[str, Any]:
        out = {"role": self.role, "content": self.content, "name": self.name, "at": self.at}
        return out | {"human": self.human} if self.human else out


@dataclass(frozen=True)
class Approved:
    channel: str
    sender_id: str
    sender_name: str
    approved_at: float
    chat_id: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "channel": self.channel,
            "sender_id": self.sender_id,
            "sender_name": self.sender_name,
            "approved_at": self.approved_at,
            "chat_id": self.chat_id,
        }


@dataclass(frozen=True)
class PendingRequest:
    """An unknown sender waiting for an operator to approve their pairing code."""

    channel: str
    code: str
    sender_id: str
    sender_name: str
    issued_at: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "channel": self.channel,
            "code": self.code,
            "sender_id": self.sender_id,
            "sender_name": self.sender_name,
            "issued_at": self.issued_at,
        }


@dataclass(frozen=True, eq=False)
class LeaseToken:
    """Proof of holding a session's turn lock; only this token releases or renews it."""

    key: str
    owner: str
    expires_at: float
    token: str = ""
