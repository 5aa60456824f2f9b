"""The audit trail of config changes made through the operator surfaces (dashboard, API, CLI),
the refused attempts included: the record each backend keeps and the store contract. A record
holds no value of any key, only which keys changed, so it never carries a secret."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

KV_NAME = "config_audit"  # the store's name in `Stores.kv`
KEEP = 200  # newest records kept; older ones are dropped as new ones arrive


@dataclass(frozen=True)
class ConfigChange:
    """One change: when, from where, what (key paths and line counts), and how the reload went;
    or an attempt that was refused, and why (nothing of it stands)."""

    at: float
    action: str  # apply | rollback
    address: str  # the client's address, or "cli"
    by: str  # dashboard | api | cli
    changed: Sequence[str] = ()  # key paths added, removed or changed
    added_lines: int = 0
    removed_lines: int = 0
    backup: str = ""  # the file the previous version was kept as
    reload: Mapping[str, Any] = field(default_factory=dict)  # the hot reload's report
    id: int = 0
    refused: str = ""  # the `ConfigEditReason` code of a refused attempt; "" when applied

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "at": self.at,
            "action": self.action,
            "address": self.address,
            "by": self.by,
            "changed": list(self.changed),
            "added_lines": self.added_lines,
            "removed_lines": self.removed_lines,
            "backup": self.backup,
            "reload": dict(self.reload),
            "refused": self.refused or None,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], ident: int | None = None) -> ConfigChange:
        return cls(
            at=float(data["at"]),
            action=str(data["action"]),
            address=str(data.get("address", "")),
            by=str(data.get("by", "")),
            changed=tuple(str(k) for k in data.get("changed", ())),
            added_lines=int(data.get("added_lines", 0)),
            removed_lines=int(data.get("removed_lines", 0)),
            backup=str(data.get("backup", "")),
            reload=dict(data.get("reload") or {}),
            id=int(data.get("id", 0) if ident is None else ident),
            refused=str(data.get("refused") or ""),
        )


class ConfigAudit(Protocol):
    async def record(self, change: ConfigChange) -> int:
        """Keep ``change`` (its ``id`` is ignored); the id it was given."""
        ...

    async def recent(self, limit: int = 20) -> list[ConfigChange]:
        """Newest first."""
        ...
