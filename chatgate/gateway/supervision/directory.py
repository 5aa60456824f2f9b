"""The channel directory: which channel instances exist, their adapters and their state.

It builds adapters from config sections through the channel registry, starts each under the
restart ladder, answers lookups from the rest of the gateway (a ready adapter, is a channel
unavailable, status), applies reloaded sections (live, or by rebuilding the one channel whose
connection settings changed) and runs the operator's restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from chatgate.channels.base import ChannelAdapter, ChannelContext, HttpRoutes, InboundSink
from chatgate.channels.registry import ChannelRegistry
from chatgate.clock import Clock
from chatgate.config.loader import ChannelSection, LoadedConfig
from chatgate.config.models import SupervisionConfig
from chatgate.gateway.metrics import Metrics
from chatgate.gateway.supervision.degraded import DegradedRegistry, OwnerKind
from chatgate.gateway.supervision.lease import LeaseHold, LeaseKeeper
from chatgate.gateway.supervision.restart_ladder import RestartLadder, quiet_stop, quiet_stop_intake
from chatgate.gateway.supervision.supervised import ChannelStatus, Supervised
from chatgate.policies.channel_states import ChannelEvent, ChannelState, next_state
from chatgate.policies.supervision import RestartBudget

log = logging.getLogger("chatgate.channels")
READY_WAIT_S = 10.0
FIRST_START_WAIT_S = 30.0
_FAILING = (ChannelState.BACKOFF, ChannelState.PARKED, ChannelState.STARTING)
_UNAVAILABLE = (ChannelState.PARKED, ChannelState.NOT_CONFIGURED, ChannelState.DISABLED)
_NOT_TRIED = (ChannelState.STOPPED, ChannelState.STARTING)  # start_all waits for a first attempt
_ENDING = (ChannelState.RESTARTING, ChannelState.LEASE_LOST)
_SENDING = (ChannelState.RUNNING, ChannelState.LEASE_LOST)  # a send to a lost lease hands back
_COMING_UP = (
    ChannelState.STARTING,
    ChannelState.BACKOFF,
    ChannelState.STOPPED,
    ChannelState.RESTARTING,
)


class ChannelDirectory:
    def __init__(
        self,
        registry: ChannelRegistry,
        http: HttpRoutes,
        metrics: Metrics,
        state_dir: Path,
        clock: Clock,
        degraded: DegradedRegistry,
        supervision: SupervisionConfig,
        kv: dict[str, Any] | None = None,
        leases: LeaseKeeper | None = None,
    ) -> None:
        self.registry = registry
        self.http = http
        self.metrics = metrics
        self.state_dir = state_dir
        self.clock = clock
        self.degraded = degraded
        self.ladder = RestartLadder(self, clock, degraded, metrics, supervision, leases=leases)
        self.kv = kv or {}
        self.channels: dict[str, Supervised] = {}
        self.statuses: dict[str, ChannelStatus] = {}
        self._sink: InboundSink | None = None
        self._stopping = False
        self._intake_stopped = False

    @property
    def adapters(self) -> dict[str, ChannelAdapter]:
        return {name: s.adapter for name, s in self.channels.items()}

    # -- the fleet, as the restart ladder sees it ---------------------------------------

    @property
    def stopping(self) -> bool:
        return self._stopping

    @property
    def intake_stopped(self) -> bool:
        return self._intake_stopped

    def failing(self) -> int:
        return sum(
            1 for s in self.channels.values() if s.status.state in _FAILING and s.status.error
        )

    def total(self) -> int:
        return sum(
            1 for s in self.channels.values() if s.status.state is not ChannelState.NOT_CONFIGURED
        )

    # -- building and starting ------------------------------------------------------------

    def build(self, sections: Mapping[str, ChannelSection]) -> None:
        """Instantiate an adapter per configured, enabled section (nothing connects yet)."""
        for section in sections.values():
            self._add(section)

    def _add(self, section: ChannelSection) -> Supervised | None:
        name = section.name
        if not section.enabled:
            self.statuses[name] = ChannelStatus(
                name, section.platform, ChannelState.DISABLED, self.clock.time()
            )
            return None
        cls = self.registry.get(section.platform)
        hold = LeaseHold(self.clock)
        adapter = cls(
            ChannelContext(
                name,
                section.config,
                self.http,
                self.state_dir,
                self.metrics,
                self.kv,
                self.clock,
                hold,
            )
        )
        status = ChannelStatus(name, cls.platform, ChannelState.STOPPED, self.clock.time())
        supervised = Supervised(
            adapter,
            status,
            RestartBudget(self.ladder.config.restarts_per_hour),
            lease=self.registry.descriptor(section.platform).exclusive(section.config),
            hold=hold,
        )
        self.channels[name] = supervised
        self.statuses[name] = status
        return supervised

    async def start_all(self, sink: InboundSink) -> None:
        """Start every channel; returns once each has finished its first attempt."""
        self._sink = sink
        for supervised in self.channels.values():
            self._spawn(supervised)
        waits = [s.left(*_NOT_TRIED) for s in self.channels.values()]
        if waits:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.gather(*waits), FIRST_START_WAIT_S)

    def _spawn(self, s: Supervised) -> None:
        assert self._sink is not None
        s.task = asyncio.create_task(
            self.ladder.supervise(s, self._sink), name=f"channel:{s.status.name}"
        )

    # -- reload -----------------------------------------------------------------------------

    async def apply(self, old: LoadedConfig, new: LoadedConfig) -> tuple[list[str], list[str]]:
        """Take reloaded channel sections: (channels rebuilt, channels reconfigured live)."""
        before, after = old.channels, new.channels
        restarted: list[str] = []
        reconfigured: list[str] = []
        for name in sorted(set(before) | set(after)):
            section = after.get(name)
            if section is None:
                await self.remove(name)
                restarted.append(name)
                continue
            if name not in before or before[name].platform != section.platform:
                await self.replace(section)
                restarted.append(name)
                continue
            descriptor = self.registry.descriptor(section.platform)
            hot, cold = descriptor.hot_change(before[name].config, section.config)
            if cold:
                log.info(
                    "channel connection settings changed; restarting it",
                    extra={"channel": name, "keys": ",".join(cold)},
                )
                await self.replace(section)
                restarted.append(name)
            elif hot:
                supervised = self.channels.get(name)
                if supervised is not None:
                    supervised.adapter.reconfigure(section.config)
                reconfigured.append(name)
        return restarted, reconfigured

    # -- operator actions -------------------------------------------------------------------

    async def restart(self, name: str) -> bool:
        """Un-park (or restart) a channel now, with a fresh budget and backoff."""
        s = self.channels.get(name)
        if s is None:
            return False
        s.budget.reset()
        s.backoff_step = 0
        self.degraded.clear(OwnerKind.CHANNEL, name)
        log.info(
            "channel restart requested", extra={"channel": name, "state": s.status.state.value}
        )
        if s.task is None or s.task.done():
            self._spawn(s)
        elif next_state(s.state, ChannelEvent.RESTART) is not None:
            self.ladder.move(s, ChannelEvent.RESTART)
        return True

    async def replace(self, section: ChannelSection) -> None:
        """Swap a channel for one built from a changed section (credentials changed on reload)."""
        await self.remove(section.name)
        supervised = self._add(section)
        if supervised is not None and self._sink is not None:
            self._spawn(supervised)

    async def remove(self, name: str) -> None:
        s = self.channels.pop(name, None)
        self.statuses.pop(name, None)
        self.degraded.clear(OwnerKind.CHANNEL, name)
        if s is not None and s.task is not None:
            s.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await s.task
            await quiet_stop(s)

    async def stop_intake(self) -> None:
        """Draining: adapters stop taking new input but can still send (one that is starting
        now stops its intake as soon as its start returns)."""
        self._intake_stopped = True
        await asyncio.gather(*(quiet_stop_intake(s) for s in self.channels.values()))

    async def stop_all(self) -> None:
        self._stopping = True
        tasks = [s.task for s in self.channels.values() if s.task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.gather(*(quiet_stop(s) for s in self.channels.values()))
        for s in self.channels.values():
            if next_state(s.state, ChannelEvent.STOPPED) is not None:
                self.ladder.move(s, ChannelEvent.STOPPED)

    # -- lookups for the rest of the gateway -----------------------------------------------

    async def ready_adapter(self, name: str) -> ChannelAdapter | None:
        s = self.channels.get(name)
        if s is None:
            return None
        if s.state in _SENDING:
            return s.adapter
        if s.state in _COMING_UP:
            try:
                await asyncio.wait_for(s.until((ChannelState.RUNNING,)), READY_WAIT_S)
            except TimeoutError:
                return None
            return s.adapter
        return None

    async def file_source(self, name: str) -> ChannelAdapter | None:
        """The adapter that fetches ``name``'s attachments. An exclusive channel's files open
        with the bot's credentials on any replica (a fetch-only client), so its adapter serves
        also in standby or while reconnecting; any other channel once it runs."""
        s = self.channels.get(name)
        if s is None:
            return None
        if s.lease is not None and not self.is_unavailable(name):
            return s.adapter
        return await self.ready_adapter(name)

    def serving(self) -> list[str]:
        """Channels this process can answer on (all but those another replica holds)."""
        return [n for n, st in self.statuses.items() if st.state is not ChannelState.STANDBY]

    async def connection_left(self, name: str) -> bool:
        """Whether ``name``'s exclusive connection has left this replica: another replica holds
        it (standby), or the channel stopped here and its lease is no longer this replica's
        (lost, taken, or wiped with Redis). An answer for it then goes back to the journal for
        whichever replica serves the channel next, not to retries on a stopped client."""
        s, keeper = self.channels.get(name), self.ladder.leases
        if s is None or s.lease is None or keeper is None or not keeper.needed:
            return False
        state = s.status.state
        if state is ChannelState.STANDBY:
            return True
        if state is ChannelState.RUNNING:
            return False
        try:
            holder = (await keeper.leases.holders()).get(s.lease)
        except Exception as exc:  # unknown: keep the answer here (retried, or the DLQ)
            log.warning("channel lease holders unavailable", extra={"error": type(exc).__name__})
            return False
        if holder is not None:
            return holder != keeper.leases.replica
        return state in _ENDING  # stopping after losing it

    def standby(self) -> list[str]:
        """Channels whose exclusive connection another replica holds."""
        return sorted(n for n, st in self.statuses.items() if st.state is ChannelState.STANDBY)

    def is_unavailable(self, name: str) -> bool:
        """Parked or not configured: work aimed at it cannot succeed until an operator acts."""
        status = self.statuses.get(name)
        return status is not None and status.state in _UNAVAILABLE

    def snapshot(self) -> list[dict[str, Any]]:
        out = []
        for name, status in sorted(self.statuses.items()):
            s = self.channels.get(name)
            if s is not None:
                status.detail = {
                    "restarts_last_hour": s.budget.count(self.clock.monotonic()),
                    "restart_budget": self.ladder.config.restarts_per_hour,
                    **s.adapter.status(),
                }
            out.append(status.to_dict())
        return out

    def breaker_status(self) -> dict[str, Any]:
        return self.ladder.breaker_status()
