"""Exclusive channel connections across replicas: wait for the lease, keep it by heartbeat.

A channel whose descriptor names a lease (a Telegram polling token, a Discord bot's shard set)
runs on exactly one replica. The others wait in `standby` and probe for the lease every tenth of
its TTL, so one takes over within ~0.77 TTL after the holder dies (`policies.lease_timing`). A
holder that cannot confirm its lease within the validity stops the channel before anyone else
may take it (never two pollers), and after Redis lost its data nobody takes a free lease until
every old holder's validity has run out (the fence).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from chatgate.clock import Clock
from chatgate.policies.lease_timing import LeaseTiming
from chatgate.state.outage import OutageReporter
from chatgate.state.protocols import ChannelLeases

log = logging.getLogger("chatgate.leases")


class LeaseHold:
    """What an adapter sees of its lease (`ChannelContext.lease`): the time left of the validity
    after the last grant or renewal, measured from when it was asked for.
    Unlimited (None) until the channel runs under a lease; zero once the lease is let go."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.valid_until: float | None = None

    def remaining_s(self) -> float | None:
        if self.valid_until is None:
            return None
        return max(0.0, self.valid_until - self.clock.monotonic())

    def granted(self, asked_at: float, ttl_s: float) -> None:
        self.valid_until = asked_at + LeaseTiming(ttl_s).validity_s

    def ended(self) -> None:
        self.valid_until = self.clock.monotonic()


class LeaseKeeper:
    def __init__(self, leases: ChannelLeases, ttl_s: float, clock: Clock) -> None:
        self.leases = leases
        self.ttl_s = ttl_s
        self.timing = LeaseTiming(ttl_s)
        self.clock = clock

    @property
    def needed(self) -> bool:
        """False with one process per state: every lease is granted and never lost."""
        return self.leases.shared

    async def wait(
        self,
        name: str,
        channel: str,
        standby: Callable[[], None],
        hold: LeaseHold | None = None,
    ) -> None:
        """Return once this replica holds ``name``; ``standby`` is called while another does."""
        waiting = False
        outage = OutageReporter(log, f"channel lease of {channel}", now=self.clock.monotonic)
        while True:
            asked = self.clock.monotonic()
            try:
                acquired = await self.leases.acquire(
                    name, self.timing.key_ttl_s, self.timing.fence_s
                )
                outage.ok()
                if acquired:
                    if hold is not None:
                        hold.granted(asked, self.ttl_s)
                    if waiting:
                        log.warning("took over channel lease", extra={"channel": channel})
                    return
            except Exception as exc:
                outage.failed(exc)
            if not waiting:
                waiting = True
                standby()
            await self.clock.sleep(self.timing.probe_every_s)

    async def keep(self, name: str, channel: str, hold: LeaseHold | None = None) -> None:
        """Renew every third of the validity; return when the lease is lost or cannot be
        confirmed any more (the caller then stops the channel). A renewal that has not answered
        within the validity of the last good one counts as failed: waiting on a slow Redis must
        not keep the connection running past the lease."""
        last_ok = self.clock.monotonic()
        while True:
            await self.clock.sleep(self.timing.renew_every_s)
            deadline = last_ok + self.timing.validity_s
            asked = self.clock.monotonic()
            try:
                renewed = await self._renew_by(name, deadline)
            except Exception as exc:
                if self.clock.monotonic() >= deadline:
                    log.error(
                        "channel lease cannot be renewed; stopping the channel",
                        extra={"channel": channel, "error": type(exc).__name__},
                    )
                    return
                continue
            if not renewed:
                log.error("channel lease lost to another replica", extra={"channel": channel})
                return
            last_ok = self.clock.monotonic()
            if hold is not None:
                hold.granted(asked, self.ttl_s)

    async def _renew_by(self, name: str, deadline: float) -> bool:
        """``renew``, abandoned (TimeoutError) once the clock passes ``deadline``."""
        renewal = asyncio.ensure_future(self.leases.renew(name, self.timing.key_ttl_s))
        expiry = asyncio.ensure_future(
            self.clock.sleep(max(0.0, deadline - self.clock.monotonic()))
        )
        try:
            await asyncio.wait({renewal, expiry}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            expiry.cancel()
        if not renewal.done():
            renewal.cancel()
            raise TimeoutError("channel lease renewal did not answer in time")
        return renewal.result()

    async def release(self, name: str) -> None:
        try:
            await self.leases.release(name)
        except Exception as exc:  # it expires by itself
            log.warning("channel lease release failed", extra={"error": type(exc).__name__})
