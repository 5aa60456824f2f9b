"""A transcript line: what the agent said or was told, as every store keeps it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from chatgate.model.frozen import record

Role = Literal["system", "user", "assistant"]


@record(slots=True)
class ChatMessage:
    """One transcript entry. ``source`` is the inbound key that produced it (idempotent appends).

    ``meta`` carries JSON-ready extras a later turn needs besides the text (media references, the
    tool calls that led to an answer); stores keep it with the line, never raw bytes.
    """

    role: Role
    content: str
    name: str | None = None
    source: str | None = None
    meta: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (journal replies, spill files, the Redis session store)."""
        out: dict[str, Any] = {
            "role": self.role,
            "content": self.content,
            "name": self.name,
            "source": self.source,
        }
        if self.meta:
            out["meta"] = dict(self.meta)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ChatMessage:
        """Inverse of `to_dict`; lines written before ``meta`` existed read back without it."""
        meta = data.get("meta")
        return cls(
            data["role"],
            data["content"],
            data.get("name"),
            data.get("source"),
            meta if isinstance(meta, Mapping) and meta else None,
        )

    def to_openai(self) -> dict[str, str]:
        out = {"role": self.role, "content": self.content}
        if self.name and self.role == "user":
            out["name"] = _safe_name(self.name)
        return out


def _safe_name(name: str) -> str:
    cleaned = "".join(c if c.isalnum() or c in "_-" else "_" for c in name)
    return cleaned[:64] or "user"
