"""Degraded owners: channels, providers, routes and the gateway itself, read fail-closed.

Owners record a degradation where it happens; the message path consults the registry before doing
work for an owner, so work aimed at a degraded owner gets a visible "unavailable — next step" reply
instead of failing silently. Entries clear automatically when the owner recovers.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class OwnerKind(StrEnum):
    CHANNEL = "channel"
    PROVIDER = "provider"
    ROUTE = "route"
    GATEWAY = "gateway"


@dataclass(frozen=True)
class DegradedOwner:
    kind: OwnerKind
    id: str
    reason: str
    hint: str
    since: float
    probe_every_s: float | None = None
    probe_at: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "owner_kind": self.kind.value,
            "owner_id": self.id,
            "reason": self.reason,
            "retry_hint": self.hint,
            "since": self.since,
            "probe_at": self.probe_at,
        }


class DegradedRegistry:
    def __init__(self) -> None:
        self._owners: dict[tuple[OwnerKind, str], DegradedOwner] = {}

    def mark(
        self,
        kind: OwnerKind,
        owner_id: str,
        reason: str,
        hint: str,
        now: float,
        *,
        probe_every_s: float | None = None,
    ) -> DegradedOwner:
        """Record (or refresh) a degradation; with ``probe_every_s`` work is let through as a probe."""
        current = self._owners.get((kind, owner_id))
        since = current.since if current is not None else now
        probe_at = now + probe_every_s if probe_every_s is not None else None
        owner = DegradedOwner(kind, owner_id, reason, hint, since, probe_every_s, probe_at)
        self._owners[(kind, owner_id)] = owner
        return owner

    def clear(self, kind: OwnerKind, owner_id: str) -> bool:
        return self._owners.pop((kind, owner_id), None) is not None

    def find(self, kind: OwnerKind, owner_id: str) -> DegradedOwner | None:
        return self._owners.get((kind, owner_id))

    def blocking(self, kind: OwnerKind, owner_id: str, now: float) -> DegradedOwner | None:
        """The degradation that should stop work now, or None.

        An owner with a probe interval lets one piece of work through each time the interval has
        passed (half-open): its success clears the entry, its failure re-marks it.
        """
        owner = self._owners.get((kind, owner_id))
        if owner is None:
            return None
        if owner.probe_at is not None and owner.probe_every_s is not None and now >= owner.probe_at:
            self._owners[(kind, owner_id)] = DegradedOwner(
                owner.kind,
                owner.id,
                owner.reason,
                owner.hint,
                owner.since,
                owner.probe_every_s,
                now + owner.probe_every_s,
            )
            return None
        return owner

    def owners(self) -> list[DegradedOwner]:
        return sorted(self._owners.values(), key=lambda o: (o.kind.value, o.id))

    def to_list(self) -> list[dict[str, Any]]:
        return [o.to_dict() for o in self.owners()]
