"""What an action's handler may use: the state, the time, and what only a running daemon does.

The daemon (`gateway/operator_actions.py`) and the CLI without a daemon (`StateContext`) each
provide it, so an action runs the same code either way.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from chatgate.operator.results import DlqReplay
    from chatgate.state.factory import State
    from chatgate.state.records import DeadLetter


CALLER: ContextVar[str] = ContextVar("operator_caller", default="local")
"""Who asked for the running action: the API client's address, or "local" (the CLI on the
store itself), for the actions that keep an audit trail."""


class NeedsDaemon(Exception):
    """The action needs the running daemon (its channels, its memory)."""


class OperatorContext(Protocol):
    @property
    def state(self) -> State: ...

    def now(self) -> float: ...

    async def dead_letter_dropped(self, held: DeadLetter) -> None:
        """An entry was dropped: release what it held (its files) and update the gauge."""

    async def replay_dead_letter(self, entry_id: int) -> DlqReplay: ...

    async def reset_session(self, key: str) -> int:
        """A fresh transcript for ``key``; its new epoch."""

    def turn_stats(self) -> Mapping[str, Any]: ...


class StateContext:
    """The context of the CLI run against the store itself (no daemon answers)."""

    def __init__(self, state: State) -> None:
        self._state = state

    @property
    def state(self) -> State:
        return self._state

    def now(self) -> float:
        return time.time()

    async def dead_letter_dropped(self, held: DeadLetter) -> None:
        return None

    async def replay_dead_letter(self, entry_id: int) -> DlqReplay:
        raise NeedsDaemon("replaying a dead letter needs the running daemon")

    async def reset_session(self, key: str) -> int:
        return await self._state.sessions.reset(key, self.now())

    def turn_stats(self) -> Mapping[str, Any]:
        raise NeedsDaemon("turn statistics live in the running daemon")
