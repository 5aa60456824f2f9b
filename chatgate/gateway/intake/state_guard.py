"""The journal cannot write (disk full, read-only state dir): refuse new work until it can.

A message that cannot be journaled must not be acked, so `Pipeline.submit` raises
StateUnavailable and the adapter refuses the platform update (503, offset kept). The guard marks
the gateway's state degraded (visible in status, /readyz 503) and probes with a tiny write every
``probe_every_s``; the first write that succeeds clears the degradation and resumes whatever the
journal holds unfinished.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import sqlite3
from collections.abc import Awaitable, Callable

from chatgate.gateway.runtime import Runtime
from chatgate.gateway.supervision.degraded import DegradedOwner, OwnerKind
from chatgate.model.errors import StateUnavailable
from chatgate.model.messages import Target
from chatgate.model.reasons import RefusalReason, SendErrorKind

log = logging.getLogger("chatgate.state")
STATE_OWNER = "state"
PROBE_EVERY_S = 2.0
PING_EVERY_S = 2.0  # a networked store is pinged this often while the state is writable
PING_TIMEOUT_S = 3.0  # a ping unanswered this long (injected clock) counts as an outage
# Written and removed again by the probe (a real write through the state protocols); no
# configured channel is named like this, so no send ever consults it.
PROBE_TARGET = Target("_chatgate_probe", "state")
_SQLITE_CODES = frozenset({"SQLITE_FULL", "SQLITE_READONLY", "SQLITE_IOERR", "SQLITE_CANTOPEN"})
_SQLITE_TEXT = ("database or disk is full", "readonly database", "disk i/o error")
_ERRNOS = frozenset({errno.ENOSPC, errno.EROFS, errno.EDQUOT, errno.EACCES, errno.EIO})


def unwritable(exc: BaseException) -> bool:
    """Whether ``exc`` means the state cannot be written (as opposed to a bug or bad input)."""
    if isinstance(exc, StateUnavailable):
        return True
    if isinstance(exc, sqlite3.Error):
        name = getattr(exc, "sqlite_errorname", "") or ""
        primary = name.split("_")[0:2]
        if "_".join(primary) in _SQLITE_CODES:
            return True
        text = str(exc).lower()
        return any(marker in text for marker in _SQLITE_TEXT)
    return isinstance(exc, OSError) and exc.errno in _ERRNOS


class StateGuard:
    """Fail closed while the journal cannot write; probe and resume when it can again."""

    def __init__(
        self,
        runtime: Runtime,
        resume: Callable[[], Awaitable[object]],
        *,
        probe_every_s: float = PROBE_EVERY_S,
    ) -> None:
        self.rt = runtime
        self._resume = resume
        self.probe_every_s = probe_every_s
        self._probe: asyncio.Task[None] | None = None
        self.refused = 0

    @property
    def hint(self) -> str:
        refused = "new messages are refused until a test write succeeds"
        if self.rt.config.gateway.store.backend == "redis":
            return (
                "check that Redis is up and reachable (`chatgate doctor` checks it) and not out "
                f"of memory; {refused}"
            )
        return f"free space in {self.rt.state_dir} (or make it writable); {refused}"

    def current(self) -> DegradedOwner | None:
        return self.rt.degraded.find(OwnerKind.GATEWAY, STATE_OWNER)

    def check(self) -> None:
        """Refuse at once while degraded (the probe, not each message, tests the disk)."""
        owner = self.current()
        if owner is not None:
            self.refused += 1
            raise StateUnavailable(f"{RefusalReason.STATE_UNAVAILABLE.value}: {owner.reason}")

    def failed(self, exc: BaseException) -> StateUnavailable | None:
        """The refusal for a failed journal write, or None when ``exc`` is not about the disk."""
        if not unwritable(exc):
            return None
        reason = f"journal write failed: {type(exc).__name__}: {exc}"[:300]
        self._mark(reason)
        self.refused += 1
        return StateUnavailable(f"{RefusalReason.STATE_UNAVAILABLE.value}: {reason}")

    def _mark(self, reason: str) -> None:
        """Degrade the gateway's state (once) and probe until a write succeeds."""
        first = self.current() is None
        self.rt.degraded.mark(
            OwnerKind.GATEWAY,
            STATE_OWNER,
            reason,
            self.hint,
            self.rt.clock.time(),
            probe_every_s=self.probe_every_s,
        )
        if first:
            log.error("state is not writable; refusing new messages", extra={"why": reason})
        if self._probe is None or self._probe.done():
            self._probe = asyncio.create_task(self._probe_loop(), name="state-probe")

    async def _probe_loop(self) -> None:
        """Probe until a write succeeds, then resume; again if the state failed while resuming
        (this task is still running then, so `failed` starts no other probe)."""
        while self.current() is not None:
            await self.rt.clock.sleep(self.probe_every_s)
            try:
                await self._write_probe()
            except Exception as exc:  # still unwritable (or something else): keep refusing
                log.debug("state probe failed: %s", type(exc).__name__)
                continue
            self.rt.degraded.clear(OwnerKind.GATEWAY, STATE_OWNER)
            log.info("state is writable again; accepting messages")
            try:
                await self._resume()
            except Exception as exc:
                if self.failed(exc) is None:
                    log.exception("could not resume unfinished messages after the state recovered")

    async def watch(self, ping: Callable[[], Awaitable[object]]) -> None:
        """Ping a networked store while the state is writable, so readiness says degraded
        within seconds of an outage rather than at the next failed write; the probe clears it.
        Until cancelled."""
        while True:
            await self.rt.clock.sleep(PING_EVERY_S)
            if self.current() is not None:
                continue  # degraded already: the write probe decides when it ends
            try:
                await self._bounded(ping)
            except Exception as exc:  # refused, timed out, or the client's own error
                self._mark(f"store ping failed: {type(exc).__name__}: {exc}"[:300])

    async def _bounded(self, ping: Callable[[], Awaitable[object]]) -> None:
        probe = asyncio.ensure_future(ping())
        timer = asyncio.ensure_future(self.rt.clock.sleep(PING_TIMEOUT_S))
        try:
            await asyncio.wait({probe, timer}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            timer.cancel()
            if not probe.done():
                probe.cancel()
        if probe.cancelled():
            raise TimeoutError(f"no answer within {PING_TIMEOUT_S:g} s")
        probe.result()

    async def _write_probe(self) -> None:
        dead, now = self.rt.dead_targets, self.rt.clock.time()
        try:
            await dead.mark(PROBE_TARGET, SendErrorKind.TRANSIENT, "state probe", now)
        finally:
            await dead.revive(PROBE_TARGET.address)
        # the lock's store answers too, and the locks of turns the outage cut short go on to
        # their resumed turns before anything resumes
        await self.rt.turn_lock.retry_pending()

    async def close(self) -> None:
        if self._probe is not None:
            self._probe.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._probe
            self._probe = None
