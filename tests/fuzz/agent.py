"""A python agent for the fuzz targets: records who (which route) reached it."""

from __future__ import annotations

from chatgate.agents.base import Turn

SEEN: list[str] = []


def record(turn: Turn) -> str:
    SEEN.append(turn.sender_id)
    return "ok"
