"""Targets for the python agent (`tests.agents.callables:<name>`)."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from typing import Any

from chatgate.agents.base import Turn

NOT_CALLABLE = 42


def given_result(turn: Turn) -> Any:
    """Sync: return whatever the test put in ``metadata["result"]``."""
    return turn.metadata["result"]


async def given_result_async(turn: Turn) -> Any:
    """Async: yield to the loop once, then return ``metadata["result"]``."""
    await asyncio.sleep(0)
    return turn.metadata["result"]


@dataclass
class Gate:
    """Lets a test see a sync agent enter and decide when it may leave."""

    entered: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)


def blocks_until_released(turn: Turn) -> str:
    """Sync and blocking: waits (bounded) for the test to open the gate from the event loop."""
    gate: Gate = turn.metadata["gate"]
    gate.entered.set()
    return "released" if gate.release.wait(timeout=2.0) else "event loop was blocked"


def thread_name(turn: Turn) -> str:
    return threading.current_thread().name


class _AsyncCallable:
    async def __call__(self, turn: Turn) -> str:
        await asyncio.sleep(0)
        return f"object saw {turn.text}"


async_object = _AsyncCallable()


def crashes(turn: Turn) -> str:
    raise RuntimeError("bug inside the agent function")


def history_contents(turn: Turn) -> str:
    """Sync: the transcript it was given, as "a|b|c"."""
    return "|".join(m.content for m in turn.history)
