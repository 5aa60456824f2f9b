"""Event-loop lag watchdog: how late the loop wakes a sleeping task tells how starved it is.

It measures the real loop (``time.monotonic`` and ``asyncio.sleep``), so no injected clock. A
loop that is blocked for good produces no samples at all; that case is left to the systemd
watchdog, which stops receiving WATCHDOG=1 pings.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque

_RECENT = 10


class LoopWatchdog:
    """Samples wake-up lag every ``interval_s``; unhealthy after repeated lag over ``max_lag_s``."""

    def __init__(
        self, *, interval_s: float = 0.5, max_lag_s: float = 2.0, unhealthy_after: int = 2
    ) -> None:
        if not interval_s > 0 or not max_lag_s > 0:
            raise ValueError("interval_s and max_lag_s must be positive")
        if unhealthy_after < 1:
            raise ValueError("unhealthy_after must be at least 1")
        self._interval_s = interval_s
        self._max_lag_s = max_lag_s
        self._unhealthy_after = unhealthy_after
        self._recent: deque[float] = deque(maxlen=_RECENT)
        self._slow_streak = 0
        self._healthy = True

    @property
    def lag_s(self) -> float:
        """Last measured lag (0.0 before the first sample)."""
        return self._recent[-1] if self._recent else 0.0

    @property
    def max_recent_lag_s(self) -> float:
        return max(self._recent, default=0.0)

    @property
    def healthy(self) -> bool:
        return self._healthy

    def snapshot(self) -> dict[str, float | bool]:
        return {
            "lag_s": self.lag_s,
            "max_recent_lag_s": self.max_recent_lag_s,
            "max_lag_s": self._max_lag_s,
            "healthy": self._healthy,
        }

    def record(self, lag_s: float) -> None:
        """Account one lag sample (called by run(); public so callers can feed other probes)."""
        self._recent.append(lag_s)
        if lag_s > self._max_lag_s:
            self._slow_streak += 1
            if self._slow_streak >= self._unhealthy_after:
                self._healthy = False
        else:
            self._slow_streak = 0
            self._healthy = True

    async def run(self) -> None:
        """Sample forever (until cancelled)."""
        while True:
            started = time.monotonic()
            await asyncio.sleep(self._interval_s)
            self.record(max(0.0, time.monotonic() - started - self._interval_s))
