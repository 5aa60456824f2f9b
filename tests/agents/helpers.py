"""Shared builders for agent tests: turns, delta/event recorders and a closed loopback port."""

from __future__ import annotations

import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from chatgate.agents.base import Turn
from chatgate.model.chat import ChatMessage

USER_TEXT = "hello there friend"


def make_turn(
    text: str = USER_TEXT,
    *,
    history: Sequence[ChatMessage] = (),
    recorder: Recorder | None = None,
    stream: bool = True,
    metadata: Mapping[str, Any] | None = None,
) -> Turn:
    """A one-message turn; ``recorder`` (if given) receives deltas (when ``stream``) and events."""
    return Turn(
        session="session-1",
        history=tuple(history),
        new=(ChatMessage("user", text),),
        channel="test",
        sender_id="user-1",
        on_delta=recorder.on_delta if recorder is not None and stream else None,
        on_event=recorder.on_event if recorder is not None else None,
        metadata=dict(metadata or {}),
    )


@dataclass
class Recorder:
    """Collects streamed deltas and agent events in arrival order."""

    deltas: list[str] = field(default_factory=list)
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    async def on_delta(self, delta: str) -> None:
        self.deltas.append(delta)

    def on_event(self, name: str, data: Mapping[str, Any]) -> None:
        self.events.append((name, dict(data)))


def closed_port() -> int:
    """A loopback port that was just free and now has no listener (connection refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port
