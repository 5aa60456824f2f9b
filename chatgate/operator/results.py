"""The typed answers of the operator actions, each with the JSON shape the API has always had."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from chatgate.policies.pairing import ApprovalOutcome
from chatgate.state.records import (
    Approved,
    DeadLetter,
    PendingRequest,
    SessionInfo,
    TranscriptLine,
)


@dataclass(frozen=True)
class DlqList:
    entries: tuple[DeadLetter, ...]

    def to_json(self) -> dict[str, Any]:
        return {"entries": [e.to_dict() for e in self.entries]}


@dataclass(frozen=True)
class Found:
    """Whether the action found what it was to change."""

    found: bool

    def to_json(self) -> dict[str, Any]:
        return {"found": self.found}


@dataclass(frozen=True)
class DlqDrop:
    found: bool
    id: int

    def to_json(self) -> dict[str, Any]:
        return {"found": self.found, "id": self.id}


@dataclass(frozen=True)
class DlqReplay:
    """A replay's outcome; ``standby`` with the lease holders when another replica must do it."""

    found: bool
    id: int
    status: str | None = None
    kind: str | None = None
    holders: Mapping[str, str] | None = None
    hint: str | None = None

    def to_json(self) -> dict[str, Any]:
        if not self.found:
            return {"found": False, "id": self.id}
        out: dict[str, Any] = {"found": True, "id": self.id, "status": self.status}
        out["kind"] = self.kind
        if self.holders is not None:
            out["holders"] = dict(self.holders)
        if self.hint is not None:
            out["hint"] = self.hint
        return out


@dataclass(frozen=True)
class PairingList:
    pending: tuple[PendingRequest, ...]
    approved: tuple[Approved, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "pending": [p.to_dict() for p in self.pending],
            "approved": [a.to_dict() for a in self.approved],
        }


@dataclass(frozen=True)
class PairingApproval:
    outcome: ApprovalOutcome
    sender_id: str | None
    locked_until: float | None

    @property
    def approved(self) -> bool:
        return self.outcome is ApprovalOutcome.APPROVED

    def to_json(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome.value,
            "approved": self.approved,
            "sender_id": self.sender_id,
            "locked_until": self.locked_until,
        }


@dataclass(frozen=True)
class SessionsList:
    sessions: tuple[SessionInfo, ...]

    def to_json(self) -> dict[str, Any]:
        return {"sessions": [s.to_dict() for s in self.sessions]}


@dataclass(frozen=True)
class SessionShow:
    found: bool
    key: str
    messages: tuple[TranscriptLine, ...] = ()

    def to_json(self) -> dict[str, Any]:
        messages = [m.to_dict() for m in self.messages]
        return {"found": self.found, "key": self.key, "messages": messages}


@dataclass(frozen=True)
class SessionReset:
    key: str
    epoch: int

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "epoch": self.epoch}


@dataclass(frozen=True)
class Trails:
    """Decision trails (see `state.admin.trail` for a trail's fields)."""

    trails: tuple[Mapping[str, Any], ...]

    def to_json(self) -> dict[str, Any]:
        return {"trails": [dict(t) for t in self.trails]}


@dataclass(frozen=True)
class TurnStats:
    """The per-minute turn statistics window (see `gateway.turn_stats`)."""

    window: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return dict(self.window)
