"""Gateway events for plugins, logs and metrics; plugins come from the `chatgate.plugins` group.

A plugin is an entry point resolving to a callable ``register(bus)`` that subscribes handlers.
Handlers may be sync or async; a failing handler is logged and never affects the message path.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import field
from enum import StrEnum
from importlib.metadata import entry_points
from typing import Any

from chatgate.model.frozen import record

log = logging.getLogger("chatgate.events")
PLUGIN_GROUP = "chatgate.plugins"


class EventName(StrEnum):
    MESSAGE_RECEIVED = "message_received"
    MESSAGE_SENT = "message_sent"
    MESSAGE_UNDELIVERED = "message_undelivered"
    MODEL_FALLBACK = "model_fallback"
    SESSION_PERSIST_FAILED = "session_persist_failed"
    TURN_FINISHED = "turn_finished"  # once per agent turn: outcome, reason, latency


@record(slots=True)
class Event:
    name: EventName
    at: float
    data: Mapping[str, Any] = field(default_factory=dict)


Handler = Callable[[Event], Awaitable[None] | None]


class EventBus:
    def __init__(self) -> None:
        self._handlers: dict[EventName, list[Handler]] = {name: [] for name in EventName}
        self._tasks: set[asyncio.Task[None]] = set()
        self.plugins: list[str] = []

    def subscribe(self, handler: Handler, *names: EventName | str) -> None:
        """Call ``handler`` for the given event names (all events when none are given)."""
        for name in {EventName(n) for n in names} if names else EventName:
            self._handlers[name].append(handler)

    def emit(self, name: EventName, at: float, **data: Any) -> None:
        handlers = self._handlers[name]
        if not handlers:  # no Event built for names nobody listens to (most, on the hot path)
            return
        event = Event(name, at, data)
        for handler in handlers:
            try:
                result = handler(event)
            except Exception:
                log.exception("event handler failed for %s", name.value)
                continue
            if result is not None and inspect.isawaitable(result):  # most handlers are plain
                task = asyncio.ensure_future(result)
                self._tasks.add(task)
                task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("async event handler failed: %r", task.exception())

    async def drain(self) -> None:
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def load_plugins(self) -> None:
        """Register every installed `chatgate.plugins` entry point; a broken plugin is logged."""
        for ep in entry_points(group=PLUGIN_GROUP):
            try:
                register = ep.load()
                register(self)
                self.plugins.append(ep.name)
                log.info("loaded plugin %s", ep.name)
            except Exception:
                log.exception("plugin %s failed to load", ep.name)
