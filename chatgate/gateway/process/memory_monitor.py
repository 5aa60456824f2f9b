"""Memory-pressure monitor: sample RSS against the container limit, shed turns, drop warm caches.

The decisions are the pure functions in ``chatgate.policies.memory``; this module only reads the
numbers (``ProcMemorySource``) and enacts the plan on the session cache, re-sampling after every
eviction so it stops as soon as memory is back within headroom.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Protocol

from chatgate.clock import Clock
from chatgate.policies.memory import (
    MemorySample,
    WarmSessionFacts,
    plan_evictions,
    pressure_ratio,
    should_shed,
)

log = logging.getLogger("chatgate.memory")

_MIB = 1024 * 1024
_UNLIMITED_V1 = 2**60


class MemorySource(Protocol):
    def sample(self) -> MemorySample:
        """Anonymous RSS in bytes and the memory limit in bytes (None when unknown)."""
        ...

    def apply_limit_mb(self, limit_mb: int | None) -> None:
        """Hot reload of gateway.memory.limit_mb (a source that measures nothing may ignore it)."""
        ...


class EvictableCache(Protocol):
    """The part of ``SessionCache`` the monitor needs."""

    def facts(self) -> Sequence[WarmSessionFacts]: ...

    def evict(self, key: str) -> bool: ...


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="ascii", errors="replace")
    except (OSError, ValueError):
        return None


def _physical_memory() -> int | None:
    try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None
    return total if total > 0 else None


def _own_cgroups(proc_cgroup: Path) -> tuple[str | None, str | None]:
    """This process's cgroup path in the v2 hierarchy and in the v1 memory hierarchy."""
    v2: str | None = None
    v1: str | None = None
    for line in (_read_text(proc_cgroup) or "").splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        hierarchy, controllers, path = parts
        if hierarchy == "0" and controllers == "":
            v2 = path
        elif "memory" in controllers.split(","):
            v1 = path
    return v2, v1


def _candidate_dirs(base: Path, own: str | None) -> list[Path]:
    """The cgroup directory of this process and each ancestor up to the mount point."""
    if not own or own == "/":
        return [base]
    rel = PurePosixPath(own.lstrip("/"))
    return [base / rel, *(base / parent for parent in rel.parents)]


class ProcMemorySource:
    """Reads anonymous RSS from /proc and the limit from config or the cgroup (v2, then v1).

    The cgroup directories are resolved once; the limit files are re-read on every sample so a
    limit changed at runtime is picked up. The tightest limit on the path to the root wins.
    """

    def __init__(
        self,
        limit_mb: int | None = None,
        *,
        proc_status: Path = Path("/proc/self/status"),
        cgroup_root: Path = Path("/sys/fs/cgroup"),
        proc_cgroup: Path = Path("/proc/self/cgroup"),
    ) -> None:
        self._config_limit = limit_mb * _MIB if limit_mb else None
        self._proc_status = proc_status
        self._physical = _physical_memory()
        v2, v1 = _own_cgroups(proc_cgroup)
        self._v2_files = [d / "memory.max" for d in _candidate_dirs(cgroup_root, v2)]
        self._v1_files = [
            d / "memory.limit_in_bytes" for d in _candidate_dirs(cgroup_root / "memory", v1)
        ]

    def apply_limit_mb(self, limit_mb: int | None) -> None:
        self._config_limit = limit_mb * _MIB if limit_mb else None

    def sample(self) -> MemorySample:
        return MemorySample(self._rss(), self._limit())

    def _rss(self) -> int:
        fields: dict[str, int] = {}
        for line in (_read_text(self._proc_status) or "").splitlines():
            name, _, rest = line.partition(":")
            if name in ("RssAnon", "VmRSS"):
                value = rest.split()
                if value and value[0].isdigit():
                    fields[name] = int(value[0]) * 1024
        return fields.get("RssAnon", fields.get("VmRSS", 0))

    def _limit(self) -> int | None:
        if self._config_limit is not None:
            return self._config_limit
        found, limit = self._tightest(self._v2_files, v1=False)
        if found:
            return limit
        return self._tightest(self._v1_files, v1=True)[1]

    def _tightest(self, files: list[Path], *, v1: bool) -> tuple[bool, int | None]:
        """(any limit file was readable, smallest real limit among them)."""
        found = False
        best: int | None = None
        for path in files:
            text = _read_text(path)
            if text is None:
                continue
            found = True
            value = text.strip()
            if not value.isdigit():  # "max" or garbage: no limit at this level
                continue
            limit = int(value)
            if limit <= 0 or (v1 and self._v1_unlimited(limit)):
                continue
            best = limit if best is None else min(best, limit)
        return found, best

    def _v1_unlimited(self, limit: int) -> bool:
        return limit >= _UNLIMITED_V1 or (self._physical is not None and limit > self._physical)


class DrivenMemorySource:
    """A source whose numbers the caller sets (tests, benchmarks)."""

    def __init__(self, rss_bytes: int = 0, limit_bytes: int | None = None) -> None:
        self.rss_bytes = rss_bytes
        self.limit_bytes = limit_bytes

    def sample(self) -> MemorySample:
        return MemorySample(self.rss_bytes, self.limit_bytes)

    def apply_limit_mb(self, limit_mb: int | None) -> None:
        return None  # the caller sets the numbers


@dataclass(frozen=True)
class MemoryStatus:
    """Outcome of the latest check. ``last_sample_at`` is wall-clock; 0.0 means never sampled."""

    rss_bytes: int
    limit_bytes: int | None
    ratio: float | None
    shedding: bool
    evictions: int
    last_sample_at: float


def _validate(shed_ratio: float, headroom_ratio: float, interval_s: float) -> None:
    if not 0 < shed_ratio <= 1 or not 0 < headroom_ratio <= 1:
        raise ValueError("shed_ratio and headroom_ratio must be in (0, 1]")
    if not interval_s > 0:
        raise ValueError("interval_s must be positive")


class MemoryMonitor:
    """Periodically samples memory, flips the shedding flag and evicts idle warm sessions."""

    def __init__(
        self,
        source: MemorySource,
        cache: EvictableCache,
        clock: Clock,
        *,
        shed_ratio: float,
        headroom_ratio: float,
        interval_s: float,
        on_evict: Callable[[str], None] | None = None,
        on_sample: Callable[[MemoryStatus], None] | None = None,
    ) -> None:
        _validate(shed_ratio, headroom_ratio, interval_s)
        self._source = source
        self._cache = cache
        self._clock = clock
        self._shed_ratio = shed_ratio
        self._headroom_ratio = headroom_ratio
        self._interval_s = interval_s
        self._on_evict = on_evict
        self._on_sample = on_sample
        self._shedding = False
        self._evictions = 0
        self._status = MemoryStatus(0, None, None, False, 0, 0.0)

    @property
    def shedding(self) -> bool:
        """True while new turns should be refused (no I/O; safe on the message path)."""
        return self._shedding

    @property
    def interval_s(self) -> float:
        return self._interval_s

    def status(self) -> MemoryStatus:
        return self._status

    def update(self, *, shed_ratio: float, headroom_ratio: float, interval_s: float) -> None:
        """Apply new thresholds; the interval takes effect after the current sleep."""
        _validate(shed_ratio, headroom_ratio, interval_s)
        self._shed_ratio = shed_ratio
        self._headroom_ratio = headroom_ratio
        self._interval_s = interval_s

    def check(self) -> MemoryStatus:
        """One pass: sample, evict coldest idle sessions while above headroom, set shedding."""
        sample = self._source.sample()
        self._shedding = should_shed(sample, self._shed_ratio)
        plan = plan_evictions(sample, self._cache.facts(), self._headroom_ratio)
        # Freed Python memory is reused rather than returned, so RSS often does not drop right
        # away: evict at most half the candidates per pass and let the next pass re-measure,
        # instead of emptying the whole warm cache on one sample.
        for key in plan[: max(1, len(plan) // 2)]:
            if not self._cache.evict(key):
                continue  # became busy since the plan was made
            self._evictions += 1
            self._notify_evict(key)
            sample = self._source.sample()
            ratio = pressure_ratio(sample)
            if ratio is None or ratio <= self._headroom_ratio:
                break
        self._shedding = should_shed(sample, self._shed_ratio)
        self._status = MemoryStatus(
            rss_bytes=sample.rss_bytes,
            limit_bytes=sample.limit_bytes,
            ratio=pressure_ratio(sample),
            shedding=self._shedding,
            evictions=self._evictions,
            last_sample_at=self._clock.time(),
        )
        self._notify_sample(self._status)
        return self._status

    async def run(self) -> None:
        """check() every ``interval_s`` until cancelled; a failing pass is logged and retried."""
        while True:
            try:
                self.check()
            except Exception:
                log.exception("memory check failed")
            await self._clock.sleep(self._interval_s)

    def _notify_evict(self, key: str) -> None:
        if self._on_evict is None:
            return
        try:
            self._on_evict(key)
        except Exception:
            log.exception("memory on_evict hook failed")

    def _notify_sample(self, status: MemoryStatus) -> None:
        if self._on_sample is None:
            return
        try:
            self._on_sample(status)
        except Exception:
            log.exception("memory on_sample hook failed")
