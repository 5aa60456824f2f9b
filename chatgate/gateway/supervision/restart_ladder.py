"""The restart ladder: one channel's life under supervision, and the fleet crash-loop breaker.

Each run ends in a classified exit: fatal (revoked token, 409 conflict, bad config) parks the
channel with a fix hint and no restart; transient failures restart with exponential backoff and
jitter within a per-channel hourly budget, then park. The fleet breaker holds every restart for a
cooldown when the fleet as a whole is failing, so a systemic fault never becomes a reconnect storm.
A channel that hears nothing for its `stale_after_s` and fails its liveness probe is restarted.
"""

from __future__ import annotations

import asyncio
import logging
import random
from typing import Any, Protocol

from chatgate.channels.base import ChannelError, InboundSink, NotConfigured
from chatgate.clock import Clock
from chatgate.config.models import SupervisionConfig
from chatgate.gateway.metrics import Metrics
from chatgate.gateway.supervision.degraded import DegradedRegistry, OwnerKind
from chatgate.gateway.supervision.lease import LeaseKeeper
from chatgate.gateway.supervision.supervised import Supervised
from chatgate.policies.channel_states import TRANSITIONS, ChannelEvent, ChannelState, next_state
from chatgate.policies.supervision import (
    ExitClass,
    FleetBreaker,
    backoff_delay,
    classify_exit,
)

log = logging.getLogger("chatgate.supervisor")
_RUN_AGAIN = frozenset({ChannelState.RESTARTING, ChannelState.LEASE_LOST})
PROBE_TIMEOUT_S = 15.0
BREAKER_HINT = (
    "a shared dependency is failing (network, DNS, a provider, or a revoked organisation token); "
    "restarts resume automatically after the cooldown"
)


class Fleet(Protocol):
    """What the ladder reads of all channels (the breaker trips on the fleet, not one channel)."""

    @property
    def stopping(self) -> bool: ...

    @property
    def intake_stopped(self) -> bool: ...

    def failing(self) -> int: ...

    def total(self) -> int: ...


class RestartLadder:
    def __init__(
        self,
        fleet: Fleet,
        clock: Clock,
        degraded: DegradedRegistry,
        metrics: Metrics,
        config: SupervisionConfig,
        rng: random.Random | None = None,
        leases: LeaseKeeper | None = None,
    ) -> None:
        self.leases = leases
        self.fleet = fleet
        self.clock = clock
        self.degraded = degraded
        self.metrics = metrics
        self.config = config
        self.rng = rng or random.Random()
        self.breaker = FleetBreaker(
            config.fleet_restarts_per_hour, config.fleet_failing_fraction, config.breaker_cooldown_s
        )

    async def supervise(self, s: Supervised, sink: InboundSink) -> None:
        """Run ``s`` until the gateway stops: start, watch, classify each exit, restart or park."""
        leased = s.lease is not None and self.leases is not None and self.leases.needed
        try:
            while not self.fleet.stopping:
                if leased:
                    exc = await self._run_leased(s, sink)
                else:
                    exc = await self._run_once(s, sink)
                if self.fleet.stopping:
                    return
                if s.state in _RUN_AGAIN:  # restarted, or the lease went elsewhere: no failure
                    continue
                if not await self._after_exit(s, exc):
                    return
        finally:
            if leased and self.leases is not None and s.lease is not None:
                await self.leases.release(s.lease)

    async def _run_leased(self, s: Supervised, sink: InboundSink) -> BaseException | None:
        assert self.leases is not None and s.lease is not None
        lease, name = s.lease, s.status.name

        def standby() -> None:
            self.move(s, ChannelEvent.LEASE_ELSEWHERE, "another replica holds this connection")

        await self.leases.wait(lease, name, standby, s.hold)
        keeper = asyncio.ensure_future(self.leases.keep(lease, name, s.hold))

        def lost(_: asyncio.Future[None]) -> None:
            if not keeper.cancelled() and next_state(s.state, ChannelEvent.LEASE_LOST):
                self.move(
                    s, ChannelEvent.LEASE_LOST, "this replica's lease on the connection lapsed"
                )

        keeper.add_done_callback(lost)
        try:
            return await self._run_once(s, sink)
        finally:
            keeper.remove_done_callback(lost)
            keeper.cancel()
            if s.hold is not None:
                s.hold.ended()
            if s.state is ChannelState.LEASE_LOST:
                await self.leases.release(lease)

    async def _run_once(self, s: Supervised, sink: InboundSink) -> BaseException | None:
        self.move(s, ChannelEvent.ATTEMPT)
        s.adapter.reset_failure()
        try:
            await s.adapter.start(sink)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            await quiet_stop(s)
            return exc
        if s.state is not ChannelState.STARTING:
            # a lease lost (or a restart asked for) while a slow start ran: stop right after
            # it, never leave it polling without a lease
            await quiet_stop(s)
            return None
        if self.fleet.intake_stopped:  # draining began while it started: take no input
            await quiet_stop_intake(s)
        self.move(s, ChannelEvent.STARTED)
        s.running_since = self.clock.monotonic()
        self.degraded.clear(OwnerKind.CHANNEL, s.status.name)
        failed = s.adapter.failed()
        stalled = asyncio.ensure_future(self._watch_stall(s))
        woken = asyncio.ensure_future(s.left(ChannelState.RUNNING))
        waiting: set[asyncio.Future[Any]] = {failed, stalled, woken}
        try:
            await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stalled.cancel()
            woken.cancel()
        reason: BaseException | None = None
        if failed.done() and not failed.cancelled():
            reason = failed.result()
        elif stalled.done() and not stalled.cancelled() and stalled.exception() is None:
            reason = stalled.result()
        await quiet_stop(s)
        return reason

    async def _after_exit(self, s: Supervised, exc: BaseException | None) -> bool:
        """Decide what follows a run; False when the supervising task should end."""
        name = s.status.name
        if isinstance(exc, NotConfigured):
            self.move(s, ChannelEvent.UNCONFIGURED, str(exc), exc.hint)
            log.warning(
                "channel not configured", extra={"channel": name, "why": str(exc), "hint": exc.hint}
            )
            return await self.wait_for_unpark(s)
        error = _describe(exc)
        hint = exc.hint if isinstance(exc, ChannelError) else ""
        if _exit_class(exc) is ExitClass.FATAL:
            self.park(
                s,
                error,
                hint or "fix the problem above, then run `chatgate channels restart " + name + "`",
            )
            return await self.wait_for_unpark(s)
        self._count_failure(s)
        if (
            s.running_since is not None
            and self.clock.monotonic() - s.running_since >= self.config.healthy_after_s
        ):
            s.backoff_step = 0
        s.running_since = None
        self.move(s, ChannelEvent.FAILED, error, hint)
        while not self.fleet.stopping:
            now = self.clock.monotonic()
            failing = self.fleet.failing()
            if (
                failing >= 2
            ):  # one failing channel is its own budget's business, not a systemic fault
                self.breaker.note_fleet_state(failing, self.fleet.total(), now)
            if self.breaker.tripped(now):
                await self._hold_for_breaker(s, error)
                continue
            if not s.budget.allow(now):
                restart = f"`chatgate channels restart {name}`"
                self.park(
                    s,
                    f"restart budget exhausted ({self.config.restarts_per_hour} restarts in the last hour); "
                    f"last error: {error}",
                    f"{hint}, then run {restart}"
                    if hint
                    else f"check the platform and credentials, then run {restart}",
                    ChannelEvent.BUDGET_SPENT,
                )
                return await self.wait_for_unpark(s)
            delay = backoff_delay(
                s.backoff_step + 1,
                self.rng,
                self.config.backoff_initial_s,
                self.config.backoff_max_s,
            )
            self.move(s, ChannelEvent.FAILED, error, hint, retry_in=delay)
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
                return not self.fleet.stopping  # un-parked/restarted by the operator, or stopping
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
            f"fleet breaker tripped: {self.fleet.failing()} of {self.fleet.total()} channels failing; "
            "all channel restarts are on hold"
        )
        self.degraded.mark(OwnerKind.GATEWAY, "fleet", reason, BREAKER_HINT, self.clock.time())
        self.metrics.breaker_tripped.set(1)
        self.move(s, ChannelEvent.FAILED, error, BREAKER_HINT, retry_in=wait)
        log.error(
            "fleet breaker holds restarts",
            extra={"channel": s.status.name, "hold_s": round(wait, 1)},
        )
        await self._sleep(s, wait)
        if not self.breaker.tripped(self.clock.monotonic()):
            self.degraded.clear(OwnerKind.GATEWAY, "fleet")
            self.metrics.breaker_tripped.set(0)

    def park(
        self, s: Supervised, error: str, hint: str, event: ChannelEvent = ChannelEvent.FATAL
    ) -> None:
        self.move(s, event, error, hint)
        self.degraded.mark(OwnerKind.CHANNEL, s.status.name, error, hint, self.clock.time())
        log.error("channel parked", extra={"channel": s.status.name, "error": error, "hint": hint})

    async def wait_for_unpark(self, s: Supervised) -> bool:
        """Wait until the operator restarts a parked (or unconfigured) channel."""
        await s.left(ChannelState.PARKED, ChannelState.NOT_CONFIGURED)
        return not self.fleet.stopping

    async def _sleep(self, s: Supervised, seconds: float) -> bool:
        """Sleep in backoff on the injected clock; True when an operator restart cut it short."""
        sleeper = asyncio.ensure_future(self.clock.sleep(seconds))
        woken = asyncio.ensure_future(s.left(ChannelState.BACKOFF))
        await asyncio.wait({sleeper, woken}, return_when=asyncio.FIRST_COMPLETED)
        sleeper.cancel()
        woken.cancel()
        return s.state is not ChannelState.BACKOFF

    async def _watch_stall(self, s: Supervised) -> BaseException:
        """Resolve when the channel has been idle too long AND its liveness probe fails."""
        while True:
            await self.clock.sleep(self.config.stall_check_s)
            stale = s.adapter.stale_after_s()
            idle = s.adapter.idle_for_s()
            if stale is None or idle is None or idle <= stale:
                continue
            try:
                alive = await asyncio.wait_for(s.adapter.probe(), PROBE_TIMEOUT_S)
            except Exception:
                alive = False
            if not alive:
                self.metrics.count("channel_stalled", channel=s.status.name)
                return ChannelError(
                    f"stalled: nothing received for {idle:.0f} s and the liveness probe failed"
                )

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

    def _count_failure(self, s: Supervised) -> None:
        self.metrics.count("channel_failure", channel=s.status.name)

    def move(
        self,
        s: Supervised,
        event: ChannelEvent,
        error: str = "",
        hint: str = "",
        *,
        retry_in: float | None = None,
    ) -> None:
        """Apply ``event`` to ``s`` by the transition table (`policies/channel_states.py`); the
        only way a supervised channel's state changes. A move the table lacks is logged as the
        bug it is and still applied (the status must show what the ladder did)."""
        status = s.status
        state = next_state(status.state, event)
        if state is None:
            state = TRANSITIONS[event].to
            log.error(
                "channel transition not in the table",
                extra={"channel": status.name, "from": status.state.value, "event": event.value},
            )
        previous = status.state
        s.enter(state)
        status.since = self.clock.time()
        status.error = error
        status.hint = hint
        status.next_retry_at = self.clock.time() + retry_in if retry_in is not None else None
        self.metrics.channel_state.labels(channel=status.name, state=previous.value).set(0)
        self.metrics.channel_state.labels(channel=status.name, state=state.value).set(1)
        self.metrics.channel_up.labels(channel=status.name).set(
            1 if state is ChannelState.RUNNING else 0
        )


async def quiet_stop_intake(s: Supervised) -> None:
    try:
        await s.adapter.stop_intake()
    except Exception:
        log.exception("channel stop_intake failed", extra={"channel": s.status.name})


async def quiet_stop(s: Supervised) -> None:
    try:
        await s.adapter.stop()
    except Exception:
        log.exception("channel stop failed", extra={"channel": s.status.name})


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
