"""Channel supervision: the restart ladder, the fleet crash-loop breaker and stall detection.

Each adapter runs under its own supervising task. When a run ends the exit is classified:
fatal (revoked token, 409 conflict, bad config) parks the channel with a fix hint and no restart;
transient failures restart with exponential backoff and jitter within a per-channel hourly budget,
then park. The fleet breaker holds every restart for a cooldown when the fleet as a whole is
failing, so a systemic fault never turns into a reconnect storm.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chatgate.channels.base import (
    ChannelAdapter,
    ChannelContext,
    ChannelError,
    ChannelState,
    HttpRoutes,
    InboundSink,
    NotConfigured,
)
from chatgate.channels.registry import ChannelRegistry
from chatgate.config.loader import ChannelSection
from chatgate.config.models import SupervisionConfig
from chatgate.gateway.clock import Clock
from chatgate.gateway.degraded import DegradedRegistry, OwnerKind
from chatgate.gateway.metrics import Metrics
from chatgate.policies.supervision import (
    ExitClass,
    FleetBreaker,
    RestartBudget,
    backoff_delay,
    classify_exit,
)

log = logging.getLogger("chatgate.supervisor")
READY_WAIT_S = 10.0
FIRST_START_WAIT_S = 30.0
BREAKER_HINT = (
    "a shared dependency is failing (network, DNS, a provider, or a revoked organisation token); "
    "restarts resume automatically after the cooldown"
)


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


@dataclass(eq=False)
class Supervised:
    adapter: ChannelAdapter
    status: ChannelStatus
    budget: RestartBudget
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    first_attempt: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None
    backoff_step: int = 0
    running_since: float | None = None
    restart_requested: bool = False


class ChannelSupervisor:
    def __init__(
        self,
        registry: ChannelRegistry,
        http: HttpRoutes,
        metrics: Metrics,
        state_dir: Path,
        clock: Clock,
        degraded: DegradedRegistry,
        config: SupervisionConfig,
        kv: dict[str, Any] | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.registry = registry
        self.http = http
        self.metrics = metrics
        self.state_dir = state_dir
        self.clock = clock
        self.degraded = degraded
        self.config = config
        self.kv = kv or {}
        self.rng = rng or random.Random()
        self.breaker = FleetBreaker(
            config.fleet_restarts_per_hour, config.fleet_failing_fraction, config.breaker_cooldown_s
        )
        self.channels: dict[str, Supervised] = {}
        self.statuses: dict[str, ChannelStatus] = {}
        self._sink: InboundSink | None = None
        self._stopping = False

    @property
    def adapters(self) -> dict[str, ChannelAdapter]:
        return {name: s.adapter for name, s in self.channels.items()}

    # -- building and starting ------------------------------------------------------------

    def build(self, sections: Mapping[str, ChannelSection]) -> None:
        """Instantiate an adapter per configured, enabled section (nothing connects yet)."""
        for name, section in sections.items():
            if not section.enabled:
                self.statuses[name] = ChannelStatus(
                    name, section.platform, ChannelState.DISABLED, self.clock.time()
                )
                continue
            self._add(section)

    def _add(self, section: ChannelSection) -> Supervised:
        name = section.name
        cls = self.registry.get(section.platform)
        adapter = cls(
            ChannelContext(name, section.config, self.http, self.state_dir, self.metrics, self.kv)
        )
        status = ChannelStatus(name, cls.platform, ChannelState.STOPPED, self.clock.time())
        supervised = Supervised(adapter, status, RestartBudget(self.config.restarts_per_hour))
        self.channels[name] = supervised
        self.statuses[name] = status
        return supervised

    async def start_all(self, sink: InboundSink) -> None:
        """Start every channel; returns once each has finished its first attempt."""
        self._sink = sink
        for supervised in self.channels.values():
            self._spawn(supervised)
        waits = [s.first_attempt.wait() for s in self.channels.values()]
        if waits:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.gather(*waits), FIRST_START_WAIT_S)

    def _spawn(self, s: Supervised) -> None:
        s.task = asyncio.create_task(self._supervise(s), name=f"channel:{s.status.name}")

    # -- the ladder -------------------------------------------------------------------------

    async def _supervise(self, s: Supervised) -> None:
        while not self._stopping:
            exc = await self._run_once(s)
            s.first_attempt.set()
            if self._stopping:
                return
            if s.restart_requested:
                s.restart_requested = False
                continue
            if not await self._after_exit(s, exc):
                return

    async def _run_once(self, s: Supervised) -> BaseException | None:
        assert self._sink is not None
        self._set(s, ChannelState.STARTING)
        s.adapter.reset_failure()
        try:
            await s.adapter.start(self._sink)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            await self._quiet_stop(s)
            return exc
        self._set(s, ChannelState.RUNNING)
        s.running_since = self.clock.monotonic()
        s.ready.set()
        s.first_attempt.set()
        self.degraded.clear(OwnerKind.CHANNEL, s.status.name)
        s.wake.clear()
        failed = s.adapter.failed()
        stalled = asyncio.ensure_future(self._watch_stall(s))
        woken = asyncio.ensure_future(s.wake.wait())
        waiting: set[asyncio.Future[Any]] = {failed, stalled, woken}
        try:
            await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stalled.cancel()
            woken.cancel()
            s.ready.clear()
        reason: BaseException | None = None
        if failed.done() and not failed.cancelled():
            reason = failed.result()
        elif stalled.done() and not stalled.cancelled() and stalled.exception() is None:
            reason = stalled.result()
        await self._quiet_stop(s)
        return reason

    async def _after_exit(self, s: Supervised, exc: BaseException | None) -> bool:
        """Decide what follows a run; False when the supervising task should end."""
        name = s.status.name
        if isinstance(exc, NotConfigured):
            self._set(s, ChannelState.NOT_CONFIGURED, str(exc), exc.hint)
            log.warning(
                "channel not configured", extra={"channel": name, "why": str(exc), "hint": exc.hint}
            )
            return await self._wait_for_unpark(s)
        error = _describe(exc)
        hint = exc.hint if isinstance(exc, ChannelError) else ""
        if _exit_class(exc) is ExitClass.FATAL:
            self._park(
                s,
                error,
                hint or "fix the problem above, then run `chatgate channels restart " + name + "`",
            )
            return await self._wait_for_unpark(s)
        self._count_failure(s)
        if (
            s.running_since is not None
            and self.clock.monotonic() - s.running_since >= self.config.healthy_after_s
        ):
            s.backoff_step = 0
        s.running_since = None
        self._set(s, ChannelState.BACKOFF, error, hint)
        while not self._stopping:
            now = self.clock.monotonic()
            failing = self._failing()
            if (
                failing >= 2
            ):  # one failing channel is its own budget's business, not a systemic fault
                self.breaker.note_fleet_state(failing, self._supervised_total(), now)
            if self.breaker.tripped(now):
                await self._hold_for_breaker(s, error)
                continue
            if not s.budget.allow(now):
                restart = f"`chatgate channels restart {name}`"
                self._park(
                    s,
                    f"restart budget exhausted ({self.config.restarts_per_hour} restarts in the last hour); "
                    f"last error: {error}",
                    f"{hint}, then run {restart}"
                    if hint
                    else f"check the platform and credentials, then run {restart}",
                )
                return await self._wait_for_unpark(s)
            delay = backoff_delay(
                s.backoff_step + 1,
                self.rng,
                self.config.backoff_initial_s,
                self.config.backoff_max_s,
            )
            self._set(s, ChannelState.BACKOFF, error, hint, retry_in=delay)
            log.warning(
                "channel failed; restarting after backoff",
                extra={
                    "channel": name,
                    "error": error,
                    "delay_s": round(delay, 2),
                    "restart": s.backoff_step + 1,
                },
            )
            if await self._sleep(s, delay):
                return not self._stopping  # un-parked/restarted by the operator, or stopping
            if self.breaker.note_restart(self.clock.monotonic()):
                continue  # this restart tripped the breaker: hold it
            s.budget.record(self.clock.monotonic())
            s.backoff_step += 1
            s.status.restarts += 1
            self.metrics.channel_restarts.labels(channel=name).inc()
            return True
        return False

    async def _hold_for_breaker(self, s: Supervised, error: str) -> None:
        until = self.breaker.tripped_until() or self.clock.monotonic()
        wait = max(0.0, until - self.clock.monotonic())
        reason = (
            f"fleet breaker tripped: {self._failing()} of {self._supervised_total()} channels failing; "
            "all channel restarts are on hold"
        )
        self.degraded.mark(OwnerKind.GATEWAY, "fleet", reason, BREAKER_HINT, self.clock.time())
        self.metrics.breaker_tripped.set(1)
        self._set(s, ChannelState.BACKOFF, error, BREAKER_HINT, retry_in=wait)
        log.error(
            "fleet breaker holds restarts",
            extra={"channel": s.status.name, "hold_s": round(wait, 1)},
        )
        await self._sleep(s, wait)
        if not self.breaker.tripped(self.clock.monotonic()):
            self.degraded.clear(OwnerKind.GATEWAY, "fleet")
            self.metrics.breaker_tripped.set(0)

    def _park(self, s: Supervised, error: str, hint: str) -> None:
        self._set(s, ChannelState.PARKED, error, hint)
        self.degraded.mark(OwnerKind.CHANNEL, s.status.name, error, hint, self.clock.time())
        log.error("channel parked", extra={"channel": s.status.name, "error": error, "hint": hint})

    async def _wait_for_unpark(self, s: Supervised) -> bool:
        s.wake.clear()
        await s.wake.wait()
        return not self._stopping

    async def _sleep(self, s: Supervised, seconds: float) -> bool:
        """Sleep on the injected clock; True when woken early (operator restart or shutdown)."""
        s.wake.clear()
        sleeper = asyncio.ensure_future(self.clock.sleep(seconds))
        woken = asyncio.ensure_future(s.wake.wait())
        await asyncio.wait({sleeper, woken}, return_when=asyncio.FIRST_COMPLETED)
        sleeper.cancel()
        woken.cancel()
        return s.wake.is_set()

    async def _watch_stall(self, s: Supervised) -> BaseException:
        """Resolve when the channel has been idle too long AND its liveness probe fails."""
        while True:
            await self.clock.sleep(self.config.stall_check_s)
            stale = s.adapter.stale_after_s()
            idle = s.adapter.idle_for_s()
            if stale is None or idle is None or idle <= stale:
                continue
            try:
                alive = await asyncio.wait_for(s.adapter.probe(), 15.0)
            except Exception:
                alive = False
            if not alive:
                self.metrics.count("channel_stalled", channel=s.status.name)
                return ChannelError(
                    f"stalled: nothing received for {idle:.0f} s and the liveness probe failed"
                )

    async def _quiet_stop(self, s: Supervised) -> None:
        try:
            await s.adapter.stop()
        except Exception:
            log.exception("channel stop failed", extra={"channel": s.status.name})

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
            return True
        s.restart_requested = s.status.state is ChannelState.RUNNING
        s.wake.set()
        return True

    async def replace(self, section: ChannelSection) -> None:
        """Swap a channel for one built from a changed section (credentials changed on reload)."""
        name = section.name
        await self.remove(name)
        if section.enabled:
            s = self._add(section)
            if self._sink is not None:
                self._spawn(s)
        else:
            self.statuses[name] = ChannelStatus(
                name, section.platform, ChannelState.DISABLED, self.clock.time()
            )

    async def remove(self, name: str) -> None:
        s = self.channels.pop(name, None)
        self.statuses.pop(name, None)
        self.degraded.clear(OwnerKind.CHANNEL, name)
        if s is not None and s.task is not None:
            s.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await s.task
            await self._quiet_stop(s)

    async def stop_intake(self) -> None:
        """Draining: adapters stop taking new input but can still send."""
        for s in self.channels.values():
            try:
                await s.adapter.stop_intake()
            except Exception:
                log.exception("channel stop_intake failed", extra={"channel": s.status.name})

    async def stop_all(self) -> None:
        self._stopping = True
        tasks = [s.task for s in self.channels.values() if s.task is not None]
        for s in self.channels.values():
            s.wake.set()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.gather(
            *(self._quiet_stop(s) for s in self.channels.values()), return_exceptions=True
        )
        for s in self.channels.values():
            if s.status.state in (
                ChannelState.RUNNING,
                ChannelState.STARTING,
                ChannelState.BACKOFF,
            ):
                self._set(s, ChannelState.STOPPED)

    # -- lookups for the rest of the gateway -----------------------------------------------

    async def ready_adapter(self, name: str) -> ChannelAdapter | None:
        s = self.channels.get(name)
        if s is None:
            return None
        if s.status.state is ChannelState.RUNNING:
            return s.adapter
        if s.status.state in (ChannelState.STARTING, ChannelState.BACKOFF, ChannelState.STOPPED):
            try:
                await asyncio.wait_for(s.ready.wait(), READY_WAIT_S)
            except TimeoutError:
                return None
            return s.adapter
        return None

    def is_unavailable(self, name: str) -> bool:
        """Parked or not configured: work aimed at it cannot succeed until an operator acts."""
        status = self.statuses.get(name)
        return status is not None and status.state in (
            ChannelState.PARKED,
            ChannelState.NOT_CONFIGURED,
            ChannelState.DISABLED,
        )

    def snapshot(self) -> list[dict[str, Any]]:
        out = []
        for name, status in sorted(self.statuses.items()):
            s = self.channels.get(name)
            if s is not None:
                status.detail = {
                    "restarts_last_hour": s.budget.count(self.clock.monotonic()),
                    **s.adapter.status(),
                }
            out.append(status.to_dict())
        return out

    def breaker_status(self) -> dict[str, Any]:
        now = self.clock.monotonic()
        tripped = self.breaker.tripped(now)
        until = self.breaker.tripped_until()
        return {
            "tripped": tripped,
            "until": self.clock.time() + (until - now) if tripped and until is not None else None,
            "restarts_per_hour": self.config.fleet_restarts_per_hour,
            "failing_fraction": self.config.fleet_failing_fraction,
        }

    # -- helpers ------------------------------------------------------------------------------

    def _failing(self) -> int:
        return sum(
            1
            for s in self.channels.values()
            if s.status.state in (ChannelState.BACKOFF, ChannelState.PARKED, ChannelState.STARTING)
            and s.status.error
        )

    def _supervised_total(self) -> int:
        return sum(
            1 for s in self.channels.values() if s.status.state is not ChannelState.NOT_CONFIGURED
        )

    def _count_failure(self, s: Supervised) -> None:
        self.metrics.count("channel_failure", channel=s.status.name)

    def _set(
        self,
        s: Supervised,
        state: ChannelState,
        error: str = "",
        hint: str = "",
        *,
        retry_in: float | None = None,
    ) -> None:
        status = s.status
        previous = status.state
        status.state = state
        status.since = self.clock.time()
        status.error = error
        status.hint = hint
        status.next_retry_at = self.clock.time() + retry_in if retry_in is not None else None
        self.metrics.channel_state.labels(channel=status.name, state=previous.value).set(0)
        self.metrics.channel_state.labels(channel=status.name, state=state.value).set(1)
        self.metrics.channel_up.labels(channel=status.name).set(
            1 if state is ChannelState.RUNNING else 0
        )


def _describe(exc: BaseException | None) -> str:
    if exc is None:
        return "stopped unexpectedly"
    if isinstance(exc, ChannelError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


def _exit_class(exc: BaseException | None) -> ExitClass:
    if isinstance(exc, ChannelError):
        return classify_exit(exc.kind, config_error=exc.fatal, conflict=exc.conflict)
    return classify_exit(None)
