"""Builds, starts and watches channel adapters; answers "which adapter can send right now?"."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chatgate.channels.base import (
    ChannelAdapter,
    ChannelContext,
    ChannelError,
    ChannelState,
    EventSink,
    HttpRoutes,
    InboundSink,
    NotConfigured,
)
from chatgate.channels.registry import ChannelRegistry
from chatgate.gateway.clock import Clock

log = logging.getLogger("chatgate.channels")
READY_WAIT_S = 10.0


@dataclass
class ChannelStatus:
    name: str
    platform: str
    state: ChannelState
    since: float
    error: str = ""
    hint: str = ""
    restarts: int = 0
    next_retry_at: float | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "platform": self.platform,
            "state": self.state.value,
            "since": self.since,
            "error": self.error,
            "hint": self.hint,
            "restarts": self.restarts,
            "next_retry_at": self.next_retry_at,
            **self.detail,
        }


class ChannelManager:
    def __init__(
        self,
        registry: ChannelRegistry,
        http: HttpRoutes,
        metrics: EventSink,
        state_dir: Path,
        clock: Clock,
        kv: dict[str, Any] | None = None,
    ) -> None:
        self.registry = registry
        self.http = http
        self.metrics = metrics
        self.state_dir = state_dir
        self.clock = clock
        self.kv = kv or {}
        self.adapters: dict[str, ChannelAdapter] = {}
        self.statuses: dict[str, ChannelStatus] = {}
        self._ready: dict[str, asyncio.Event] = {}
        self._watchers: dict[str, asyncio.Task[None]] = {}

    def build(self, sections: dict[str, Any]) -> None:
        """Instantiate an adapter per configured, enabled section (nothing connects yet)."""
        for name, section in sections.items():
            if section is None:
                continue
            platform = name
            if not getattr(section, "enabled", True):
                self.statuses[name] = ChannelStatus(
                    name, platform, ChannelState.DISABLED, self.clock.time()
                )
                continue
            cls = self.registry.get(name)
            ctx = ChannelContext(name, section, self.http, self.state_dir, self.metrics, self.kv)
            self.adapters[name] = cls(ctx)
            self.statuses[name] = ChannelStatus(
                name, cls.platform, ChannelState.STOPPED, self.clock.time()
            )
            self._ready[name] = asyncio.Event()

    async def start_all(self, sink: InboundSink) -> None:
        await asyncio.gather(*(self.start(name, sink) for name in self.adapters))

    async def start(self, name: str, sink: InboundSink) -> None:
        adapter = self.adapters[name]
        self._set(name, ChannelState.STARTING)
        try:
            await adapter.start(sink)
        except NotConfigured as exc:
            self._set(name, ChannelState.NOT_CONFIGURED, str(exc), exc.hint)
            log.warning("channel not configured", extra={"channel": name, "why": str(exc)})
            return
        except ChannelError as exc:
            self._set(name, ChannelState.PARKED, str(exc), exc.hint)
            log.error(
                "channel failed to start",
                extra={"channel": name, "error": str(exc), "hint": exc.hint},
            )
            return
        except Exception as exc:
            self._set(
                name, ChannelState.PARKED, f"{type(exc).__name__}: {exc}", "see the log for details"
            )
            log.exception("channel failed to start", extra={"channel": name})
            return
        self._set(name, ChannelState.RUNNING)
        self._ready[name].set()
        self._watchers[name] = asyncio.create_task(self._watch(name, adapter), name=f"watch:{name}")

    async def _watch(self, name: str, adapter: ChannelAdapter) -> None:
        exc = await adapter.failed()
        self._ready[name].clear()
        hint = exc.hint if isinstance(exc, ChannelError) else ""
        self._set(name, ChannelState.PARKED, f"{type(exc).__name__}: {exc}", hint)
        log.error(
            "channel stopped working", extra={"channel": name, "error": str(exc), "hint": hint}
        )
        try:
            await adapter.stop()
        except Exception:
            log.exception("channel stop failed", extra={"channel": name})

    async def stop_all(self) -> None:
        for task in self._watchers.values():
            task.cancel()
        await asyncio.gather(
            *(self._stop(name) for name in list(self.adapters)), return_exceptions=True
        )

    async def stop_intake(self) -> None:
        """Draining: adapters stop taking new input but can still send."""
        for adapter in self.adapters.values():
            stop = getattr(adapter, "stop_intake", None)
            if stop is not None:
                await stop()

    async def _stop(self, name: str) -> None:
        adapter = self.adapters[name]
        try:
            await adapter.stop()
        finally:
            if self.statuses[name].state is ChannelState.RUNNING:
                self._set(name, ChannelState.STOPPED)
            self._ready[name].clear()

    async def ready_adapter(self, name: str) -> ChannelAdapter | None:
        adapter = self.adapters.get(name)
        if adapter is None:
            return None
        status = self.statuses[name]
        if status.state is ChannelState.RUNNING:
            return adapter
        if status.state in (ChannelState.STARTING, ChannelState.BACKOFF, ChannelState.STOPPED):
            try:
                await asyncio.wait_for(self._ready[name].wait(), READY_WAIT_S)
            except TimeoutError:
                return None
            return adapter
        return None

    def _set(self, name: str, state: ChannelState, error: str = "", hint: str = "") -> None:
        status = self.statuses[name]
        status.state = state
        status.since = self.clock.time()
        status.error = error
        status.hint = hint

    def snapshot(self) -> list[dict[str, Any]]:
        out = []
        for name, status in sorted(self.statuses.items()):
            adapter = self.adapters.get(name)
            if adapter is not None:
                status.detail = adapter.status()
            out.append(status.to_dict())
        return out

    @property
    def all_started(self) -> bool:
        """No channel is still starting (ready means: done trying, whatever the outcome)."""
        return all(s.state is not ChannelState.STARTING for s in self.statuses.values())
